"""GRPO maths on hand-computed tensors."""
from __future__ import annotations

import math

import pytest
import torch

from agentic_rl.algo.core import (ADVANTAGES, KL_ESTIMATORS, LOSS_AGGREGATIONS, grpo_advantages, group_has_signal,
                                  kl_k1, kl_k2, kl_k3, mean_only_advantages, policy_gradient_term, token_logprobs)


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


def test_policy_gradient_value_and_gradient():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    loss = policy_gradient_term(logp, torch.tensor([2.0])).sum()
    assert loss.item() == pytest.approx(-4.0)  # ratio 1 at the sampling policy
    loss.backward()
    assert torch.allclose(logp.grad, torch.tensor([[-2.0, -2.0]]))  # -A per token


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
