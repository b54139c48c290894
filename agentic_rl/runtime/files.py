"""The run dir's file names, and writing run files so that a kill or a full disk never leaves a file that looks
complete but is broken.

A run dir holds `METRICS_FILE` (one JSON object per logged step, append-only), `SUMMARY_FILE` (the final
metrics), an evaluation run's `RESULTS_FILE` (one record per task x mode x sample) and a training run's
evaluation records (`eval_records_path`). The names live here, below everything that writes or reads them
(the sinks, the jobs, the evaluator, the reports), so that each file is named once.

`atomic_write_text` writes a sibling temp file, fsyncs it and renames it over the target (rename is atomic
on POSIX), then fsyncs the directory so the rename itself survives a crash. `disk_errors(path)` turns
"no space left" into an error that names the file being written and says how to continue.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

_FULL = (errno.ENOSPC, errno.EDQUOT)

METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
RESULTS_FILE = "results.jsonl"


def eval_records_path(run_dir: Path, phase: str) -> Path:
    """Where a training run keeps the per-task records of its `phase` ("before" / "after") evaluation: one JSON
    object per (task, mode, sample), as in an evaluation's results.jsonl (phase "eval": an evaluation run's
    own results.jsonl). The paired before/after analysis of `reports/tables.py` reads them."""
    return Path(run_dir) / (RESULTS_FILE if phase == "eval" else f"eval_{phase}.jsonl")


class DiskFullError(OSError):
    """The disk (or quota) filled up while writing `filename`."""


@contextlib.contextmanager
def disk_errors(path: Path | str) -> Iterator[None]:
    try:
        yield
    except DiskFullError:
        raise
    except OSError as e:
        if e.errno not in _FULL:
            raise
        raise DiskFullError(
            e.errno,
            f"no space left on the device while writing {path}. Free space there (or "
            "move hydra.run.dir to a larger disk), then resume the run",
            str(path),
        ) from e


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def atomic_write_text(path: Path, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with disk_errors(path):
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)


def package_folder(module: str) -> Path | None:
    """Folder of an installed package, found without importing it (an import may print or pull in the
    package's own dependencies); None when it is not installed. For packages that ship data files (model
    weights) rather than code we call."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])
