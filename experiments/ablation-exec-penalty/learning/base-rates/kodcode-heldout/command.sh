# base model, code-only tools, greedy: all 97 tasks of the held-out part (split seed 0, 168 candidates, 71 dropped as
# near-duplicates of a training row); pinned to one core beside two training runs (not timed). At commit.txt:
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 0 python -m agentic_rl.evaluate data=kodcode-heldout \
    data.path=<shared>/data/kodcode_sample.jsonl evaluator.limit=null "evaluator.modes=[code_only]" logger=none \
    progress=false hydra.run.dir=<runs>/base-kod-heldout
