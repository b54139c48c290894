"""The binary reward (CodeGym's): only a passing episode is paid."""

from __future__ import annotations

import pytest

from agentic_rl.types import Observation, ToolCall, Trajectory, Turn
from tests.rewards.test_rewards import make_reward_fn


def submitted_episode(status: str, passed: bool) -> Trajectory:
    """One submit call graded `status`; the episode's code is recorded as submitted either way."""
    turn = Turn(
        generated_ids=[1],
        text="```submit\nx\n```",
        call=ToolCall("submit", "x", 0, 1),
        observation=Observation(tool="submit", text="", ok=True, status=status, passed=passed),
    )
    return Trajectory(
        task_id="t",
        token_ids=[0, 1],
        loss_mask=[0, 1],
        prompt_len=1,
        turns=[turn],
        submitted_code="x",
        passed=passed,
        finish_reason="passed" if passed else "max_turns",
    )


@pytest.mark.parametrize("status", ["failed", "tampered", "timeout"])
def test_binary_pays_nothing_for_a_submitted_but_failed_episode(status: str) -> None:
    """Guards against the binary reward paying a submitted but failed episode (a reward for submitting
    rather than for passing, e.g. testing `submitted_code is not None` instead of `passed`)."""
    reward = make_reward_fn("binary")
    failed = reward(submitted_episode(status, passed=False))
    assert failed.total == 0.0 and failed.terms == {"passed": 0.0}
    passed = reward(submitted_episode("passed", passed=True))
    assert passed.total == 1.0 and passed.terms == {"passed": 1.0}
    scaled = make_reward_fn("binary", pass_reward=2.5)
    assert scaled(submitted_episode(status, passed=False)).total == 0.0
    assert scaled(submitted_episode("passed", passed=True)).total == 2.5
