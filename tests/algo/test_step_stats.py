"""What one `grpo_step` reports: a skipped group counts no token; the KL is reported only when it is in the loss
(kl_coeff > 0, so `train/kl` is absent rather than 0 without it) and as a per-token mean; the loss as the
objective's value."""

from __future__ import annotations

import copy

import torch

from agentic_rl.algo.grpo import GRPOConfig, grpo_step

from .test_objective import TEMPERATURE, episode, lora_model


class Steps:
    """grpo_step from one fixed LoRA model each time (its weights restored before every call)."""

    def __init__(self, base, tok) -> None:
        self.tok = tok
        self.model = lora_model(base, trained=True)
        self.state = copy.deepcopy(self.model.state_dict())

    def __call__(self, rewards, group=None, **overrides):
        self.model.load_state_dict(self.state)
        group = group or [episode(self.tok, v) for v in range(2)]
        opt = torch.optim.SGD([p for p in self.model.parameters() if p.requires_grad], lr=0.1)
        cfg = GRPOConfig(group_size=len(group), **overrides).validate()
        r = torch.tensor(rewards)
        return grpo_step(self.model, opt, group, r, cfg, self.tok.pad_token_id, temperature=TEMPERATURE)


def test_a_skipped_group_counts_no_token(base_and_tokenizer):
    stats = Steps(*base_and_tokenizer)([0.5, 0.5])
    assert stats.skipped and stats.n_tokens == 0 and stats.metrics() == {"train/model_tokens": 0}


def test_the_kl_is_reported_only_when_it_is_in_the_loss_and_as_a_per_token_mean(base_and_tokenizer):
    steps = Steps(*base_and_tokenizer)
    without = steps([0.0, 1.0], kl_coeff=0.0)
    assert not without.skipped and without.kl is None and "train/kl" not in without.metrics()
    pair = steps([0.0, 1.0], kl_coeff=0.1)
    tok = base_and_tokenizer[1]
    twice = steps([0.0, 1.0, 0.0, 1.0], group=[episode(tok, v) for v in (0, 1, 0, 1)], kl_coeff=0.1)
    assert pair.kl > 0 and "train/kl" in pair.metrics()
    assert twice.n_tokens == 2 * pair.n_tokens and abs(twice.kl - pair.kl) < 1e-6 * pair.kl + 1e-9


def test_the_loss_is_the_objective_s_value(base_and_tokenizer):
    """On-policy, two replies of equal length with opposite advantages: the policy term cancels, so the loss is
    kl_coeff x the mean KL, and 0 without the KL term."""
    steps = Steps(*base_and_tokenizer)
    assert steps([0.0, 1.0], kl_coeff=0.0).loss == 0.0
    stats = steps([0.0, 1.0], kl_coeff=0.1)
    assert stats.kl > 0 and abs(stats.loss - 0.1 * stats.kl) < 1e-6
