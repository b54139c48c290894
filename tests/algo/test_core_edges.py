"""Edges of the GRPO maths that the hand-computed cases in test_core.py do not reach.

Written after mutation testing (docs/mutation.md): each test names the edit it was added to catch.
"""

from __future__ import annotations

import math

import pytest
import torch

from agentic_rl.algo.core import LOSS_AGGREGATIONS, POLICY_OBJECTIVES, ZERO_STD_TOL, group_has_signal, grpo_advantages


def test_signal_threshold_is_the_population_std_inclusive() -> None:
    """Guards `group_has_signal`: a std of exactly ZERO_STD_TOL has signal (`>=`, not `>`), and the spread is
    the population std (two rewards 1.6e-6 apart: population std 0.8e-6, below the tolerance, while the
    sample std would be 1.13e-6, above it)."""
    at_tol = torch.tensor([0.0, 2 * ZERO_STD_TOL], dtype=torch.float64)
    assert at_tol.std(unbiased=False).item() == ZERO_STD_TOL  # exactly on the boundary
    assert group_has_signal(at_tol)
    below = torch.tensor([0.0, 1.6 * ZERO_STD_TOL], dtype=torch.float64)
    assert not group_has_signal(below)
    assert torch.equal(grpo_advantages(below), torch.zeros(2))


def test_eps_is_added_to_a_small_std() -> None:
    """Guards `(std + eps)` in `grpo_advantages`: for a spread just above the tolerance the eps is a tenth of
    the std, so the advantages are ±1/1.1, not ±1 (no eps) or ±1/0.9 (eps subtracted)."""
    rewards = torch.tensor([0.0, 2e-5], dtype=torch.float64)  # population std 1e-5
    assert torch.allclose(grpo_advantages(rewards), torch.tensor([-1 / 1.1, 1 / 1.1]), atol=1e-6)
    assert torch.allclose(grpo_advantages(rewards, eps=0.0), torch.tensor([-1.0, 1.0]), atol=1e-6)


def test_gspo_ratio_is_the_mean_log_ratio_over_each_sequences_own_tokens() -> None:
    """Guards the sequence ratio of GSPO, s_i = exp(mean over the model tokens of (log π_θ - log π_old)), with a
    behaviour policy that is not zero and a one-token sequence (whose mean divides by 1)."""
    logp = torch.tensor([[-1.0, -2.0, -0.5], [-0.3, -9.0, -9.0]], requires_grad=True)
    old = torch.tensor([[-1.5, -1.0, -1.0], [-0.7, -1.0, -1.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    advantages = torch.tensor([1.0, -2.0])
    terms = POLICY_OBJECTIVES.get("gspo")(logp, old, advantages, mask, clip_eps=10.0)  # no clipping
    s0 = math.exp(((-1.0 + 1.5) + (-2.0 + 1.0) + (-0.5 + 1.0)) / 3)
    s1 = math.exp(-0.3 + 0.7)
    expected = torch.tensor([[-s0] * 3, [2 * s1] * 3])  # -s_i·A_i at every position
    assert torch.allclose(terms.per_token, expected, atol=1e-6)
    assert not terms.clipped.any()


def test_token_mean_of_a_one_token_group() -> None:
    """Guards `max(group_tokens, 1)`: a group with one model token in all is divided by 1."""
    out = LOSS_AGGREGATIONS.get("token_mean")(
        torch.tensor([[3.0, 8.0]]), torch.tensor([[1.0, 0.0]]), group_tokens=1, group_size=2
    )
    assert out.item() == pytest.approx(3.0)
    empty = LOSS_AGGREGATIONS.get("token_mean")(
        torch.tensor([[3.0]]), torch.tensor([[0.0]]), group_tokens=0, group_size=2
    )
    assert empty.item() == 0.0


def test_seq_mean_of_one_token_sequences() -> None:
    """Guards the per-sequence denominator of `seq_mean`: a one-token sequence is its token's loss."""
    per_token = torch.tensor([[4.0, 100.0], [6.0, 2.0]])
    mask = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    out = LOSS_AGGREGATIONS.get("seq_mean")(per_token, mask, group_tokens=3, group_size=2)
    assert out.item() == pytest.approx((4.0 + 4.0) / 2)
