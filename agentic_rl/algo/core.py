"""Pure GRPO maths on tensors. Shapes: B = sequences, T = tokens (positions predicting token t+1).

Variant: GRPO (Shao et al., 2024, DeepSeekMath) with a single on-policy update per batch, so the PPO
ratio is exp(logp - logp.detach()) == 1 and clipping never binds; it is kept in ratio form so the gradient
is A·∇logp and an off-policy extension stays a one-line change. Deviations from the paper, on purpose:
- the default loss aggregation is token-level over the group (as in DAPO / Dr. GRPO), not the mean of
  per-sequence means: long and short episodes get the same per-token weight; "seq_mean" is available;
- the KL term uses the k3 estimator per token (Schulman, 2020) against the base model with the adapter
  disabled; "k1" and "k2" are available;
- groups whose rewards are all equal get zero advantages (see `group_advantages`).
"""
from __future__ import annotations

from typing import Callable

import torch

from agentic_rl.registry import Registry

# Shaped rewards such as 0.05·n or -0.1 are not exact in binary floating point: a group of "equal"
# rewards can have a std of ~1e-17, and dividing by it (plus a tiny eps) turns rounding residue into
# advantages of order one. Any group with std below this tolerance is treated as having no signal.
ZERO_STD_TOL = 1e-6

AdvantageFn = Callable[[torch.Tensor], torch.Tensor]
ADVANTAGES: Registry[AdvantageFn] = Registry("advantage estimator")
KLFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
KL_ESTIMATORS: Registry[KLFn] = Registry("KL estimator")
LossAggFn = Callable[..., torch.Tensor]  # (per_token, mask, *, group_tokens, group_size) -> scalar
LOSS_AGGREGATIONS: Registry[LossAggFn] = Registry("loss aggregation")


def group_has_signal(rewards: torch.Tensor) -> bool:
    """rewards: (G,). False when all rewards are equal up to float residue."""
    return bool(rewards.double().std(unbiased=False) >= ZERO_STD_TOL)


@ADVANTAGES.register("grpo")
def grpo_advantages(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """rewards: (G,) -> advantages (G,) = (r - mean) / (std + eps); zeros for a zero-spread group.

    Uses the population std (divide by G), so for G=2 the advantages are exactly ±1.
    """
    r = rewards.double()
    if not group_has_signal(r):
        return torch.zeros_like(rewards, dtype=torch.float32)
    return ((r - r.mean()) / (r.std(unbiased=False) + eps)).float()


@ADVANTAGES.register("mean_only")
def mean_only_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """rewards: (G,) -> r - mean (Dr. GRPO: no division by the std, so no per-group rescaling)."""
    r = rewards.double()
    if not group_has_signal(r):
        return torch.zeros_like(rewards, dtype=torch.float32)
    return (r - r.mean()).float()


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """logits: (B, T, V) predicting `targets`: (B, T) -> log p(target) (B, T), in float32."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


@KL_ESTIMATORS.register("k1")
def kl_k1(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """(B, T) -> (B, T): log p - log p_ref. Unbiased, high variance, can be negative."""
    return logp - ref_logp


@KL_ESTIMATORS.register("k2")
def kl_k2(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """(B, T) -> (B, T): ½ (log p - log p_ref)². Biased, low variance, non-negative."""
    return 0.5 * (logp - ref_logp) ** 2


@KL_ESTIMATORS.register("k3")
def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """(B, T) -> (B, T): exp(ref - logp) - (ref - logp) - 1. Unbiased for KL(p||ref), non-negative."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1


def policy_gradient_term(logp: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """logp: (B, T), advantages: (B,) -> per-token loss (B, T) = -A · exp(logp - logp.detach())."""
    ratio = torch.exp(logp - logp.detach())
    return -advantages.unsqueeze(-1) * ratio


@LOSS_AGGREGATIONS.register("token_mean")
def token_mean(per_token: torch.Tensor, mask: torch.Tensor, *, group_tokens: int, group_size: int) -> torch.Tensor:
    """Sum over the model's tokens / number of model tokens in the whole group.

    per_token, mask: (B, T). `group_tokens` counts the mask over the whole group, so micro-batches of a
    group can be backpropagated separately and their gradients add up to the group's token mean.
    """
    return (per_token * mask).sum() / max(group_tokens, 1)


@LOSS_AGGREGATIONS.register("seq_mean")
def seq_mean(per_token: torch.Tensor, mask: torch.Tensor, *, group_tokens: int, group_size: int) -> torch.Tensor:
    """Mean over each sequence's model tokens, then / group size (the original GRPO weighting).

    A sequence with no model tokens contributes nothing (its masked denominator is clamped to 1 and its
    numerator is 0). Dividing by the whole group's size lets micro-batches add up like `token_mean`.
    """
    per_seq = (per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)
    return per_seq.sum() / max(group_size, 1)
