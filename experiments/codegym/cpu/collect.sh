#!/bin/bash
# Copy the records of finished runs into experiments/codegym/cpu/ (the runs' own files, not retyped) and write the table.
#   experiments/codegym/cpu/collect.sh [RUNS_DIR]      # default outputs/codegym-runs: codegym-base-rates/, codegym-seed-N/
set -euo pipefail
RUNS=${1:-outputs/codegym-runs}
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../.."
if [ -f "$RUNS/codegym-base-rates/results.jsonl" ]; then
  mkdir -p "$HERE/base-rates-12-tmax2"
  cp "$RUNS/codegym-base-rates/results.jsonl" "$RUNS/codegym-base-rates/summary.json" "$HERE/base-rates-12-tmax2/"
  rm -rf "$HERE/base-rates-12-tmax2/.hydra" && cp -r "$RUNS/codegym-base-rates/.hydra" "$HERE/base-rates-12-tmax2/"
fi
seeds=()
for n in 1 2 3; do
  run="$RUNS/codegym-seed-$n"
  [ -f "$run/summary.json" ] || { echo "seed $n: no summary.json in $run (not finished), skipped"; continue; }
  out="$HERE/seed-$n"
  mkdir -p "$out"
  cp "$run/metrics.jsonl" "$run/summary.json" "$run/time-v.txt" "$out/"
  cp "$run/figures/training_summary.png" "$out/"
  for f in eval_before.jsonl eval_after.jsonl; do [ -f "$run/$f" ] && cp "$run/$f" "$out/"; done  # per-task records: the paired table
  rm -rf "$out/.hydra" && cp -r "$run/.hydra" "$out/"
  seeds+=("experiments/codegym/cpu/seed-$n")
done
[ ${#seeds[@]} -gt 0 ] && python -m agentic_rl.table "${seeds[@]}"
