#!/bin/bash
# Issue #50's real synthesis run: vLLM's OpenAI server, from the vLLM interpreter `make setup` made (.venv-vllm),
# serves the embedded SmolLM2-135M-Instruct on loopback, and `python -m agentic_rl.envs.synthesize` makes CodeGym
# environments from the first N KodCode rows through it. The command's own files are copied here.
#   bash experiments/codegym/synthesis-served/run.sh [PROBLEMS.jsonl] [N]   (default ../shared/data/kodcode_sample.jsonl, 10)
# VENV=DIR: the interpreter with vLLM (default .venv-vllm); RUN=DIR: where the run writes (default outputs/synthesis-served).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
PROBLEMS=${1:-$ROOT/../shared/data/kodcode_sample.jsonl}
N=${2:-10}
RUN=${RUN:-$ROOT/outputs/synthesis-served}
VENV=${VENV:-$ROOT/.venv-vllm}
CACHED=${AGENTIC_RL_CACHE_DIR:-$HOME/.cache/agentic_rl}/models/SmolLM2-135M-Instruct.Q4_1  # make setup's de-quantized copy
PORT=${PORT:-8765}
rm -rf "$RUN" && mkdir -p "$RUN"
# the de-quantized weights as they are, beside a config without the GGUF loader's quantization_config (vLLM would
# take it for a quantization method it does not have)
MODEL=$RUN/model
mkdir -p "$MODEL"
for f in "$CACHED"/*; do [ "$(basename "$f")" = config.json ] || ln -s "$f" "$MODEL/"; done
python -c "import json,sys; c=json.load(open(sys.argv[1])); c.pop('quantization_config', None); json.dump(c, open(sys.argv[2], 'w'), indent=2)" \
  "$CACHED/config.json" "$MODEL/config.json"
{ date -u +%FT%TZ; grep -o -w 'avx2\|avx512f\|avx512_bf16\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' '; echo; nproc; } > "$RUN/machine.txt"
"$VENV/bin/python" -m vllm.entrypoints.openai.api_server --model "$MODEL" --served-model-name smollm2-135m-instruct \
  --host 127.0.0.1 --port "$PORT" --dtype float32 --enforce-eager --max-model-len 8192 \
  --kv-cache-memory-bytes 1073741824 --max-num-seqs 16 > "$RUN/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null' EXIT
start=$(date +%s)
until curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null; do
  sleep 5
  kill -0 $SERVER 2>/dev/null || { echo "the server died: $RUN/server.log"; exit 1; }
  [ $(( $(date +%s) - start )) -gt 1500 ] && { echo "the server was not up in 1500 s: $RUN/server.log"; exit 1; }
done
echo "server up after $(( $(date +%s) - start )) s" | tee "$RUN/server-start.txt"
cd "$ROOT" || exit 1
echo "python -m agentic_rl.envs.synthesize $PROBLEMS --endpoint http://127.0.0.1:$PORT/v1 --model smollm2-135m-instruct --out envs.jsonl --limit $N --timeout-s 300" > "$RUN/command.txt"
PYTHONPATH=$ROOT /usr/bin/time -v -o "$RUN/time-v.txt" python -m agentic_rl.envs.synthesize "$PROBLEMS" \
  --endpoint "http://127.0.0.1:$PORT/v1" --model smollm2-135m-instruct --out "$RUN/envs.jsonl" --limit "$N" --timeout-s 300 \
  > "$RUN/synthesize.log" 2>&1
echo "synthesize rc $?" | tee -a "$RUN/server-start.txt"
for f in envs.report.json envs.status.jsonl synthesize.log time-v.txt server-start.txt machine.txt command.txt server.log; do
  if [ -f "$RUN/$f" ]; then cp "$RUN/$f" "$HERE/$f"; fi
done
if [ -f "$RUN/envs.jsonl" ]; then cp "$RUN/envs.jsonl" "$HERE/envs.jsonl"; fi
bash "$ROOT/experiments/scrub-paths.sh" "$HERE"/*.txt "$HERE"/*.log "$HERE"/envs.*
sed -i "s#$VENV#<vllm-venv>#g" "$HERE"/*.log  # the vLLM interpreter's own paths in the server's warnings
echo "$HERE"
