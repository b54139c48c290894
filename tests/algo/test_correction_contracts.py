"""The rollout correction inside the training step, on the cases a plausible bug would get wrong (issue #49's list):

- TIS truncates from above only: a weight far below 1 is kept as it is (no floor such as 1/C);
- the weight of an off-policy group compares the sampler with the *behaviour* policy (the trainer's log-probs at the
  weights that sampled), never with the policy being updated;
- `algo.rollout_correction.cap` reaches the step (a cap other than the default changes the gradient);
- micro-batches, ordered shortest first, take each episode's own sampler and behaviour rows.

Each gradient is compared with one written out by hand, one unpadded episode at a time.
"""

from __future__ import annotations

import math

import pytest
import torch

from agentic_rl.algo.grpo import GRPOConfig, grpo_step
from agentic_rl.algo.logprobs import behaviour_logprobs
from agentic_rl.algo.rollout_correction import rollout_weights

from .test_objective import (
    NO_CLIP,
    TEMPERATURE,
    assert_close_and_discriminating,
    episode,
    full_logprobs,
    long_prompt_episode,
    lora_grads,
    lora_model,
)


def masks_of(group) -> list[torch.Tensor]:
    return [torch.tensor(t.loss_mask[1:], dtype=torch.float32) for t in group]


def step(model, group, rewards, tok, *, old=None, sampler=None, **cfg_overrides):
    """grpo_step with lr 0: the gradients it leaves, and its stats."""
    overrides = {"kl_coeff": 0.0, **cfg_overrides}
    cfg = GRPOConfig(group_size=len(group), max_grad_norm=NO_CLIP, **overrides).validate()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
    stats = grpo_step(
        model,
        opt,
        group,
        rewards,
        cfg,
        tok.pad_token_id,
        temperature=TEMPERATURE,
        old_logprobs=old,
        sampler_logprobs=sampler,
    )
    grads = lora_grads(model)
    model.zero_grad(set_to_none=True)
    return grads, stats


def hand_grads(model, group, advantages, weights, old) -> torch.Tensor:
    """Gradient of Σ_i Σ_t mask·(-A_i · w_t · π_θ/π_old) / N (KL off; every ratio inside the clip range)."""
    model.zero_grad(set_to_none=True)
    masks = masks_of(group)
    n_tokens = float(sum(m.sum() for m in masks))
    total = torch.zeros(())
    for traj, adv, w, old_row, mask in zip(group, advantages, weights, old, masks):
        ratio = torch.exp(full_logprobs(model, traj, TEMPERATURE) - old_row)
        total = total + (-float(adv) * w * ratio * mask).sum() / n_tokens
    total.backward()
    grads = lora_grads(model)
    model.zero_grad(set_to_none=True)
    return grads


def test_tis_keeps_a_weight_far_below_one_as_it_is():
    """r = 0.1 and 0.25 stay 0.1 and 0.25 (a floor of 1/C = 0.5 would lift both), per token and per sequence."""
    sampler = torch.zeros(1, 3)
    old = torch.log(torch.tensor([[1.0, 0.1, 0.25]]))
    mask = torch.tensor([[0.0, 1.0, 1.0]])
    for mode in ("tis", "mis"):
        token = rollout_weights(old, sampler, mask, mode=mode, level="token", cap=2.0)
        assert torch.allclose(token.weights, torch.tensor([[0.0, 0.1, 0.25]])) and not token.capped.any()
        sequence = rollout_weights(old, sampler, mask, mode=mode, level="sequence", cap=2.0)
        assert torch.allclose(sequence.weights, torch.tensor([[0.0, 0.025, 0.025]]))


@pytest.fixture()
def trained(base_and_tokenizer):
    base, tok = base_and_tokenizer
    return lora_model(base, trained=True), tok


def test_an_off_policy_groups_weight_compares_the_sampler_with_the_behaviour_policy(trained):
    """The behaviour policy (old) differs from the current one by 0.15 per token (ratio inside the clip range).
    A sampler equal to the behaviour policy is no gap: the step is the uncorrected one bit for bit. A sampler
    equal to the *current* policy is a gap of exp(-0.15) per token of episode 1."""
    model, tok = trained
    group = [episode(tok, v) for v in range(2)]
    masks = masks_of(group)
    current = behaviour_logprobs(model, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    old = [current[0], current[1] - 0.15 * masks[1]]
    rewards = torch.tensor([1.0, 0.0])
    plain, _ = step(model, group, rewards, tok, old=old)
    same, stats = step(model, group, rewards, tok, old=old, sampler=[o.clone() for o in old])
    assert torch.equal(same, plain)
    assert stats.rollout_gap["rollout_correction/weight_max"] == 1.0
    gap, _ = step(model, group, rewards, tok, old=old, sampler=[c.clone() for c in current])
    want = hand_grads(model, group, [1.0, -1.0], [masks[0], masks[1] * math.exp(-0.15)], old)
    assert_close_and_discriminating(gap, want, wrong=plain)


def test_the_configured_cap_reaches_the_training_step(trained):
    """r = 3 on every token of episode 0: with cap 4 its weight is 3 (with the default cap 2 it would be 2)."""
    model, tok = trained
    group = [episode(tok, v) for v in range(2)]
    masks = masks_of(group)
    current = behaviour_logprobs(model, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    sampler = [current[0] - math.log(3.0) * masks[0], current[1]]
    rewards = torch.tensor([1.0, 0.0])
    for mode in ("tis", "mis"):
        got, stats = step(model, group, rewards, tok, sampler=sampler, rollout_correction={"mode": mode, "cap": 4.0})
        want = hand_grads(model, group, [1.0, -1.0], [masks[0] * 3.0, masks[1]], current)
        at_two = masks[0] * (2.0 if mode == "tis" else 0.0)  # what the default cap would give
        capped_at_two = hand_grads(model, group, [1.0, -1.0], [at_two, masks[1]], current)
        assert_close_and_discriminating(got, want, wrong=capped_at_two)
        key = "rollout_correction/clipped_frac" if mode == "tis" else "rollout_correction/masked_frac"
        assert stats.rollout_gap[key] == 0.0


@pytest.mark.parametrize("micro_batch_tokens", [1, 4096])
def test_micro_batches_take_each_episodes_own_sampler_and_behaviour_rows(trained, micro_batch_tokens):
    """Three episodes of different lengths, given longest first (micro-batches run them shortest first), each with
    its own behaviour shift and sampler ratio: the gradient is the hand-written one of each episode's own rows."""
    model, tok = trained
    group = [long_prompt_episode(tok, v) for v in (4, 0, 2)]
    assert len({len(t.token_ids) for t in group}) == 3
    masks = masks_of(group)
    current = behaviour_logprobs(model, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    shifts, ratios = (0.05, -0.1, 0.12), (1.5, 0.5, 1.25)
    old = [c - s * m for c, s, m in zip(current, shifts, masks)]
    sampler = [o - math.log(r) * m for o, r, m in zip(old, ratios, masks)]
    rewards = torch.tensor([1.0, 0.0, 0.5])
    advantages = [a / math.sqrt(1 / 6) for a in (0.5, -0.5, 0.0)]  # mean 0.5, population std sqrt(1/6)
    got, _ = step(model, group, rewards, tok, old=old, sampler=sampler, micro_batch_tokens=micro_batch_tokens)
    want = hand_grads(model, group, advantages, [m * r for m, r in zip(masks, ratios)], old)
    swapped = [ratios[1], ratios[0], ratios[2]]  # the first two episodes' rows exchanged
    wrong = hand_grads(model, group, advantages, [m * r for m, r in zip(masks, swapped)], old)
    assert_close_and_discriminating(got, want, wrong=wrong)
