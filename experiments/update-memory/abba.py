"""The A B B A means of bench-update-trim.log (python abba.py): each setting's update and CPU seconds averaged
over its two runs, their ratio, and each run's peak RSS."""

import ast
import statistics
from collections import defaultdict

runs = defaultdict(list)
with open("bench-update-trim.log") as log:
    for line in log:
        if line.startswith("{"):
            row = ast.literal_eval(line)
            runs[row["setting"]].append(row)
for setting, rows in runs.items():
    print(
        f"{setting:10s} update {statistics.mean(r['update_s'] for r in rows):6.1f} s"
        f"  cpu {statistics.mean(r['update_cpu_s'] for r in rows):6.1f} s"
        "  peak RSS " + ", ".join(f"{r['peak_rss_gib']:.2f}" for r in rows) + " GiB"
    )
for key in ("update_s", "update_cpu_s"):
    ratio = statistics.mean(r[key] for r in runs["default"]) / statistics.mean(r[key] for r in runs["untrimmed"])
    print(f"trimmed / untrimmed {key}: {ratio:.2f}")
