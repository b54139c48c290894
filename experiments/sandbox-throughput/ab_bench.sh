#!/bin/bash
# Same-sitting A/B of `make bench-sandbox` workload (a), trees alternating; run under the heavy lock.
OUT=/work/sbx3-scratch/ab
echo "=== lock acquired $(date -u +%H:%M:%S); uptime: $(uptime)" | tee $OUT/sitting.txt
for round in 1 2 3; do
  for t in before after; do
    if [ "$(date -u +%H%M)" -ge 0840 ]; then echo "=== 08:40 reached: no more runs" | tee -a $OUT/sitting.txt; break 2; fi
    if [ $t = before ]; then dir=/work/wt-before; mod=agentic_rl.sandbox.bench; else dir=/work/wt-sbx-meas; mod=agentic_rl.bench.sandbox; fi
    commit=$(git -C $dir rev-parse --short HEAD)
    f=$OUT/round$round-$t-$commit.txt
    echo "=== $t $commit $(date -u +%H:%M:%S) (cd $dir && python -m $mod --n-bcb 0 --workers 2)" | tee -a $OUT/sitting.txt
    (cd $dir && PYTHONPATH=$dir timeout 300 python -m $mod --n-bcb 0 --workers 2) > $f 2>&1
    grep "^(a" $f | tee -a $OUT/sitting.txt
  done
done
echo "=== done $(date -u +%H:%M:%S); uptime: $(uptime)" | tee -a $OUT/sitting.txt
