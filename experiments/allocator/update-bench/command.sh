#!/bin/bash
# bench-update under three allocators, glibc first and last (drift check)
cd "$(dirname "$0")/../../.."  # the checkout
out=experiments/allocator/update-bench
mkdir -p $out
grep -o -w -E "avx2|avx512f|avx512_bf16|amx_bf16" /proc/cpuinfo | sort | uniq -c > $out/cpu.txt
uptime > $out/load.txt
J=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
T=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
run() { name=$1; shift; env "$@" python -m agentic_rl.bench.algo --setting default mmap-pinned --repeats 2 > $out/$name.log 2>&1; echo "$name rc=$?"; tail -3 $out/$name.log; }
run glibc-a
run jemalloc LD_PRELOAD=$J
run tcmalloc LD_PRELOAD=$T
run glibc-b
uptime >> $out/load.txt
