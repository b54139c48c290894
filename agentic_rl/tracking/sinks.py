"""Metric sinks: `metrics.jsonl` in the run dir (always), and Weights & Biases (optional).

W&B runs offline unless WANDB_MODE says otherwise, never prompts, and any failure to start it is
logged and ignored: a run without an account must never block. `close()` always finishes the W&B run
(call it in `finally`) so multirun jobs in one process do not merge into one run. A resumed training run
passes `resume_id` to continue the same W&B run, and cuts metrics.jsonl back to its checkpoint first
(`truncate_metrics`), so every step is logged exactly once.
"""
from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any

from agentic_rl.runtime.files import atomic_write_text, disk_errors

logger = logging.getLogger(__name__)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN/inf; None marks it honestly instead of a fake number
    return value


class Tracker:
    def __init__(self, run_dir: Path, wandb_cfg: dict | None = None, config: dict | None = None,
                 resume_id: str | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.metrics_path = self.run_dir / "metrics.jsonl"
        self._wandb = None
        self.wandb_info: dict[str, Any] = {}
        if wandb_cfg and wandb_cfg.get("name") == "wandb":
            self._wandb = _start_wandb(self.run_dir, wandb_cfg, config or {}, resume_id)
            if self._wandb is not None:
                self.wandb_info = {"id": self._wandb.id, "group": self._wandb.group, "name": self._wandb.name,
                                   "mode": wandb_cfg.get("mode")}

    def log(self, metrics: dict[str, float], step: int) -> None:
        record = {"step": step, **{k: _jsonable(v) for k, v in metrics.items()}}
        with disk_errors(self.metrics_path), self.metrics_path.open("a") as f:  # append-only: a killed run
            f.write(json.dumps(record) + "\n")                                  # keeps every logged step
        if self._wandb is not None:
            try:
                self._wandb.log(metrics, step=step)
            except Exception:  # W&B trouble never stops training
                logger.warning("W&B log failed; metrics.jsonl still has this step", exc_info=True)

    def metrics_bytes(self) -> int:
        """Length of metrics.jsonl now: a checkpoint records it to cut the file back on resume."""
        return self.metrics_path.stat().st_size if self.metrics_path.is_file() else 0

    def summary(self, values: dict[str, Any]) -> None:
        # atomic: a kill or a full disk mid-write keeps the previous summary.json, never half of one
        atomic_write_text(self.run_dir / "summary.json", json.dumps(values, indent=2, default=str))
        if self._wandb is not None:
            try:
                for k, v in _flatten(values).items():
                    self._wandb.summary[k] = v
            except Exception:
                logger.warning("W&B summary failed", exc_info=True)

    def close(self, exit_code: int = 0) -> None:
        if self._wandb is not None:
            try:
                self._wandb.finish(exit_code=exit_code)
            except Exception:
                logger.warning("W&B finish failed", exc_info=True)
            self._wandb = None


def truncate_metrics(run_dir: Path, n_bytes: int) -> None:
    """Cut `run_dir`/metrics.jsonl back to its first `n_bytes` (what a checkpoint had logged).

    Records logged after the checkpoint, and a half-written last line of a killed run, are dropped: the resumed
    run logs those steps again. The cut must land on a line boundary, else the file is not the one checkpointed.
    """
    path = Path(run_dir) / "metrics.jsonl"
    size = path.stat().st_size if path.is_file() else 0
    if size < n_bytes:
        raise ValueError(f"{path} has {size} bytes but the checkpoint logged {n_bytes}: the file was edited or "
                         "replaced since. Fix: restore it, or start a new run")
    if n_bytes == 0:
        path.unlink(missing_ok=True)
        return
    with open(path, "rb+") as f:
        f.seek(n_bytes - 1)
        if f.read(1) != b"\n":
            raise ValueError(f"{path}: byte {n_bytes} is not the end of a record, so the file is not the one the "
                             "checkpoint was written with. Fix: restore it, or start a new run")
        f.truncate(n_bytes)
        f.flush()
        os.fsync(f.fileno())


def _flatten(d: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "/"))
        elif isinstance(v, (int, float, str, bool)) or v is None:
            out[key] = v
    return out


def _start_wandb(run_dir: Path, cfg: dict, config: dict, resume_id: str | None = None) -> Any:
    os.environ.setdefault("WANDB_MODE", "offline")
    os.environ.setdefault("WANDB_SILENT", "true")
    os.environ.setdefault("WANDB_CONSOLE", "off")
    try:
        import wandb

        return wandb.init(
            project=cfg.get("project", "agentic_rl"), entity=cfg.get("entity"), group=cfg.get("group"),
            name=cfg.get("run_name"), tags=list(cfg.get("tags") or []), config=config, dir=str(run_dir),
            mode=cfg.get("mode") or os.environ["WANDB_MODE"], reinit="create_new",
            settings=wandb.Settings(silent=True, console="off"),
            **({"id": resume_id, "resume": "allow"} if resume_id else {}),
        )
    except Exception:
        logger.warning("W&B could not start; continuing with metrics.jsonl only", exc_info=True)
        return None
