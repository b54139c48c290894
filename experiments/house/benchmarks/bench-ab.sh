#!/bin/bash
# Benchmarks before (5824157, the last commit before the house work) and after (main) in one sitting, back to back.
export WANDB_MODE=offline
out=<runs>/bench-ab
run() { # name dir module args...
  local name=$1 dir=$2; shift 2
  echo "== $name $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/sitting.log
  (cd $dir && PYTHONPATH=$dir /usr/bin/time -v python -m "$@") > $out/$name.txt 2>&1
  echo "   rc=$? $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/sitting.log
}
git -C <checkout> rev-parse HEAD > $out/after-commit.txt
run search-before <checkout at 5824157> agentic_rl.tools.search.bench --json
run search-after <checkout> agentic_rl.bench.search --json
run sandbox-before <checkout at 5824157> agentic_rl.sandbox.bench --n-bcb 0 --workers 2
run sandbox-after <checkout> agentic_rl.bench.sandbox --n-bcb 0 --workers 2
run rollout-before <checkout at 5824157> agentic_rl.rollout.bench --notebook-jobs 4 --json $out/rollout-before.json
run rollout-after <checkout> agentic_rl.bench.rollout --notebook-jobs 4 --backends hf --json $out/rollout-after.json
echo done >> $out/sitting.log
