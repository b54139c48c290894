"""The loss of a group is normalised by the whole group, however it is cut into micro-batches.

`grpo_step` backpropagates each micro-batch separately; its aggregation must divide by the group's sequence
count (`seq_mean`) or model-token count (`token_mean`), never the micro-batch's, or the gradient would grow
with the number of micro-batches. Checked against the gradient of the per-sequence mean written out by hand.
"""

from __future__ import annotations

import torch

from .test_objective import (
    TEMPERATURE,
    assert_close_and_discriminating,
    episode,
    full_logprobs,
    lora_grads,
    lora_model,
    step_grads,
)


def seq_mean_grads(model, group, advantages, *, group_size: int) -> torch.Tensor:
    """Gradient of Σ_i [Σ_t mask·(-A_i log π(y_t)) / n_i] / group_size (ratio 1, KL off)."""
    model.zero_grad(set_to_none=True)
    total = torch.zeros(())
    for traj, adv in zip(group, advantages):
        mask = torch.tensor(traj.loss_mask[1:], dtype=torch.float32)
        total = total + (-float(adv) * full_logprobs(model, traj, TEMPERATURE) * mask).sum() / mask.sum()
    (total / group_size).backward()
    grads = lora_grads(model)
    model.zero_grad(set_to_none=True)
    return grads


def test_seq_mean_divides_by_the_group_not_the_micro_batch(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(4)]
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0])
    adv = [1.0, -1.0, -1.0, 1.0]
    want = seq_mean_grads(model, group, adv, group_size=4)
    # one sequence per micro-batch: dividing by the micro-batch's size (1) would give 4x the gradient
    per_sequence, _ = step_grads(model, group, rewards, tok, kl_coeff=0.0, loss_agg="seq_mean", micro_batch_tokens=1)
    assert_close_and_discriminating(per_sequence, want, wrong=seq_mean_grads(model, group, adv, group_size=1))
    whole, _ = step_grads(model, group, rewards, tok, kl_coeff=0.0, loss_agg="seq_mean", micro_batch_tokens=10_000)
    assert_close_and_discriminating(whole, want, wrong=4 * want)


def test_token_mean_divides_by_the_groups_tokens_in_every_micro_batch(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(4)]
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.0])
    whole, _ = step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=10_000)
    per_sequence, _ = step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=1)
    assert whole.norm() > 0
    assert torch.allclose(whole, per_sequence, rtol=1e-4, atol=1e-7)
