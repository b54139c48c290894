#!/bin/bash
# #26: seed 3 of the transfer experiment, pinned to core 1 (the other seed runs on the other core); not a timed run
cd <checkout>
export WANDB_MODE=offline OMP_NUM_THREADS=1
git rev-parse HEAD > <runs>/transfer-s3.commit
taskset -c 1 /usr/bin/time -v python -m agentic_rl.train experiment=transfer-cpu seed=3 eval_before=false \
  evaluator.limit=null "evaluator.modes=[no_tools,multi_tool]" progress=false hydra.run.dir=<runs>/transfer-s3 \
  > <runs>/transfer-s3.log 2>&1
echo "rc=$?" >> <runs>/transfer-s3.log
