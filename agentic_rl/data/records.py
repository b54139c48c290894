"""The one loading path every dataset module uses, and the row validators that map rows to `Task`.

`load_records(path, hub_id, split)` goes through `datasets` in both cases:
  - `path=None`: `load_dataset(hub_id, split=split)` from the Hugging Face Hub;
  - `path="x.jsonl"`: `load_dataset("json", data_files=path, split="train")` on a local copy with the hub's
    columns (.json, .jsonl, .json.gz or .jsonl.gz).

Every problem with the input (missing file, empty file, missing column, malformed row, unreachable hub)
raises `DatasetError`, a `ValueError` whose message names the source, the row and the column, and says
how to fix it. Row numbers are 0-based positions in the source (for a .jsonl file: line number - 1, when
the file has no blank lines).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

logger = logging.getLogger(__name__)

LOCAL_SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz")


class DatasetError(ValueError):
    """A dataset could not be loaded or one of its rows is malformed; the message says how to fix it."""


class DatasetFileNotFoundError(DatasetError, FileNotFoundError):
    """`path=...` names a file that does not exist (also a `FileNotFoundError`)."""


def describe_source(path: str | os.PathLike[str] | None, hub_id: str, split: str) -> str:
    """The label used in error messages: the local file, or the hub dataset and split."""
    if path is not None:
        return f"file {os.fspath(path)}"
    return f"hub dataset {hub_id} (split {split})"


def load_records(
    path: str | os.PathLike[str] | None,
    hub_id: str,
    split: str,
    *,
    required: Sequence[str] | None = None,
    optional: Sequence[str] = (),
    name: str | None = None,
    cache_dir: str | None = None,
) -> list[dict[str, Any]]:
    """Load a dataset's rows as plain dicts, from the hub (`path=None`) or a local json/jsonl(.gz) copy.

    `required`: columns that must exist (else `DatasetError` listing the columns found). When given, only
    `required` and the present `optional` columns are kept, so heavy unused columns are never converted
    to Python objects. `name` is the hub config name, `cache_dir` the `datasets` cache (default: its own).
    An empty source raises `DatasetError`.
    """
    source = describe_source(path, hub_id, split)
    if path is None:
        dataset = _load_hub(hub_id, split, name=name, cache_dir=cache_dir)
    else:
        dataset = _load_local(Path(path).expanduser(), cache_dir=cache_dir)

    columns = list(dataset.column_names)
    if required is not None:
        missing = [c for c in required if c not in columns]
        if missing:
            raise DatasetError(
                f"{source}: missing column(s) {', '.join(repr(c) for c in missing)} "
                f"(columns found: {', '.join(columns) or 'none'}). "
                f"Fix: provide a copy with the same columns as the hub dataset {hub_id}, "
                f"which needs at least: {', '.join(required)}."
            )
        keep = list(required) + [c for c in optional if c in columns and c not in required]
        dataset = dataset.select_columns(keep)

    if len(dataset) == 0:
        raise DatasetError(f"{source} has no rows. Fix: point data.path at a non-empty copy of {hub_id}.")
    rows = dataset.to_list()
    logger.info("loaded %d rows from %s", len(rows), source)
    return rows


def _load_hub(hub_id: str, split: str, *, name: str | None, cache_dir: str | None) -> Any:
    from datasets import load_dataset

    try:
        return load_dataset(hub_id, name, split=split, cache_dir=cache_dir)
    except Exception as err:  # noqa: BLE001 - connection, auth, unknown split: all end the same way
        raise DatasetError(
            f"could not load hub dataset {hub_id} (split {split}) from the Hugging Face Hub: "
            f"{type(err).__name__}: {err}. Fix: if the hub is unreachable (offline machine), pass a local copy "
            f"with the same columns, data.path=/path/to/copy.jsonl (.json, .jsonl or .jsonl.gz; see "
            f"agentic_rl.data.shared_data.shared_data_dir() for the copies this project ships)."
        ) from err


def _load_local(path: Path, *, cache_dir: str | None) -> Any:
    from datasets import load_dataset

    source = describe_source(path, "", "")
    if not path.exists():
        raise DatasetFileNotFoundError(
            f"{source} does not exist (resolved: {path.resolve()}). "
            f"Fix: pass data.path=<existing .json/.jsonl/.jsonl.gz file>, or data.path=null to use the hub."
        )
    if not path.is_file():
        raise DatasetError(f"{source} is not a regular file. Fix: pass data.path=<a .json/.jsonl/.jsonl.gz file>.")
    if not path.name.endswith(LOCAL_SUFFIXES):
        raise DatasetError(
            f"{source}: unsupported file type. Fix: convert it to one of {', '.join(LOCAL_SUFFIXES)} "
            f"(one JSON object per row, with the hub's columns)."
        )
    try:
        return load_dataset("json", data_files=str(path), split="train", cache_dir=cache_dir)
    except Exception as err:  # noqa: BLE001 - re-read with the stdlib to say which row is broken
        _diagnose_local(path)
        raise DatasetError(
            f"{source} could not be read as JSON rows: {type(err).__name__}: {err}. "
            f"Fix: write one JSON object per line (.jsonl) or a JSON list of objects (.json)."
        ) from err


def _diagnose_local(path: Path) -> None:
    """Re-read a file `datasets` rejected and raise a `DatasetError` pointing at the first bad row, if any."""
    source = describe_source(path, "", "")
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError, EOFError) as err:
        raise DatasetError(
            f"{source} could not be read: {err}. Fix: provide UTF-8 JSON (gzip-compressed if .gz)."
        ) from err

    if not text.strip():
        raise DatasetError(f"{source} is empty. Fix: point data.path at a non-empty copy with the hub's columns.")

    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    items: list[tuple[int, int | None, Any]] = []
    if isinstance(whole, list):
        items = [(i, None, r) for i, r in enumerate(whole)]
    elif isinstance(whole, dict):
        items = [(0, None, whole)]
    else:
        index = 0
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as err:
                raise DatasetError(
                    f"{source}, row {index} (line {lineno}): not valid JSON ({err.msg} at column {err.colno}). "
                    f"Fix: each line of a .jsonl file must be one complete JSON object."
                ) from err
            items.append((index, lineno, value))
            index += 1

    if not items:
        raise DatasetError(
            f"{source} contains no rows. Fix: point data.path at a non-empty copy with the hub's columns."
        )
    for index, lineno, value in items:
        if not isinstance(value, dict):
            where = f"row {index}" + (f" (line {lineno})" if lineno else "")
            raise DatasetError(
                f"{source}, {where}: expected a JSON object, got {type(value).__name__}. "
                f"Fix: every row must be an object mapping column names to values."
            )


# --------------------------------------------------------------------------------------- row validators


def row_error(source: str, index: int, column: str, problem: str, fix: str) -> DatasetError:
    """Build the standard malformed-row error: source, row, column, what is wrong, how to fix it."""
    return DatasetError(f"{source}, row {index}, column {column!r}: {problem}. Fix: {fix}")


def _fail(source: str, index: int, column: str, problem: str, fix: str) -> NoReturn:
    raise row_error(source, index, column, problem, fix)


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


def req_str(row: dict[str, Any], index: int, column: str, source: str, *, allow_empty: bool = False) -> str:
    """The row's `column` as a string; `DatasetError` if it is missing, not a string, or (by default) blank."""
    value = row.get(column)
    if not isinstance(value, str):
        _fail(
            source,
            index,
            column,
            f"expected a string, got {_describe(value)}",
            f"set {column!r} to a string in that row",
        )
    if not allow_empty and not value.strip():
        _fail(
            source, index, column, "empty string", f"give {column!r} a non-empty value in that row, or remove the row"
        )
    return value


def opt_str(row: dict[str, Any], index: int, column: str, source: str) -> str | None:
    """The row's `column` as a string, or None when missing/null; `DatasetError` for any other type."""
    value = row.get(column)
    if value is None:
        return None
    if not isinstance(value, str):
        _fail(
            source,
            index,
            column,
            f"expected a string or null, got {_describe(value)}",
            f"set {column!r} to a string or null",
        )
    return value


def check_unique_ids(tasks: list, source: str) -> None:
    """Raise a DatasetError naming both rows when two tasks share an id."""
    seen: dict[str, int] = {}
    for i, task in enumerate(tasks):
        if task.task_id in seen:
            raise row_error(
                source,
                i,
                "task_id",
                f"duplicate id {task.task_id!r} (also at row {seen[task.task_id]})",
                "ids must be unique; remove the duplicate row",
            )
        seen[task.task_id] = i
