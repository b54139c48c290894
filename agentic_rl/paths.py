"""Where the project's own files are: the checkout, `conf/`, and the cache of derived files.

- `PACKAGE_DIR`: the `agentic_rl` package; `repo_root()` is the folder above it (the checkout, in a source tree).
- `CONF_DIR`: the Hydra configs. A source checkout keeps `conf/` at the top level; an installed package carries
  it as `agentic_rl/conf`. `CONFIG_PATH` is the same folder as a string for `@hydra.main`: an absolute
  directory, so Hydra reads it as files whichever copy this is (a `pkg://` module path would need an
  `__init__.py` inside conf/).
- `cache_root()`: `$AGENTIC_RL_CACHE_DIR`, else `~/.cache/agentic_rl`; de-quantized model weights and search
  indexes live below it.
"""
from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "AGENTIC_RL_CACHE_DIR"

PACKAGE_DIR = Path(__file__).resolve().parent
CONF_DIR = PACKAGE_DIR.parent / "conf" if (PACKAGE_DIR.parent / "conf" / "train.yaml").is_file() \
    else PACKAGE_DIR / "conf"
CONFIG_PATH = str(CONF_DIR)


def repo_root() -> Path:
    """The checkout that holds the `agentic_rl` package (the folder above `agentic_rl/`)."""
    return PACKAGE_DIR.parent


def cache_root() -> Path:
    """Where derived files are cached: `$AGENTIC_RL_CACHE_DIR`, else `~/.cache/agentic_rl`."""
    root = os.environ.get(CACHE_DIR_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "agentic_rl"
