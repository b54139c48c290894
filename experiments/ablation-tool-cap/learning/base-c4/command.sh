# base model, multi-tool under the cap C = 4, 6 turns, greedy: all 240 held-out pipeline tasks; pinned to one core
# beside a fresh-clone CI run (not timed). At commit.txt:
OMP_NUM_THREADS=1 WANDB_MODE=offline taskset -c 1 python -m agentic_rl.evaluate data=pipelines-heldout \
    rollout.max_turns=6 rollout.max_tool_calls=4 "evaluator.modes=[multi_tool]" evaluator.limit=null logger=none \
    progress=false hydra.run.dir=<runs>/base-cap-c4
