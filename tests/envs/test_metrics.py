"""env/* metrics of CodeGym episodes, from hand-built trajectories, as training logs them: through the hooks of the
run's default environment, which hands CodeGym tasks to their harness environment."""

from __future__ import annotations

import pytest

from agentic_rl.envs.toolset import ToolSetEnvironment
from agentic_rl.types import Observation, Task, ToolCall, Trajectory, Turn


def codegym_metrics(trajs, tasks):
    """What a training step logs for its group (train.py: `Environment.group_metrics` of the run's environment)."""
    env = ToolSetEnvironment(name="multi", tools={}, grader=object(), system_prompt="")
    return env.group_metrics(trajs, tasks)


def task(oracle_calls=None, harness="codegym"):
    return Task(
        task_id="codegym/x/000",
        prompt="",
        tests="",
        harness=harness,
        metadata={"oracle_calls": oracle_calls, "codegym": {}},
    )


def turn(name, status="ok", executed=True, ok=True):
    return Turn(
        generated_ids=[1],
        text="",
        call=ToolCall(name, "{}", 0, 1) if name else None,
        observation=Observation(tool=name or "", text="", ok=ok, status=status, executed=executed),
    )


def traj(turns, passed=False, finish="failed"):
    return Trajectory(
        task_id="codegym/x/000",
        token_ids=[1],
        loss_mask=[0],
        prompt_len=1,
        turns=turns,
        passed=passed,
        finish_reason=finish,
    )


def test_metrics_of_a_batch():
    solved = traj([turn("Observe"), turn("Add"), turn("Done")], passed=True, finish="passed")
    looped = traj(
        [
            turn("invalid_action", "invalid", executed=False, ok=False),
            turn("Add", "error", ok=False),
            turn(None),
            turn("Add"),
        ],
        finish="t_max",
    )
    m = codegym_metrics([solved, looped], [task(6), task(6)])
    assert m["env/success_rate"] == 0.5
    assert m["env/calls_per_episode"] == pytest.approx((3 + 3) / 2)  # the turn without an action is no call
    assert m["env/oracle_calls"] == 6 and m["env/calls_vs_oracle"] == pytest.approx(0.5)
    assert m["env/invalid_call_rate"] == pytest.approx(1 / 6) and m["env/error_rate"] == pytest.approx(1 / 6)
    assert m["env/observe_rate"] == 0.5 and m["env/done_rate"] == 0.5 and m["env/t_max_rate"] == 0.5


def test_no_codegym_episode_gives_no_env_metric_and_unknown_oracle_leaves_its_ratio_absent():
    assert codegym_metrics([traj([turn("submit")])], [task(harness="pytest")]) == {}
    m = codegym_metrics([traj([turn("Observe")])], [task(None)])
    assert "env/oracle_calls" not in m and "env/calls_vs_oracle" not in m and m["env/observe_rate"] == 1.0


def test_calls_vs_oracle_is_the_ratio_of_the_means_not_the_mean_of_the_ratios():
    # the documented formula: env/calls_per_episode / env/oracle_calls. Episodes with different oracle counts tell
    # it apart from a mean of per-episode ratios: (4 + 2) / 2 = 3 calls, (2 + 10) / 2 = 6 oracle calls -> 0.5,
    # where the mean of the ratios would be (4 / 2 + 2 / 10) / 2 = 1.1
    long = traj([turn("Observe")] * 3 + [turn("Done")], passed=True, finish="passed")
    short = traj([turn("Observe"), turn("Done")])
    m = codegym_metrics([long, short], [task(2), task(10)])
    assert m["env/calls_per_episode"] == 3 and m["env/oracle_calls"] == 6
    assert m["env/calls_vs_oracle"] == pytest.approx(0.5)
