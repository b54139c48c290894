#!/bin/bash
# bench-trainer before (5824157) and after (main), back to back, TRL matched only (the ratio the records quote)
export WANDB_MODE=offline
out=<runs>/bench-ab
run() { local name=$1 dir=$2; shift 2
  echo "== $name $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/sitting-trainer.log
  (cd $dir && PYTHONPATH=$dir /usr/bin/time -v python -m "$@") > $out/$name.txt 2>&1
  echo "   rc=$? $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/sitting-trainer.log; }
run trainer-before <checkout at 5824157> agentic_rl.rollout.bench_trainer --trl matched
run trainer-after <checkout> agentic_rl.bench.trainer --trl matched
