#!/bin/bash
# #23: the default run (seed 42) on vLLM and on HF, then HF with algo.dtype=bf16, one sitting, one after another
cd <checkout>
export WANDB_MODE=offline PYTHONPATH=<checkout> AGENTIC_RL_SANDBOX_PYTHON=<python prefix>/bin/python
MAIN_PY=<python prefix>/bin/python
VLLM_PY=<checkout of main>/.venv-vllm/bin/python
git rev-parse HEAD > <runs>/sitting.commit
(while true; do echo "$(date -u +%H:%M:%S) $(cat /proc/loadavg)"; sleep 20; done) > <runs>/sitting.loadtrace.txt &
TRACE=$!
run() {  # name, python, overrides...
  name=$1; py=$2; shift 2
  echo "$(date -u +%H:%M:%S) start $name $(uptime)" >> <runs>/sitting.load.txt
  /usr/bin/time -v -o <runs>/$name.time-v.txt $py -m agentic_rl.train seed=42 progress=false "$@" \
      hydra.run.dir=<runs>/$name > <runs>/$name.log 2>&1
  echo "rc=$?" >> <runs>/$name.log
  echo "$(date -u +%H:%M:%S) end $name $(uptime)" >> <runs>/sitting.load.txt
}
# warm the caches (dequantized model, doc-search index, pipelines family) so no timed run pays for them
$MAIN_PY -m agentic_rl.train experiment=smoke progress=false hydra.run.dir=<runs>/warmup > <runs>/warmup.log 2>&1
echo "warmup rc=$?" >> <runs>/sitting.load.txt
run vllm-seed-42 $VLLM_PY rollout.backend=vllm
run hf-seed-42 $MAIN_PY
run hf-bf16-seed-42 $MAIN_PY algo.dtype=bf16   # stopped 5 s after its start: this machine emulates bf16 (README)
kill $TRACE
