"""Callers of one symbol in a perf recording: `perf script -F comm,pid,ip,sym > s.txt`, then
    python perf_stacks.py s.txt SYMBOL DEPTH
prints the most frequent DEPTH-frame caller chains of the samples whose top frame is SYMBOL."""

import collections
import sys

path, target, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])
count = collections.Counter()
stack = []


def flush():
    if stack and stack[0] == target:
        count[" < ".join(stack[1 : depth + 1])] += 1


for line in open(path):
    if line.startswith(("\t", " ")) and line.strip():
        parts = line.split()
        if len(parts) >= 2:
            stack.append(parts[1].split("+")[0])
    else:
        flush()
        stack = []
flush()
for chain, n in count.most_common(12):
    print(n, chain)
