# base model, multi-tool under the cap C = 1, 6 turns, greedy: all 240 held-out pipeline tasks; pinned to one core
# beside the other cap's base evaluation (not timed). At commit.txt:
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 0 python -m agentic_rl.evaluate data=pipelines-heldout \
    rollout.max_turns=6 rollout.max_tool_calls=1 "evaluator.modes=[multi_tool]" evaluator.limit=null logger=none \
    progress=false hydra.run.dir=<runs>/base-cap-c1
