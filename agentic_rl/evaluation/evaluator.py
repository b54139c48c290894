"""Evaluation modes: the same rollout with the tool set of each mode, graded by the sandbox.

Modes (conf/evaluator/*.yaml maps each to a tool set):
  no_tools   - one turn, the task prompt alone, no tool instructions; the reply's code is graded;
  code_only  - execute + submit; the search tool is neither described nor parsed;
  multi_tool - search + execute + submit.
pass@1 is greedy by default (temperature 0, n_samples 1); with n_samples > 1 pass@k uses the unbiased
estimator of Chen et al. (2021).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from tqdm.auto import tqdm

from agentic_rl.evaluation.passk import pass_at_k
from agentic_rl.rollout.agent import RolloutConfig, ToolSet, run_episodes
from agentic_rl.rollout.policy import Policy
from agentic_rl.tracking.metrics import episode_metrics
from agentic_rl.types import Task, Trajectory

logger = logging.getLogger(__name__)

MODES = ("no_tools", "code_only", "multi_tool")


@dataclass
class EvalConfig:
    """modes: which modes to run. n_samples: samples per task. ks: the k of pass@k (each <= n_samples).
    temperature/top_p: sampling for evaluation (0 = greedy). batch_tasks: tasks rolled out together.
    limit: evaluate only the first N tasks (null = all)."""

    modes: list[str] = field(default_factory=lambda: list(MODES))
    n_samples: int = 1
    ks: list[int] = field(default_factory=lambda: [1])
    temperature: float = 0.0
    top_p: float = 1.0
    batch_tasks: int = 8
    limit: int | None = None

    def validate(self, available: Sequence[str]) -> "EvalConfig":
        unknown = [m for m in self.modes if m not in available]
        if unknown:
            raise ValueError(f"evaluator.modes has unknown mode(s) {unknown}; available: {list(available)}")
        if self.n_samples < 1:
            raise ValueError(f"evaluator.n_samples must be >= 1, got {self.n_samples}")
        bad = [k for k in self.ks if not 1 <= k <= self.n_samples]
        if bad:
            raise ValueError(f"evaluator.ks must be within 1..n_samples={self.n_samples}, got {bad}")
        return self


@dataclass
class ModeResult:
    mode: str
    pass_at: dict[int, float]
    metrics: dict[str, float]
    trajectories: list[Trajectory]


def evaluate_mode(tasks: Sequence[Task], policy: Policy, toolset: ToolSet, rollout: RolloutConfig,
                  cfg: EvalConfig, mode: str, progress: bool = True) -> ModeResult:
    rollout = replace(rollout, temperature=cfg.temperature, top_p=cfg.top_p)
    jobs = [(task, s) for task in tasks for s in range(cfg.n_samples)]
    trajs: list[Trajectory] = []
    passed = 0
    bar = tqdm(total=len(jobs), desc=f"eval {mode}", disable=not progress, leave=False)
    step = max(cfg.batch_tasks * cfg.n_samples, 1)
    for start in range(0, len(jobs), step):
        chunk = run_episodes(jobs[start:start + step], policy, toolset, rollout)
        trajs.extend(chunk)
        passed += sum(t.passed for t in chunk)
        bar.update(len(chunk))
        bar.set_postfix(pass_rate=f"{passed / len(trajs):.3f}")
    bar.close()
    per_task: dict[str, list[bool]] = {}
    for t in trajs:
        per_task.setdefault(t.task_id, []).append(t.passed)
    pass_at = {k: sum(pass_at_k(len(v), sum(v), k) for v in per_task.values()) / max(len(per_task), 1)
               for k in cfg.ks}
    return ModeResult(mode=mode, pass_at=pass_at, metrics=episode_metrics(trajs), trajectories=trajs)


def evaluate(tasks: Sequence[Task], policy: Policy, toolsets: dict[str, ToolSet], rollout: RolloutConfig,
             cfg: EvalConfig, progress: bool = True) -> dict[str, ModeResult]:
    cfg.validate(list(toolsets))
    tasks = list(tasks)[: cfg.limit] if cfg.limit else list(tasks)
    return {mode: evaluate_mode(tasks, policy, toolsets[mode], rollout, cfg, mode, progress) for mode in cfg.modes}


def flat_metrics(results: dict[str, ModeResult]) -> dict[str, float]:
    """`eval/<mode>/pass@k` and `eval/<mode>/<tool metric>` for logging."""
    out: dict[str, float] = {}
    for mode, res in results.items():
        for k, v in res.pass_at.items():
            out[f"eval/{mode}/pass@{k}"] = v
        for name, v in res.metrics.items():
            out[f"eval/{mode}/{name}"] = v
    return out
