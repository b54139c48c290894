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
Per-tool call rates are the usual `tools/<name>_rate`, under each environment's own tool names. Episodes of
other tasks contribute nothing: a batch without CodeGym episodes gives no `env/` metric at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentic_rl.types import Task, Trajectory


def codegym_metrics(trajs: Sequence[Trajectory], tasks: Sequence[Task]) -> dict[str, float]:
    """The `env/` metrics of the CodeGym episodes among `trajs` (`tasks[i]` is the task of `trajs[i]`)."""
    pairs = [(t, task) for t, task in zip(trajs, tasks) if task.harness == "codegym"]
    if not pairs:
        return {}
    n = len(pairs)
    actions = [turn for t, _ in pairs for turn in t.turns if turn.call is not None]
    n_actions = max(len(actions), 1)
    calls = [sum(turn.call is not None for turn in t.turns) for t, _ in pairs]
    out = {
        "env/success_rate": sum(t.passed for t, _ in pairs) / n,
        "env/calls_per_episode": sum(calls) / n,
        "env/invalid_call_rate": sum(a.observation is not None and a.observation.status == "invalid" for a in actions)
        / n_actions,
        "env/error_rate": sum(
            a.observation is not None and a.observation.executed and not a.observation.ok for a in actions
        )
        / n_actions,
        "env/observe_rate": sum(
            any(turn.call is not None and turn.call.name == "Observe" for turn in t.turns) for t, _ in pairs
        )
        / n,
        "env/done_rate": sum(t.finish_reason in ("passed", "failed") for t, _ in pairs) / n,
        "env/t_max_rate": sum(t.finish_reason == "t_max" for t, _ in pairs) / n,
    }
    oracle = [task.metadata.get("oracle_calls") for _, task in pairs]
    if all(isinstance(c, int) and c > 0 for c in oracle):
        out["env/oracle_calls"] = sum(oracle) / n
        out["env/calls_vs_oracle"] = out["env/calls_per_episode"] / out["env/oracle_calls"]
    return out
