#!/bin/bash
# Same-sitting A/B of `make bench-sandbox` workload (a): before and after trees alternating, ROUNDS rounds
# (default 3), no run started at or after CUTOFF UTC (HHMM, default 1540). Run it under the heavy lock:
#   flock <lock file> nice -n 0 timeout 900 ab_bench.sh BEFORE_TREE AFTER_TREE OUT_DIR
# BEFORE_TREE: a checkout at 5824157 (benchmark module agentic_rl.sandbox.bench); AFTER_TREE: a checkout
# (or an exported copy) of this branch, whose commit is named in the file names (a copy without .git:
# set AFTER_COMMIT). The first sitting (2026-12-02 morning) ran with CUTOFF 0840.
BEFORE=$1; AFTER=$2; OUT=$3
CUTOFF=${CUTOFF:-1540}; ROUNDS=${ROUNDS:-3}
echo "=== lock acquired $(date -u +%H:%M:%S); uptime: $(uptime)" | tee -a $OUT/sitting.txt
for round in $(seq 1 $ROUNDS); do
  for t in before after; do
    if [ "$(date -u +%H%M)" -ge $CUTOFF ]; then echo "=== $CUTOFF reached: no more runs" | tee -a $OUT/sitting.txt; break 2; fi
    if [ $t = before ]; then dir=$BEFORE; mod=agentic_rl.sandbox.bench; commit=$(git -C $dir rev-parse --short HEAD)
    else dir=$AFTER; mod=agentic_rl.bench.sandbox; commit=${AFTER_COMMIT:-$(git -C $dir rev-parse --short HEAD)}; fi
    f=$OUT/round$round-$t-$commit.txt
    echo "=== $t $commit $(date -u +%H:%M:%S) (cd $dir && python -m $mod --n-bcb 0 --workers 2)" | tee -a $OUT/sitting.txt
    (cd $dir && PYTHONPATH=$dir timeout 300 python -m $mod --n-bcb 0 --workers 2) > $f 2>&1
    grep "^(a" $f | tee -a $OUT/sitting.txt
  done
done
echo "=== done $(date -u +%H:%M:%S); uptime: $(uptime)" | tee -a $OUT/sitting.txt
