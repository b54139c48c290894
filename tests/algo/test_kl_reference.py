"""`algo.kl_reference=warmup`: the KL's reference is the policy the warm-up left (`logprobs.ReferenceWeights`),
not the base model. Checked through log-probs and the step's gradient against a reference model built by hand."""

from __future__ import annotations

import copy

import pytest
import torch

from agentic_rl.algo import grpo
from agentic_rl.algo.grpo import GRPOConfig, StepStats, grpo_step, update_rollout_batch
from agentic_rl.algo.logprobs import ReferenceWeights, padded_batch, reference_logprobs, sequence_logprobs
from agentic_rl.algo.warmup import WarmupConfig
from agentic_rl.config import check_kl_reference
from agentic_rl.errors import ConfigError
from agentic_rl.types import Trajectory
from tests.algo.test_objective import (
    TEMPERATURE,
    assert_close_and_discriminating,
    episode,
    full_logprobs,
    lora_grads,
    lora_model,
    step_grads,
)


def set_lora_b(model, seed: int) -> None:
    """Random LoRA B weights drawn from `seed`: another policy on the same base."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)


def batch(tok, model):
    group = [episode(tok, v) for v in range(2)]
    ids, attn, mask = padded_batch(group, tok.pad_token_id, next(model.parameters()).device)
    return group, ids, attn, mask[:, 1:]


def test_reference_weights_score_the_policy_they_were_taken_from_and_leave_the_model_as_it_was(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True, seed=0)
    _, ids, attn, mask = batch(tok, model)
    with torch.no_grad():
        taken_from = sequence_logprobs(model, ids, attn, mask, TEMPERATURE)
    reference = ReferenceWeights.of(model)
    set_lora_b(model, seed=1)  # the policy moves on (GRPO's steps)
    params = {name: p for name, p in model.named_parameters() if p.requires_grad}
    moved = {name: p.detach().clone() for name, p in params.items()}
    model.train()

    got = reference_logprobs(model, ids, attn, mask, TEMPERATURE, reference=reference)
    base_model = reference_logprobs(model, ids, attn, mask, TEMPERATURE)
    with torch.no_grad():
        now = sequence_logprobs(model, ids, attn, mask, TEMPERATURE)

    assert torch.allclose(got, taken_from, atol=1e-6)
    assert (got - now).abs().max() > 1e-2  # the moved policy is another one: the test can tell them apart
    assert (got - base_model).abs().max() > 1e-2  # and so is the base model
    # the model is the moved policy again, the same parameter objects, trainable, in the mode it was in
    after = {name: p for name, p in model.named_parameters() if p.requires_grad}
    assert after.keys() == params.keys() and all(after[n] is params[n] for n in params)
    assert all(torch.equal(after[n], moved[n]) for n in params)
    assert model.training
    # and the copy still holds the weights it was taken with
    assert torch.allclose(reference_logprobs(model, ids, attn, mask, TEMPERATURE, reference=reference), taken_from)


def test_reference_weights_of_another_model_are_refused(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    reference = ReferenceWeights({"not.a.parameter": torch.zeros(1)})
    _, ids, attn, mask = batch(tok, model)
    with pytest.raises(ValueError, match="do not fit this model"):
        reference_logprobs(model, ids, attn, mask, TEMPERATURE, reference=reference)


def expected_kl_grads(model, reference_model, group, kl_coeff: float) -> torch.Tensor:
    """Gradient of Σ_i Σ_t mask·β k3(ref, policy) / N with the reference taken from `reference_model`."""
    model.zero_grad(set_to_none=True)
    n_tokens = sum(sum(t.loss_mask[1:]) for t in group)
    total = torch.zeros(())
    for traj in group:
        mask = torch.tensor(traj.loss_mask[1:], dtype=torch.float32)
        logp = full_logprobs(model, traj, TEMPERATURE)
        with torch.no_grad():
            ref = full_logprobs(reference_model, traj, TEMPERATURE)
        k3 = torch.exp(ref - logp) - (ref - logp) - 1
        total = total + (kl_coeff * k3 * mask).sum() / n_tokens
    total.backward()
    grads = lora_grads(model)
    model.zero_grad(set_to_none=True)
    return grads


def test_the_step_pulls_towards_the_reference_weights_not_the_base(base_and_tokenizer):
    """Equal rewards with skipping off: the whole gradient is the KL's. With the warm-up's weights as the
    reference it is the KL to that policy (computed here on a separate copy of it), not to the base model."""
    base, tok = base_and_tokenizer
    warmed = lora_model(base, trained=True, seed=0)  # the policy the warm-up left
    model = copy.deepcopy(warmed)
    reference = ReferenceWeights.of(model)
    set_lora_b(model, seed=1)  # GRPO has moved on from it
    group = [episode(tok, v) for v in range(2)]
    beta = 0.5
    cfg = GRPOConfig(group_size=2, max_grad_norm=1e9, kl_coeff=beta, skip_zero_std_groups=False).validate()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
    stats = grpo_step(
        model, opt, group, torch.tensor([0.3, 0.3]), cfg, tok.pad_token_id, temperature=TEMPERATURE, reference=reference
    )
    got = lora_grads(model)
    want = expected_kl_grads(model, warmed, group, beta)
    to_base, _ = step_grads(model, group, torch.tensor([0.3, 0.3]), tok, kl_coeff=beta, skip_zero_std_groups=False)
    assert_close_and_discriminating(got, want, wrong=to_base)
    assert stats.kl > 0


def test_right_after_the_warmup_the_kl_to_its_policy_is_zero(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True, seed=0)
    reference = ReferenceWeights.of(model)
    group = [episode(tok, v) for v in range(2)]
    cfg = GRPOConfig(group_size=2, max_grad_norm=1e9, kl_coeff=0.5, skip_zero_std_groups=False).validate()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
    at_warmup = grpo_step(
        model, opt, group, torch.tensor([0.3, 0.3]), cfg, tok.pad_token_id, temperature=TEMPERATURE, reference=reference
    )
    assert at_warmup.kl == pytest.approx(0.0, abs=1e-6)
    assert lora_grads(model).abs().max() < 1e-6
    _, to_base = step_grads(model, group, torch.tensor([0.3, 0.3]), tok, kl_coeff=0.5, skip_zero_std_groups=False)
    assert to_base.kl > 1e-3  # the base model is far from this adapter: the default reference pulls


def test_kl_reference_warmup_needs_a_warmup():
    algo = GRPOConfig(kl_reference="warmup").validate()
    with pytest.raises(ConfigError, match="warmup=sft"):
        check_kl_reference(algo, WarmupConfig())
    check_kl_reference(algo, WarmupConfig(epochs=1))  # with one: accepted
    check_kl_reference(GRPOConfig(kl_reference="warmup", kl_coeff=0.0).validate(), WarmupConfig())  # no KL at all
    with pytest.raises(ValueError, match="base, warmup"):
        GRPOConfig(kl_reference="sft").validate()


def test_every_step_of_a_rollout_batch_gets_the_reference(monkeypatch):
    """`update_rollout_batch` hands the run's reference to each group's step (`train.py` passes it)."""
    monkeypatch.setattr(grpo, "behaviour_logprobs", lambda model, trajs, *a, **k: [torch.zeros(1) for _ in trajs])
    seen = []

    def step(model, optimizer, group, rewards, cfg, pad_id, *, temperature, old_logprobs, reference=None):
        seen.append(reference)
        return StepStats(n_tokens=1, skipped=False)

    reference = ReferenceWeights({})
    groups = [
        [Trajectory(f"t{g}", [1, 2, 3], [0, 1, 1], prompt_len=1, sample_index=k) for k in range(2)] for g in range(3)
    ]
    update_rollout_batch(
        None,
        None,
        groups,
        [torch.tensor([1.0, 1.0])] * 3,
        GRPOConfig(skip_zero_std_groups=False),
        0,
        temperature=1.0,
        step=step,
        reference=reference,
    )
    assert seen == [reference] * 3
