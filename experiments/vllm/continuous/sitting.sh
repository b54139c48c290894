#!/bin/bash
# #23, continuous batching: bench-rollout alone on the machine, load traced
cd <checkout>
S=<records>; mkdir -p $S
export PYTHONPATH=<checkout> WANDB_MODE=offline
MAIN_PY=$(python -c 'import sys; print(sys.executable)')
git rev-parse HEAD > $S/commit.txt
uptime > $S/bench-rollout.load.txt
(while true; do uptime >> $S/bench-rollout.loadtrace.txt; sleep 20; done) & tracer=$!
/usr/bin/time -v -o $S/bench-rollout.time-v.txt env AGENTIC_RL_SANDBOX_PYTHON=$MAIN_PY .venv-vllm/bin/python \
  -m agentic_rl.bench.rollout --notebook-jobs 4 --backends hf vllm --json $S/bench-rollout.json > $S/bench-rollout.log 2>&1
echo "rc=$?" >> $S/bench-rollout.log
kill $tracer
uptime >> $S/bench-rollout.load.txt
echo done > $S/DONE
