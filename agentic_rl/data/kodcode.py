"""KodCode-V1 (training set): rows -> `Task` with the pytest harness.

Selection, as in the reference setup:
  1. keep rows whose `gpt_difficulty` is in `difficulties` (default easy, medium), in dataset order;
  2. shuffle with `seed`, using the permutation `datasets.Dataset.shuffle(seed=seed)` would use
     (`np.random.default_rng(seed).permutation`), so hub runs pick the same rows as the reference;
  3. take the first `n` (reference 1000);
  4. the training subset: every `subset_stride`-th of the first `subset_from` (reference 5 and 500 -> 100).
     `subset_stride: null` (or 1) with `subset_from: null` keeps all `n`;
  5. `limit` keeps the first `limit` of those.

A held-out split (`part: train | heldout`, with `n_heldout`), for studies that train on some rows and evaluate
on others of the same file. It is drawn before step 2 with its own `split_seed`, not the run's seed, so every
run and every evaluation sees the same split: the rows kept in step 1 are permuted with `split_seed`, the
first `n_heldout` are the held-out candidates and the rest the training part. Candidates that the near-duplicate
check (`agentic_rl.data.overlap`) flags against a training row are dropped, so the held-out part may be smaller.
`part: train` runs steps 2-5 on the training part; `part: heldout` keeps the held-out rows in split order, then
`limit`. `part: null` (the default) is the selection above over all rows.

Task fields: prompt = `question`, tests = `test` (a pytest file importing from `solution`), reference_solution
= `solution`, entry_point = `test_info[0].function_name` when present (None for class-based solutions).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentic_rl.data.overlap import drop_near_duplicates, task_text
from agentic_rl.data.records import describe_source, load_records, opt_str, req_str, row_error
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

HUB_ID = "KodCode/KodCode-V1"
SPLIT = "train"
DIFFICULTIES = ("easy", "medium", "hard")
PARTS = ("train", "heldout")
REQUIRED_COLUMNS = ("question_id", "question", "solution", "test", "gpt_difficulty")
OPTIONAL_COLUMNS = ("test_info", "subset", "style", "gpt_pass_percentage")


def load_kodcode(
    path: str | os.PathLike[str] | None = None,
    hub_id: str = HUB_ID,
    split: str = SPLIT,
    difficulties: Sequence[str] = ("easy", "medium"),
    n: int | None = 1000,
    subset_from: int | None = 500,
    subset_stride: int | None = 5,
    seed: int = 0,
    limit: int | None = None,
    cache_dir: str | None = None,
    part: str | None = None,
    n_heldout: int | None = None,
    split_seed: int = 0,
) -> list[Task]:
    """KodCode tasks; see the module docstring for how rows are chosen and split."""
    difficulties = _check_params(difficulties, n, subset_from, subset_stride, limit)
    _check_split(part, n_heldout)
    source = describe_source(path, hub_id, split)
    rows = load_records(path, hub_id, split, required=REQUIRED_COLUMNS, optional=OPTIONAL_COLUMNS, cache_dir=cache_dir)

    # Validate every row (not only the chosen ones) so a broken file fails the same way for every seed.
    tasks = [row_to_task(row, i, source) for i, row in enumerate(rows)]

    kept = [t for t in tasks if t.metadata["difficulty"] in difficulties]
    if not kept:
        found = sorted({t.metadata["difficulty"] for t in tasks})
        raise ValueError(
            f"{source}: no rows with gpt_difficulty in {list(difficulties)} (found: {found}). "
            f"Fix: set data.difficulties to some of {found}."
        )
    if part is not None:
        assert n_heldout is not None  # _check_split
        kept = _split_part(kept, part, n_heldout, split_seed, source)
        if part == "heldout":
            chosen = kept if limit is None else kept[:limit]
            _check_unique_ids(chosen, source)
            return chosen
    order = np.random.default_rng(seed).permutation(len(kept))
    shuffled = [kept[int(i)] for i in order]

    chosen = shuffled if n is None else shuffled[:n]
    if n is not None and len(chosen) < n:
        logger.warning(
            "%s: asked for n=%d tasks but only %d match %s; using all of them",
            source,
            n,
            len(chosen),
            list(difficulties),
        )
    subset = chosen[: subset_from if subset_from is not None else len(chosen) : subset_stride or 1]
    if subset_from is not None and subset_from > len(chosen):
        logger.warning("%s: subset_from=%d exceeds the %d chosen tasks", source, subset_from, len(chosen))
    if limit is not None:
        subset = subset[:limit]
    _check_unique_ids(subset, source)
    logger.info(
        "kodcode: %d rows, %d with difficulty in %s, %d chosen (seed %d), %d in the training subset",
        len(rows),
        len(kept),
        list(difficulties),
        len(chosen),
        seed,
        len(subset),
    )
    return subset


def row_to_task(row: dict[str, Any], index: int, source: str) -> Task:
    """Validate one KodCode row and map it to a pytest `Task` (DatasetError names the row and column)."""
    question_id = req_str(row, index, "question_id", source)
    difficulty = req_str(row, index, "gpt_difficulty", source)
    if difficulty not in DIFFICULTIES:
        raise row_error(
            source, index, "gpt_difficulty", f"unknown difficulty {difficulty!r}", f"use one of {list(DIFFICULTIES)}"
        )
    return Task(
        task_id=question_id,
        prompt=req_str(row, index, "question", source),
        tests=req_str(row, index, "test", source),
        harness="pytest",
        entry_point=_entry_point(row, index, source),
        reference_solution=req_str(row, index, "solution", source),
        metadata={
            "question_id": question_id,
            "subset": opt_str(row, index, "subset", source),
            "style": opt_str(row, index, "style", source),
            "difficulty": difficulty,
            "source_row": index,
        },
    )


def _entry_point(row: dict[str, Any], index: int, source: str) -> str | None:
    info = row.get("test_info")
    if info is None or (isinstance(info, list) and not info):
        return None
    fix = "test_info must be null or a list of {function_name, ...} objects"
    if not isinstance(info, list) or not isinstance(info[0], dict):
        raise row_error(source, index, "test_info", f"expected a list of objects, got {type(info).__name__}", fix)
    name = info[0].get("function_name")
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip():
        raise row_error(source, index, "test_info", f"test_info[0].function_name is {name!r}", fix)
    return name.strip()


def _check_params(
    difficulties: Sequence[str], n: int | None, subset_from: int | None, subset_stride: int | None, limit: int | None
) -> tuple[str, ...]:
    if isinstance(difficulties, str):
        difficulties = [difficulties]
    difficulties = tuple(difficulties)
    unknown = [d for d in difficulties if d not in DIFFICULTIES]
    if not difficulties or unknown:
        raise ValueError(f"data.difficulties={list(difficulties)}: must be a non-empty subset of {list(DIFFICULTIES)}")
    for name, value, low in (
        ("n", n, 1),
        ("subset_from", subset_from, 1),
        ("subset_stride", subset_stride, 1),
        ("limit", limit, 0),
    ):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise ValueError(f"data.{name}={value!r}: must be null or an integer >= {low}")
    return difficulties


def _check_split(part: str | None, n_heldout: int | None) -> None:
    if part is None:
        if n_heldout is not None:
            raise ValueError(f"data.n_heldout={n_heldout} needs data.part: train or heldout (it is null)")
        return
    if part not in PARTS:
        raise ValueError(f"data.part={part!r}: must be null, train or heldout")
    if n_heldout is None or isinstance(n_heldout, bool) or not isinstance(n_heldout, int) or n_heldout < 1:
        raise ValueError(f"data.n_heldout={n_heldout!r}: data.part={part} needs an integer >= 1 (held-out candidates)")


def _split_part(tasks: list[Task], part: str, n_heldout: int, split_seed: int, source: str) -> list[Task]:
    """One part of the split the module docstring describes."""
    if n_heldout >= len(tasks):
        raise ValueError(
            f"{source}: data.n_heldout={n_heldout} leaves no training rows of the {len(tasks)} kept; "
            f"ask for fewer than {len(tasks)}"
        )
    order = np.random.default_rng(split_seed).permutation(len(tasks))
    permuted = [tasks[int(i)] for i in order]
    candidates, train = permuted[:n_heldout], permuted[n_heldout:]
    if part == "train":
        logger.info("kodcode: split seed %d: the training part, %d of %d rows", split_seed, len(train), len(tasks))
        return train
    heldout = drop_near_duplicates(candidates, train, task_text)
    logger.info(
        "kodcode: split seed %d: %d training rows, %d held-out (%d of %d candidates flagged as near-duplicates)",
        split_seed,
        len(train),
        len(heldout),
        n_heldout - len(heldout),
        n_heldout,
    )
    return heldout


def _check_unique_ids(tasks: list[Task], source: str) -> None:
    """Task ids key rollout groups and results, so the chosen tasks must not share one."""
    seen: dict[str, int] = {}
    for task in tasks:
        row = task.metadata["source_row"]
        if task.task_id in seen:
            raise row_error(
                source,
                row,
                "question_id",
                f"duplicate id {task.task_id!r} (also at row {seen[task.task_id]})",
                "ids must be unique; remove the duplicate row",
            )
        seen[task.task_id] = row
