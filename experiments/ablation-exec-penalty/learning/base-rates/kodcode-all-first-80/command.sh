# base model, code-only tools, greedy: the first 80 of all 232 rows of the KodCode sample (the run's seed, 42, orders them);
# pinned to one core beside a training run (not timed). From a checkout at commit.txt, after `make setup`:
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 0 python -m agentic_rl.evaluate data=kodcode \
    data.path=<shared>/data/kodcode_sample.jsonl data.n=null data.subset_from=null data.subset_stride=null \
    evaluator.limit=80 "evaluator.modes=[code_only]" logger=none progress=false hydra.run.dir=<runs>/base-kod
