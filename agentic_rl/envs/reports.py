"""Reports an evaluation writes about its task set (summary.json's "environment"), through the environment's
`report` hook (agentic_rl.envs.base).

A task set's report is an entry of the "task_report" registry (agentic_rl.registry BUILTINS["task_report"], or a
`task_report.<name>` entry point): a function `(tasks, records, *, python, excluded) -> dict | None` that answers
None for tasks that are not its kind. `task_set_report` gives the first report any entry writes.

The built-in one is BigCodeBench's (`bigcodebench_report`): the tasks that may fail for environmental reasons,
network use (a heuristic on the code) and libraries the sandbox interpreter lacks (an import check with it). They
are reported and scored as failures, never dropped unless the user lists them in `exclude`. A report's entries
with a `count` and `ids` are what `python -m agentic_rl.evaluate` prints under its table.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentic_rl.registry import Registry
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

TaskReport = Callable[..., "dict[str, Any] | None"]
TASK_REPORTS: Registry[TaskReport] = Registry("task report")


def task_set_report(
    tasks: Sequence[Task],
    records: Mapping[str, Sequence[dict[str, Any]]],
    *,
    python: str | None = None,
    excluded: Sequence[str] = (),
) -> dict[str, Any] | None:
    """The first report a declared task report writes for `tasks`, or None when none is of their kind."""
    for report in TASK_REPORTS.load_all().values():
        found = report(tasks, records, python=python, excluded=excluded)
        if found is not None:
            return found
    return None


def bigcodebench_report(
    tasks: Sequence[Task],
    records: Mapping[str, Sequence[dict[str, Any]]],
    *,
    python: str | None = None,
    excluded: Sequence[str] = (),
) -> dict[str, Any] | None:
    """BigCodeBench tasks that may fail for environmental reasons (see the module docstring); None for other tasks.

    `records`: each mode's result records, for how many of those tasks passed in each mode."""
    if not tasks or not all(t.task_id.startswith("BigCodeBench/") and t.harness == "unittest" for t in tasks):
        return None
    from agentic_rl.data.bigcodebench import missing_lib_tasks, network_task_ids

    python = python or sys.executable
    network = network_task_ids(tasks)
    try:
        missing = missing_lib_tasks(tasks, python)
    except (ValueError, RuntimeError) as exc:  # the report must not sink the evaluation
        logger.warning("could not check the libraries of %s: %s", python, exc)
        missing = {}
    report: dict[str, Any] = {
        "python": python,
        "needs_network": {"count": len(network), "ids": network},
        "missing_libs": {
            "count": len(missing),
            "ids": sorted(missing),
            "modules": missing,
            "absent": sorted({m for mods in missing.values() for m in mods}),
        },
        "note": "scored as failures when they fail; list ids in exclude=[...] to drop them from the score",
        "excluded_by_user": list(excluded),
    }
    if records:
        for key, ids in (("needs_network", set(network)), ("missing_libs", set(missing))):
            report[key]["passed_by_mode"] = {
                mode: sum(r["passed"] for r in rows if r["task_id"] in ids) for mode, rows in records.items()
            }
    return report


__all__ = ["TASK_REPORTS", "bigcodebench_report", "task_set_report"]
