"""Writes side-by-side.md from the benchmark outputs in a folder (this one by default: before 5824157, after main).

    python experiments/house/benchmarks/side_by_side.py > experiments/house/benchmarks/side-by-side.md
    python experiments/house/benchmarks/side_by_side.py FOLDER BEFORE AFTER > FOLDER/side-by-side.md

The folder holds search-, sandbox- and rollout-{before,after}.txt, and trainer-{before,after}.txt where that
benchmark was run (its rows are left out otherwise).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
BEFORE, AFTER = sys.argv[2:4] if len(sys.argv) > 3 else ("5824157", "main")


def search_results(name: str) -> dict:
    text = (HERE / name).read_text()
    return json.loads(text[text.index("{") : text.rindex("}") + 1])


def first_match(pattern: str, name: str) -> tuple[str, ...]:
    match = re.search(pattern, (HERE / name).read_text(), re.MULTILINE)
    if match is None:
        raise SystemExit(f"{name}: no line matches {pattern!r}")
    return match.groups()


def main() -> None:
    print(f"| benchmark | quantity | before ({BEFORE}) | after ({AFTER}) | equal |")
    print("|---|---|---|---|---|")
    before, after = search_results("search-before.txt"), search_results("search-after.txt")
    for backend in sorted(before):
        for key in ("recall_at_1", "recall_at_3", "mrr", "entries", "latency_median_ms"):
            a, b = before[backend][key], after[backend][key]
            same = "yes" if a == b else ("(a time)" if "latency" in key else "NO")
            print(f"| search | {backend} {key} | {a:.4g} | {b:.4g} | {same} |")
    sandbox = r"ratio\s+([\d.]+)"
    naive = r"naive\s+([\d.]+) calls/s"
    sbx = r"sandbox\s+([\d.]+) calls/s"
    for label, pattern in (("snippets x naive", sandbox), ("naive calls/s", naive), ("sandbox calls/s", sbx)):
        (a,), (b,) = first_match(pattern, "sandbox-before.txt"), first_match(pattern, "sandbox-after.txt")
        print(f"| sandbox (a), 2 workers | {label} | {a} | {b} | (a time) |")
    row = r"^\| {} \| (\d+) \| (\d+) \| [\d.]+ \| [\d.]+ \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (\d+) / (\d+) = [\d.]+ \|"
    for loop in ("engine \\(episode\\)", "notebook loop"):
        a = first_match(row.format(loop), "rollout-before.txt")
        b = first_match(row.format(loop), "rollout-after.txt")
        names = ("episodes", "generated tokens", "tok/s", "x notebook", "of ceiling", "prefill tokens", "context tokens")
        for name, x, y in zip(names, a, b):
            timed = name in ("tok/s", "x notebook", "of ceiling")
            print(f"| rollout, {loop.replace(chr(92), '')} | {name} | {x} | {y} | "
                  f"{'(a time)' if timed else ('yes' if x == y else 'NO')} |")
    if all((HERE / f).is_file() for f in TRAINER):
        trainer_rows()


def trainer_rows() -> None:
    trainer = r"^\| {} \| \d+ \| ([\d.]+) \| [^|]+ \| ([^|]+) \|"
    for name in ("agentic_rl", "TRL GRPOTrainer \\(matched\\)"):
        (a_step, a_tokens), (b_step, b_tokens) = (first_match(trainer.format(name), f) for f in TRAINER)
        label = name.replace("\\", "")
        print(f"| trainer, {label} | median step s | {a_step} | {b_step} | (a time) |")
        same = "yes" if a_tokens.strip() == b_tokens.strip() else "NO"
        print(f"| trainer, {label} | completion tokens per step | {a_tokens.strip()} | {b_tokens.strip()} | {same} |")
    (a_ratio,), (b_ratio,) = (first_match(r"ratio agentic_rl / TRL \(matched\): ([\d.]+)", f) for f in TRAINER)
    print(f"| trainer | agentic_rl / TRL (matched) | {a_ratio} | {b_ratio} | (a time) |")


TRAINER = ("trainer-before.txt", "trainer-after.txt")

if __name__ == "__main__":
    main()
