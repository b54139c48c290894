"""Runs grouped into arms, and what the tables and figures take from a run's files (read by `run_files`): seeds,
samples per task, held-out tasks scored, per-episode outcomes, estimates across seeds.

An arm is what a study compares: the runs' command-line overrides (`.hydra/overrides.yaml`) without the seed
and the other keys conf/train.yaml keeps out of `override_dirname` (run bookkeeping: logger, progress, run
dir, ...), less the overrides every run shares. A run that sets none of the keys the other arms set (a baseline
read beside a sweep's arms) is labelled by its own values of them, from its resolved config. The seeds of one
arm are its replicates; the sweep figure (`plots.plot_sweep`) and the tables (`tables.py`) aggregate over them
with `across_seeds` / `pass_at_1_estimate`.
A run dir without `.hydra/overrides.yaml` (e.g. a copy in experiments/ that kept only metrics.jsonl and
summary.json) has no overrides: all such runs form one arm.
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agentic_rl.envs.metrics import held_out_set
from agentic_rl.paths import CONF_DIR
from agentic_rl.reports.run_files import hydra_overrides, read_config, read_eval_records, read_summary
from agentic_rl.reports.stats import mean_ci, wilson_interval
from agentic_rl.tracking.metrics import scored

logger = logging.getLogger(__name__)

TRAIN_REWARD = "train/reward_mean"


def per_step(records: list[dict], key: str) -> tuple[list[int], list[float]]:
    """(steps, values) of a training metric."""
    rows = [(r["step"], r[key]) for r in records if r.get(key) is not None and "train/epoch" in r]
    return [s for s, _ in rows], [v for _, v in rows]


def quarter_means(values: list[float]) -> dict[str, Any] | None:
    """Mean of per-step values over the first and the last ceil(n/4) of them, and last - first."""
    if not values:
        return None
    q = math.ceil(len(values) / 4)
    first, last = sum(values[:q]) / q, sum(values[-q:]) / q
    return {
        "n_steps": len(values),
        "quarter_steps": q,
        "first_quarter": first,
        "last_quarter": last,
        "difference": last - first,
    }


def override_key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


@functools.lru_cache(maxsize=1)
def non_arm_keys() -> frozenset[str]:
    """conf/train.yaml's override_dirname exclude_keys (seed and run bookkeeping). `experiment` and `sweep`
    stay in the arm: runs of two experiments or two sweeps read together are different arms."""
    train = yaml.safe_load((CONF_DIR / "train.yaml").read_text())
    keys = train["hydra"]["job"]["config"]["override_dirname"]["exclude_keys"]
    return frozenset(keys) - {"experiment", "sweep"}


def run_seed(run_dir: Path) -> int | None:
    """The seed a run was started with: its `seed=` override, else its resolved config's seed."""
    for override in hydra_overrides(run_dir):
        if override_key(override) == "seed":
            return int(override.split("=", 1)[1])
    seed = read_config(run_dir).get("seed")
    return int(seed) if seed is not None else None


def samples_per_task(run_dir: Path) -> int:
    """evaluator.n_samples of a run (1 when its resolved config is not there)."""
    evaluator = read_config(run_dir).get("evaluator") or {}
    return int(evaluator.get("n_samples") or 1)


def tasks_scored(run_dir: Path, mode_metrics: dict) -> int | None:
    """Held-out tasks behind one mode's pass@1: its episodes over the samples per task. Runs written before
    summary.json's n_eval_tasks applied evaluator.limit report the eval data's size there, so it is the fallback."""
    episodes = mode_metrics.get("rollout/episodes")
    if episodes:
        return round(episodes / samples_per_task(run_dir))
    return read_summary(run_dir).get("n_eval_tasks")


def group_by_arm(runs: list[Path]) -> dict[str, list[Path]]:
    """Arm label -> its runs (seeds), arms in the order of their first run. The label is the overrides that
    differ between arms (`tools=code`); a single arm is labelled by its overrides or `default`."""
    return {label: arm_runs for label, (_, arm_runs) in arms_with_overrides(runs).items()}


def arms_with_overrides(runs: list[Path]) -> dict[str, tuple[frozenset[str], list[Path]]]:
    """`group_by_arm`, each arm with the overrides its label stands for (those that set it apart from the other
    arms; a single arm: all of its own)."""
    overrides = {run: {o for o in hydra_overrides(run) if override_key(o) not in non_arm_keys()} for run in runs}
    for run in runs:
        if not (Path(run) / ".hydra" / "overrides.yaml").is_file():
            logger.warning("%s has no .hydra/overrides.yaml: grouped with the other runs without one", run)
    common = set.intersection(*overrides.values()) if overrides else set()
    set_by_arms = sorted({override_key(o) for run in runs for o in overrides[run] - common})
    by_overrides: dict[frozenset[str], list[Path]] = {}
    for run in runs:
        by_overrides.setdefault(frozenset(overrides[run] - common), []).append(run)
    arms: dict[str, tuple[frozenset[str], list[Path]]] = {}
    for differing, arm_runs in by_overrides.items():
        label = (
            " ".join(sorted(differing))
            or configured_label(arm_runs, set_by_arms)
            or " ".join(sorted(common))
            or "default"
        )
        arms[label] = (differing or frozenset(common), arm_runs)
    return arms


def configured_value(config: dict, key: str) -> str | None:
    """What a resolved config (`read_config`) holds at a dotted override key, as an override would spell it; a
    config group (`tools`) by its node's `name`. None where the key is not there (or the run kept no config) or
    the value is not a plain one (a node without a name, a list, an unresolved interpolation)."""
    node: object = config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    if isinstance(node, dict):
        node = node.get("name")
        if node is None:
            return None
    if isinstance(node, bool):
        return str(node).lower()
    if node is None:
        return "null"
    if isinstance(node, (list, dict)) or str(node).startswith("${"):
        return None
    return str(node)


def configured_label(arm_runs: list[Path], keys: list[str]) -> str | None:
    """The label of the arm that overrides none of the keys the other arms set (a sweep's baseline read beside its
    arms): its own values of them, from its runs' configs, so that `tools=none` and `tools=code` are read against
    `tools=multi (from its config)` rather than against the overrides every run shares. None unless every run of
    the arm holds every key, with the same values."""
    configs = [read_config(run) for run in arm_runs]
    labels = {tuple(configured_value(config, key) for key in keys) for config in configs}
    if not keys or len(labels) != 1 or None in (values := labels.pop()):
        return None
    return " ".join(f"{key}={value}" for key, value in zip(keys, values)) + " (from its config)"


@dataclass(frozen=True)
class Estimate:
    """A value across an arm's seeds with its 95% interval; `n` values went into it."""

    mean: float
    low: float
    high: float
    n: int
    method: str  # "t" (Student t across seeds), "wilson" (one run: its pass rate over tasks), "point"

    def as_dict(self) -> dict:
        return {"mean": self.mean, "low": self.low, "high": self.high, "n": self.n, "method": self.method}


def across_seeds(values: list[float]) -> Estimate:
    """Mean and 95% t interval of per-seed values, never clipped: a bound past a rate's range (a lower end below 0
    with three seeds) is what the seeds say, and tables and figure data keep it as it is. Only a drawing may clip
    what it shows, and says so on the figure (`plots.draw_band`)."""
    mean, low, high = mean_ci(values)
    return Estimate(mean, low, high, len(values), "t" if len(values) > 1 else "point")


def pass_at_1_estimate(rates: list[float], n_tasks: list[int | None]) -> Estimate:
    """pass@1 of an arm: the t interval across seeds (unclipped); with one seed, the Wilson interval over its
    tasks."""
    if len(rates) == 1 and n_tasks[0]:
        low, high = wilson_interval(rates[0] * n_tasks[0], n_tasks[0])
        return Estimate(rates[0], low, high, 1, "wilson")
    return across_seeds(rates)


def outcomes_of(records: list[dict]) -> dict[tuple[str, str, int], bool]:
    """Evaluation records as (mode, task id, sample) -> passed: the key that pairs an episode before training with
    the same episode after."""
    return {(r["mode"], str(r["task_id"]), int(r.get("sample", 0))): bool(r["passed"]) for r in records}


def scored_outcomes(records: list[dict]) -> dict[tuple[str, str, int], bool]:
    """`outcomes_of` the `scored` records: the episodes the task-level tables and figures average."""
    return outcomes_of(scored(records))


def task_types_of(records: list[dict]) -> dict[str, str]:
    """Task id -> its `task_type` (`docs`, `plain`, `exec`, ...) for the records that carry one. A CodeGym record
    without one is typed by its held-out set (`envs.metrics`: `seen_env` in its `env` field): `seen_envs`, a
    held-out configuration of a training environment, or `unseen_envs`, a held-out environment; so the paired
    tables split by set, and a claim about held-out environments rests on their tasks alone."""
    types = {}
    for record in records:
        if record.get("task_type") is not None:
            types[str(record["task_id"])] = str(record["task_type"])
        elif isinstance(record.get("env"), dict) and "seen_env" in record["env"]:
            types[str(record["task_id"])] = held_out_set(record["env"])
    return types


def episode_outcomes(run_dir: Path, phase: str) -> dict[tuple[str, str, int], bool]:
    """`scored_outcomes` of the records of an evaluation run (`python -m agentic_rl.evaluate`), or else of a
    training run's evaluation `phase` ("before" or "after")."""
    return scored_outcomes(read_eval_records(run_dir, "eval") or read_eval_records(run_dir, phase))


def eval_sections(runs: list[Path], phase: str) -> list[dict]:
    """Per run, the `phase` ("before" / "after") evaluation of summary.json: mode -> its metrics."""
    return [read_summary(run).get("eval", {}).get(phase) or {} for run in runs]
