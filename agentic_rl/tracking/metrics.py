"""Episode statistics under the project's metric names (below), one code path for training and evaluation:
`episode_counts` (per episode) -> `aggregate_metrics` (per batch); evaluation records carry the counts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from agentic_rl.types import RewardBreakdown, Trajectory

# shares of turns that are not a tool's (reports and figures must not take them for a tool's call rate)
NON_TOOL_RATES = {"tools/none_rate": "no call", "tools/capped_rate": "refused by cap"}


def episode_counts(traj: Trajectory) -> dict[str, Any]:
    """What one episode contributes to the metrics: turns, executed calls / errors / latency per tool, model
    tokens, finish reason. Evaluation stores exactly these fields in each results.jsonl record, so metrics
    recomputed from records (a resumed evaluation) and from live trajectories are the same numbers."""
    calls = traj.calls_by_kind()
    errors = {name: 0 for name in calls if name != "none"}
    latency = {name: 0.0 for name in calls if name != "none"}
    tampered = capped = in_process = 0
    tampered_kinds: dict[str, int] = defaultdict(int)
    for turn in traj.turns:
        obs = turn.observation
        capped += obs is not None and obs.status == "capped"
        if turn.call is None or obs is None or not obs.executed:
            continue
        errors[turn.call.name] = errors.get(turn.call.name, 0) + int(not obs.ok)
        latency[turn.call.name] = latency.get(turn.call.name, 0.0) + obs.latency_ms
        if not turn.graded:  # only a grading tool's verdict (its spec's `grades`) can be tampered or in process
            continue
        tampered += obs.status == "tampered"
        if obs.status == "tampered":
            for kind in _tamper_kinds(obs):
                tampered_kinds[kind] += 1
        in_process += obs.trust == "in_process"
    return {
        "turns": len(traj.turns),
        "tool_calls": calls,
        "tool_errors": errors,
        "tool_latency_ms": {k: round(v, 3) for k, v in latency.items()},
        "tampered_submissions": tampered,
        "tampered_kinds": dict(tampered_kinds),
        "in_process_submissions": in_process,
        "capped_calls": capped,
        "model_tokens": traj.n_model_tokens,
        "finish_reason": traj.finish_reason,
    }


def aggregate_metrics(counts: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Tool-usage and rollout metrics over episodes given as `episode_counts` dicts.

    Rates are shares of *turns*: `tools/search_rate` = turns that ran a search / all turns, and
    `tools/none_rate` = turns with no valid call, and `tools/capped_rate` = turns whose call the cap C refused
    (what shows that a cap binds), so the rates of a tool mode sum to 1. `tools/<name>/error_rate` and
    `latency_ms` are over that tool's executed calls, and absent when it made none. There is a rate for every
    declared tool (the names the episodes declared: `Trajectory.tools`). `tools/submit/tampered_rate` =
    submissions the sandbox graded `tampered` (a detected attempt to forge the verdict) / submissions, and
    `tools/submit/in_process_rate` = submissions whose verdict was computed inside the candidate's process (the
    sandbox's fallback harness, `TestReport.trust`) / submissions. `tools/submit/tampered/<kind>` = tampered
    submissions with a blocked attempt of that kind (`TestReport.tamper_kinds`: `shadowed_module`,
    `handle_operator`, `frame_access`, ...; `unknown` where the observation does not carry them) / submissions,
    for the kinds these episodes showed. An episode that never
    ran (a missing replay sample) counts with zero turns.
    """
    counts = list(counts)
    n_eps = max(len(counts), 1)
    n_turns = sum(c["turns"] for c in counts)
    # the names each episode counted its calls under (its declared tools, zeros included), in first-seen order
    names = tuple(dict.fromkeys(name for c in counts for name in c["tool_calls"] if name != "none"))
    calls = {name: sum(c["tool_calls"].get(name, 0) for c in counts) for name in (*names, "none")}
    out = {
        "rollout/episodes": float(len(counts)),
        "rollout/turns_mean": n_turns / n_eps,
        "rollout/model_tokens_mean": sum(c["model_tokens"] for c in counts) / n_eps,
        "rollout/truncated_rate": sum(c["finish_reason"] in ("length", "max_turns") for c in counts) / n_eps,
        "tools/calls_per_episode": sum(calls[k] for k in names) / n_eps,
        "tools/none_rate": calls["none"] / max(n_turns, 1),
        # records written before this field existed had no refused calls counted: 0 is what they measured
        "tools/capped_rate": sum(c.get("capped_calls", 0) for c in counts) / max(n_turns, 1),
    }
    for name in names:
        out[f"tools/{name}_rate"] = calls[name] / max(n_turns, 1)
        if calls[name]:
            out[f"tools/{name}/error_rate"] = sum(c["tool_errors"].get(name, 0) for c in counts) / calls[name]
            out[f"tools/{name}/latency_ms"] = sum(c["tool_latency_ms"].get(name, 0.0) for c in counts) / calls[name]
    if calls.get("submit"):  # records written before this field existed count as untampered
        out["tools/submit/tampered_rate"] = sum(c.get("tampered_submissions", 0) for c in counts) / calls["submit"]
        out["tools/submit/in_process_rate"] = sum(c.get("in_process_submissions", 0) for c in counts) / calls["submit"]
        out.update(_tampered_kind_rates(counts, calls["submit"]))
    return out


def _tamper_kinds(obs) -> tuple[str, ...]:
    """The kinds of a tampered verdict (the sandbox's `TestReport.tamper_kinds`, carried by the observation),
    or ("unknown",) where the observation does not carry them."""
    return tuple(obs.tamper_kinds or ()) or ("unknown",)


def _tampered_kind_rates(counts: list[dict[str, Any]], n_submits: int) -> dict[str, float]:
    """`tools/submit/tampered/<kind>` = submissions graded `tampered` with an attempt of that kind /
    submissions, for each kind seen in these episodes (a submission may count under several kinds; a kind
    no episode showed is absent). Records written before the field existed have none."""
    totals: dict[str, int] = defaultdict(int)
    for c in counts:
        for kind, n in (c.get("tampered_kinds") or {}).items():
            totals[kind] += n
    return {f"tools/submit/tampered/{kind}": n / n_submits for kind, n in sorted(totals.items())}


def episode_metrics(trajs: Sequence[Trajectory]) -> dict[str, float]:
    """Tool-usage and rollout metrics over a batch of episodes (training); see `aggregate_metrics`."""
    return aggregate_metrics(episode_counts(t) for t in trajs)


def task_type_metrics(task_type: str | None, trajs: Sequence[Trajectory]) -> dict[str, float]:
    """A training group's pass rate and search use under its task's type (`task.metadata["task_type"]`), so
    that curves can be drawn per type: `train/pass_rate/<type>`, `tools/search_rate/<type>` (share of turns,
    as `tools/search_rate`) and `tools/search_episodes/<type>` (share of episodes that searched at least once).
    Only the group's own type is present at a step; a task without a type logs nothing here."""
    if not task_type:
        return {}
    n_eps = max(len(trajs), 1)
    searched = [t.calls_by_kind().get("search", 0) for t in trajs]
    n_turns = sum(len(t.turns) for t in trajs)
    return {
        f"train/pass_rate/{task_type}": sum(t.passed for t in trajs) / n_eps,
        f"tools/search_rate/{task_type}": sum(searched) / max(n_turns, 1),
        f"tools/search_episodes/{task_type}": sum(n > 0 for n in searched) / n_eps,
    }


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
        "time/sync_s": stats.sync_s,  # part of time/rollout_s: the sampler's weights brought up to date
    }
    if stats.prefill_tokens is not None:
        out["rollout/prefill_tokens"] = float(stats.prefill_tokens)
    return out


def scored(records: list[dict]) -> list[dict]:
    """The episodes that pass@1 describes: the sampled ones, or the greedy ones when none was sampled. The greedy
    episode (temperature 0, `greedy: true`) is reported apart as greedy_pass@1, so the task means of the tables and
    figures leave it out too, and both sides of a comparison average the same kind of episode. Evaluation scores
    with this rule too (`evaluation.scores.scored_records`)."""
    sampled = [r for r in records if not r.get("greedy", False)]
    return sampled or records
