#!/bin/bash
# #26: the CPU default, seed 42, timed on the otherwise quiet 2-core machine (Intel Xeon, AVX-512 + AMX)
cd <checkout>
export WANDB_MODE=offline PYTHONPATH=<checkout>
git rev-parse HEAD > <runs>/default-timed.commit
/usr/bin/time -v python -m agentic_rl.train progress=false hydra.run.dir=<runs>/default-timed \
  > <runs>/default-timed.log 2>&1
echo "rc=$?" >> <runs>/default-timed.log
