# From a checkout at commit.txt, after `make setup`; pinned to one core beside other jobs (not a timed run).
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 1 python -m agentic_rl.train experiment=transfer-cpu \
    rollout.max_turns=6 rollout.max_tool_calls=2 seed=3 eval_before=false evaluator.limit=null \
    "evaluator.modes=[multi_tool]" progress=false hydra.run.dir=<runs>/cap-c2-s3
# Interrupted (SIGINT) after step 16 and resumed from its checkpoint, same checkout and environment:
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 1 python -m agentic_rl.train resume=<runs>/cap-c2-s3
