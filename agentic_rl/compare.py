"""`python -m agentic_rl.compare RUN_A RUN_B [--tolerance T] [--out FILE]`: two runs' outcomes (per-step metrics,
evaluations) checked for equality and their costs side by side (`reports/compare.py`); exit status 1 when
outcomes differ, so a refactor can be checked against a seeded run from before it.

`python -m agentic_rl.compare RUN [RUN ...] --side-by-side [--time-v FILE[+FILE...] ...] [--out FILE]`: any
number of runs read side by side for where the time went (wall time and peak RSS from `/usr/bin/time -v`
reports, one per run, a run's chunks joined by `+`; time per stage, throughput, reward per quarter, pass@1,
the sampler/trainer gap), nothing judged; `--time-v` implies `--side-by-side`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentic_rl.reports.compare import compare_markdown, compare_runs, run_figures, side_by_side_markdown
from agentic_rl.runtime.files import METRICS_FILE, RESULTS_FILE

RUN_FILES = (METRICS_FILE, RESULTS_FILE)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "runs", nargs="+", type=Path, help="run dirs (metrics.jsonl, summary.json): two, e.g. before and after a change"
    )
    parser.add_argument("--tolerance", type=float, default=0.0, help="relative tolerance for equal outcomes")
    parser.add_argument("--side-by-side", action="store_true", help="each run's figures side by side, none judged")
    parser.add_argument(
        "--time-v", nargs="*", default=None, help="one /usr/bin/time -v report per run (a run's chunks: A+B)"
    )
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of printing it")
    args = parser.parse_args(argv)
    args.side_by_side = args.side_by_side or args.time_v is not None
    if not args.side_by_side and len(args.runs) != 2:
        parser.error(f"outcomes are compared between two runs, not {len(args.runs)}; for more, use --side-by-side")
    return args


def side_by_side(runs: list[Path], time_reports: list[str] | None) -> str:
    reports = time_reports or [None] * len(runs)
    if len(reports) != len(runs):
        raise SystemExit(f"--time-v takes one report per run: {len(reports)} for {len(runs)} runs")
    return side_by_side_markdown([str(r) for r in runs], [run_figures(r, t) for r, t in zip(runs, reports)]) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # a run dir: a run's metrics, or at least an evaluation's per-episode records (a copy of its results)
    missing = [str(p) for p in args.runs if not any((p / f).is_file() for f in RUN_FILES)]
    if missing:
        # a command-line tool: its error, and its report, go to the terminal, not to a log
        names = " or ".join(RUN_FILES)
        print(f"error: not run dirs (no {names}): {', '.join(missing)}", file=sys.stderr)  # noqa: T201
        return 2
    if args.side_by_side:
        text, status = side_by_side(args.runs, args.time_v), 0
    else:
        result = compare_runs(*args.runs, args.tolerance)
        text, status = compare_markdown(result, str(args.runs[0]), str(args.runs[1])), 0 if result.equal else 1
    if args.out:
        args.out.write_text(text)
        print(args.out)  # noqa: T201
    else:
        print(text, end="")  # noqa: T201
    return status


if __name__ == "__main__":
    sys.exit(main())
