"""Evaluation modes: the same rollout with the tool set of each mode, graded by the sandbox.

Modes (conf/evaluator/*.yaml maps each to a tool set under `toolsets.<mode>`):
  no_tools   - one turn, the task prompt alone, no tool instructions; the reply's code is graded;
  code_only  - execute + submit; the search tool is neither described nor parsed;
  multi_tool - search + execute + submit.

Every mode gets the same budget of generated tokens, `rollout.max_turns x rollout.max_new_tokens`: a tool mode
spends it over up to `max_turns` turns, a mode without tools in its one turn (`mode_rollout`). Otherwise
no_tools would be compared at a third of the tool modes' budget (one turn of 96 tokens against three).
A mode without tools reports no `tools/*` metrics: it has no tools to call.

Sampling: with `n_samples: 1` one episode per task at `temperature` (0 = greedy), so pass@1 is greedy
pass@1. With `n_samples > 1` every task gets n episodes at `sample_temperature`/`sample_top_p` and pass@k
(for each k in `ks`) is the unbiased estimator of Chen et al. (2021) (`passk.pass_at_k`), averaged over
tasks; pass@1 is then the sampled estimate, not the greedy one.

Each (task, mode, sample) triple becomes one record (`records.py`). Given a `ResultStore`, records are
appended to results.jsonl as each batch finishes and triples already there are skipped, so an interrupted
evaluation resumes where it stopped; pass@k and the tool metrics are computed from the records, old and new.

A policy may adapt itself per mode with `for_mode(toolset, rollout) -> (policy, rollout)` (the replay policy
fences its answers for the mode and submits once), and may declare samples it does not have with
`has_sample(task_id, index)`: those triples are recorded as failures with status "no_sample", not run.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tqdm.auto import tqdm

from agentic_rl.evaluation.passk import pass_at_k
from agentic_rl.evaluation.records import (
    ResultStore,
    metrics_from_records,
    missing_sample_record,
    record_from_trajectory,
)
from agentic_rl.registry import Registry
from agentic_rl.rollout.agent import RolloutConfig, ToolSet, run_episodes
from agentic_rl.rollout.policy import Policy
from agentic_rl.tracking.metrics import merge_rollout_stats, rollout_metrics
from agentic_rl.types import Task, Trajectory

logger = logging.getLogger(__name__)

MODES = ("no_tools", "code_only", "multi_tool")
# evaluator.name -> evaluate(tasks, policy, toolsets, rollout, cfg, *, progress, store) -> {mode: ModeResult}
EVALUATORS: Registry[Callable[..., dict[str, ModeResult]]] = Registry("evaluator")


@dataclass
class EvalConfig:
    """Evaluation settings (conf/evaluator/*.yaml; the mode -> tool set map `toolsets` is read separately).

    name: the evaluator, a function with `evaluate`'s signature in the "evaluator" registry (`EVALUATORS`):
        pass_at_k (this module's `evaluate`), or one another package declares (`agentic_rl.registry`).
    modes: which modes to run, in order.
    n_samples: episodes per task and mode. 1 = one episode at `temperature` (greedy pass@1).
    ks: the k of pass@k to report; each must be <= n_samples.
    temperature / top_p: sampling when n_samples == 1 (temperature 0 = greedy).
    sample_temperature / sample_top_p: sampling when n_samples > 1 (pass@k needs distinct samples).
    batch_tasks: tasks rolled out together (their n_samples episodes each form one generation batch);
        results are written after each batch.
    limit: evaluate only the first N tasks (null = all).
    """

    name: str = "pass_at_k"
    modes: list[str] = field(default_factory=lambda: list(MODES))
    n_samples: int = 1
    ks: list[int] = field(default_factory=lambda: [1])
    temperature: float = 0.0
    top_p: float = 1.0
    sample_temperature: float = 0.8
    sample_top_p: float = 0.95
    batch_tasks: int = 8
    limit: int | None = None

    def validate(self, available: Sequence[str]) -> EvalConfig:
        if self.name not in EVALUATORS:
            raise ValueError(f"evaluator.name={self.name!r}: unknown; available: {EVALUATORS.names()}")
        unknown = [m for m in self.modes if m not in available]
        if unknown:
            raise ValueError(f"evaluator.modes has unknown mode(s) {unknown}; available: {list(available)}")
        if not self.modes:
            raise ValueError(f"evaluator.modes is empty; pick some of {list(available)}")
        if len(set(self.modes)) != len(self.modes):
            raise ValueError(f"evaluator.modes lists a mode twice: {self.modes}")
        if self.n_samples < 1:
            raise ValueError(f"evaluator.n_samples must be >= 1, got {self.n_samples}")
        bad = [k for k in self.ks if not 1 <= k <= self.n_samples]
        if bad or not self.ks:
            raise ValueError(
                f"evaluator.ks must be non-empty and within 1..n_samples={self.n_samples}, got "
                f"{self.ks}. Fix: raise evaluator.n_samples or drop the larger k."
            )
        if self.n_samples > 1 and self.sample_temperature <= 0:
            raise ValueError(
                "evaluator.n_samples > 1 with sample_temperature <= 0 would grade identical greedy "
                "samples; set evaluator.sample_temperature > 0 (e.g. 0.8)"
            )
        if self.batch_tasks < 1:
            raise ValueError(f"evaluator.batch_tasks must be >= 1, got {self.batch_tasks}")
        if self.limit is not None and self.limit < 0:
            raise ValueError(f"evaluator.limit must be null or >= 0, got {self.limit}")
        return self

    def scored_tasks(self, tasks: Sequence[Task]) -> list[Task]:
        """The tasks an evaluation scores: the first `limit` (all when null)."""
        return list(tasks)[: self.limit] if self.limit is not None else list(tasks)

    @property
    def sampling(self) -> tuple[float, float]:
        """(temperature, top_p) of the evaluation episodes."""
        if self.n_samples > 1:
            return self.sample_temperature, self.sample_top_p
        return self.temperature, self.top_p


@dataclass
class ModeResult:
    mode: str
    pass_at: dict[int, float]  # k -> mean pass@k over tasks
    metrics: dict[str, float]  # tool-usage and rollout metrics (episode_metrics' names)
    trajectories: list[Trajectory]  # the episodes run now (not those resumed from results.jsonl)
    records: list[dict[str, Any]] = field(default_factory=list)  # every triple of this mode, task order
    n_tasks: int = 0

    @property
    def statuses(self) -> dict[str, int]:
        return dict(Counter(r["status"] for r in self.records))


def token_budget(rollout: RolloutConfig) -> int:
    """Generated tokens an episode may spend: `max_turns` turns of `max_new_tokens`."""
    return rollout.max_turns * rollout.max_new_tokens


def mode_rollout(rollout: RolloutConfig, toolset: ToolSet, cfg: EvalConfig) -> RolloutConfig:
    """The episode limits of a mode: the evaluation's sampling, and for a tool set without tools one turn
    holding the whole token budget (a tool mode may generate up to `max_turns x max_new_tokens` tokens)."""
    temperature, top_p = cfg.sampling
    rollout = replace(rollout, temperature=temperature, top_p=top_p)
    if toolset.answers_once:  # the no-tools mode: its one tool is the final answer
        rollout = replace(rollout, max_turns=1, max_new_tokens=token_budget(rollout))
    return rollout


def mode_metrics(records: Sequence[dict[str, Any]], toolset: ToolSet) -> dict[str, float]:
    """`metrics_from_records`, without the `tools/*` metrics for a tool set without tools. They are meaningless
    there: the answer is graded without a call, so `tools/none_rate` ("turns with no valid call") would read 1.0
    and every call rate 0, as if the model had failed to use tools it was never given."""
    metrics = metrics_from_records(records)
    if toolset.answers_once:  # the no-tools mode: its one tool is the final answer
        metrics = {k: v for k, v in metrics.items() if not k.startswith("tools/")}
    return metrics


def evaluate_mode(
    tasks: Sequence[Task],
    policy: Policy,
    toolset: ToolSet,
    rollout: RolloutConfig,
    cfg: EvalConfig,
    mode: str,
    progress: bool = True,
    store: ResultStore | None = None,
) -> ModeResult:
    """Roll out every (task, sample) of `mode`, skipping triples already in `store`; grade; score."""
    rollout = mode_rollout(rollout, toolset, cfg)
    if hasattr(policy, "for_mode"):
        policy, rollout = policy.for_mode(toolset, rollout)
    has_sample = getattr(policy, "has_sample", None)
    source = getattr(policy, "source", "the samples")

    jobs = [(task, s) for task in tasks for s in range(cfg.n_samples)]
    records: dict[tuple[str, int], dict[str, Any]] = {}
    if store is not None:
        for task, s in jobs:
            old = store.get((task.task_id, mode, s))
            if old is not None:
                records[(task.task_id, s)] = old
    if records:
        logger.info(
            "eval %s: %d of %d episodes already in %s; running the other %d",
            mode,
            len(records),
            len(jobs),
            store.path,
            len(jobs) - len(records),
        )
    todo = [(t, s) for t, s in jobs if (t.task_id, s) not in records]
    if has_sample is not None:
        missing = [missing_sample_record(t.task_id, mode, s, source) for t, s in todo if not has_sample(t.task_id, s)]
        if missing:
            logger.warning(
                "eval %s: %d episodes have no sample in %s (recorded as failures): %s",
                mode,
                len(missing),
                source,
                sorted({r["task_id"] for r in missing})[:10],
            )
            _keep(records, missing, store)
            todo = [(t, s) for t, s in todo if has_sample(t.task_id, s)]

    trajs: list[Trajectory] = []
    rollout_stats = []
    passed = sum(r["passed"] for r in records.values())
    bar = tqdm(total=len(jobs), initial=len(records), desc=f"eval {mode}", disable=not progress, leave=False)
    bar.set_postfix(pass_rate=f"{passed / max(len(records), 1):.3f}")
    step = cfg.batch_tasks * cfg.n_samples
    for start in range(0, len(todo), step):
        shown = [0]  # episodes of this batch already counted on the bar

        def advance(_n_active: int, n_done: int, shown: list[int] = shown) -> None:  # moves as each episode ends
            bar.update(n_done - shown[0])
            shown[0] = n_done

        batch = todo[start : start + step]
        chunk = run_episodes(batch, policy, toolset, rollout, on_turn=advance)
        new = [record_from_trajectory(t, mode, task) for t, (task, _) in zip(chunk, batch)]
        _keep(records, new, store)
        trajs.extend(chunk)
        rollout_stats.append(chunk.stats)
        passed += sum(r["passed"] for r in new)
        bar.update(len(chunk) - shown[0])  # episodes still running at the turn cap end with the batch
        bar.set_postfix(pass_rate=f"{passed / len(records):.3f}")
    bar.close()

    ordered = [records[(t.task_id, s)] for t, s in jobs]
    per_task: dict[str, list[bool]] = {}
    for r in ordered:
        per_task.setdefault(r["task_id"], []).append(bool(r["passed"]))
    pass_at = {k: sum(pass_at_k(len(v), sum(v), k) for v in per_task.values()) / max(len(per_task), 1) for k in cfg.ks}
    metrics = mode_metrics(ordered, toolset)
    if rollout_stats:  # throughput and prefill counters of the episodes run now (resumed ones have none)
        metrics.update(rollout_metrics(merge_rollout_stats(rollout_stats)))
    return ModeResult(
        mode=mode, pass_at=pass_at, metrics=metrics, trajectories=trajs, records=ordered, n_tasks=len(tasks)
    )


def _keep(records: dict, new: list[dict[str, Any]], store: ResultStore | None) -> None:
    for r in new:
        records[(r["task_id"], r["sample"])] = r
    if store is not None:
        store.append(new)


def evaluate(
    tasks: Sequence[Task],
    policy: Policy,
    toolsets: dict[str, ToolSet],
    rollout: RolloutConfig,
    cfg: EvalConfig,
    progress: bool = True,
    store: ResultStore | None = None,
) -> dict[str, ModeResult]:
    """Evaluate `policy` on `tasks` in each of `cfg.modes` (tool set `toolsets[mode]`); see the module doc."""
    cfg.validate(list(toolsets))
    tasks = cfg.scored_tasks(tasks)
    return {
        mode: evaluate_mode(tasks, policy, toolsets[mode], rollout, cfg, mode, progress, store) for mode in cfg.modes
    }


def flat_metrics(results: dict[str, ModeResult]) -> dict[str, float]:
    """`eval/<mode>/pass@k` and `eval/<mode>/<tool metric>` for logging."""
    out: dict[str, float] = {}
    for mode, res in results.items():
        for k, v in res.pass_at.items():
            out[f"eval/{mode}/pass@{k}"] = v
        for name, v in res.metrics.items():
            out[f"eval/{mode}/{name}"] = v
    return out
