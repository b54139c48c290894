"""Shared fixtures for the dataset copies.

- `sample_data_dir`: the few-row samples under `tests/data/samples/` (same file names as the full copies),
  always there, so the loaders and their bad-input paths are tested in a fresh clone with nothing beside it.
- `shared_data_dir`: the full copies, taken from `$AGENTIC_RL_DATA_DIR` only. Unset, the tests that need them
  skip and say so; set but lacking a file, they fail (CI sets it, so a broken copy must not pass as a skip).
- `data_dir`: both in turn (`sample`, then `full`), for tests whose assertions hold on any copy.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentic_rl.data.shared_data import BIGCODEBENCH_FULL, BIGCODEBENCH_HARD, DATA_DIR_ENV, KODCODE_SAMPLE

SHARED_FILES = (KODCODE_SAMPLE, BIGCODEBENCH_HARD, BIGCODEBENCH_FULL)
SAMPLE_DATA_DIR = Path(__file__).resolve().parent / "data" / "samples"


def full_data_dir() -> Path | None:
    """`$AGENTIC_RL_DATA_DIR` as a path, or None when it is unset or empty."""
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env).expanduser().resolve() if env else None


@pytest.fixture(autouse=True)
def own_base_eval_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's training runs share base evaluations only among themselves (conf/train.yaml `base_eval.cache`
    reads $AGENTIC_RL_BASE_EVAL_CACHE), never with another test's or the checkout's outputs/."""
    path = tmp_path_factory.mktemp("base-evals")
    monkeypatch.setenv("AGENTIC_RL_BASE_EVAL_CACHE", str(path))
    return path


@pytest.fixture(scope="session")
def sample_data_dir() -> Path:
    """The few-row samples of KodCode, BigCodeBench-Hard and BigCodeBench (tests/data/README.md)."""
    missing = [name for name in SHARED_FILES if not (SAMPLE_DATA_DIR / name).is_file()]
    assert not missing, f"{SAMPLE_DATA_DIR} lacks {missing}: restore them from git"
    return SAMPLE_DATA_DIR


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The directory with the full dataset copies, from `$AGENTIC_RL_DATA_DIR`; skips when it is unset."""
    path = full_data_dir()
    if path is None:
        pytest.skip(
            f"needs the full dataset copies: set {DATA_DIR_ENV}=<dir holding {', '.join(SHARED_FILES)}> "
            f"(.ci/run sets it to ../shared/data); the samples in tests/data/samples run without it"
        )
    if not path.is_dir():
        pytest.fail(
            f"{DATA_DIR_ENV}={path} does not exist. Point it at the directory holding "
            f"{', '.join(SHARED_FILES)}, or unset it to skip the full-data tests.",
            pytrace=False,
        )
    missing = [name for name in SHARED_FILES if not (path / name).is_file()]
    if missing:
        pytest.fail(
            f"{DATA_DIR_ENV}={path} lacks {', '.join(missing)}. Restore them or point it at a directory that has them.",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module", params=["sample", "full"])
def data_dir(request: pytest.FixtureRequest) -> Path:
    """The samples, then the full copies (skipped without `$AGENTIC_RL_DATA_DIR`)."""
    name = "sample_data_dir" if request.param == "sample" else "shared_data_dir"
    return request.getfixturevalue(name)
