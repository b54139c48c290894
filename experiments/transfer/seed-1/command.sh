#!/bin/bash
# #26: seed 1 of the transfer experiment, pinned to core 1 (helpers' niced mutation runs share core 0); not a timed run
cd <checkout>
export WANDB_MODE=offline OMP_NUM_THREADS=1
git rev-parse HEAD > <runs>/transfer-s1.commit
taskset -c 1 /usr/bin/time -v python -m agentic_rl.train experiment=transfer-cpu seed=1 eval_before=false \
  evaluator.limit=null "evaluator.modes=[no_tools,multi_tool]" progress=false hydra.run.dir=<runs>/transfer-s1 \
  > <runs>/transfer-s1.log 2>&1
echo "rc=$?" >> <runs>/transfer-s1.log
