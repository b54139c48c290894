#!/bin/bash
# #26 tools ablation, arm tools=code, seed 1: the default's 64 steps, evaluated after on all 240 held-out tasks
# (before = experiments/transfer/base-rates, greedy); pinned to core 0 beside seed 2 on the other core; not a timed run
cd <checkout>
export WANDB_MODE=offline OMP_NUM_THREADS=1 PYTHONPATH=<checkout>
git rev-parse HEAD > <runs>/abl-tools-code-s1.commit
taskset -c 0 /usr/bin/time -v python -m agentic_rl.train experiment=transfer-cpu tools=code seed=1 eval_before=false \
  evaluator.limit=null "evaluator.modes=[no_tools,multi_tool]" progress=false hydra.run.dir=<runs>/abl-tools-code-s1 \
  > <runs>/abl-tools-code-s1.log 2>&1
echo "rc=$?" >> <runs>/abl-tools-code-s1.log
