#!/bin/bash
# #23's memory bound: the default run (seed 42) on vLLM, from a copy of the checkout at commit.txt, after
# `make setup` (which made .venv-vllm). One core (taskset), one thread, beside a tool-cap training job on the
# other core and, for its first 30 minutes, a fresh-clone CI run: a memory record, not a timed run.
cd <checkout>
export WANDB_MODE=offline PYTHONPATH=<checkout> OMP_NUM_THREADS=1 AGENTIC_RL_SANDBOX_PYTHON=<python prefix>/bin/python
taskset -c 0 /usr/bin/time -v -o <runs>/vllm-mem-seed-42.time-v.txt <checkout of main>/.venv-vllm/bin/python -m agentic_rl.train \
    seed=42 progress=false rollout.backend=vllm hydra.run.dir=<runs>/vllm-mem-seed-42 > <runs>/vllm-mem-seed-42.log 2>&1
