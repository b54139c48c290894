# From a checkout at commit.txt, after `make setup`; pinned to one core beside another job (not a timed run).
# <shared>/data/kodcode_sample.jsonl is the offline KodCode sample (not in the repository).
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 1 python -m agentic_rl.train experiment=exec-penalty-cpu \
    data.path=<shared>/data/kodcode_sample.jsonl reward.use_exec_penalty=false seed=3 progress=false \
    hydra.run.dir=<runs>/pen-off-s3
