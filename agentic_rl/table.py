"""`python -m agentic_rl.table SWEEP_DIR` or `python -m agentic_rl.table RUN_DIR [RUN_DIR ...]`: the result tables
with 95% intervals (`reports/tables.py`) as table.md and table.json, in the sweep dir or the run dirs' common
parent (`--out DIR` elsewhere). `--before BASE_EVAL_DIR [...]` pairs runs that only evaluated after training with
the base model's evaluation of the same tasks (one for every arm, or one per arm, matched by its overrides).

The paired sections' primary test takes the task as the unit: each task's mean over seeds and samples, a seeded
percentile bootstrap over tasks for the 95% interval (`--resamples`, `--bootstrap-seed`), an exact sign test on the
task means for p, and Holm's correction across the comparisons of a table. The section "After RL vs the base's best
mode and its format baselines" holds each arm's trained multi-tool pass rate against the base's best mode and each
format baseline before training. Records that carry `task_type` add the same tables per task type.

Runs that evaluated CodeGym tasks get their constant-answer baseline beside every success rate, and the policy
against it task by task: the `Done` answer that solves most of the evaluated tasks, run in the sandbox on the
environments the runs were evaluated on (their `.hydra/config.yaml`, else the built-in set; `--environments FILE`
or `builtin` names them), written per task to constant.jsonl beside the table. Runs that logged `env/calls_vs_oracle`
during training get its first- vs last-quarter reading per seed and across seeds (`reports/oracle_course.py`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentic_rl.reports.constant import ConstantBaselines
from agentic_rl.reports.stats import DEFAULT_BOOTSTRAP, Bootstrap
from agentic_rl.reports.tables import write_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        help="one sweep dir (its job dirs are the runs) or run dirs (each holds metrics.jsonl or summary.json)",
    )
    parser.add_argument("--out", type=Path, help="where table.md and table.json go")
    parser.add_argument(
        "--before",
        type=Path,
        nargs="+",
        help="the base model's evaluation (an evaluate run dir, or a training run's evaluation before): the paired "
        "change of runs that did not evaluate before training (eval_before=false) is taken against it; several, one "
        "per arm: each arm takes the one evaluated with the arm's own overrides (e.g. rollout.max_tool_calls=2)",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_BOOTSTRAP.resamples,
        help="bootstrap resamples of the task-level 95%% intervals (default: %(default)s)",
    )
    parser.add_argument(
        "--bootstrap-seed",
        type=int,
        default=DEFAULT_BOOTSTRAP.seed,
        help="seed of the bootstrap, so that a table rewrites byte for byte (default: %(default)s)",
    )
    parser.add_argument(
        "--environments",
        help="CodeGym: the environments file the runs were evaluated on, or 'builtin', for the constant-answer "
        "baseline (default: each run's own data config, else the built-in set)",
    )
    args = parser.parse_args(argv)
    try:
        spec = Bootstrap(args.resamples, args.bootstrap_seed)
        written = write_table(args.paths, args.out, args.before, spec, ConstantBaselines(args.environments))
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201 (the CLI's output)
        return 2
    for path in written:
        print(path)  # noqa: T201 (the CLI's output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
