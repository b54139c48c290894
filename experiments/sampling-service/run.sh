#!/bin/bash
# One sitting, three arms of the same run (SIZE=smoke, the default: experiment=smoke with 4 tasks, one epoch of 4 GRPO
# steps, no warm-up and no evaluation, the rollout/update loop alone; SIZE=default: the embedded default run), one
# after another on this machine, at nice $NICE (19 unless set; NICE=0 on a quiet machine, so niced neighbours yield):
#   hf            rollout.backend=hf                                  the HF engine in the trainer, synchronous
#   vllm-sync     rollout.backend=vllm                                one vLLM sampler server (.venv-vllm), synchronous
#   vllm-ahead-1  rollout.backend=vllm algo.max_staleness=1           the same server, one step ahead of the trainer
#   vllm-ahead-1-unpinned  the same, memory.mmap_threshold_kib=null   glibc's dynamic mmap threshold in the trainer
#                 (`auto` pins 128 KiB for the vLLM backend on a CPU: less memory, a slower update)
#   hf-jemalloc, vllm-ahead-1-jemalloc   hf and vllm-ahead-1 with memory.allocator=jemalloc (trainer and servers),
#                 where the other arms name glibc
# ARMS="a b" runs those arms only (default: hf vllm-sync vllm-ahead-1).
# Usage (from the checkout): TREE=DIR bash experiments/sampling-service/run.sh RUNS_DIR
#   TREE: the tree whose code runs (a worktree pinned at one commit: git worktree add --detach DIR <commit>);
#   RUNS_DIR: where the run dirs go (not this checkout's outputs/). Then record.sh copies their own files here.
set -euo pipefail
runs=$1
tree=${TREE:-$(pwd)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$runs"
if [ "${SIZE:-smoke}" = default ]; then
    # the embedded default as `make train` runs it (warm-up, 32 GRPO groups, the evaluation after training), seed 1;
    # no evaluation before: it would differ per arm only by its sampler, and the arms are compared after training
    common=(eval_before=false logger=none progress=false seed=1)
else
    common=(experiment=smoke data.limit=4 algo.tasks_per_epoch=4 algo.epochs=1 warmup=none eval_before=false
            eval_after=false logger=none progress=false checkpoint_every=0 save_adapter=false seed=42)
fi
# the arms before memory.allocator existed ran on glibc's malloc, and still do; the -jemalloc arms run on jemalloc
declare -A arms=(
    [hf]="rollout.backend=hf memory.allocator=glibc"
    [vllm-sync]="rollout.backend=vllm memory.allocator=glibc"
    [vllm-ahead-1]="rollout.backend=vllm algo.max_staleness=1 memory.allocator=glibc"
    [vllm-ahead-1-unpinned]="rollout.backend=vllm algo.max_staleness=1 memory.mmap_threshold_kib=null memory.allocator=glibc"
    [hf-jemalloc]="rollout.backend=hf memory.allocator=jemalloc"
    [vllm-ahead-1-jemalloc]="rollout.backend=vllm algo.max_staleness=1 memory.allocator=jemalloc"
)
cd "$tree"
{ git rev-parse HEAD; git status --short | grep -v '^??' || true; } > "$runs/commit.txt"
{ grep -m1 'model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo; nproc; } > "$runs/cpu.txt"
for arm in ${ARMS:-hf vllm-sync vllm-ahead-1}; do
    # shellcheck disable=SC2086  # the arm's overrides are words
    echo "python -m agentic_rl.train ${common[*]} ${arms[$arm]} hydra.run.dir=$runs/$arm  (in $tree, nice ${NICE:-19})" \
        > "$runs/$arm.command"
    uptime > "$runs/$arm.load.txt"
    # shellcheck disable=SC2086
    PYTHONPATH=$tree nice -n "${NICE:-19}" /usr/bin/time -v -o "$runs/$arm.time-v.txt" python -m agentic_rl.train "${common[@]}" \
        ${arms[$arm]} hydra.run.dir="$runs/$arm" > "$runs/$arm.log" 2>&1 &
    pid=$!
    # the trainer's own peak is in time-v.txt; the tree's (servers included) is polled beside it
    python "$here/tree_rss.py" "$pid" "$runs/$arm.tree-rss.json" &
    wait "$pid" || echo "$arm failed: see $runs/$arm.log"
    wait
    uptime >> "$runs/$arm.load.txt"
done
