"""The course of `env/calls_vs_oracle` over training: the CodeGym seed's finding that an episode's call count
approaches the scripted oracle's, read as numbers (issue #50).

Each training step logs `env/calls_vs_oracle` = `env/calls_per_episode` / `env/oracle_calls` over its episodes
(`envs.metrics.env_metrics`, the documented formula; 1.0 is the oracle's length). Per run (`run_course`, `reading`):
its mean over the first and the last k logged training steps, k = ceil(n/4) as for the training reward
(`runs.quarter_means`), the distance from the oracle |1 - ratio| of each window and its change (negative: closer to
the oracle), and over the same steps the mean calls per episode and oracle calls. Those two say which side moved: a
step's oracle count is that of the tasks drawn for it, so a ratio can change with the task order alone. Across an
arm's seeds (`arm_reading`): the mean with its 95% t interval (`runs.across_seeds`, unclipped).

The table section (`oracle_markdown`) and the figure (`plots.plot_calls_vs_oracle`) exist only for runs that
logged the ratio on a training step (CodeGym environments whose file records the oracle's calls); other runs get
neither, and no error. A metrics.jsonl line that is not a JSON object, and a training step without a numeric
ratio, are skipped and counted (the `skipped` cell, and a warning).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_rl.reports.run_files import read_metrics_counted
from agentic_rl.reports.runs import across_seeds, per_step, quarter_means, run_seed

logger = logging.getLogger(__name__)

RATIO = "env/calls_vs_oracle"
CALLS = "env/calls_per_episode"
ORACLE = "env/oracle_calls"
ORACLE_SECTION = f"CodeGym: calls against the oracle's over training (`{RATIO}`)"


@dataclass(frozen=True)
class RunCourse:
    """One run's `RATIO` per training step, with the steps' calls per episode and oracle calls (None where a step
    did not log them), and what could not be read: training steps without a numeric ratio (`missing_steps`) and
    metrics.jsonl lines that are not a JSON object (`bad_lines`, line numbers)."""

    run: Path
    steps: list[int]
    ratios: list[float]
    calls: list[float | None]
    oracle: list[float | None]
    missing_steps: list[int]
    bad_lines: list[int]

    @property
    def skipped(self) -> int:
        return len(self.missing_steps) + len(self.bad_lines)


def _number(value: Any) -> bool:
    """A logged value a mean can take: a finite int or float (not a bool, a string, null or NaN)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def run_course(run: Path) -> RunCourse:
    """`RunCourse` of a run dir, read through `run_files.read_metrics_counted` (which keeps the line numbers of the
    lines it could not read)."""
    records, bad_lines = read_metrics_counted(run)
    training = [r for r in records if "train/epoch" in r and "step" in r]
    by_step = {r["step"]: r for r in training}
    steps, ratios = [], []
    for step, value in zip(*per_step(training, RATIO)):
        if _number(value):
            steps.append(step)
            ratios.append(float(value))
    missing = sorted({r["step"] for r in training} - set(steps))
    calls = [by_step[s].get(CALLS) if _number(by_step[s].get(CALLS)) else None for s in steps]
    oracle = [by_step[s].get(ORACLE) if _number(by_step[s].get(ORACLE)) else None for s in steps]
    # a run that never logged the ratio (code tasks) is not missing it at every step: it has no reading at all
    course = RunCourse(Path(run), steps, ratios, calls, oracle, missing if steps else [], bad_lines)
    if course.steps and course.skipped:
        logger.warning(
            "%s: %s skipped: %d training steps without a numeric value (%s), %d lines not a JSON object (%s)",
            run,
            RATIO,
            len(course.missing_steps),
            course.missing_steps[:10],
            len(bad_lines),
            bad_lines[:10],
        )
    return course


def _window_means(values: list[float | None], q: int) -> tuple[float, float] | None:
    """Means of the first and the last `q` values (the ratio's windows), None where a window misses a value."""
    first, last = values[:q], values[-q:]
    if any(v is None for v in first + last):
        return None
    return sum(first) / q, sum(last) / q  # type: ignore[arg-type]  # None ruled out above


def reading(course: RunCourse) -> dict[str, Any] | None:
    """The run's first- and last-window reading (the module doc), JSON-ready; None when it logged no ratio."""
    quarters = quarter_means(course.ratios)
    if quarters is None:
        return None
    q = quarters["quarter_steps"]
    gap_first, gap_last = abs(1.0 - quarters["first_quarter"]), abs(1.0 - quarters["last_quarter"])
    return {
        **quarters,
        "gap_first": gap_first,
        "gap_last": gap_last,
        "gap_change": gap_last - gap_first,
        "calls": _window_means(course.calls, q),
        "oracle": _window_means(course.oracle, q),
        "missing_steps": course.missing_steps,
        "bad_lines": course.bad_lines,
    }


def arm_reading(label: str, runs: list[Path]) -> dict[str, Any] | None:
    """Per run its `reading`, and across the seeds that logged the ratio the mean [95% t] of the first and last
    windows and of the change in distance; None when no run of the arm logged it."""
    seeds = []
    for run in runs:
        read = reading(run_course(run))
        seeds.append({"run": str(run), "seed": run_seed(run), **(read or {})})
    logged = [s for s in seeds if "first_quarter" in s]
    if not logged:
        return None
    return {
        "arm": label,
        "runs": seeds,
        **{key: across_seeds([s[key] for s in logged]).as_dict() for key in ("first_quarter", "last_quarter")},
        "gap_change": across_seeds([s["gap_change"] for s in logged]).as_dict(),
    }


def oracle_section(arms: dict[str, list[Path]]) -> list[dict[str, Any]] | None:
    """The arms' `arm_reading`s, for table.json; None when no run logged the ratio (code-task runs)."""
    rows = [row for label, runs in arms.items() if (row := arm_reading(label, runs))]
    return rows or None
