"""The detail of an episode that ended without a graded submission says why, in words true of any environment."""

from __future__ import annotations

import pytest

from agentic_rl.evaluation.records import record_from_trajectory
from agentic_rl.types import ToolCall, Trajectory, Turn


def _episode(finish_reason: str, *, called: bool) -> Trajectory:
    turns = [Turn(generated_ids=[1], text="thinking")]
    if called:
        turns.insert(
            0,
            Turn(
                generated_ids=[2], text="<search>x</search>", call=ToolCall(name="search", content="x", start=0, end=18)
            ),
        )
    return Trajectory(
        task_id="t", token_ids=[0, 1, 2], loss_mask=[0, 1, 1], prompt_len=1, turns=turns, finish_reason=finish_reason
    )


@pytest.mark.parametrize(
    ("finish_reason", "called", "detail"),
    [
        ("no_call", False, "no tool call or answer in any reply"),
        ("no_call", True, "stopped on a reply without a tool call"),
        ("max_turns", True, "out of turns before a submission"),
        ("length", False, "context limit reached before a submission"),
        ("infra_failure", False, "no submission (infra_failure)"),
    ],
)
def test_the_detail_names_what_the_episode_lacked(finish_reason, called, detail):
    record = record_from_trajectory(_episode(finish_reason, called=called), "multi_tool")
    assert (record["status"], record["detail"]) == ("no_submission", detail)
    assert "code" not in record["detail"]  # a CodeGym episode has no code to miss
