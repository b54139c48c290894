#!/bin/bash
# Start one run of the study in outputs/tool-choice/NAME (of this checkout) and note the commit it runs at:
#   bash experiments/tool-choice/run.sh seed-2 seed=2            # the embedded default, seed 2
#   bash experiments/tool-choice/run.sh warmup-only/seed-1 seed=1 warmup=sft-only
# STUDY_TREE=DIR runs the code of another worktree (e.g. `git worktree add --detach DIR <commit>`), so that every
# run of a study runs one commit while this checkout moves on; the base evaluation cache and the run dirs stay
# in this checkout's outputs/.
# Then, when it has finished: bash experiments/tool-choice/record.sh outputs/tool-choice/NAME NAME
# A run stopped halfway continues with the same tree: python -m agentic_rl.train resume=<its run dir>
set -euo pipefail
name=$1; shift
home=$(pwd)
run=$home/outputs/tool-choice/$name
tree=${STUDY_TREE:-$home}
mkdir -p "$(dirname "$run")"
{ git -C "$tree" rev-parse HEAD; git -C "$tree" status --short | grep -v '^??' || true; } > "$run.commit"
echo "python -m agentic_rl.train $* logger=none progress=false hydra.run.dir=$run  (in $tree)" > "$run.command"
cd "$tree"
export PYTHONPATH=$tree AGENTIC_RL_BASE_EVAL_CACHE=${AGENTIC_RL_BASE_EVAL_CACHE:-$home/outputs/base-evals}
/usr/bin/time -v python -m agentic_rl.train "$@" logger=none progress=false hydra.run.dir="$run" > "$run.log" 2>&1
