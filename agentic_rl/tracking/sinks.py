"""Metric sinks: `metrics.jsonl` in the run dir (always), and Weights & Biases (optional).

W&B runs offline unless WANDB_MODE says otherwise, never prompts, and any failure to start it is
logged and ignored: a run without an account must never block. `close()` always finishes the W&B run
(call it in `finally`) so multirun jobs in one process do not merge into one run.
"""
from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN/inf; None marks it honestly instead of a fake number
    return value


class Tracker:
    def __init__(self, run_dir: Path, wandb_cfg: dict | None = None, config: dict | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.metrics_path = self.run_dir / "metrics.jsonl"
        self._wandb = None
        self.wandb_info: dict[str, Any] = {}
        if wandb_cfg and wandb_cfg.get("name") == "wandb":
            self._wandb = _start_wandb(self.run_dir, wandb_cfg, config or {})
            if self._wandb is not None:
                self.wandb_info = {"id": self._wandb.id, "group": self._wandb.group, "name": self._wandb.name,
                                   "mode": wandb_cfg.get("mode")}

    def log(self, metrics: dict[str, float], step: int) -> None:
        record = {"step": step, **{k: _jsonable(v) for k, v in metrics.items()}}
        with self.metrics_path.open("a") as f:  # append-only: an interrupted run keeps every logged step
            f.write(json.dumps(record) + "\n")
        if self._wandb is not None:
            try:
                self._wandb.log(metrics, step=step)
            except Exception:  # W&B trouble never stops training
                logger.warning("W&B log failed; metrics.jsonl still has this step", exc_info=True)

    def summary(self, values: dict[str, Any]) -> None:
        (self.run_dir / "summary.json").write_text(json.dumps(values, indent=2, default=str))
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


def _flatten(d: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "/"))
        elif isinstance(v, (int, float, str, bool)) or v is None:
            out[key] = v
    return out


def _start_wandb(run_dir: Path, cfg: dict, config: dict) -> Any:
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
        )
    except Exception:
        logger.warning("W&B could not start; continuing with metrics.jsonl only", exc_info=True)
        return None
