"""`python -m agentic_rl.compare RUN_A RUN_B [--out FILE]`: two runs' outcomes (per-step metrics, evaluations)
checked for equality and their costs side by side (`tracking/compare.py`); exit status 1 when outcomes differ,
so a refactor can be checked against a seeded run from before it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentic_rl.tracking.compare import compare_markdown, compare_runs

RUN_FILES = ("metrics.jsonl", "results.jsonl")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run_a", type=Path, help="a run dir (metrics.jsonl, summary.json), e.g. before a change")
    parser.add_argument("run_b", type=Path, help="the run dir to compare with it, e.g. after the change")
    parser.add_argument("--tolerance", type=float, default=0.0, help="relative tolerance for equal outcomes")
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of printing it")
    args = parser.parse_args(argv)
    # a run dir: a run's metrics, or at least an evaluation's per-episode records (a copy of its results)
    missing = [str(p) for p in (args.run_a, args.run_b) if not any((p / f).is_file() for f in RUN_FILES)]
    if missing:
        # a command-line tool: its error, and its report, go to the terminal, not to a log
        names = " or ".join(RUN_FILES)
        print(f"error: not run dirs (no {names}): {', '.join(missing)}", file=sys.stderr)  # noqa: T201
        return 2
    result = compare_runs(args.run_a, args.run_b, args.tolerance)
    text = compare_markdown(result, str(args.run_a), str(args.run_b))
    if args.out:
        args.out.write_text(text)
        print(args.out)  # noqa: T201
    else:
        print(text, end="")  # noqa: T201
    return 0 if result.equal else 1


if __name__ == "__main__":
    sys.exit(main())
