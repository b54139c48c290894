#!/bin/bash
# One seed of experiment=codegym-cpu (one lock acquisition). The first script to run also measures the base
# rates (experiments/codegym/cpu/base-rates-12-tmax2/) that the experiment's environment filter reads; `run_seed.sh base`
# measures only them. The measurement uses the experiment's episode settings (response prefix, worked example, calls left).
#   flock <lock file> experiments/codegym/cpu/run_seed.sh N      (RUNS=DIR: where the run dirs go, default outputs/codegym-runs;
#   SEED_TIMEOUT=S: the training run's time limit, default 1500 s; it stops at its next safe point, resumable)
N=$1
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$ROOT" || exit 1
export PYTHONPATH=$ROOT WANDB_MODE=offline
RUNS=${RUNS:-$ROOT/outputs/codegym-runs}
mkdir -p $RUNS
BASE=experiments/codegym/cpu/base-rates-12-tmax2
if [ ! -f $BASE/results.jsonl ]; then
  # 12 training environments whose answer comes from a small set, their first 2 configurations, 4 samples each at
  # the training temperature (0.7), with the experiment's episodes (T_max 2, 2 turns of 48 tokens, the "<action>"
  # prefix, worked example, calls left); each record carries its episode's transcript (evaluate_with_transcripts.py)
  rm -rf $RUNS/codegym-base-rates
  timeout 900 python experiments/codegym/cpu/evaluate_with_transcripts.py data=codegym data.split=train \
   'data.envs=[strings/PalindromeCheckEnv,strings/BalancedBracketsEnv,strings/AnagramCheckEnv,graphs/HasCycleEnv,graphs/BipartiteCheckEnv,dp/WordBreakEnv,graphs/CountComponentsEnv,graphs/ShortestPathLengthEnv,arrays/LongestIncreasingRunEnv,dp/CoinChangeEnv,arrays/MaxSubarraySumEnv,strings/VowelCountEnv]' \
   data.configs_per_env=2 data.shuffle=false data.t_max=2 'evaluator.modes=[multi_tool]' evaluator.n_samples=4 'evaluator.ks=[1]' \
   evaluator.sample_temperature=0.7 evaluator.sample_top_p=0.95 evaluator.batch_tasks=12 \
   rollout.max_turns=2 rollout.max_new_tokens=48 "rollout.response_prefix='<action>'" data.worked_example=true data.calls_left=true \
   logger=none progress=false hydra.run.dir=$RUNS/codegym-base-rates \
   > $RUNS/codegym-base-rates.log 2>&1
  mkdir -p $BASE
  cp -r $RUNS/codegym-base-rates/results.jsonl $RUNS/codegym-base-rates/summary.json $RUNS/codegym-base-rates/.hydra $BASE/ || exit 1
fi
[ "$N" = base ] && exit 0
D=$RUNS/codegym-seed-$N
mkdir -p $D
/usr/bin/time -v -o $D/time-v.txt timeout ${SEED_TIMEOUT:-1500} python -m agentic_rl.train experiment=codegym-cpu seed=$N hydra.run.dir=$D > $RUNS/codegym-seed-$N.log 2>&1
if grep -q "no training environment" $RUNS/codegym-seed-$N.log; then
  # the measurement kept nothing: train on every measured environment instead (recorded in .hydra/overrides.yaml)
  rm -rf $D; mkdir -p $D
  /usr/bin/time -v -o $D/time-v.txt timeout ${SEED_TIMEOUT:-1500} python -m agentic_rl.train experiment=codegym-cpu seed=$N data.min_success=-1.0 hydra.run.dir=$D > $RUNS/codegym-seed-$N.log 2>&1
fi
echo "seed $N rc $?" >> $RUNS/codegym-seeds.done
