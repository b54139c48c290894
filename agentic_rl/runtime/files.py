"""Writing run files so that a kill or a full disk never leaves a file that looks complete but is broken.

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
