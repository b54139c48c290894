"""Where the offline dataset copies live.

`shared_data_dir()` is `$AGENTIC_RL_DATA_DIR` when set, else `<repo root>/../shared/data`, the repo root
being found from this package's location (so it follows the checkout, wherever it is).
"""

from __future__ import annotations

import os
from pathlib import Path

from agentic_rl.paths import repo_root

DATA_DIR_ENV = "AGENTIC_RL_DATA_DIR"

# Files shipped in the shared data dir (see its README.md).
KODCODE_SAMPLE = "kodcode_sample.jsonl"
BIGCODEBENCH_HARD = "bigcodebench_hard.jsonl"
BIGCODEBENCH_FULL = "bigcodebench_full.jsonl.gz"


def shared_data_dir() -> Path:
    """The directory with the local dataset copies; it may not exist (callers check)."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return (repo_root().parent / "shared" / "data").resolve()


def shared_data_file(name: str) -> Path:
    """`shared_data_dir() / name`, raising `FileNotFoundError` with a fix when it is missing."""
    path = shared_data_dir() / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found. Fix: set {DATA_DIR_ENV}=<dir with {name}> (default: <repo root>/../shared/data)."
        )
    return path
