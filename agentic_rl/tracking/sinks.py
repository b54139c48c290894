"""Metric sinks: `metrics.jsonl` in the run dir (always), and Weights & Biases (optional).

W&B runs offline unless WANDB_MODE says otherwise, never prompts, and any failure to start it is
logged and ignored: a run without an account must never block. `close()` always finishes the W&B run
(call it in `finally`) so multirun jobs in one process do not merge into one run. A resumed training run
passes `resume_id` to continue the same W&B run, and cuts metrics.jsonl back to its checkpoint first
(`truncate_metrics`), so every step is logged exactly once. How the run looks in W&B (name, group, tags,
metric axes, tables, artifacts) is in `wandb_run.py`; the W&B summary is written once, at `close()`, from
the last `summary()`.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from agentic_rl.runtime.files import METRICS_FILE, SUMMARY_FILE, atomic_write_text, disk_errors
from agentic_rl.tracking import wandb_run
from agentic_rl.types import RewardBreakdown, Trajectory

logger = logging.getLogger(__name__)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN/inf; None marks it honestly instead of a fake number
    return value


class Tracker:
    def __init__(
        self, run_dir: Path, wandb_cfg: dict | None = None, config: dict | None = None, resume_id: str | None = None
    ) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.metrics_path = self.run_dir / METRICS_FILE
        self.settings = dict(wandb_cfg or {})
        self._wandb = None
        self._warned_negative = False
        self._summary: dict[str, Any] | None = None
        self.wandb_info: dict[str, Any] = {}
        logger.info("run dir: %s", self.run_dir.resolve())
        if wandb_cfg and wandb_cfg.get("name") == "wandb":
            self._wandb = _start_wandb(self.run_dir, wandb_cfg, config or {}, resume_id)
            if self._wandb is not None:
                self.wandb_info = {
                    "id": self._wandb.id,
                    "group": self._wandb.group,
                    "name": self._wandb.name,
                    "mode": wandb_cfg.get("mode"),
                }

    def log(self, metrics: dict[str, float], step: int) -> None:
        record = {"step": step, **{k: _jsonable(v) for k, v in metrics.items()}}
        with disk_errors(self.metrics_path), self.metrics_path.open("a") as f:  # append-only: a killed run
            f.write(json.dumps(record) + "\n")  # keeps every logged step
        log_every = self.settings.get("log_every") or 0
        if "train/epoch" in metrics and log_every and step % log_every == 0:
            logger.info(step_line(metrics, step))
        if self._wandb is not None and step < 0 and not self._warned_negative:
            # W&B drops a step lower than one it has seen (the evaluation before training logs step 0), and sending
            # it without a step would move W&B's counter past the training steps that follow
            self._warned_negative = True
            logger.info("W&B: records at negative steps (the warm-up) are kept in metrics.jsonl only")
        if self._wandb is not None and step >= 0:
            try:
                self._wandb.log({**metrics, wandb_run.STEP_METRIC: step}, step=step)
            except Exception:  # W&B trouble never stops training
                logger.warning("W&B log failed; metrics.jsonl still has this step", exc_info=True)

    def metrics_bytes(self) -> int:
        """Length of metrics.jsonl now: a checkpoint records it to cut the file back on resume."""
        return self.metrics_path.stat().st_size if self.metrics_path.is_file() else 0

    def log_trajectories(
        self, step: int, trajs: Sequence[Trajectory], rewards: Sequence[RewardBreakdown], prompt: str = ""
    ) -> None:
        """A W&B table of these episodes, every `logger.table_every` steps (no-op without W&B)."""
        every = self.settings.get("table_every") or 0
        if self._wandb is None or not every or step % every:
            return
        try:
            wandb_run.log_trajectory_table(self._wandb, step, trajs, rewards, prompt)
        except Exception:
            logger.warning("W&B trajectory table failed", exc_info=True)

    def summary(self, values: dict[str, Any]) -> None:
        """Write summary.json now; W&B gets the last one, in one update, at close()."""
        # atomic: a kill or a full disk mid-write keeps the previous summary.json, never half of one
        atomic_write_text(self.run_dir / SUMMARY_FILE, json.dumps(values, indent=2, default=str))
        self._summary = values

    def close(self, exit_code: int = 0) -> None:
        if self._wandb is not None:
            _finish_wandb(
                self._wandb,
                self._summary if exit_code == 0 else None,
                self.run_dir,
                artifacts=exit_code == 0 and bool(self.settings.get("log_artifacts")),
                exit_code=exit_code,
            )
            self._wandb = None
        logger.info("run dir: %s", self.run_dir.resolve())


class SilentTracker:
    """What a rank other than 0 has instead of a `Tracker` (`accelerate launch`): it writes and sends nothing."""

    wandb_info: dict[str, Any] = {}

    def log(self, metrics: dict[str, Any], step: int) -> None:
        pass

    def summary(self, values: dict[str, Any]) -> None:
        pass

    def close(self, exit_code: int = 0) -> None:
        pass

    def log_trajectories(self, *args: Any, **kwargs: Any) -> None:
        pass


def open_tracker(
    cfg: DictConfig, run_dir: Path, *, job_type: str = "train", resume_id: str | None = None, writer: bool = True
) -> Tracker | SilentTracker:
    """The run's tracker: metrics.jsonl, plus W&B as `cfg.logger` says (`job_type` "train" / "eval" names the
    W&B job type; `resume_id` continues that W&B run). `writer=False` (a rank other than 0 under
    `accelerate launch`) gets a tracker that writes nothing."""
    if not writer:
        return SilentTracker()
    return Tracker(
        run_dir, wandb_run.wandb_settings(cfg, job_type), OmegaConf.to_container(cfg, resolve=True), resume_id=resume_id
    )


def truncate_metrics(run_dir: Path, n_bytes: int) -> None:
    """Cut `run_dir`/metrics.jsonl back to its first `n_bytes` (what a checkpoint had logged).

    Records logged after the checkpoint, and a half-written last line of a killed run, are dropped: the resumed
    run logs those steps again. The cut must land on a line boundary, else the file is not the one checkpointed.
    """
    path = Path(run_dir) / METRICS_FILE
    size = path.stat().st_size if path.is_file() else 0
    if size < n_bytes:
        raise ValueError(
            f"{path} has {size} bytes but the checkpoint logged {n_bytes}: the file was edited or "
            "replaced since. Fix: restore it, or start a new run"
        )
    if n_bytes == 0:
        path.unlink(missing_ok=True)
        return
    with open(path, "rb+") as f:
        f.seek(n_bytes - 1)
        if f.read(1) != b"\n":
            raise ValueError(
                f"{path}: byte {n_bytes} is not the end of a record, so the file is not the one the "
                "checkpoint was written with. Fix: restore it, or start a new run"
            )
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


def step_line(metrics: dict[str, Any], step: int) -> str:
    """One line of the main training numbers for train.log (absent metrics are left out, never shown as 0)."""
    fields = (
        ("pass", "train/pass_rate", ".2f"),
        ("reward", "train/reward_mean", ".3f"),
        ("loss", "train/loss", ".4f"),
        ("kl", "train/kl", ".4f"),
        ("search", "tools/search_rate", ".2f"),
        ("exec", "tools/execute_rate", ".2f"),
        ("submit", "tools/submit_rate", ".2f"),
        ("none", "tools/none_rate", ".2f"),
        ("capped", "tools/capped_rate", ".2f"),
        ("tok/s", "rollout/tokens_per_s", ".0f"),
        ("s/step", "time/step_s", ".1f"),
        ("peak GiB", "memory/peak_rss_gib", ".2f"),
    )
    parts = [f"step {step}", f"epoch {metrics['train/epoch']}"]
    parts += [
        f"{label} {metrics[key]:{fmt}}"
        for label, key, fmt in fields
        if isinstance(metrics.get(key), (int, float)) and math.isfinite(metrics[key])
    ]
    return " | ".join(parts)


def _finish_wandb(run: Any, summary: dict[str, Any] | None, run_dir: Path, artifacts: bool, exit_code: int) -> None:
    """One summary update, the artifacts, then finish; each step's failure is logged and never raised."""
    try:
        if summary is not None:
            run.summary.update(_flatten(summary))
        if artifacts:
            wandb_run.log_run_artifacts(run, run_dir)
    except Exception:
        logger.warning("W&B summary or artifacts failed; summary.json has the results", exc_info=True)
    try:
        run.finish(exit_code=exit_code)
    except Exception:
        logger.warning("W&B finish failed", exc_info=True)


def _start_wandb(run_dir: Path, cfg: dict, config: dict, resume_id: str | None = None) -> Any:
    os.environ.setdefault("WANDB_MODE", "offline")
    os.environ.setdefault("WANDB_SILENT", "true")
    os.environ.setdefault("WANDB_CONSOLE", "off")
    try:
        import wandb

        run = wandb.init(
            project=cfg.get("project", "agentic_rl"),
            entity=cfg.get("entity"),
            group=cfg.get("group"),
            name=cfg.get("run_name"),
            tags=list(cfg.get("tags") or []),
            config=config,
            dir=str(run_dir),
            job_type=cfg.get("job_type"),
            mode=cfg.get("mode") or os.environ["WANDB_MODE"],
            reinit="create_new",
            settings=wandb.Settings(silent=True, console="off"),
            **({"id": resume_id, "resume": "allow"} if resume_id else {}),
        )
    except Exception:
        logger.warning("W&B could not start; continuing with metrics.jsonl only", exc_info=True)
        return None
    try:
        wandb_run.define_metrics(run)
    except Exception:  # the run still records everything, only the default step axis
        logger.warning("W&B define_metric failed", exc_info=True)
    return run
