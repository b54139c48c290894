"""Pure GRPO maths on tensors. Shapes: B = sequences, T = tokens (positions predicting token t+1).

The objective, exactly (for one task's group of G episodes y_1..y_G with rewards r_1..r_G):

    A_i        = (r_i - mean(r)) / (std(r) + 1e-6)          population std; A = 0 when std < ZERO_STD_TOL
    log π(y_t) = log_softmax(logits_t / τ)[y_t]              τ = the rollout's sampling temperature
    ρ_t        = exp(log π_θ(y_t) - log π_old(y_t))          π_old = the policy that sampled the episode
    L          = Σ_i Σ_{t ∈ model tokens of y_i} [ -min(ρ_t A_i, clip(ρ_t, 1-ε, 1+ε) A_i) + β k3_t ] / N
    k3_t       = exp(log π_ref - log π_θ) - (log π_ref - log π_θ) - 1,   π_ref = base model, adapter off, at τ

with N = the number of model tokens in the whole group (`token_mean`). This is the clipped GRPO objective
of DeepSeekMath (Shao et al., 2024), entry "grpo_clip" of POLICY_OBJECTIVES. Off-policy handling: the
trainer takes one optimizer step per task group, and `algo.tasks_per_rollout` groups share one rollout
batch, so every group after the batch's first optimizer step was sampled by an older policy. Its
behaviour log-probs (log π_old) are scored in a no-grad pass, in eval mode, before that first step, and
the PPO clip (ε = `algo.clip_eps`) bounds the update. The first updated group of a batch is exactly
on-policy: π_old = sg(π_θ), so ρ = 1 in value and its gradient is A·∇log π_θ.

Deviations from the paper, on purpose:
- the loss is a token mean over the whole group (as in DAPO / Dr. GRPO), not the mean of per-sequence
  means: long and short episodes get the same per-token weight; "seq_mean" gives the paper's weighting;
- the KL is the per-token k3 estimator (Schulman, 2020) added to the loss, against the base model with
  the LoRA adapter disabled (not a separate frozen copy); "k1" and "k2" are available;
- groups whose rewards are all equal get zero advantages (see `group_advantages`) and, by default, no
  update at all (`algo.skip_zero_std_groups`);
- temperature: the policy, behaviour and reference log-probs are all of the *sampling* temperature,
  softmax(logits / τ) over the full vocabulary. Top-p (nucleus) truncation is ignored in the loss: the
  sampler drew from the renormalised nucleus, whose log-prob for a sampled token is the full one minus
  log(nucleus mass). Renormalising in the loss would need the nucleus of every policy evaluated (and
  give -inf to tokens that fall outside a later policy's nucleus), so the loss treats the sampler as the
  full softmax at τ; the ratio and KL are off by the nucleus mass, small at top_p=0.95. Set
  rollout.top_p=1.0 for an exact match (the rollout applies only τ and top-p, no other logits processor);
- one optimizer step per task group (several per rollout batch when tasks_per_rollout > 1), with the
  importance ratio above, rather than several epochs over one batch.

Other policy objectives are entries of POLICY_OBJECTIVES: "gspo" (Zheng et al., 2025, GSPO-token form)
uses one length-normalised sequence ratio per episode; pair it with `loss_agg=seq_mean` and a small
`clip_eps` (the paper uses 3e-4 / 4e-4). Dr. GRPO (Liu et al., 2025) is "grpo_clip" with
`advantage=mean_only` and `loss_agg=token_mean`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

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


class ObjectiveTerms(NamedTuple):
    """What a policy objective returns: the per-token loss (B, T) and where the clip bound (B, T) bool."""

    per_token: torch.Tensor
    clipped: torch.Tensor


# (logp, old_logp, advantages, mask, *, clip_eps, **its own options) -> ObjectiveTerms; logp/old_logp/mask (B, T),
# advantages (B,). The keyword arguments are the objective's config: `algo.clip_eps` and `algo.objective_options`
# (agentic_rl.algo.grpo.objective_settings), so a new objective with its own hyperparameter is one entry here.
PolicyObjectiveFn = Callable[..., ObjectiveTerms]
POLICY_OBJECTIVES: Registry[PolicyObjectiveFn] = Registry("policy objective")


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


def check_training_temperature(temperature: float) -> float:
    """The sampling temperature the loss scores at (the rollout's); training needs sampling, so it must be > 0.

    Checked where the log-probs are taken and, before any model is loaded, by the config check.
    """
    if temperature <= 0:
        raise ValueError(
            f"rollout.temperature={temperature}: the loss needs a sampling temperature > 0 (0 means "
            "greedy decoding, whose samples carry no log-probs to learn from, and the loss divides the "
            "logits by it); set e.g. rollout.temperature=0.7 for training"
        )
    return temperature


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """logits: (B, T, V) predicting `targets`: (B, T) -> log softmax(logits / temperature)[target] (B, T).

    In float32. `temperature` must be the sampler's, so that these are the log-probs of the distribution
    the tokens were drawn from (see the module docstring on top-p).
    """
    check_training_temperature(temperature)
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    return logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


# Rows of hidden states projected to the vocabulary at a time by `head_logprobs`: bounds its transient memory
# to HEAD_CHUNK x vocabulary floats (64 MiB at SmolLM2's 49k vocabulary).
HEAD_CHUNK = 256


class _HeadLogprobs(torch.autograd.Function):
    """log softmax(hidden @ W.T / τ)[target] per row, in float32, chunked over rows and keeping no logits.

    The forward keeps each row's log-sum-exp; the backward recomputes a chunk's logits from the hidden states
    and uses d logp / d logits = (onehot(target) - softmax) / τ. The full-vocabulary logits, their copy
    divided by τ and the log-softmax output (three rows x vocabulary tensors, all kept for the backward by the
    plain path) never exist beyond one chunk.
    """

    @staticmethod
    def forward(
        ctx,
        hidden: torch.Tensor,
        weight: torch.Tensor,
        targets: torch.Tensor,  # type: ignore[override]
        temperature: float,
    ) -> torch.Tensor:
        picked = torch.empty(hidden.shape[0], dtype=torch.float32, device=hidden.device)
        lse = torch.empty_like(picked)
        for start in range(0, hidden.shape[0], HEAD_CHUNK):
            rows = slice(start, start + HEAD_CHUNK)
            logits = torch.nn.functional.linear(hidden[rows], weight).float() / temperature
            lse[rows] = torch.logsumexp(logits, dim=-1)
            picked[rows] = logits.gather(-1, targets[rows, None])[:, 0] - lse[rows]
        ctx.save_for_backward(hidden, weight, targets, lse)
        ctx.temperature = temperature
        return picked

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):  # type: ignore[override]
        hidden, weight, targets, lse = ctx.saved_tensors
        grad_hidden = torch.empty_like(hidden) if ctx.needs_input_grad[0] else None
        grad_weight = (
            torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if ctx.needs_input_grad[1] else None
        )
        for start in range(0, hidden.shape[0], HEAD_CHUNK):
            rows = slice(start, start + HEAD_CHUNK)
            logits = torch.nn.functional.linear(hidden[rows], weight).float() / ctx.temperature
            grad_logits = torch.exp(logits - lse[rows, None]).mul_(-grad_out[rows, None])
            grad_logits.scatter_add_(-1, targets[rows, None], grad_out[rows, None])
            grad_logits = grad_logits.div_(ctx.temperature).to(weight.dtype)  # as the plain path's cast back
            if grad_hidden is not None:
                grad_hidden[rows] = grad_logits @ weight
            if grad_weight is not None:
                grad_weight += (grad_logits.T @ hidden[rows]).float()
        return grad_hidden, None if grad_weight is None else grad_weight.to(weight.dtype), None, None


def head_logprobs(
    head: torch.nn.Module, hidden: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """hidden: (N, H) states predicting `targets`: (N,) -> log softmax(head(hidden) / temperature)[target] (N,).

    The same values and gradients as `token_logprobs(head(hidden), targets, temperature)`, without the (N, V)
    tensors that path keeps for its backward; a head other than a plain bias-free `nn.Linear` (a LoRA-wrapped
    one, say) takes that plain path.
    """
    # Under a bf16 autocast (`algo.dtype=bf16`) the decoder's states arrive in bf16; the head and its softmax run in
    # fp32 all the same: log-probs feed exp() in the ratio and the KL, and the chunked backward recomputes the logits
    # outside any autocast, so the forward must use the same precision. In fp32, `.float()` returns `hidden` itself.
    with torch.autocast(device_type=hidden.device.type, enabled=False):
        hidden = hidden.float()
        if type(head) is not torch.nn.Linear or head.bias is not None:
            return token_logprobs(head(hidden).unsqueeze(0), targets.unsqueeze(0), temperature).squeeze(0)
        check_training_temperature(temperature)
        return _HeadLogprobs.apply(hidden, head.weight, targets, temperature)


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


def clipped_surrogate(ratio: torch.Tensor, advantages: torch.Tensor, clip_eps: float) -> ObjectiveTerms:
    """ratio: (B, T), advantages: (B,) -> -min(ρ·A, clip(ρ, 1-ε, 1+ε)·A) per token (the PPO surrogate).

    Where the clipped term is the smaller one the token gets no gradient: the policy already moved
    more than ε away from the behaviour policy in the direction the advantage asks for.
    """
    adv = advantages.unsqueeze(-1).to(ratio.dtype)
    unclipped = ratio * adv
    clipped = ratio.clamp(1.0 - clip_eps, 1.0 + clip_eps) * adv
    return ObjectiveTerms(per_token=-torch.minimum(unclipped, clipped), clipped=(clipped < unclipped).detach())


@POLICY_OBJECTIVES.register("grpo_clip")
def grpo_clip(
    logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, *, clip_eps: float
) -> ObjectiveTerms:
    """Clipped GRPO (DeepSeekMath): per-token ratio ρ_t = π_θ(y_t) / π_old(y_t).

    logp (grad), old_logp (no grad), mask: (B, T); advantages: (B,). With old_logp = logp.detach() the
    ratio is 1 in value and the gradient of a token's loss is -A·∇log π_θ(y_t).
    """
    ratio = torch.exp(logp - old_logp.detach())
    return clipped_surrogate(ratio, advantages, clip_eps)


@POLICY_OBJECTIVES.register("gspo")
def gspo(
    logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, *, clip_eps: float
) -> ObjectiveTerms:
    """GSPO-token (Zheng et al., 2025): one ratio per episode, s_i = exp(mean_t (log π_θ - log π_old)).

    Each token carries sg(s_i)·π_θ(y_t)/sg(π_θ(y_t)), whose value is s_i, so the clip decision is per
    sequence; averaged per sequence (`loss_agg=seq_mean`) its gradient is that of s_i·A_i.
    """
    log_s = ((logp - old_logp.detach()) * mask).sum(-1) / mask.sum(-1).clamp(min=1)  # (B,)
    ratio = torch.exp(log_s.detach().unsqueeze(-1) + logp - logp.detach())
    return clipped_surrogate(ratio, advantages, clip_eps)


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
