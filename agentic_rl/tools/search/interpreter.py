"""The sandbox interpreter seen from the search backend: which one it is, and running `introspect.py` with it.

`introspect.py` (standard library only) runs in a subprocess of that interpreter, in an empty folder, in one of
two modes: "probe" (the versions an index depends on, nothing imported) and "build" (the entries and usage
counts). Also where indexes are cached by default.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentic_rl.paths import cache_root

INTROSPECT_PATH = Path(__file__).with_name("introspect.py")


def default_cache_dir() -> Path:
    return cache_root() / "search"


def run_introspect(python: str, mode: str, cfg: dict[str, Any], timeout: float) -> dict[str, Any]:
    source = INTROSPECT_PATH.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="agentic_rl_search_") as tmp:
        cfg_path, out_path = os.path.join(tmp, "cfg.json"), os.path.join(tmp, "out.json")
        with open(cfg_path, "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        env = dict(os.environ)
        env.update(
            {
                "MPLBACKEND": "Agg",
                "PYTHONWARNINGS": "ignore",
                "TF_CPP_MIN_LOG_LEVEL": "3",
                "PYTHONDONTWRITEBYTECODE": "1",
                "TQDM_DISABLE": "1",
            }
        )
        # cwd is an empty folder so nothing there can shadow a module being imported
        proc = subprocess.run(
            [python, "-c", source, mode, cfg_path, out_path],
            cwd=tmp,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0 or not os.path.exists(out_path):
            tail = (proc.stderr or proc.stdout or "").strip()[-2000:]
            raise RuntimeError(f"search: introspection ({mode}) with {python} failed (exit {proc.returncode}): {tail}")
        with open(out_path, encoding="utf-8") as f:
            return json.load(f)


def version_key(python: str, modules: Sequence[str], timeout: float = 60.0) -> dict[str, Any]:
    """What the cached index depends on, as the sandbox interpreter sees it (no module imported)."""
    return run_introspect(python, "probe", {"modules": list(modules)}, timeout)
