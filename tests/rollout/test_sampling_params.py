"""SamplingParams' start-up checks at their boundaries: the last valid and the first invalid value of each."""

from __future__ import annotations

import pytest

from agentic_rl.rollout.policy import SamplingParams


@pytest.mark.parametrize(
    "valid, invalid, key",
    [
        ({"max_new_tokens": 1}, {"max_new_tokens": 0}, "max_new_tokens"),
        ({"temperature": 0.0}, {"temperature": -1e-6}, "temperature"),
        ({"top_p": 1e-6}, {"top_p": 0.0}, "top_p"),
        ({"top_p": 1.0}, {"top_p": 1.000001}, "top_p"),
        ({"top_p": 0.5}, {"top_p": 1.5}, "top_p"),
    ],
)
def test_each_check_accepts_its_boundary_and_rejects_the_next_value(valid, invalid, key) -> None:
    assert SamplingParams(**valid) is not None
    with pytest.raises(ValueError, match=f"rollout.{key}"):
        SamplingParams(**invalid)
