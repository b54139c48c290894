"""Pure maths of the sampler/trainer mismatch correction (`algo.rollout_correction`). Shapes: B, T as in core.py.

The sampler that generated an episode (vLLM in bf16, say) and the trainer that scores it (fp32 HF forward)
are two different policies even at equal weights. Write π_samp for the sampler's processed log-probs recorded
with the trajectory, π_old for the trainer's own log-probs at the rollout weights (the `old_logp` of the PPO
ratio: `logp.detach()` for the on-policy group, the behaviour scoring for later groups) and π_θ for the policy
being updated. The corrected per-token policy loss is

    ℓ_t = w · ℓ_t^PPO(ρ_t = π_θ / π_old),      w = sg(f(π_old / π_samp)),   C = `algo.rollout_correction.cap`

so the PPO ratio and its clip are taken against the trainer's own distribution (the trust region is about the
trainer's step, not the engine's numerics) and w re-weights tokens the sampler drew too often or too rarely.
f is an entry of ROLLOUT_CORRECTIONS:

- "tis", truncated importance sampling (Yao et al., 2025, "Your efficient RL framework secretly brings you
  off-policy RL training"; what verl and slime ship, per token with C = 2): f(r) = min(r, C);
- "mis", masked importance sampling (Liu et al., 2025, "When speed kills stability"): f(r) = r·1[r <= C]; a
  token (or a whole sequence) whose weight exceeds C contributes no policy gradient instead of a capped one;
- "none": f(r) = 1, the uncorrected objective.

The ratio r is taken at one of two levels (IS_LEVELS): "token", r_t = π_old(y_t)/π_samp(y_t); or "sequence",
r = Π_t r_t over the episode's model tokens (log r = Σ_t log r_t), broadcast to each of its tokens. The
sequence level takes the product, not the geometric mean: the product is the importance weight of the whole
episode, π_old(y)/π_samp(y), the one that makes a sequence-level objective (a reward given to the episode)
unbiased; the geometric mean is a length-normalised heuristic that is not an importance weight of anything and
would hide a large gap on long episodes behind a mean. With the cap, the product's variance stays bounded.

Deviations and choices, on purpose:
- w multiplies the policy term only; the KL to the reference is a regulariser of the trainer's own
  distribution and is left unweighted (as verl does);
- a masked token (mis) keeps its place in the loss's denominator (`group_tokens`, `seq_mean`'s per-sequence
  count): it is a token whose weight is 0, so micro-batches still add up to the group's mean and the other
  tokens' scale does not depend on how many were masked;
- the weights are computed in log space and capped there (min(log r, log C)), so a long sequence's product
  cannot overflow;
- no lower bound: small weights shrink a token's gradient, which is what the importance weight asks for;
- π_samp must be of the distribution the trainer scores, softmax(logits / τ) over the full vocabulary (see
  core.py on top-p). A sampler log-prob renormalised to the top-p nucleus is higher by -log(nucleus mass), which
  reads as weights a little below 1 on every token; rollout.top_p=1 compares like with like.

When the sampler's log-probs equal the trainer's up to float noise (the HF backend in the trainer's dtype:
per-token log ratios below NOISE_FLOOR are read as 0), or a trajectory carries none, w = exp(0) = 1 exactly and
the objective is the uncorrected one bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch

from agentic_rl.algo.core import kl_k3
from agentic_rl.registry import Registry

# (log_ratio (B, T), mask (B, T)) -> log weight per token (B, T), 0 off the mask
LevelFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
IS_LEVELS: Registry[LevelFn] = Registry("rollout correction level")


class RolloutWeights(NamedTuple):
    """weights: (B, T) detached factors of the per-token policy loss (0 off the mask and where masked);
    capped: (B, T) bool, the model tokens whose weight exceeded the cap (truncated by tis, masked by mis)."""

    weights: torch.Tensor
    capped: torch.Tensor


# (log_weight (B, T), mask (B, T), *, cap) -> RolloutWeights
CorrectionFn = Callable[..., RolloutWeights]
ROLLOUT_CORRECTIONS: Registry[CorrectionFn] = Registry("rollout correction mode")


@IS_LEVELS.register("token")
def token_level(log_ratio: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(B, T) -> (B, T): each token's own log ratio log π_old(y_t) - log π_samp(y_t)."""
    return log_ratio * mask


@IS_LEVELS.register("sequence")
def sequence_level(log_ratio: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(B, T) -> (B, T): the episode's log ratio Σ_t mask·log r_t (the product of its token ratios) on each of
    its model tokens."""
    return (log_ratio * mask).sum(-1, keepdim=True) * mask


@ROLLOUT_CORRECTIONS.register("none")
def no_correction(log_weight: torch.Tensor, mask: torch.Tensor, *, cap: float) -> RolloutWeights:
    """w = 1 on every model token: the sampler is taken to be the trainer."""
    return RolloutWeights(mask.detach().clone(), torch.zeros_like(mask, dtype=torch.bool))


@ROLLOUT_CORRECTIONS.register("tis")
def truncated_is(log_weight: torch.Tensor, mask: torch.Tensor, *, cap: float) -> RolloutWeights:
    """w = min(r, C) = exp(min(log r, log C)); tokens with r > C are the capped ones."""
    log_weight = log_weight.detach()
    capped = (log_weight > math.log(cap)) & mask.bool()
    return RolloutWeights(torch.exp(log_weight.clamp(max=math.log(cap))) * mask, capped)


@ROLLOUT_CORRECTIONS.register("mis")
def masked_is(log_weight: torch.Tensor, mask: torch.Tensor, *, cap: float) -> RolloutWeights:
    """w = r where r <= C, else 0 (the token, or at level=sequence the whole episode, is masked out)."""
    log_weight = log_weight.detach()
    capped = (log_weight > math.log(cap)) & mask.bool()
    weights = torch.exp(log_weight.clamp(max=math.log(cap))) * mask
    return RolloutWeights(weights.masked_fill(capped, 0.0), capped)


# Per-token log ratios smaller than this are float noise, read as 0 in the weight (the gap metrics keep them): two
# fp32 passes over the same weights (the HF sampler's cached, batched decoding and the trainer's full pass) differ
# by ~1e-6, and that noise must not make the HF reference's objective differ from the uncorrected one. A real
# sampler/trainer gap (bf16 engine) is 1e-3 and more per token; a weight within 1e-4 of 1 changes nothing.
NOISE_FLOOR = 1e-4


def rollout_weights(
    old_logp: torch.Tensor, sampler_logp: torch.Tensor, mask: torch.Tensor, *, mode: str, level: str, cap: float
) -> RolloutWeights:
    """old_logp (trainer at the rollout weights), sampler_logp, mask: (B, T) -> the weights of `mode` at `level`.

    Unknown names raise with the available ones.
    """
    correct = ROLLOUT_CORRECTIONS.get(mode)
    log_ratio = (old_logp - sampler_logp).detach()
    log_ratio = log_ratio.masked_fill(log_ratio.abs() < NOISE_FLOOR, 0.0)
    log_weight = IS_LEVELS.get(level)(log_ratio, mask)
    return correct(log_weight, mask, cap=cap)


# The largest log weight the metrics exponentiate: a sequence-level ratio of a long, badly mismatched episode can
# exceed float range, and a metric must stay a finite JSON number (e^80 ~ 5e34 already says "huge").
METRIC_LOG_WEIGHT_MAX = 80.0


class GapSums(NamedTuple):
    """Sums over model tokens that add up across micro-batches; `gap_metrics` turns them into means."""

    n_tokens: float
    abs_diff: float
    kl: float
    weight: float
    weight_max: float
    capped: float


def gap_sums(
    old_logp: torch.Tensor, sampler_logp: torch.Tensor, mask: torch.Tensor, level: str, capped: torch.Tensor
) -> GapSums:
    """The sampler/trainer gap of one micro-batch: Σ mask·|Δ log p|, Σ mask·k3, Σ and max of the raw (uncapped)
    weight at `level`, and the count of capped tokens. k3 estimates KL(π_samp || π_old) from the sampler's own
    draws: with r = π_old/π_samp, k3 = r - 1 - log r (>= 0)."""
    diff = (old_logp - sampler_logp).detach()
    keep = mask.bool()
    weight = torch.exp(IS_LEVELS.get(level)(diff, mask).clamp(max=METRIC_LOG_WEIGHT_MAX))[keep]
    return GapSums(
        n_tokens=float(mask.sum()),
        abs_diff=float((diff.abs() * mask).sum()),
        kl=float((kl_k3(sampler_logp.detach(), old_logp.detach()) * mask).sum()),
        weight=float(weight.sum()),
        weight_max=float(weight.max()) if weight.numel() else 0.0,
        capped=float((capped & keep).sum()),
    )


def add_gap_sums(a: GapSums | None, b: GapSums) -> GapSums:
    """Two micro-batches' sums as one (the max of the maxima)."""
    if a is None:
        return b
    return GapSums(
        a.n_tokens + b.n_tokens,
        a.abs_diff + b.abs_diff,
        a.kl + b.kl,
        a.weight + b.weight,
        max(a.weight_max, b.weight_max),
        a.capped + b.capped,
    )


# What the share of capped tokens is called in each mode's metrics ("none" caps nothing and logs no share).
CAPPED_METRIC = {"tis": "rollout_correction/clipped_frac", "mis": "rollout_correction/masked_frac"}


def gap_metrics(sums: GapSums, mode: str) -> dict[str, float]:
    """`rollout_correction/*` means per model token of the trajectories that carry sampler log-probs."""
    n = max(sums.n_tokens, 1.0)
    out = {
        "rollout_correction/logp_abs_diff": sums.abs_diff / n,
        "rollout_correction/kl_k3": sums.kl / n,
        "rollout_correction/weight_mean": sums.weight / n,
        "rollout_correction/weight_max": sums.weight_max,
    }
    if mode in CAPPED_METRIC:
        out[CAPPED_METRIC[mode]] = sums.capped / n
    return out
