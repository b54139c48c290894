#!/bin/bash
# #26: seed 2 of the transfer experiment, pinned to core 0 (the other seed runs on the other core); not a timed run
cd <checkout>
export WANDB_MODE=offline OMP_NUM_THREADS=1
git rev-parse HEAD > <runs>/transfer-s2.commit
taskset -c 0 /usr/bin/time -v python -m agentic_rl.train experiment=transfer-cpu seed=2 eval_before=false \
  evaluator.limit=null "evaluator.modes=[no_tools,multi_tool]" progress=false hydra.run.dir=<runs>/transfer-s2 \
  > <runs>/transfer-s2.log 2>&1
echo "rc=$?" >> <runs>/transfer-s2.log
