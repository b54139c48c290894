"""Shared fixtures. `shared_data_dir` fails (never skips) when the offline dataset copies are missing."""
from __future__ import annotations

from pathlib import Path

import pytest

from agentic_rl.data.paths import (
    BIGCODEBENCH_FULL,
    BIGCODEBENCH_HARD,
    DATA_DIR_ENV,
    KODCODE_SAMPLE,
    shared_data_dir as _shared_data_dir,
)

SHARED_FILES = (KODCODE_SAMPLE, BIGCODEBENCH_HARD, BIGCODEBENCH_FULL)


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The directory with the local dataset copies (`agentic_rl.data.paths.shared_data_dir()`)."""
    path = _shared_data_dir()
    if not path.is_dir():
        pytest.fail(
            f"shared data dir {path} does not exist. Set {DATA_DIR_ENV}=<dir holding {', '.join(SHARED_FILES)}> "
            f"(default: <repo root>/../shared/data).",
            pytrace=False,
        )
    missing = [name for name in SHARED_FILES if not (path / name).is_file()]
    if missing:
        pytest.fail(
            f"shared data dir {path} lacks {', '.join(missing)}. Restore them or set {DATA_DIR_ENV} "
            f"to a directory that has them.",
            pytrace=False,
        )
    return path
