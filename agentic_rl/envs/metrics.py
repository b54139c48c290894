"""Metrics of CodeGym episodes (training and evaluation), under `env/`:

  env/success_rate       episodes whose Done answer was right
  env/calls_per_episode  calls an episode made (every action, malformed ones included: what T_max counts)
  env/oracle_calls       the scripted oracle's calls on the same configurations (when the file records them)
  env/calls_vs_oracle    env/calls_per_episode / env/oracle_calls (near 1: the workflow's full length)
  env/invalid_call_rate  actions refused before running (malformed JSON, unknown tool, bad parameters) / actions
  env/error_rate         actions that ran and failed (the tool raised or timed out; state kept) / actions
  env/observe_rate       episodes that called Observe at least once
  env/done_rate          episodes that ended with a Done (right or wrong)
  env/t_max_rate         episodes ended by T_max
  env/seen_envs/success_rate, env/unseen_envs/success_rate (and .../episodes): in a set that mixes episodes of
                         training environments (held-out configurations) and held-out environments, each apart
Per-tool call rates are the usual `tools/<name>_rate`, under each environment's own tool names. Episodes of
other tasks contribute nothing: a batch without CodeGym episodes gives no `env/` metric at all.

They reach a run through the hooks of `CodeGymEnvironment` (agentic_rl.envs.codegym): training computes them from
its trajectories (`Environment.group_metrics`); an evaluation keeps each episode's `env_counts` in its result
record (the "env" field) and computes them from the records (`env_metrics`), so a resumed evaluation reports the
same numbers as an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentic_rl.types import Task, Trajectory


def env_counts(traj: Trajectory, task: Task) -> dict[str, Any] | None:
    """What one CodeGym episode contributes to the `env/` metrics (JSON-able), or None for another task."""
    if task.harness != "codegym":
        return None
    actions = [turn for turn in traj.turns if turn.call is not None]
    oracle = task.metadata.get("oracle_calls")
    return {
        "passed": bool(traj.passed),
        "calls": len(actions),
        "invalid": sum(a.observation is not None and a.observation.status == "invalid" for a in actions),
        "errors": sum(a.observation is not None and a.observation.executed and not a.observation.ok for a in actions),
        "observe": any(a.call is not None and a.call.name == "Observe" for a in actions),
        "done": traj.finish_reason in ("passed", "failed"),
        "t_max": traj.finish_reason == "t_max",
        "oracle_calls": oracle if isinstance(oracle, int) and oracle > 0 else None,
        "seen_env": task.metadata.get("env_split", "train") != "heldout",
    }


HELD_OUT_SETS = ("seen_envs", "unseen_envs")  # the names of env/<set>/... and of the tables' CodeGym sets


def held_out_set(counts: dict[str, Any]) -> str:
    """The set an episode's `env_counts` belong to: `seen_envs` (a configuration of a training environment) or
    `unseen_envs` (an environment training never saw)."""
    return HELD_OUT_SETS[0] if counts.get("seen_env", True) else HELD_OUT_SETS[1]


def env_metrics(counts: Iterable[dict[str, Any] | None]) -> dict[str, float]:
    """The `env/` metrics of episodes' `env_counts` (None entries, episodes of other tasks, are skipped)."""
    eps = [c for c in counts if c is not None]
    if not eps:
        return {}
    n = len(eps)
    n_actions = max(sum(c["calls"] for c in eps), 1)
    out = {
        "env/success_rate": sum(c["passed"] for c in eps) / n,
        "env/calls_per_episode": sum(c["calls"] for c in eps) / n,
        "env/invalid_call_rate": sum(c["invalid"] for c in eps) / n_actions,
        "env/error_rate": sum(c["errors"] for c in eps) / n_actions,
        "env/observe_rate": sum(c["observe"] for c in eps) / n,
        "env/done_rate": sum(c["done"] for c in eps) / n,
        "env/t_max_rate": sum(c["t_max"] for c in eps) / n,
    }
    oracle = [c.get("oracle_calls") for c in eps]
    if all(isinstance(o, int) and o > 0 for o in oracle):
        out["env/oracle_calls"] = sum(oracle) / n
        out["env/calls_vs_oracle"] = out["env/calls_per_episode"] / out["env/oracle_calls"]
    groups: dict[str, list[dict[str, Any]]] = {name: [] for name in HELD_OUT_SETS}
    for c in eps:
        groups[held_out_set(c)].append(c)
    if all(groups.values()):  # a mixed set (split=heldout): each group's success apart
        for name, group in groups.items():
            out[f"env/{name}/success_rate"] = sum(c["passed"] for c in group) / len(group)
            out[f"env/{name}/episodes"] = float(len(group))
    return out
