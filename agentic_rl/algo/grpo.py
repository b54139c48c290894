"""The GRPO update: one optimizer step per task group, gradients accumulated over its G trajectories.

Reads top to bottom: rewards -> group advantages -> per-token log-probs (policy, and reference with the
adapter disabled) -> per-token loss (policy gradient + KL) -> masked aggregation -> backward -> clip -> step.
The maths lives in `core.py`; this module only moves tensors.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from agentic_rl.algo.core import (ADVANTAGES, KL_ESTIMATORS, LOSS_AGGREGATIONS, group_has_signal,
                                  policy_gradient_term, token_logprobs)
from agentic_rl.types import Trajectory


@dataclass
class LoraSchema:
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "v_proj"])


@dataclass
class GRPOConfig:
    """Hyperparameters of the GRPO algorithm (conf/algo/grpo.yaml, validated at start-up).

    group_size: G rollouts per task; advantages are normalised within the group (>= 2).
    lr: AdamW learning rate of the LoRA parameters.
    kl_coeff: weight β of the per-token KL to the reference (base model, adapter off); 0 disables it.
    kl_estimator: k1 | k2 | k3.  advantage: grpo | mean_only.  loss_agg: token_mean | seq_mean.
    epochs, tasks_per_epoch: passes over the train split and tasks drawn per pass (null = all).
    tasks_per_rollout: tasks whose groups are generated together as one batch (throughput), each
        still getting its own optimizer step.
    micro_batch_size: trajectories per forward/backward inside a group (memory vs speed).
    max_grad_norm: gradient clipping.  skip_zero_std_groups: no forward/backward for groups whose rewards
        are all equal (their advantages are zero; only the KL term would act).
    """

    name: str = "grpo"
    group_size: int = 4
    lr: float = 5e-6
    kl_coeff: float = 0.05
    kl_estimator: str = "k3"
    advantage: str = "grpo"
    loss_agg: str = "token_mean"
    epochs: int = 1
    tasks_per_epoch: int | None = None
    tasks_per_rollout: int = 1
    micro_batch_size: int = 4
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0
    skip_zero_std_groups: bool = True
    lora: LoraSchema = field(default_factory=LoraSchema)

    def validate(self) -> "GRPOConfig":
        checks = [
            (self.group_size >= 2, f"algo.group_size must be >= 2 (GRPO compares rollouts within a group), got {self.group_size}"),
            (self.lr > 0, f"algo.lr must be > 0, got {self.lr}"),
            (self.kl_coeff >= 0, f"algo.kl_coeff must be >= 0, got {self.kl_coeff}"),
            (self.epochs >= 1, f"algo.epochs must be >= 1, got {self.epochs}"),
            (self.tasks_per_epoch is None or self.tasks_per_epoch >= 1, f"algo.tasks_per_epoch must be >= 1 or null, got {self.tasks_per_epoch}"),
            (self.tasks_per_rollout >= 1, f"algo.tasks_per_rollout must be >= 1, got {self.tasks_per_rollout}"),
            (self.micro_batch_size >= 1, f"algo.micro_batch_size must be >= 1, got {self.micro_batch_size}"),
            (self.max_grad_norm > 0, f"algo.max_grad_norm must be > 0, got {self.max_grad_norm}"),
            (self.lora.r >= 1, f"algo.lora.r must be >= 1, got {self.lora.r}"),
            (0 <= self.lora.dropout < 1, f"algo.lora.dropout must be in [0, 1), got {self.lora.dropout}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        for registry, name in ((KL_ESTIMATORS, self.kl_estimator), (ADVANTAGES, self.advantage),
                               (LOSS_AGGREGATIONS, self.loss_agg)):
            registry.get(name)  # raises with the list of available names
        return self


@dataclass
class StepStats:
    loss: float
    kl: float
    grad_norm: float
    n_tokens: int
    skipped: bool


def _padded(trajs: Sequence[Trajectory], pad_id: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Right-pad a micro-batch: ids (B, L), attention (B, L), loss mask (B, L)."""
    width = max(len(t.token_ids) for t in trajs)
    ids = torch.full((len(trajs), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(trajs), width), dtype=torch.long)
    mask = torch.zeros((len(trajs), width), dtype=torch.float32)
    for i, t in enumerate(trajs):
        n = len(t.token_ids)
        ids[i, :n] = torch.tensor(t.token_ids)
        attn[i, :n] = 1
        mask[i, :n] = torch.tensor(t.loss_mask, dtype=torch.float32)
    return ids.to(device), attn.to(device), mask.to(device)


def _sequence_logprobs(model: Any, ids: torch.Tensor, attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """ids, attn: (B, L); mask: (B, L-1) -> (B, L-1) log-prob of token t+1 given the prefix up to t.

    Only positions where `mask` is 1 are computed (others are 0): the vocabulary projection and softmax are
    most of the cost and memory on long, mostly-prompt-and-observation sequences, so the hidden states are
    gathered at the model's own tokens first and only those rows go through the LM head.
    """
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    body, head = getattr(base, "model", None), getattr(base, "lm_head", None)
    if body is None or head is None:  # an architecture without the usual split: project every position
        logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1]
        return token_logprobs(logits, ids[:, 1:]) * mask
    hidden = body(input_ids=ids, attention_mask=attn).last_hidden_state[:, :-1]  # (B, L-1, H)
    keep = mask.bool()
    picked = token_logprobs(head(hidden[keep]).unsqueeze(0), ids[:, 1:][keep].unsqueeze(0)).squeeze(0)  # (N,)
    out = torch.zeros(mask.shape, dtype=picked.dtype, device=picked.device)
    return out.index_put((keep.nonzero(as_tuple=True)), picked)


def grpo_step(model: Any, optimizer: torch.optim.Optimizer, group: Sequence[Trajectory], rewards: torch.Tensor,
              cfg: GRPOConfig, pad_id: int,
              grad_sync: Callable[[list[torch.nn.Parameter]], None] | None = None) -> StepStats:
    """One optimizer step on one task's group. `model` is a peft model (adapter on = policy).

    `grad_sync` (data parallel, `agentic_rl.distributed`) replaces the gradients by their mean over ranks
    after the backward pass, before clipping, so every rank clips and steps on the same gradient.
    """
    advantages = ADVANTAGES.get(cfg.advantage)(rewards)
    if cfg.skip_zero_std_groups and not group_has_signal(rewards):
        return StepStats(loss=0.0, kl=0.0, grad_norm=0.0, n_tokens=0, skipped=True)
    kl_fn = KL_ESTIMATORS.get(cfg.kl_estimator)
    aggregate = LOSS_AGGREGATIONS.get(cfg.loss_agg)
    device = next(model.parameters()).device
    group_tokens = sum(t.n_model_tokens for t in group)
    model.train()
    optimizer.zero_grad(set_to_none=True)
    total_loss, kl_sum = 0.0, 0.0
    for start in range(0, len(group), cfg.micro_batch_size):
        trajs = group[start:start + cfg.micro_batch_size]
        ids, attn, mask = _padded(trajs, pad_id, device)
        mask = mask[:, 1:]  # aligned with the predicted tokens
        logp = _sequence_logprobs(model, ids, attn, mask)
        per_token = policy_gradient_term(logp, advantages[start:start + len(trajs)].to(device))
        if cfg.kl_coeff > 0:
            with torch.no_grad(), _adapter_disabled(model):
                ref_logp = _sequence_logprobs(model, ids, attn, mask)
            kl = kl_fn(logp, ref_logp)
            per_token = per_token + cfg.kl_coeff * kl
            kl_sum += float((kl.detach() * mask).sum())
        loss = aggregate(per_token, mask, group_tokens=group_tokens, group_size=len(group))
        loss.backward()
        total_loss += float(loss.detach())
    params = [p for p in model.parameters() if p.requires_grad]
    if grad_sync is not None:
        grad_sync(params)
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm))
    optimizer.step()
    return StepStats(loss=total_loss, kl=kl_sum / max(group_tokens, 1), grad_norm=grad_norm,
                     n_tokens=group_tokens, skipped=False)


def _adapter_disabled(model: Any) -> contextlib.AbstractContextManager:
    """The reference policy: the same weights with the LoRA adapter switched off."""
    disable = getattr(model, "disable_adapter", None)
    if disable is None:
        raise TypeError("grpo_step needs a peft model: the reference is the base model with the adapter disabled")
    return disable()
