"""Samples per symbol of some processes in two perf recordings (perf_run.py), before against after.

    perf report -i BEFORE.data --no-children -n --sort pid,sym -g none -q > before.txt   (same for after)
    python perf_compare.py before.txt after.txt PIDS_BEFORE PIDS_AFTER

PIDS_*: comma-separated pids, or `small:PID,PID,...`: every pid but those listed (the long-lived
processes and the idle task), i.e. the runners and inits. Prints the totals and the symbols whose
count changed most (before, after, change).
"""

import sys


def load(path, pids):
    out = {}
    skip = set(pids[len("small:") :].split(",")) if pids.startswith("small:") else None
    keep = None if skip is not None else set(pids.split(","))
    for line in open(path):
        p = line.split()
        if len(p) < 5:
            continue
        try:
            n = int(p[1])
        except ValueError:
            continue
        pid = p[2].split(":")[0]
        if (skip is not None and pid in skip) or (keep is not None and pid not in keep):
            continue
        sym = " ".join(p[4:])
        out[sym] = out.get(sym, 0) + n
    return out


b, a = load(sys.argv[1], sys.argv[3]), load(sys.argv[2], sys.argv[4])
print("total", sum(b.values()), sum(a.values()))
order = sorted(set(a) | set(b), key=lambda k: -(a.get(k, 0) - b.get(k, 0)))
for k in order[:25]:
    print(f"{b.get(k, 0):6d} {a.get(k, 0):6d} {a.get(k, 0) - b.get(k, 0):+6d} {k[:90]}")
print("...")
for k in order[-8:]:
    print(f"{b.get(k, 0):6d} {a.get(k, 0):6d} {a.get(k, 0) - b.get(k, 0):+6d} {k[:90]}")
