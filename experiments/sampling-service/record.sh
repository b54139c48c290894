#!/bin/bash
# Copy the runs' own files from RUNS_DIR (run.sh's) into this folder's NAME/, and write compare.md from the copies.
# Usage (from the checkout): bash experiments/sampling-service/record.sh RUNS_DIR NAME
# ARMS="a b ..." records those arms (default: hf vllm-sync vllm-ahead-1); compare.md sets them side by side in that order.
set -euo pipefail
runs=$1
here=experiments/sampling-service/$2
mkdir -p "$here"
cp "$runs/commit.txt" "$runs/cpu.txt" "$here/"
arm_names=(${ARMS:-hf vllm-sync vllm-ahead-1})
for arm in "${arm_names[@]}"; do
    mkdir -p "$here/$arm/.hydra"
    cp "$runs/$arm/metrics.jsonl" "$runs/$arm/summary.json" "$here/$arm/"
    # a default-size sitting also evaluates after training: the held-out episodes, for pass@1 paired by task
    if [ -f "$runs/$arm/eval_after.jsonl" ]; then cp "$runs/$arm/eval_after.jsonl" "$here/$arm/"; fi
    cp "$runs/$arm/.hydra/config.yaml" "$runs/$arm/.hydra/overrides.yaml" "$here/$arm/.hydra/"
    cp "$runs/$arm.command" "$runs/$arm.load.txt" "$here/$arm/"
    cp "$runs/$arm.time-v.txt" "$here/$arm/time-v.txt"
    if [ -f "$runs/$arm.tree-rss.json" ]; then cp "$runs/$arm.tree-rss.json" "$here/$arm/tree-rss.json"; fi
    grep -E "rollout.backend=auto|sampler server|weights v|adapter v|vLLM|unavailable" "$runs/$arm.log" \
        > "$here/$arm/log-excerpt.txt" || true
    # the runs' folder and the tree they ran from are this machine's too (STUDY_TREE: scrub-paths.sh's name for it)
    sed -i "s#$(cd "$runs" && pwd)#<runs>#g" "$here/$arm/summary.json" "$here/$arm/$arm.command" "$here/$arm/time-v.txt"
    STUDY_TREE=$(sed -n 's/.*(in \(.*\), nice.*/\1/p' "$here/$arm/$arm.command") \
    bash experiments/scrub-paths.sh "$here/$arm/eval_after.jsonl" "$here/$arm/summary.json" "$here/$arm/log-excerpt.txt" \
        "$here/$arm/$arm.command" "$here/$arm/time-v.txt"
done
dirs=("${arm_names[@]/#/$here/}")
python -m agentic_rl.compare "${dirs[@]}" --time-v "${dirs[@]/%//time-v.txt}" --out "$here/compare.md"
