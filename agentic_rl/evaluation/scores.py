"""A mode's scores from its records: pass@k over the sampled episodes, the greedy episode's pass@1, the share of
episodes that called each tool, and all of them per task type (see `evaluator`'s module doc for the names).

Pure functions of records (plain dicts with `task_id`, `passed`, `greedy`, `task_type`, `tool_calls`), so that a
resumed evaluation, whose earlier episodes exist only as records, scores exactly as an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentic_rl.evaluation.passk import pass_at_k
from agentic_rl.tracking.metrics import scored

Record = dict[str, Any]


def scored_records(records: Sequence[Record]) -> list[Record]:
    """The episodes pass@k and the tool metrics describe: the sampled ones, or the greedy ones when none was
    sampled (an evaluation with `n_samples: 0`). One rule with the tables and figures (`tracking.metrics.scored`)."""
    return scored(list(records))


def pass_at(records: Sequence[Record], ks: Sequence[int]) -> dict[int, float]:
    """k -> the mean over tasks of the unbiased pass@k of each task's records (every task has the same count).

    >>> pass_at([{"task_id": "a", "passed": True}, {"task_id": "a", "passed": False}], [1])
    {1: 0.5}
    """
    per_task: dict[str, list[bool]] = {}
    for r in records:
        per_task.setdefault(r["task_id"], []).append(bool(r["passed"]))
    n = max(len(per_task), 1)
    return {k: sum(pass_at_k(len(v), sum(v), k) for v in per_task.values()) / n for k in ks}


def greedy_pass(records: Sequence[Record]) -> dict[str, float]:
    """`greedy_pass@1`: the share of greedy episodes that passed; absent when there were none."""
    greedy = [r for r in records if r.get("greedy", False)]
    return {"greedy_pass@1": sum(bool(r["passed"]) for r in greedy) / len(greedy)} if greedy else {}


def episode_rates(records: Sequence[Record]) -> dict[str, float]:
    """`tools/<tool>/episode_rate`: the share of episodes that ran the tool at least once (the turn shares
    `tools/<tool>_rate` cannot say whether half the episodes searched or one searched every turn)."""
    names = dict.fromkeys(name for r in records for name in r.get("tool_calls", {}) if name != "none")
    n = max(len(records), 1)
    return {f"tools/{name}/episode_rate": sum(r["tool_calls"].get(name, 0) > 0 for r in records) / n for name in names}


def by_task_type(records: Sequence[Record], tools: bool) -> dict[str, float]:
    """`pass@1/<type>`, `greedy_pass@1/<type>` and (with `tools`) `tools/<tool>/episode_rate/<type>` for each task
    type the records carry; records without one are left out here."""
    out: dict[str, float] = {}
    for kind in sorted({r["task_type"] for r in records if r.get("task_type") is not None}):
        mine = [r for r in records if r.get("task_type") == kind]
        scored = scored_records(mine)
        parts = {"pass@1": pass_at(scored, [1])[1], **greedy_pass(mine), **(episode_rates(scored) if tools else {})}
        out.update({f"{name}/{kind}": v for name, v in parts.items()})
    return out
