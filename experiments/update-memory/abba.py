"""A B B A means of a bench-update log: each setting's update and CPU seconds averaged over its runs, the ratio of
B to A, and each run's peak RSS.

    python abba.py                                                   # bench-update-trim.log: untrimmed, default
    python abba.py bench-update-recompute.log mmap-pinned recompute-prefix-pinned
    python abba.py bench-update-recompute.log default recompute-prefix
"""

import ast
import statistics
import sys
from collections import defaultdict

log_file, first, second = sys.argv[1:4] if len(sys.argv) > 3 else ("bench-update-trim.log", "untrimmed", "default")
runs = defaultdict(list)
with open(log_file) as log:
    for line in log:
        if line.startswith("{"):
            row = ast.literal_eval(line)
            runs[row["setting"]].append(row)
for setting in (first, second):
    rows = runs[setting]
    print(
        f"{setting:24s} update {statistics.mean(r['update_s'] for r in rows):6.1f} s"
        f"  cpu {statistics.mean(r['update_cpu_s'] for r in rows):6.1f} s"
        "  peak RSS " + ", ".join(f"{r['peak_rss_gib']:.2f}" for r in rows) + " GiB"
    )
for key in ("update_s", "update_cpu_s"):
    ratio = statistics.mean(r[key] for r in runs[second]) / statistics.mean(r[key] for r in runs[first])
    print(f"{second} / {first} {key}: {ratio:.2f}")
