"""Episode statistics under the metric names of DESIGN.md §3 (shared by training and evaluation)."""
from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from agentic_rl.tools.base import counted_tools
from agentic_rl.types import RewardBreakdown, Trajectory


def episode_metrics(trajs: Sequence[Trajectory]) -> dict[str, float]:
    """Tool-usage and rollout metrics over a batch of episodes.

    Rates are shares of *turns*: `tools/search_rate` = turns that ran a search / all turns, and
    `tools/none_rate` = turns with no valid call, so the rates of a tool mode sum to ~1 (turns whose
    call was refused by the cap count in none of them). There is a rate for every declared tool
    (`agentic_rl.tools.base.counted_tools`).
    """
    n_eps = max(len(trajs), 1)
    n_turns = sum(len(t.turns) for t in trajs)
    counts: dict[str, int] = defaultdict(int)
    errors: dict[str, int] = defaultdict(int)
    latency: dict[str, list[float]] = defaultdict(list)
    for traj in trajs:
        for kind, n in traj.calls_by_kind().items():
            counts[kind] += n
        for turn in traj.turns:
            obs = turn.observation
            if turn.call is None or obs is None or not obs.executed:
                continue
            errors[turn.call.name] += int(not obs.ok)
            latency[turn.call.name].append(obs.latency_ms)
    names = counted_tools(counts)
    out = {
        "rollout/episodes": float(len(trajs)),
        "rollout/turns_mean": n_turns / n_eps,
        "rollout/model_tokens_mean": sum(t.n_model_tokens for t in trajs) / n_eps,
        "rollout/truncated_rate": sum(t.finish_reason in ("length", "max_turns") for t in trajs) / n_eps,
        "tools/calls_per_episode": sum(counts[k] for k in names) / n_eps,
        "tools/none_rate": counts["none"] / max(n_turns, 1),
    }
    for name in names:
        out[f"tools/{name}_rate"] = counts[name] / max(n_turns, 1)
        if latency[name]:
            out[f"tools/{name}/error_rate"] = errors[name] / len(latency[name])
            out[f"tools/{name}/latency_ms"] = sum(latency[name]) / len(latency[name])
    return out


def reward_metrics(rewards: Sequence[RewardBreakdown]) -> dict[str, float]:
    """Mean of each reward term over the batch, as `reward/<term>`, plus `train/reward_mean`."""
    n = max(len(rewards), 1)
    terms: dict[str, float] = defaultdict(float)
    for r in rewards:
        for k, v in r.terms.items():
            terms[k] += v
    out = {f"reward/{k}": v / n for k, v in terms.items()}
    out["train/reward_mean"] = sum(r.total for r in rewards) / n
    return out
