#!/bin/bash
# From a checkout at commit.txt, after `make setup`; one core (the other ran a tool-cap training job, see README).
export OMP_NUM_THREADS=1
for order in "untrimmed default" "default untrimmed"; do   # A B B A
  taskset -c 0 python -m agentic_rl.bench.algo --setting $order >> bench-update-trim.log 2>&1
done
taskset -c 0 python -m agentic_rl.bench.algo --setting default mmap-pinned >> bench-update-trim-pinned.log 2>&1

# Recomputing the shared prompt (bench-update-recompute.log, commit in bench-update-recompute.commit.txt, where
# algo.recompute_prefix was still off by default and the bench named its settings recompute-prefix[-pinned]; the
# same comparison at later commits: --setting prefix-held-pinned mmap-pinned mmap-pinned prefix-held-pinned ...).
# One core shared with a tool-cap training job on it (each update got about half of it: wall ~2x CPU seconds).
taskset -c 1 python -m agentic_rl.bench.algo --repeats 1 --setting mmap-pinned recompute-prefix-pinned \
    recompute-prefix-pinned mmap-pinned default recompute-prefix recompute-prefix default > bench-update-recompute.log 2>&1
