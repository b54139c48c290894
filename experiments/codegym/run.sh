#!/bin/bash
# One seed of experiment=codegym-learn, its own files copied into experiments/codegym/seed-N/; then the table.
#   experiments/codegym/run.sh N        (N = 1, 2, 3: one seed, about 30 minutes on the 2-core CPU)
#   experiments/codegym/run.sh table    (after the seeds: table.md, table.json, constant.jsonl beside them)
# RUNS=DIR: where the run dirs go (default outputs/codegym-learn). SEED_TIMEOUT=S: the run's limit (default 3600 s;
# a run stopped by it is resumable: python -m agentic_rl.train resume=RUNS/seed-N). EXTRA="k=v ...": more overrides
# (the smoke check of the README uses it; a record made with EXTRA says so in its .hydra/overrides.yaml).
# OUT=DIR: where seed-N/ and the table go (default experiments/codegym; another arm, e.g. warmup=sft-only,
# gets a folder of its own).
set -uo pipefail
N=${1:?usage: run.sh SEED | table}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=${OUT:-$ROOT/experiments/codegym}
cd "$ROOT" || exit 1
export PYTHONPATH=$ROOT WANDB_MODE=offline
if [ "$N" = table ]; then
  mapfile -t seeds < <(ls -d "$HERE"/seed-*/)
  # the task as the unit, the constant-answer baseline of the evaluated held-out tasks (the runs' own eval_data:
  # the starter set) beside every success rate, written per task to constant.jsonl
  exec python -m agentic_rl.table "${seeds[@]}" --out "$HERE"
fi
RUNS=${RUNS:-$ROOT/outputs/codegym-learn}
D=$RUNS/seed-$N
mkdir -p "$D"
# shellcheck disable=SC2086  # EXTRA is a list of overrides
/usr/bin/time -v -o "$D/time-v.txt" timeout "${SEED_TIMEOUT:-3600}" \
  python -m agentic_rl.train experiment=codegym-learn seed="$N" hydra.run.dir="$D" ${EXTRA:-} > "$RUNS/seed-$N.log" 2>&1
echo "seed $N rc $? (log: $RUNS/seed-$N.log)"
[ -f "$D/summary.json" ] || { echo "no summary.json in $D: not finished, nothing copied"; exit 1; }
out=$HERE/seed-$N
mkdir -p "$out"
cp "$D/metrics.jsonl" "$D/summary.json" "$D/time-v.txt" "$out/"
for f in eval_before.jsonl eval_after.jsonl figures/training_summary.png; do
  if [ -f "$D/$f" ]; then cp "$D/$f" "$out/"; fi
done
rm -rf "$out/.hydra" && cp -r "$D/.hydra" "$out/"
