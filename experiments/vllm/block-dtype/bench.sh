#!/usr/bin/env bash
# The rollout benchmark (what `make bench-rollout ARGS="--notebook-jobs 4"` runs, without its `setup` step) once per
# setting, in the order given, in one sitting: per setting NAME its own NAME.log, NAME.json, NAME.time-v.txt and
# NAME.load.txt (`uptime` before and after), and the load average every 20 s in loadtrace.txt. From the repo root:
#   VLLM_PY=.venv-vllm/bin/python MAIN_PY=<the main interpreter> \
#     bash experiments/vllm/block-dtype/bench.sh OUT_DIR 'NAME:OVERRIDES' ...
# e.g. 'fp32-block32-1:rollout.vllm.dtype=float32 rollout.vllm.block_size=32'
set -u
out=$1
shift
mkdir -p "$out"
(while true; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-5 /proc/loadavg)"; sleep 20; done) >>"$out/loadtrace.txt" &
trace=$!
trap 'kill $trace' EXIT
for spec in "$@"; do
    name=${spec%%:*}
    read -r -a overrides <<<"${spec#*:}"
    { echo "before: $(date -u +%FT%TZ)"; uptime; } >"$out/$name.load.txt"
    PYTHONPATH=$PWD AGENTIC_RL_SANDBOX_PYTHON=$MAIN_PY /usr/bin/time -v -o "$out/$name.time-v.txt" \
        "$VLLM_PY" -m agentic_rl.bench.rollout --notebook-jobs 4 --backends hf vllm --json "$out/$name.json" \
        "${overrides[@]}" >"$out/$name.log" 2>&1
    rc=$?
    { echo "after: $(date -u +%FT%TZ) rc=$rc"; uptime; } >>"$out/$name.load.txt"
done
