#!/bin/bash
# Copy a finished run's own files into this record: bash experiments/tool-choice/record.sh RUN_DIR NAME
# (NAME: seed-1, warmup-only/seed-1, ...). Nothing is retyped: the files are the run's, plus what run.sh noted
# beside it (RUN_DIR.command, RUN_DIR.commit) and /usr/bin/time's report from RUN_DIR.log.
set -euo pipefail
run=$1; name=$2
here=$(cd "$(dirname "$0")" && pwd)
dest=$here/$name
mkdir -p "$dest"
for f in metrics.jsonl eval_before.jsonl eval_after.jsonl summary.json train.log; do
  if [ -f "$run/$f" ]; then cp "$run/$f" "$dest/$f"; fi
done
if [ -d "$run/figures" ]; then rm -rf "$dest/figures"; cp -r "$run/figures" "$dest/figures"; fi
# the run's config as Hydra saved it: the table reads the seed, the arm (overrides) and the samples per task there
mkdir -p "$dest/.hydra"
for f in config.yaml overrides.yaml; do
  if [ -f "$run/.hydra/$f" ]; then cp "$run/.hydra/$f" "$dest/.hydra/$f"; fi
done
for extra in commit command; do
  if [ -f "$run.$extra" ]; then cp "$run.$extra" "$dest/$extra.txt"; fi
done
if [ -f "$run.log" ]; then sed -n '/Command being timed/,$p' "$run.log" > "$dest/time-v.txt"; fi
# machine paths out of the copies
bash "$here/../scrub-paths.sh" "$dest/train.log" "$dest/time-v.txt" "$dest/eval_before.jsonl" "$dest/eval_after.jsonl" \
  "$dest/summary.json" "$dest/command.txt"
{ grep -m1 -E "^flags" /proc/cpuinfo | tr ' ' '\n' | grep -E "^(avx2|avx512f|avx512_bf16|amx_bf16)$" | tr '\n' ' '
  echo; grep -m1 "model name" /proc/cpuinfo; echo "cores: $(nproc)"; } > "$dest/cpu.txt"
echo "$dest"
