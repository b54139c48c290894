"""GRPO maths on hand-computed tensors."""

from __future__ import annotations

import math

import pytest
import torch

from agentic_rl.algo.core import (
    ADVANTAGES,
    KL_ESTIMATORS,
    LOSS_AGGREGATIONS,
    POLICY_OBJECTIVES,
    group_has_signal,
    grpo_advantages,
    kl_k1,
    kl_k2,
    kl_k3,
    mean_only_advantages,
    token_logprobs,
)


def test_grpo_advantages_hand_computed():
    # mean 0.25, population std sqrt(0.1875) = 0.4330127
    adv = grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 0.0]))
    std = math.sqrt(0.1875)
    expected = torch.tensor([0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std])
    assert torch.allclose(adv, expected, atol=1e-5)
    assert torch.allclose(grpo_advantages(torch.tensor([1.0, 0.0])), torch.tensor([1.0, -1.0]), atol=1e-5)


def test_equal_rewards_with_float_residue_give_zero_advantages():
    # 0.05*3 and 0.1+0.05 differ in the last bit: std ~1e-17, which an eps of 1e-8 would blow up to ~1e-9..1
    rewards = torch.tensor([0.05 * 3, 0.1 + 0.05, 0.15, 0.05 * 3], dtype=torch.float64)
    assert rewards.std() > 0  # the residue is real
    assert not group_has_signal(rewards)
    assert torch.equal(grpo_advantages(rewards), torch.zeros(4))
    assert torch.equal(mean_only_advantages(torch.tensor([-0.1, -0.1, -0.1])), torch.zeros(3))


def test_mean_only_advantages():
    assert torch.allclose(mean_only_advantages(torch.tensor([1.0, 0.0, 0.5])), torch.tensor([0.5, -0.5, 0.0]))


def test_token_logprobs_picks_target_logprob():
    logits = torch.tensor([[[0.0, math.log(3.0)], [math.log(2.0), 0.0]]])  # (1, 2, 2)
    lp = token_logprobs(logits, torch.tensor([[1, 0]]))
    assert torch.allclose(lp, torch.tensor([[math.log(0.75), math.log(2 / 3)]]), atol=1e-6)


def test_kl_estimators_hand_computed():
    logp = torch.tensor([[math.log(0.5), math.log(0.25)]])
    ref = torch.tensor([[math.log(0.25), math.log(0.25)]])
    assert torch.allclose(kl_k1(logp, ref), torch.tensor([[math.log(2.0), 0.0]]), atol=1e-6)
    assert torch.allclose(kl_k2(logp, ref), torch.tensor([[0.5 * math.log(2.0) ** 2, 0.0]]), atol=1e-6)
    # k3 = r - log r - 1 with r = ref/p = 0.5: 0.5 + log 2 - 1
    assert torch.allclose(kl_k3(logp, ref), torch.tensor([[0.5 + math.log(2.0) - 1, 0.0]]), atol=1e-6)
    assert (kl_k3(torch.randn(3, 5), torch.randn(3, 5)) >= 0).all()


def test_token_logprobs_at_a_temperature():
    # logits (0, ln 3) at T = 0.5 are (0, 2 ln 3): p = 9 / 10 for token 1
    logits = torch.tensor([[[0.0, math.log(3.0)]]])
    assert torch.allclose(
        token_logprobs(logits, torch.tensor([[1]]), temperature=0.5), torch.tensor([[math.log(0.9)]]), atol=1e-6
    )
    with pytest.raises(ValueError, match="temperature > 0"):
        token_logprobs(logits, torch.tensor([[1]]), temperature=0.0)


def test_grpo_clip_on_policy_gradient_is_minus_advantage():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    terms = POLICY_OBJECTIVES.get("grpo_clip")(logp, logp.detach(), torch.tensor([2.0]), torch.ones(1, 2), clip_eps=0.2)
    assert terms.per_token.sum().item() == pytest.approx(-4.0)  # ratio 1 at the sampling policy
    terms.per_token.sum().backward()
    assert torch.allclose(logp.grad, torch.tensor([[-2.0, -2.0]]))  # -A per token
    assert not terms.clipped.any()


def test_grpo_clip_hand_computed_off_policy():
    # ratios e^0.5 = 1.6487, 1, e^-0.5 = 0.6065 for A = +1 (row 0) and A = -1 (row 1), eps 0.2
    old = torch.zeros(2, 3)
    logp = torch.tensor([[0.5, 0.0, -0.5], [0.5, 0.0, -0.5]], requires_grad=True)
    terms = POLICY_OBJECTIVES.get("grpo_clip")(logp, old, torch.tensor([1.0, -1.0]), torch.ones(2, 3), clip_eps=0.2)
    e = math.exp(0.5)
    # A > 0: min(ρ, clip ρ) -> 1.2 (clipped, no grad), 1, e^-0.5 (below the range: the unclipped term is smaller)
    # A < 0: min(-ρ, -clip ρ) -> -e^0.5 (unclipped), -1, -0.8 (clipped, no grad)
    expected = torch.tensor([[-1.2, -1.0, -1 / e], [e, 1.0, 0.8]])
    assert torch.allclose(terms.per_token, expected, atol=1e-5)
    assert terms.clipped.tolist() == [[True, False, False], [False, False, True]]
    terms.per_token.sum().backward()
    assert torch.allclose(logp.grad, torch.tensor([[0.0, -1.0, -1 / e], [e, 1.0, 0.0]]), atol=1e-5)


def test_gspo_uses_one_length_normalised_ratio_per_sequence():
    # row 0: model tokens at positions 0, 1 with log-ratios 0.1, 0.3 -> s = e^0.2; position 2 is masked
    old = torch.zeros(1, 3)
    logp = torch.tensor([[0.1, 0.3, 5.0]], requires_grad=True)
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    terms = POLICY_OBJECTIVES.get("gspo")(logp, old, torch.tensor([1.0]), mask, clip_eps=0.5)
    s = math.exp(0.2)
    assert torch.allclose(terms.per_token[0, :2], torch.tensor([-s, -s]), atol=1e-5)  # every token carries s
    (terms.per_token * mask).sum().div(2).backward()  # seq_mean: gradient of -A·s is -A·s·mean ∇logp
    assert torch.allclose(logp.grad, torch.tensor([[-s / 2, -s / 2, 0.0]]), atol=1e-5)
    clipped = POLICY_OBJECTIVES.get("gspo")(logp, old, torch.tensor([1.0]), mask, clip_eps=0.1)
    assert clipped.clipped[0, :2].all()  # s = 1.22 > 1.1: the whole sequence is clipped


def test_token_mean_ignores_masked_tokens_and_divides_by_group_tokens():
    per_token = torch.tensor([[1.0, 2.0, 100.0], [3.0, 100.0, 100.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    out = LOSS_AGGREGATIONS.get("token_mean")(per_token, mask, group_tokens=3, group_size=2)
    assert out.item() == pytest.approx((1 + 2 + 3) / 3)
    # split into micro-batches, the pieces add up to the whole
    a = LOSS_AGGREGATIONS.get("token_mean")(per_token[:1], mask[:1], group_tokens=3, group_size=2)
    b = LOSS_AGGREGATIONS.get("token_mean")(per_token[1:], mask[1:], group_tokens=3, group_size=2)
    assert (a + b).item() == pytest.approx(out.item())


def test_seq_mean_weights_sequences_equally_and_survives_empty_masks():
    per_token = torch.tensor([[1.0, 3.0], [5.0, 7.0], [9.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    out = LOSS_AGGREGATIONS.get("seq_mean")(per_token, mask, group_tokens=3, group_size=3)
    assert out.item() == pytest.approx((2.0 + 5.0 + 0.0) / 3)


def test_unknown_names_list_the_available_ones():
    with pytest.raises(KeyError, match="available: k1, k2, k3"):
        KL_ESTIMATORS.get("k4")
    with pytest.raises(KeyError, match="grpo"):
        ADVANTAGES.get("ppo")
    with pytest.raises(KeyError, match="available: grpo_clip, gspo"):
        POLICY_OBJECTIVES.get("ppo")
