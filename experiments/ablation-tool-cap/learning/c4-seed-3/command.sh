# From a checkout at commit.txt, after `make setup`; beside other jobs (not a timed run): the first part on the
# two cores, beside the end of the C = 1 and C = 2 seed-3 runs; the resumed part on one core beside a CI run.
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 0,1 python -m agentic_rl.train experiment=transfer-cpu \
    rollout.max_turns=6 rollout.max_tool_calls=4 seed=3 eval_before=false evaluator.limit=null \
    "evaluator.modes=[multi_tool]" progress=false hydra.run.dir=<runs>/cap-c4-s3
# Interrupted (SIGINT) after step 56 and resumed from its checkpoint, same checkout and environment:
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 0 python -m agentic_rl.train resume=<runs>/cap-c4-s3
