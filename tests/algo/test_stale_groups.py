"""Groups sampled ahead of the trainer (`algo.max_staleness`): `update_rollout_batch` takes the sampler's own
log-probs, of the version that sampled them, as their behaviour policy; the trainer scores only the fresh off-policy
groups (those sampled by the weights the batch started from); a stale group without sampler log-probs is an error.
A fake step and scorer (as in test_update_batch.py): no model."""

from __future__ import annotations

import pytest
import torch

from agentic_rl.algo import grpo
from agentic_rl.algo.grpo import GRPOConfig, StepStats, update_rollout_batch
from agentic_rl.types import Trajectory, Turn


def sampled(n: int, logprobs: list[float] | None = None) -> Trajectory:
    """Prompt [1], reply [2, 3] with the sampler's log-probs -n/10, -n/10 - 0.05 (None: not recorded)."""
    values = logprobs if logprobs is not None else [-n / 10, -n / 10 - 0.05]
    turn = Turn([2, 3], "x", sampler_logprobs=values if logprobs != [] else None)
    return Trajectory(f"task{n // 2}", [1, 2, 3], [0, 1, 1], prompt_len=1, turns=[turn], sample_index=n)


@pytest.fixture
def recorded(monkeypatch):
    steps: list[list[list[float]] | None] = []
    scored: list[list[int]] = []

    def behaviour_logprobs(model, trajs, pad_id, **kwargs):
        scored.append([t.sample_index for t in trajs])
        return [torch.tensor([0.0, 100.0 + t.sample_index]) for t in trajs]

    def step(model, optimizer, group, rewards, cfg, pad_id, *, temperature, old_logprobs, reference=None):
        steps.append(None if old_logprobs is None else [row.tolist() for row in old_logprobs])
        return StepStats(n_tokens=1, skipped=False)

    monkeypatch.setattr(grpo, "behaviour_logprobs", behaviour_logprobs)
    return steps, scored, step


def run(step, groups, staleness):
    rewards = [torch.tensor([0.0, 1.0]) for _ in groups]
    return update_rollout_batch(
        None, None, groups, rewards, GRPOConfig(), 0, temperature=1.0, step=step, staleness=staleness
    )


def test_a_stale_group_takes_the_samplers_log_probs_and_fresh_ones_are_scored_as_before(recorded):
    steps, scored, step = recorded
    groups = [[sampled(0), sampled(1)], [sampled(2), sampled(3)], [sampled(4), sampled(5)], [sampled(6), sampled(7)]]
    run(step, groups, staleness=[[1, 1], [0, 0], [0, 2], [0, 0]])
    assert scored == [[2, 3, 6, 7]]  # the fresh groups after the first step; the stale ones need no scoring
    assert flat(steps[0]) == pytest.approx([0.0, -0.05, -0.1, -0.15])  # the sampler's rows, though it steps first
    assert steps[1] == [[0.0, 102.0], [0.0, 103.0]]  # fresh, after group 0's step: the trainer's behaviour rows
    assert flat(steps[2]) == pytest.approx([-0.4, -0.45, -0.5, -0.55])  # one stale episode: the whole group
    assert steps[3] == [[0.0, 106.0], [0.0, 107.0]]


def flat(rows):
    return [x for row in rows for x in row]


def test_without_staleness_the_batch_is_updated_as_before(recorded):
    steps, scored, step = recorded
    groups = [[sampled(0), sampled(1)], [sampled(2), sampled(3)]]
    run(step, groups, staleness=[[0, 0], [0, 0]])
    assert steps == [None, [[0.0, 102.0], [0.0, 103.0]]] and scored == [[2, 3]]


def test_a_stale_group_without_sampler_log_probs_is_an_error_that_says_why(recorded):
    _, _, step = recorded
    with pytest.raises(ValueError, match="max_staleness > 0 needs a sampler that records them"):
        run(step, [[sampled(0, []), sampled(1)]], staleness=[[1, 0]])
