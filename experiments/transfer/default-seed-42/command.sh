#!/bin/bash
# #26: the new CPU default (the transfer setup), seed 42, timed on the otherwise quiet 2-core machine
cd <checkout>
export WANDB_MODE=offline
git rev-parse HEAD > <runs>/default-transfer-42.commit
/usr/bin/time -v python -m agentic_rl.train progress=false hydra.run.dir=<runs>/default-transfer-42 \
  > <runs>/default-transfer-42.log 2>&1
echo "rc=$?" >> <runs>/default-transfer-42.log
