"""Episode statistics under the metric names of DESIGN.md §3 (shared by training and evaluation)."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from agentic_rl.types import TOOL_NAMES, RewardBreakdown, Trajectory


def episode_metrics(trajs: Sequence[Trajectory]) -> dict[str, float]:
    """Tool-usage and rollout metrics over a batch of episodes.

    Rates are shares of *turns*: `tools/search_rate` = turns that ran a search / all turns, and
    `tools/none_rate` = turns with no valid call, so the four rates of a tool mode sum to ~1 (turns whose
    call was refused by the cap count in none of them). `tools/submit/tampered_rate` = executed submissions
    the sandbox graded `tampered` (a detected attempt to forge the verdict) / executed submissions.
    """
    n_eps = max(len(trajs), 1)
    n_turns = sum(len(t.turns) for t in trajs)
    counts: dict[str, int] = defaultdict(int)
    errors: dict[str, int] = defaultdict(int)
    latency: dict[str, list[float]] = defaultdict(list)
    tampered = 0
    for traj in trajs:
        for kind, n in traj.calls_by_kind().items():
            counts[kind] += n
        for turn in traj.turns:
            obs = turn.observation
            if turn.call is None or obs is None or not obs.executed:
                continue
            errors[turn.call.name] += int(not obs.ok)
            latency[turn.call.name].append(obs.latency_ms)
            tampered += turn.call.name == "submit" and obs.status == "tampered"
    out = {
        "rollout/episodes": float(len(trajs)),
        "rollout/turns_mean": n_turns / n_eps,
        "rollout/model_tokens_mean": sum(t.n_model_tokens for t in trajs) / n_eps,
        "rollout/truncated_rate": sum(t.finish_reason in ("length", "max_turns") for t in trajs) / n_eps,
        "tools/calls_per_episode": sum(counts[k] for k in TOOL_NAMES) / n_eps,
        "tools/none_rate": counts["none"] / max(n_turns, 1),
    }
    for name in TOOL_NAMES:
        out[f"tools/{name}_rate"] = counts[name] / max(n_turns, 1)
        if latency[name]:
            out[f"tools/{name}/error_rate"] = errors[name] / len(latency[name])
            out[f"tools/{name}/latency_ms"] = sum(latency[name]) / len(latency[name])
    if latency["submit"]:
        out["tools/submit/tampered_rate"] = tampered / len(latency["submit"])
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


def rollout_metrics(stats: Any) -> dict[str, float]:
    """Throughput, timing and prefill counters of one rollout (an `agentic_rl.rollout.agent.RolloutStats`).

    `rollout/prefill_tokens` / `rollout/context_tokens` near 1 or below means every context token was computed
    once per episode (below 1: a shared prompt prefix computed once for the batch). A policy that does not count
    prefill (scripted, replay) leaves `rollout/prefill_tokens` absent, not 0.
    """
    out = {
        "rollout/context_tokens": float(stats.context_tokens),
        "rollout/tokens_per_s": stats.generated_tokens / max(stats.rollout_s, 1e-9),
        "time/rollout_s": stats.rollout_s,
        "time/tools_s": stats.tools_s,
    }
    if stats.prefill_tokens is not None:
        out["rollout/prefill_tokens"] = float(stats.prefill_tokens)
    return out


def merge_rollout_stats(parts: Sequence[Any]) -> Any:
    """The stats of several rollouts (an evaluation's batches) as one: counts and times summed."""
    from agentic_rl.rollout.agent import RolloutStats

    total = RolloutStats(prefill_tokens=None if any(p.prefill_tokens is None for p in parts) else 0)
    for p in parts:
        for name in ("context_tokens", "generated_tokens", "rollout_s", "generate_s", "tools_s"):
            setattr(total, name, getattr(total, name) + getattr(p, name))
        if total.prefill_tokens is not None:
            total.prefill_tokens += p.prefill_tokens
    return total
