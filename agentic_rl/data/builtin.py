"""Loader for the built-in task set (original KodCode-format problems, pytest harness).

The problems live in `agentic_rl.data.builtin_tasks`; this module maps them to `Task`:
`prompt` is the question, `tests` the pytest file (the candidate is saved as `solution.py`),
`entry_point` the function name, `reference_solution` the reference module. `metadata` carries
`split`, `difficulty`, `api` (fully qualified standard-library names a good solution uses) and
`needs_api`.
"""

from __future__ import annotations

import random

from agentic_rl.data.builtin_tasks import BUILTIN_PROBLEMS, SPLITS, BuiltinProblem
from agentic_rl.types import Task

VALID_SPLITS = (*SPLITS, "all")
SOURCE = "builtin"


def task_id(split: str, index: int, name: str) -> str:
    """Stable id: `builtin/<split>/<nnn>_<name>`, `nnn` being the position within the split."""
    return f"{SOURCE}/{split}/{index:03d}_{name}"


def to_task(p: BuiltinProblem, index: int) -> Task:
    return Task(
        task_id=task_id(p.split, index, p.name),
        prompt=p.question,
        tests=p.test,
        harness="pytest",
        entry_point=p.name,
        reference_solution=p.solution,
        metadata={
            "source": SOURCE,
            "split": p.split,
            "difficulty": p.difficulty,
            "api": list(p.api),
            "needs_api": p.needs_api,
        },
    )


def _all_tasks() -> list[Task]:
    """Every problem as a Task, train first then eval, each in its written order."""
    tasks = []
    for split in SPLITS:
        members = [p for p in BUILTIN_PROBLEMS if p.split == split]
        tasks.extend(to_task(p, i) for i, p in enumerate(members))
    return tasks


def load_builtin(
    split: str = "train",
    limit: int | None = None,
    seed: int | None = None,
    shuffle: bool = False,
) -> list[Task]:
    """Return the built-in tasks of `split` ("train", "eval" or "all").

    With `shuffle`, the order is permuted by `random.Random(seed)` (same seed, same order); then
    `limit`, if given, keeps the first `limit` tasks.
    """
    if split not in VALID_SPLITS:
        raise ValueError(f"unknown built-in split {split!r}; valid splits: {', '.join(VALID_SPLITS)}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be a non-negative integer or None, got {limit!r}")
    tasks = [t for t in _all_tasks() if split == "all" or t.metadata["split"] == split]
    if shuffle:
        random.Random(seed).shuffle(tasks)
    if limit is not None:
        tasks = tasks[:limit]
    return tasks
