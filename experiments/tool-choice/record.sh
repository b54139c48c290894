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
# machine paths out of the copies (logs and graders' details name the checkout, the interpreter and its libraries)
checkout=$(cd "$here/../.." && pwd)
shared=$(cd "$checkout/../shared" 2>/dev/null && pwd || echo /nonexistent)
# this interpreter's own locations, asked of it, so the record names no machine's layout
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
stdlib=$(python -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
interpreter=$(python -c 'import sys; print(sys.executable)')
sandbox_work=${TMPDIR:-/tmp}/work
for f in "$dest/train.log" "$dest/time-v.txt" "$dest/eval_before.jsonl" "$dest/eval_after.jsonl" "$dest/summary.json" "$dest/command.txt"; do
  if [ -f "$f" ]; then
    sed -i -e "s#$checkout#<checkout>#g" -e "s#${STUDY_TREE:-/nonexistent}#<study-worktree>#g" -e "s#$shared#<shared>#g" \
      -e "s#$sandbox_work/#<sandbox-work>/#g" -e "s#$site#<site-packages>#g" -e "s#$interpreter#<python>#g" \
      -e "s#$stdlib/#<stdlib>/#g" "$f"
  fi
done
{ grep -m1 -E "^flags" /proc/cpuinfo | tr ' ' '\n' | grep -E "^(avx2|avx512f|avx512_bf16|amx_bf16)$" | tr '\n' ' '
  echo; grep -m1 "model name" /proc/cpuinfo; echo "cores: $(nproc)"; } > "$dest/cpu.txt"
echo "$dest"
