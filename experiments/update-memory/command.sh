#!/bin/bash
# From a checkout at commit.txt, after `make setup`; one core (the other ran a tool-cap training job, see README).
export OMP_NUM_THREADS=1
for order in "untrimmed default" "default untrimmed"; do   # A B B A
  taskset -c 0 python -m agentic_rl.bench.algo --setting $order >> bench-update-trim.log 2>&1
done
taskset -c 0 python -m agentic_rl.bench.algo --setting default mmap-pinned >> bench-update-trim-pinned.log 2>&1
