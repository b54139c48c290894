"""`python -m agentic_rl.plot RUN_OR_SWEEP_DIR`: (re)draw the figures of a run, or of a folder of runs (a sweep, or a
record's seed-*/ folders): each run's own figure, the three-panel figure over each arm's seeds, and the sweep's
panels; for runs that logged `env/calls_vs_oracle` (CodeGym), that ratio over training as well
(figures/calls_vs_oracle.png: each seed, their mean and band, the oracle's 1.0)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentic_rl.reports.plots import ORACLE_FIGURE, plot_calls_vs_oracle, plot_run, plot_seeds, plot_sweep
from agentic_rl.reports.run_files import find_runs
from agentic_rl.runtime.files import METRICS_FILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "path",
        type=Path,
        help="a run dir (has metrics.jsonl), or a sweep dir or record folder (has run dirs: job dirs, seed-*/)",
    )
    args = parser.parse_args(argv)
    # the command's output is the figures' paths, one per line (for scripts and shells), not log records
    if (args.path / METRICS_FILE).is_file():
        print(plot_run(args.path))  # noqa: T201 - the command prints the figure paths for scripts
        out = args.path / "figures" / f"{ORACLE_FIGURE}.png"
        oracle = plot_calls_vs_oracle([args.path], args.path.resolve().name, out)
        if oracle:  # only runs that logged the ratio (CodeGym); a code-task run has no such figure
            print(oracle)  # noqa: T201 - the command prints the figure paths for scripts
    elif find_runs(args.path):
        for run in find_runs(args.path):
            print(plot_run(run))  # noqa: T201 - the command prints the figure paths for scripts
        for figure in plot_seeds(args.path):
            print(figure)  # noqa: T201 - the command prints the figure paths for scripts
        print(plot_sweep(args.path))  # noqa: T201 - the command prints the figure paths for scripts
    else:
        print(f"error: {args.path} holds no metrics.jsonl and no job dirs with one", file=sys.stderr)  # noqa: T201 - the command's error goes to the terminal
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
