"""Where the project's own files are: the checkout, `conf/`, and the cache of derived files.

- `PACKAGE_DIR`: the `agentic_rl` package; `repo_root()` is the folder above it (the checkout, in a source tree).
- `CONF_DIR`: the Hydra configs. A source checkout keeps `conf/` at the top level; an installed package carries
  it as `agentic_rl/conf`. `CONFIG_PATH` is the same folder as a string for `@hydra.main`: an absolute
  directory, so Hydra reads it as files whichever copy this is (a `pkg://` module path would need an
  `__init__.py` inside conf/).
- `cache_root()`: `$AGENTIC_RL_CACHE_DIR`, else `~/.cache/agentic_rl`; de-quantized model weights and search
  indexes live below it.
- `resolve_python()`: the interpreter that runs candidate code (the sandbox) and that the doc search
  introspects: explicit, else `$AGENTIC_RL_SANDBOX_PYTHON`, else this interpreter.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

CACHE_DIR_ENV = "AGENTIC_RL_CACHE_DIR"
SANDBOX_PYTHON_ENV = "AGENTIC_RL_SANDBOX_PYTHON"

PACKAGE_DIR = Path(__file__).resolve().parent
CONF_DIR = (
    PACKAGE_DIR.parent / "conf" if (PACKAGE_DIR.parent / "conf" / "train.yaml").is_file() else PACKAGE_DIR / "conf"
)
CONFIG_PATH = str(CONF_DIR)


def repo_root() -> Path:
    """The checkout that holds the `agentic_rl` package (the folder above `agentic_rl/`)."""
    return PACKAGE_DIR.parent


def cache_root() -> Path:
    """Where derived files are cached: `$AGENTIC_RL_CACHE_DIR`, else `~/.cache/agentic_rl`."""
    root = os.environ.get(CACHE_DIR_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "agentic_rl"


def resolve_python(python: str | None = None) -> str:
    """The sandbox interpreter as an absolute path: `python`, else `$AGENTIC_RL_SANDBOX_PYTHON`, else this one.

    A relative path (`.venv-bcb/bin/python`) is taken from the checkout, whatever the working directory, so a
    config means the same interpreter from any run dir; a bare name (`python3`) is looked up on PATH. The path
    is not resolved further: a venv's python is a symlink with its own sys.path.
    """
    python = python or os.environ.get(SANDBOX_PYTHON_ENV) or sys.executable
    path = Path(python)
    if not path.is_absolute() and os.sep in python:
        path = repo_root() / path
    elif not path.is_absolute():
        found = shutil.which(python)
        path = Path(found) if found else path
    if not path.exists():
        raise FileNotFoundError(
            f"sandbox python {python!r} not found: set sandbox.python (the doc search: its "
            f"backend's python option) or ${SANDBOX_PYTHON_ENV} to an existing interpreter"
        )
    return str(path)
