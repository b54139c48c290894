"""How a run appears in Weights & Biases: the logger settings (`LoggerConfig`, conf/logger/*.yaml), identity
(job type, name, group, tags), metric axes, trajectory tables, artifacts. `sinks.Tracker` calls these; nothing
here but the settings is needed when W&B is off.

- job_type: "train" or "eval".
- arm: the experiment and the job's overrides, the seed excluded (`smoke model=tiny-random`); in a sweep, only
  the keys its sweep config varies (`tools=code`).
- name: the arm and the seed (`tools=code seed=2`), so every seed's run is told apart.
- group: the arm, so W&B averages an arm's seeds into one line with a band. In a sweep it is prefixed by the
  sweep's id, the sweep config and its start time (`tools-2026-11-30_17-40-00 tools=code`), so arms of two
  sweeps never merge; single runs are grouped by their arm alone (`default`: every seed of the default run).
- tags: `experiment:<name>`, `tools:<set>`, `reward:<fn>`, `model:<option>`, in a sweep `sweep:<id>` (the
  dashboard's filter for one sweep), plus `logger.tags`.
- axes: `train/*`, `reward/*`, `tools/*`, `rollout/*`, `time/*` are plotted against `train/step` (the optimizer
  step, logged with every record); `eval/*` too (0 = before training), with max and last in the summary.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from agentic_rl.errors import ConfigError
from agentic_rl.registry import component_name, to_dataclass
from agentic_rl.runtime.files import RESULTS_FILE, SUMMARY_FILE
from agentic_rl.types import RewardBreakdown, Trajectory

logger = logging.getLogger(__name__)

LOGGERS = ("none", "wandb")
WANDB_MODES = ("online", "offline", "disabled")
STEP_METRIC = "train/step"
STEPPED_PREFIXES = ("train", "reward", "tools", "rollout", "time")
TABLE_KEY = "samples/trajectories"
MAX_TAG_CHARS = 64  # W&B refuses longer tags


@dataclass
class LoggerConfig:
    """Where metrics go besides metrics.jsonl (conf/logger/*.yaml).

    name: none (metrics.jsonl only) | wandb.
    project, entity: the W&B project and team (entity null = your default).
    mode: online | offline | disabled; offline writes the run under <run dir>/wandb for `wandb sync`.
    group: W&B group; null = the arm (experiment and overrides, seed excluded), in a sweep prefixed by the sweep's
        id, so the seeds of one arm form one group (see the module doc).
    run_name: null = the arm and the seed (`tools=code seed=2`).
    tags: extra tags; experiment, tools, reward and model tags are always added.
    log_every: a one-line summary of the step's metrics in train.log every N training steps (0 = never).
    table_every: a W&B table of sample trajectories every N training steps (0 = never).
    log_artifacts: upload the adapter and the evaluation results as W&B artifacts.
    """

    name: str = "none"
    project: str = "agentic_rl"
    entity: str | None = None
    mode: str = "offline"
    group: str | None = None
    run_name: str | None = None
    tags: list[str] = field(default_factory=list)
    log_every: int = 1
    table_every: int = 10
    log_artifacts: bool = True

    def validate(self) -> LoggerConfig:
        if self.name not in LOGGERS:
            raise ConfigError(f"logger.name={self.name!r}: pick logger=none or logger=wandb")
        if self.mode not in WANDB_MODES:
            raise ConfigError(f"logger.mode={self.mode!r}: must be one of {list(WANDB_MODES)} (or set WANDB_MODE)")
        if self.log_every < 0:
            raise ConfigError(f"logger.log_every must be >= 0 (0 = no step lines in train.log), got {self.log_every}")
        if self.table_every < 0:
            raise ConfigError(f"logger.table_every must be >= 0 (0 = no trajectory tables), got {self.table_every}")
        return self


def logger_config(cfg: DictConfig) -> LoggerConfig:
    return to_dataclass(cfg.logger, LoggerConfig).validate()


def hydra_context() -> dict[str, Any]:
    """The Hydra job's choices, overrides and sweep dir; empty outside Hydra (tests calling run(cfg))."""
    try:
        from hydra.core.hydra_config import HydraConfig

        hc = HydraConfig.get()
    except ValueError:
        return {}
    params = hc.sweeper.get("params") or {}
    return {
        "choices": dict(hc.runtime.choices),
        "overrides": hc.job.override_dirname,
        "multirun": hc.mode.name == "MULTIRUN",
        "sweep_dir": hc.sweep.dir,
        "swept": list(params),
    }


def sweep_id(sweep_config: str | None, sweep_dir: str | Path) -> str:
    """The sweep config and the sweep dir's last two parts (its start date and time): `tools-2026-11-30_17-40-00`."""
    return f"{sweep_config or 'multirun'}-{'_'.join(Path(str(sweep_dir)).parts[-2:])}"


def run_identity(cfg: DictConfig, job_type: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """job_type, name, group and tags of a run (see the module doc)."""
    ctx = hydra_context() if context is None else context
    choices = ctx.get("choices", {})
    experiment = choices.get("experiment")
    overrides = [o for o in str(ctx.get("overrides") or "").split(",") if o]
    swept = ctx.get("swept") or []
    if ctx.get("multirun") and swept:  # a sweep's arms differ in its swept keys; shared overrides are noise here
        overrides = [o for o in overrides if o.split("=", 1)[0] in swept]
    arm = " ".join(([experiment] if experiment else []) + overrides) or "default"
    name = f"{arm} seed={cfg.seed}" if "seed" in cfg else arm
    group = arm
    tags = [f"experiment:{experiment or 'none'}"]
    if ctx.get("multirun"):
        sweep = sweep_id(choices.get("sweep"), ctx["sweep_dir"])
        group = f"{sweep} {arm}"
        tags.append(f"sweep:{sweep}")
    for key in ("tools", "reward", "model"):
        if key in cfg:
            tags.append(f"{key}:{choices.get(key) or component_name(cfg[key])}")
    if "evaluator" in cfg and job_type == "eval":
        tags.append("modes:" + "+".join(cfg.evaluator.modes))
    tags += [str(t) for t in cfg.logger.get("tags") or []]
    return {
        "job_type": job_type,
        "run_name": name,
        "group": group,
        "tags": list(dict.fromkeys(t[:MAX_TAG_CHARS] for t in tags)),
    }


def wandb_settings(cfg: DictConfig, job_type: str = "train") -> dict[str, Any]:
    """The logger settings (every LoggerConfig field) with W&B identity filled in where the config leaves null."""
    settings = dataclasses.asdict(logger_config(cfg))
    identity = run_identity(cfg, job_type)
    settings["job_type"] = job_type
    settings["run_name"] = settings["run_name"] or identity["run_name"]
    settings["group"] = settings["group"] or identity["group"]
    settings["tags"] = identity["tags"]
    return settings


def define_metrics(run: Any) -> None:
    run.define_metric(STEP_METRIC)
    for prefix in STEPPED_PREFIXES:
        run.define_metric(f"{prefix}/*", step_metric=STEP_METRIC)
    run.define_metric("eval/*", step_metric=STEP_METRIC, summary="max,last")


def transcript(traj: Trajectory) -> str:
    """The episode as a reader follows it: each model turn, then the tool's answer (tags kept)."""
    parts = []
    for i, turn in enumerate(traj.turns, 1):
        call = f" -> {turn.call.name}" if turn.call else " -> no tool call"
        parts.append(f"--- turn {i}{call}\n{(turn.prefix + turn.text).strip()}")
        if turn.observation is not None:
            parts.append(turn.observation.text.strip())
    return "\n".join(parts)


def trajectory_rows(
    step: int, trajs: Sequence[Trajectory], rewards: Sequence[RewardBreakdown], prompt: str = ""
) -> tuple[list[str], list[list[Any]]]:
    """Columns and rows of the sample-trajectory table: task, transcript, tool calls, reward terms, passed."""
    terms = sorted({k for r in rewards for k in r.terms})
    columns = [
        "step",
        "task",
        "prompt",
        "sample",
        "transcript",
        "tool_calls",
        "reward",
        *[f"reward/{t}" for t in terms],
        "passed",
        "finish_reason",
    ]
    rows = []
    for traj, reward in zip(trajs, rewards):
        calls = ", ".join(f"{k}={n}" for k, n in traj.calls_by_kind().items() if n)
        rows.append(
            [
                step,
                traj.task_id,
                prompt,
                traj.sample_index,
                transcript(traj),
                calls,
                reward.total,
                *[reward.terms.get(t, 0.0) for t in terms],
                bool(traj.passed),
                traj.finish_reason,
            ]
        )
    return columns, rows


def log_trajectory_table(
    run: Any, step: int, trajs: Sequence[Trajectory], rewards: Sequence[RewardBreakdown], prompt: str = ""
) -> None:
    import wandb

    columns, rows = trajectory_rows(step, trajs, rewards, prompt)
    run.log({TABLE_KEY: wandb.Table(columns=columns, data=rows), STEP_METRIC: step}, step=step)


def log_run_artifacts(run: Any, run_dir: Path) -> list[str]:
    """The adapter (type model) and the evaluation results (type evaluation) of a finished run dir."""
    import wandb

    logged = []
    adapter = run_dir / "adapter"
    if adapter.is_dir():
        art = wandb.Artifact(f"adapter-{run.id}", type="model", description="LoRA adapter (peft save_pretrained)")
        art.add_dir(str(adapter))
        run.log_artifact(art)
        logged.append(art.name)
    results = [p for p in (run_dir / SUMMARY_FILE, run_dir / RESULTS_FILE) if p.is_file()]
    if results:
        art = wandb.Artifact(
            f"eval-{run.id}",
            type="evaluation",
            description="summary.json (pass@k per mode) and per-episode results when present",
        )
        for path in results:
            art.add_file(str(path))
        run.log_artifact(art)
        logged.append(art.name)
    return logged
