#!/bin/bash
export WANDB_MODE=offline
out=<runs>/bench-ab
echo "== rollout-before (again, without --json) $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/sitting.log
(cd <checkout at 5824157> && PYTHONPATH=<checkout at 5824157> /usr/bin/time -v python -m agentic_rl.rollout.bench --notebook-jobs 4) > $out/rollout-before.txt 2>&1
echo "   rc=$? $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/sitting.log
