"""The evaluation before training, shared by the runs that would all compute the same one (`base_eval.cache`).

Before training, every run of a study evaluates the same model: the base model with a fresh (zero-effect) LoRA
adapter, on the same held-out tasks, tools and evaluator. With the cache on, that evaluation is done once and
every later run reads it: its `results.jsonl` lives in `<cache>/<key>/`, and the evaluator skips the episodes
already there (its resume), so a run killed halfway through it also loses nothing.

For runs of different seeds to share it, the base evaluation samples under `base_eval.seed` instead of the run's
seed. A study's seeds then compare their trained policies with one base evaluation (4 samples plus greedy per
task by default), which the table counts once: the task-level statistics average each task over its samples, so a
shared evaluation weighs what a single one does.

The key is a hash of what decides the episodes: the model, the evaluator (its seed replaced), the rollout, the
sandbox and the tasks themselves (id, prompt, tests, metadata), plus the package version. Code changes that
alter episodes without changing any of those (a new rollout loop, say) need a fresh cache: delete the folder, or
point `base_eval.cache` elsewhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import importlib.metadata
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_rl.evaluation.records import ResultStore
from agentic_rl.types import Task

KEY_FILE = "key.json"


@dataclass
class BaseEvalConfig:
    """cache: the folder of shared base evaluations (null = each run evaluates before training itself, sampling
    under its own seed). seed: the sampling seed of a shared base evaluation, the same for every run."""

    cache: str | None = None
    seed: int = 0


def package_version() -> str:
    try:
        return importlib.metadata.version("agentic_rl")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def tasks_digest(tasks: Sequence[Task]) -> str:
    blob = json.dumps(
        [[t.task_id, t.prompt, t.tests, t.harness, t.entry_point, t.metadata] for t in tasks],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


# Rollout settings that say where the sampler runs and how to reach it, never what it samples: a run that only
# moves the sampler to a server, or waits longer for one to start, shares the base evaluation of one that does not.
SAMPLER_PLACEMENT_KEYS = ("servers", "server_token_env", "server_startup_timeout_s", "sync_dir")


def base_eval_key(settings: dict[str, Any], tasks: Sequence[Task]) -> dict[str, Any]:
    """What decides the base evaluation's episodes: `settings` (model, evaluator, rollout, sandbox, version: plain
    containers; the rollout's `SAMPLER_PLACEMENT_KEYS` left out) and the tasks' digest."""
    rollout = {k: v for k, v in settings.get("rollout", {}).items() if k not in SAMPLER_PLACEMENT_KEYS}
    return {**settings, "rollout": rollout, "tasks": tasks_digest(tasks)}


def key_hash(key: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


@contextlib.contextmanager
def shared_base_eval(cfg: BaseEvalConfig, key: dict[str, Any]) -> Iterator[ResultStore]:
    """The store of the base evaluation `key` names, held under an exclusive lock (another run evaluating the same
    base waits, then finds it done). Its `key.json` records what the hash stands for."""
    if cfg.cache is None:
        raise ValueError("base_eval.cache is null: there is no shared base evaluation")
    folder = Path(cfg.cache).expanduser() / key_hash(key)
    folder.mkdir(parents=True, exist_ok=True)
    key_path = folder / KEY_FILE
    text = json.dumps(key, sort_keys=True, indent=1, default=str)
    if key_path.is_file() and key_path.read_text() != text:
        raise ValueError(
            f"{folder} holds a base evaluation of other settings (hash collision or an edited {KEY_FILE}). "
            f"Fix: delete {folder}, or set base_eval.cache to another folder"
        )
    key_path.write_text(text)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield ResultStore(folder / "results.jsonl")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def with_seed(eval_cfg: Any, seed: int) -> Any:
    """The evaluator settings (a dataclass) sampling under `seed`."""
    return dataclasses.replace(eval_cfg, seed=seed)
