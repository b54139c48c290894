"""Resumable training checkpoints in `<run dir>/checkpoints/step-NNNNNN/`.

Each checkpoint holds `adapter/` (the LoRA adapter, loadable by `python -m agentic_rl.evaluate checkpoint=...`),
`state.pt` (optimizer state, every RNG state, the loop's position, the byte length of metrics.jsonl, the
summary so far) and `manifest.json` (size and sha256 of every other file), written last.

A save goes into a hidden temp dir, every file is fsynced, the manifest is written, and only then is the dir
renamed to its final name, so a kill during a save leaves a temp dir (removed later), never a checkpoint that
looks complete. On load, a checkpoint whose manifest is missing or disagrees with its files is skipped with a
warning and the previous one is used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agentic_rl.runtime.files import disk_errors, fsync_dir, fsync_file

logger = logging.getLogger(__name__)

CHECKPOINT_DIR = "checkpoints"
ADAPTER = "adapter"
STATE = "state.pt"
MANIFEST = "manifest.json"
_NAME = re.compile(r"^step-(\d+)$")
_TMP_PREFIX = ".tmp-"


@dataclass
class Checkpoint:
    path: Path
    step: int
    state: dict[str, Any]


def rng_states() -> dict[str, Any]:
    """Every global RNG a training step draws from (sampling, LoRA dropout, numpy/python users)."""
    states = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_rng_states(states: dict[str, Any]) -> None:
    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != MANIFEST)


def save_checkpoint(run_dir: Path, step: int, model: Any, state: dict[str, Any], keep: int) -> Path:
    """Write the checkpoint of `step` atomically, then keep only the newest `keep`. Returns its path."""
    root = Path(run_dir) / CHECKPOINT_DIR
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step-{step:06d}"
    tmp = root / f"{_TMP_PREFIX}{final.name}-{os.getpid()}"
    start = time.perf_counter()
    with disk_errors(tmp):
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        model.save_pretrained(str(tmp / ADAPTER))
        torch.save(state, tmp / STATE)
        manifest = {"step": step, "files": {}}
        for path in _files(tmp):
            fsync_file(path)
            manifest["files"][str(path.relative_to(tmp))] = {"size": path.stat().st_size, "sha256": _sha256(path)}
        with open(tmp / MANIFEST, "w") as f:  # last: its presence says every other file is complete
            json.dump(manifest, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        fsync_dir(tmp)
        if final.exists():  # the same step saved again (a resumed run interrupted before its next step)
            shutil.rmtree(final)
        os.rename(tmp, final)
        fsync_dir(root)
    logger.info(
        "checkpoint step %d: %s (%.1f MB, %.2f s)",
        step,
        final,
        checkpoint_bytes(final) / 1e6,
        time.perf_counter() - start,
    )
    _prune(root, keep)
    return final


def checkpoint_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def verify(path: Path) -> str | None:
    """None when the checkpoint at `path` is complete and intact, else why it is not."""
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        return "no manifest.json (the save did not finish)"
    try:
        manifest = json.loads(manifest_path.read_text())
        files = manifest["files"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        return f"unreadable manifest.json ({e})"
    for rel, meta in files.items():
        f = path / rel
        if not f.is_file():
            return f"{rel} is missing"
        if f.stat().st_size != meta["size"]:
            return f"{rel} has {f.stat().st_size} bytes, the manifest says {meta['size']}"
        if _sha256(f) != meta["sha256"]:
            return f"{rel} does not match its sha256"
    if STATE not in files or not any(rel.startswith(ADAPTER + "/") for rel in files):
        return f"the manifest lists no {STATE} or no {ADAPTER}/"
    return None


def _checkpoint_dirs(root: Path) -> list[tuple[int, Path]]:
    """(step, dir) of every finished-looking checkpoint dir, oldest first."""
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if p.is_dir() and (m := _NAME.match(p.name))]
    return sorted(found)


def load_latest(run_dir: Path) -> Checkpoint | None:
    """The newest intact checkpoint of the run (older ones are tried when a newer one is broken), or None."""
    for step, path in reversed(_checkpoint_dirs(Path(run_dir) / CHECKPOINT_DIR)):
        problem = verify(path)
        if problem is None:
            try:
                state = torch.load(path / STATE, map_location="cpu", weights_only=False)
            except Exception as e:  # the hash matched, so this is a bug or a torch version change, not disk damage
                problem = f"{STATE} could not be loaded ({e})"
            else:
                return Checkpoint(path=path, step=step, state=state)
        logger.warning("checkpoint %s is unusable: %s; trying the previous one", path, problem)
    return None


def restore_adapter(model: Any, checkpoint: Checkpoint) -> None:
    """Load the checkpoint's LoRA weights into `model` (a peft model with the same adapter config)."""
    from peft.utils import set_peft_model_state_dict
    from safetensors.torch import load_file

    weights = load_file(str(checkpoint.path / ADAPTER / "adapter_model.safetensors"))
    result = set_peft_model_state_dict(model, weights)
    unexpected = getattr(result, "unexpected_keys", [])
    if unexpected:
        raise ValueError(
            f"the adapter in {checkpoint.path} does not fit this model (unexpected weights "
            f"{unexpected[:3]}...): the run's model or algo.lora settings changed since it was saved"
        )


def _prune(root: Path, keep: int) -> None:
    """Drop all but the newest `keep` checkpoints, and temp dirs that killed saves left behind."""
    for stale in root.glob(f"{_TMP_PREFIX}*"):  # this process's own save was renamed already
        shutil.rmtree(stale, ignore_errors=True)
    dirs = _checkpoint_dirs(root)
    for _, path in dirs[: max(len(dirs) - keep, 0)]:
        shutil.rmtree(path, ignore_errors=True)
