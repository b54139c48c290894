#!/bin/bash
# #23 on an AMX machine: one sitting, each benchmark alone, uptime before and after each
cd <checkout>
export PYTHONPATH=<checkout> WANDB_MODE=offline
S=<records>
MAIN_PY=$(python -c 'import sys; print(sys.executable)')
step() { name=$1; shift; uptime > $S/$name.load.txt; /usr/bin/time -v -o $S/$name.time-v.txt "$@" > $S/$name.log 2>&1; echo "rc=$?" >> $S/$name.log; uptime >> $S/$name.load.txt; }
PIP_FIND_LINKS=<downloaded wheels> make setup-vllm > $S/setup-vllm.log 2>&1
step dtype python -m agentic_rl.bench.dtype
step bench-rollout env AGENTIC_RL_SANDBOX_PYTHON=$MAIN_PY .venv-vllm/bin/python -m agentic_rl.bench.rollout --notebook-jobs 4 --backends hf vllm --json $S/bench-rollout.json
python -m pip install --quiet -e ".[bench]" > $S/install-trl.log 2>&1
step bench-trainer python -m agentic_rl.bench.trainer
echo done > $S/DONE
