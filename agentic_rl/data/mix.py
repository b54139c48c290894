"""Several task sources in one training distribution (`data=mix`, issue #50): e.g. code tasks graded by tests and
CodeGym environments, drawn by stated weights.

    data:
      _target_: agentic_rl.data.mix.load_mix
      sources:
        code:    {weight: 0.5, data: {_target_: agentic_rl.data.builtin.load_builtin, ...}}
        codegym: {weight: 0.5, data: {_target_: agentic_rl.envs.tasks.load_codegym, ...}}
      limit: null     # tasks in the mix; null: the most the sources give at these weights without repeating a task
      seed: ${seed}

Each source is any data config (a node with its own `_target_`), built as `data=` builds it. The mix takes
`limit * weight` of each source's tasks (largest remainders, so the counts sum to `limit`), drawn without repetition by
a generator seeded with the seed and the source's name, so one source's draw does not depend on the others'
weights, and orders the mix by the seed. The same seed and config give the same tasks in the same order.

A task keeps its harness and everything else it came with, so each one routes to its own environment: a CodeGym
task (harness `codegym`) opens a CodeGym episode with its own tools, a code task the tool set of `tools=`
(`envs.toolset.ToolSetEnvironment`). The mix records where each task came from: `metadata["mix_source"]`, and
`metadata["task_type"]` becomes the source's name (`<source>/<type>` for a task that had a type, e.g. toolworld's
`docs`). Training logs its per-type metrics under that name (`train/pass_rate/<source>`, in metrics.jsonl and W&B),
and evaluation records carry it (`task_type`), so `python -m agentic_rl.table` splits its tables by source.
A weight of 0 leaves its source out without loading it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agentic_rl.types import Task

SOURCE_KEY = "mix_source"


def check_weights(weights: Mapping[str, Any]) -> dict[str, float]:
    """The sources' weights as floats, normalized to sum to 1, those of weight 0 left out."""
    if not weights:
        raise ValueError("data.sources is empty: a mix needs at least one source {weight: w, data: {...}}")
    checked = {}
    for name, weight in weights.items():
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"data.sources.{name}.weight must be a number >= 0, got {weight!r}")
        if weight > 0:
            checked[str(name)] = float(weight)
    if not checked:
        raise ValueError("every source of data.sources has weight 0: give at least one a positive weight")
    total = sum(checked.values())
    return {name: weight / total for name, weight in checked.items()}


def apportion(weights: Mapping[str, float], total: int) -> dict[str, int]:
    """`total` split by `weights` (normalized): each source's floor, then one more to the largest remainders (ties in
    the sources' order), so the counts sum to `total`.

    >>> apportion({"a": 0.5, "b": 0.3, "c": 0.2}, 7)
    {'a': 4, 'b': 2, 'c': 1}
    """
    exact = {name: w * total for name, w in weights.items()}
    counts = {name: math.floor(x) for name, x in exact.items()}
    order = sorted(weights, key=lambda name: -(exact[name] - counts[name]))  # stable: ties keep the sources' order
    for name in order[: total - sum(counts.values())]:
        counts[name] += 1
    return counts


def largest_size(weights: Mapping[str, float], available: Mapping[str, int]) -> int:
    """The largest mix whose `apportion` takes from no source more tasks than it has."""
    size = min(math.floor(available[name] / w) for name, w in weights.items()) + len(weights)
    while size > 0 and any(n > available[name] for name, n in apportion(weights, size).items()):
        size -= 1
    return size


def tagged(task: Task, source: str) -> Task:
    """`task` with its source recorded: `mix_source`, and `task_type` the source's name (`<source>/<type>`)."""
    kind = task.metadata.get("task_type")
    metadata = {**task.metadata, SOURCE_KEY: source, "task_type": f"{source}/{kind}" if kind else source}
    return replace(task, metadata=metadata)


def mix_tasks(
    sources: Mapping[str, list[Task]], weights: Mapping[str, Any], size: int | None = None, seed: int = 0
) -> list[Task]:
    """`size` tasks (None: `largest_size`) of `sources` (name -> its tasks) by `weights` (name -> weight), each
    source's drawn without repetition by `random.Random(f"{seed}/{name}")`, the whole ordered by
    `random.Random(seed)`."""
    shares = check_weights(weights)
    missing = sorted(set(shares) - set(sources))
    if missing:
        raise ValueError(f"data.sources: {missing} have a weight but no tasks")
    available = {name: len(sources[name]) for name in shares}
    empty = [name for name, n in available.items() if n == 0]
    if empty:
        raise ValueError(f"data.sources: {empty} gave no tasks; check their data (split, limit) or set weight: 0")
    if size is None:
        size = largest_size(shares, available)
    if size < 1:
        raise ValueError(f"data.limit must be >= 1 or null, got {size}")
    counts = apportion(shares, size)
    short = {name: (n, available[name]) for name, n in counts.items() if n > available[name]}
    if short:
        detail = ", ".join(f"{name} needs {n}, has {have}" for name, (n, have) in short.items())
        raise ValueError(
            f"data.limit={size} at these weights takes more tasks than a source has ({detail}): lower data.limit, "
            "set it to null (the largest mix), or change the weights"
        )
    mixed = []
    for name, n in counts.items():
        pool = list(sources[name])
        random.Random(f"{seed}/{name}").shuffle(pool)
        mixed += [tagged(task, name) for task in pool[:n]]
    seen: dict[str, str] = {}
    for task in mixed:
        if task.task_id in seen and seen[task.task_id] != task.metadata[SOURCE_KEY]:
            raise ValueError(
                f"task id {task.task_id!r} comes from both {seen[task.task_id]} and {task.metadata[SOURCE_KEY]}: "
                "a task's id names it in groups and records, so two sources cannot share one"
            )
        seen[task.task_id] = task.metadata[SOURCE_KEY]
    random.Random(seed).shuffle(mixed)
    return mixed


def load_mix(sources: Mapping[str, Any], limit: int | None = None, seed: int = 0) -> list[Task]:
    """The mix of `data=mix`: `sources` is name -> {weight, data}, `data` any data config node (built with
    `registry.build`, as `data=` is); `limit`: the mix's size, the key every data option sizes its tasks by; see
    the module docstring."""
    from agentic_rl.registry import build

    weights, nodes = {}, {}
    for name, spec in sources.items():
        if not isinstance(spec, Mapping) or "weight" not in spec or "data" not in spec:
            raise ValueError(f"data.sources.{name} must be {{weight: w, data: {{_target_: ..., ...}}}}, got {spec!r}")
        weights[name], nodes[name] = spec["weight"], spec["data"]
    shares = check_weights(weights)
    return mix_tasks({name: list(build(nodes[name])) for name in shares}, weights, limit, seed)
