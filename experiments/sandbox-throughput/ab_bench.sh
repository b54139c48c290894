#!/bin/bash
# Same-sitting A/B of `make bench-sandbox` workload (a): before and after trees alternating, three rounds,
# no run started at or after 08:40 UTC. Run it under the heavy lock:
#   flock /work/heavy.lock nice -n 0 timeout 1500 ab_bench.sh BEFORE_TREE AFTER_TREE OUT_DIR
# (The copy that ran had the three paths written in: a checkout at 5824157, a checkout of this branch at
# the commit its file names show, and a scratch directory.)
BEFORE=$1; AFTER=$2; OUT=$3
echo "=== lock acquired $(date -u +%H:%M:%S); uptime: $(uptime)" | tee $OUT/sitting.txt
for round in 1 2 3; do
  for t in before after; do
    if [ "$(date -u +%H%M)" -ge 0840 ]; then echo "=== 08:40 reached: no more runs" | tee -a $OUT/sitting.txt; break 2; fi
    if [ $t = before ]; then dir=$BEFORE; mod=agentic_rl.sandbox.bench; else dir=$AFTER; mod=agentic_rl.bench.sandbox; fi
    commit=$(git -C $dir rev-parse --short HEAD)
    f=$OUT/round$round-$t-$commit.txt
    echo "=== $t $commit $(date -u +%H:%M:%S) (cd $dir && python -m $mod --n-bcb 0 --workers 2)" | tee -a $OUT/sitting.txt
    (cd $dir && PYTHONPATH=$dir timeout 300 python -m $mod --n-bcb 0 --workers 2) > $f 2>&1
    grep "^(a" $f | tee -a $OUT/sitting.txt
  done
done
echo "=== done $(date -u +%H:%M:%S); uptime: $(uptime)" | tee -a $OUT/sitting.txt
