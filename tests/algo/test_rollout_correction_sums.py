"""The gap metrics' sums across micro-batches, their edge cases (no model token, one token) and the noise floor's
edge: the cases `test_rollout_correction.py`'s hand-computed batch does not reach."""

from __future__ import annotations

import math

import pytest
import torch

from agentic_rl.algo.rollout_correction import (
    NOISE_FLOOR,
    GapSums,
    add_gap_sums,
    gap_metrics,
    gap_sums,
    rollout_weights,
)


def test_micro_batch_sums_add_up_and_keep_the_largest_maximum() -> None:
    a = GapSums(n_tokens=3.0, abs_diff=0.5, kl=0.25, weight=4.0, weight_max=2.5, capped=1.0)
    b = GapSums(n_tokens=2.0, abs_diff=0.125, kl=0.0625, weight=1.5, weight_max=1.25, capped=2.0)
    assert add_gap_sums(None, b) is b
    assert add_gap_sums(a, b) == GapSums(5.0, 0.625, 0.3125, 5.5, 2.5, 3.0)
    assert add_gap_sums(b, a).weight_max == 2.5


def test_two_halves_give_the_metrics_of_the_whole_batch() -> None:
    torch.manual_seed(0)
    old, sampler = torch.randn(4, 6), torch.randn(4, 6)
    mask = (torch.rand(4, 6) > 0.3).float()
    capped = rollout_weights(old, sampler, mask, mode="tis", level="token", cap=2.0).capped
    whole = gap_metrics(gap_sums(old, sampler, mask, "token", capped), "tis")
    halves = add_gap_sums(
        gap_sums(old[:2], sampler[:2], mask[:2], "token", capped[:2]),
        gap_sums(old[2:], sampler[2:], mask[2:], "token", capped[2:]),
    )
    assert gap_metrics(halves, "tis") == pytest.approx(whole)


def test_a_batch_without_model_tokens_has_zero_metrics() -> None:
    old, sampler, mask = torch.zeros(2, 3), torch.full((2, 3), -5.0), torch.zeros(2, 3)
    capped = torch.zeros(2, 3, dtype=torch.bool)
    sums = gap_sums(old, sampler, mask, "token", capped)
    assert (sums.n_tokens, sums.weight, sums.weight_max) == (0.0, 0.0, 0.0)
    assert set(gap_metrics(sums, "mis").values()) == {0.0}


def test_one_model_token_metrics_are_its_own_values() -> None:
    old, sampler = torch.tensor([[0.0, -0.5]]), torch.tensor([[9.0, -1.0]])  # r = e^0.5 on the model token
    mask = torch.tensor([[0.0, 1.0]])
    capped = torch.tensor([[False, False]])
    metrics = gap_metrics(gap_sums(old, sampler, mask, "token", capped), "tis")
    assert metrics["rollout_correction/logp_abs_diff"] == pytest.approx(0.5)
    assert metrics["rollout_correction/weight_mean"] == pytest.approx(math.exp(0.5))
    assert metrics["rollout_correction/kl_k3"] == pytest.approx(math.exp(0.5) - 1 - 0.5)
    assert metrics["rollout_correction/clipped_frac"] == 0.0


def test_a_gap_of_exactly_the_noise_floor_is_a_real_gap() -> None:
    """Ratios *smaller* than the floor are noise: the floor itself already weighs."""
    sampler = torch.zeros(1, 2)
    mask = torch.ones(1, 2)
    at_floor = torch.tensor([[NOISE_FLOOR, NOISE_FLOOR / 2]])
    weights = rollout_weights(at_floor, sampler, mask, mode="tis", level="token", cap=2.0).weights
    assert weights[0, 0] == pytest.approx(math.exp(NOISE_FLOOR)) and weights[0, 0] != 1.0
    assert weights[0, 1] == 1.0


@pytest.mark.parametrize("mode", ["tis", "mis"])
def test_a_weight_exactly_at_the_cap_is_kept_and_not_counted_as_capped(mode: str) -> None:
    """r <= C passes whole (mis masks only r > C); the tie is not a capped token in either mode."""
    old = torch.tensor([[math.log(2.0), math.log(3.0)]])
    got = rollout_weights(old, torch.zeros(1, 2), torch.ones(1, 2), mode=mode, level="token", cap=2.0)
    assert got.weights[0, 0] == pytest.approx(2.0)
    assert got.capped.tolist() == [[False, True]]
