"""The GRPO update: its hyperparameters (`GRPOConfig`) and one optimizer step per task group, gradients
accumulated over the group's G trajectories.

One job: turn scored trajectories into an optimizer step. Reads top to bottom: rewards -> group advantages ->
per-token log-probs at the sampling temperature (policy; the trainer's own at the rollout weights, for groups
updated after the batch's first step; reference with the adapter disabled; all from `logprobs.py`) ->
per-token loss (policy objective x rollout-correction weight + KL) -> masked aggregation -> backward -> clip
-> step. The maths lives in `core.py` and `rollout_correction.py`; this module only moves tensors.

Episodes that an infrastructure failure ended (`Trajectory.infra_failure`: a server died, the sandbox failed; not
the policy's doing) are not scored: `update_rollout_batch` drops them from their group before anything else, so the
group's baseline (mean and std of the rewards) is that of the other episodes, and the loss is normalised over
their tokens and number (the group is reweighted to what is left). A group left with fewer than two episodes has
no baseline and takes no step. The drops and the calls that recovered by moving to another server are counted
per cause (`rollout/infra_failures/<cause>`, `rollout/infra_retries/<cause>`).

Memory: the group runs in micro-batches of at most `micro_batch_tokens` padded tokens after the prompt the
group shares (which runs once, its gradient collected over the micro-batches and sent back through it once;
with `recompute_prefix` that pass keeps no graph and runs again, with one, after the micro-batches),
and gradient checkpointing (`algo.gradient_checkpointing`, set up in `models.lora.add_lora`) keeps one
layer's activations instead of all of them.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch

from agentic_rl.algo.core import ADVANTAGES, KL_ESTIMATORS, LOSS_AGGREGATIONS, POLICY_OBJECTIVES, group_has_signal
from agentic_rl.algo.logprobs import (
    TRAINER_DTYPES,
    PrefixPass,
    ReferenceWeights,
    behaviour_logprobs,
    group_prefix,
    machine_trainer_dtype,
    padded_batch,
    padded_rows,
    reference_logprobs,
    reference_prefix,
    sampler_logprobs_of,
    sampler_rows,
    sequence_logprobs,
    token_budget_batches,
    trainer_precision,
)
from agentic_rl.algo.rollout_correction import (
    IS_LEVELS,
    ROLLOUT_CORRECTIONS,
    GapSums,
    add_gap_sums,
    gap_metrics,
    gap_sums,
    rollout_weights,
)
from agentic_rl.runtime.memory import trim_heap
from agentic_rl.types import Trajectory

logger = logging.getLogger(__name__)

# what algo.dtype may say: a trainer dtype, or `auto` (resolved to one in `validate`)
DTYPE_CHOICES = (*TRAINER_DTYPES, "auto")
# the KL's reference policy: the base model (adapter off), or the policy the warm-up left (ReferenceWeights)
KL_REFERENCES = ("base", "warmup")


@dataclass
class LoraSchema:
    r: int = 16
    alpha: int = 32
    # 0 by default: LoRA dropout is active in the loss pass but off while sampling, so any dropout makes
    # the loss pass's log-probs differ from the sampler's (the behaviour scoring runs in eval mode).
    dropout: float = 0.0
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "v_proj"])


@dataclass
class RolloutCorrectionSchema:
    """The sampler/trainer mismatch correction (`algo.rollout_correction`, maths in `rollout_correction.py`).

    mode: none | tis (truncate the weight at cap) | mis (mask tokens or sequences whose weight exceeds cap).
    level: token (one weight per token) | sequence (the product of the episode's token ratios, on each token).
    cap: C, >= 1. Defaults: tis per token with C = 2, as verl and slime ship it. It acts only on trajectories
    that carry the sampler's own log-probs; for the others the sampler is the trainer and the weight is 1.
    """

    mode: str = "tis"
    level: str = "token"
    cap: float = 2.0


@dataclass
class GRPOConfig:
    """Hyperparameters of the GRPO algorithm (conf/algo/grpo.yaml, validated at start-up).

    group_size: G rollouts per task; advantages are normalised within the group (>= 2).
    lr: AdamW learning rate of the LoRA parameters.
    kl_coeff: weight β of the per-token KL to the reference; 0 disables it.
    kl_reference: base | warmup. The KL's reference policy: the base model (adapter off), or the policy the
        warm-up left (its adapter weights as the warm-up ended, `logprobs.ReferenceWeights`; needs a warm-up).
    kl_estimator: k1 | k2 | k3.  advantage: grpo | mean_only.  loss_agg: token_mean | seq_mean.
    objective: the policy objective, grpo_clip | gspo (core.POLICY_OBJECTIVES).
    clip_eps: ε of the PPO clip on the importance ratio to the behaviour policy (groups updated after an
        earlier optimizer step of the same rollout batch are off-policy); every objective receives it.
    objective_options: the objective's own settings, passed to it as keyword arguments beside `clip_eps`
        (`objective_settings`), so a new objective's hyperparameter is set here (`algo.objective_options={beta:
        0.1}`) with no edit to this module; a name the objective does not take is refused at start-up.
    epochs, tasks_per_epoch: passes over the train split and tasks drawn per pass (null = all).
    tasks_per_rollout: tasks whose groups are generated together as one batch (throughput), each
        still getting its own optimizer step, importance-corrected as above.
    micro_batch_tokens: padded tokens (sequences x longest, not counting the prompt the group shares, which
        runs once) per forward/backward inside a group; bounds the update's activation memory. A sequence
        longer than this gets a micro-batch of its own.
    gradient_checkpointing: recompute each layer's activations in the backward pass instead of storing
        them (more update time for a fraction of its memory).
    trim_heap_each_micro_batch: after each micro-batch's backward, the heap's free pages go back to the system
        (glibc's `malloc_trim`; no effect elsewhere). The freed activations are blocks that glibc keeps
        resident and, fragmented, does not fully reuse, so without it the update's peak RSS grows by up to a
        GiB (`make bench-update`); values do not change.
    recompute_prefix: the group's shared prompt first runs without a graph (its keys/values only), and again
        with one after the last micro-batch, to send the micro-batches' gradients back through it: its
        activations are no longer held under every micro-batch's, for one more forward pass of the prompt
        (`make bench-update`: peak 0.6-0.8 GiB lower, time within the noise; gradients bit-equal).
    max_grad_norm: gradient clipping.  skip_zero_std_groups: no forward/backward for groups whose rewards
        are all equal (their advantages are zero; only the KL term would act).
    dtype: the trainer's compute dtype, fp32 | bf16 | auto (bf16: autocast around the decoder's forward, LoRA
        master weights, gradients and the LM head's log-probs stay fp32; every trainer pass uses it, so the PPO
        ratio compares like with like). `auto` becomes bf16 or fp32 in `validate`, by what measured faster on
        this kind of machine (`logprobs.choose_trainer_dtype`), with one log line that says which and why.
    rollout_correction: mode, level and cap of the importance weight between the sampler's recorded
        log-probs and the trainer's (`RolloutCorrectionSchema`).
    max_staleness: how many weight versions the sampler may run ahead of the trainer (agentic_rl.rollout.ahead):
        0 = the synchronous loop; k >= 1 (sampler servers only) rolls out the next k batches while the trainer
        updates, and a group sampled by older weights takes the sampler's own log-probs as its behaviour policy.
    """

    group_size: int = 4
    lr: float = 5e-6
    kl_coeff: float = 0.05
    kl_reference: str = "base"
    kl_estimator: str = "k3"
    advantage: str = "grpo"
    loss_agg: str = "token_mean"
    objective: str = "grpo_clip"
    clip_eps: float = 0.2
    objective_options: dict[str, Any] = field(default_factory=dict)
    epochs: int = 1
    tasks_per_epoch: int | None = None
    tasks_per_rollout: int = 1
    micro_batch_tokens: int = 2048
    gradient_checkpointing: bool = True
    trim_heap_each_micro_batch: bool = True
    recompute_prefix: bool = True
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0
    skip_zero_std_groups: bool = True
    dtype: str = "fp32"
    lora: LoraSchema = field(default_factory=LoraSchema)
    rollout_correction: RolloutCorrectionSchema = field(default_factory=RolloutCorrectionSchema)
    max_staleness: int = 0

    def __post_init__(self) -> None:
        # a config node converted with `to_dataclass` gives the nested group as a plain dict
        if isinstance(self.rollout_correction, dict):
            self.rollout_correction = RolloutCorrectionSchema(**self.rollout_correction)

    @property
    def kl_to_warmup(self) -> bool:
        """Whether the KL acts with the warm-up's policy as its reference (the weights must be taken and kept)."""
        return self.kl_reference == "warmup" and self.kl_coeff > 0

    def validate(self) -> GRPOConfig:
        checks = [
            (
                self.group_size >= 2,
                f"algo.group_size must be >= 2 (GRPO compares rollouts within a group), got {self.group_size}",
            ),
            (self.lr > 0, f"algo.lr must be > 0, got {self.lr}"),
            (self.max_staleness >= 0, f"algo.max_staleness must be >= 0 (0: synchronous), got {self.max_staleness}"),
            (self.kl_coeff >= 0, f"algo.kl_coeff must be >= 0, got {self.kl_coeff}"),
            (
                self.kl_reference in KL_REFERENCES,
                f"algo.kl_reference={self.kl_reference!r} is not a reference policy; set it to one of: "
                f"{', '.join(KL_REFERENCES)}",
            ),
            (self.epochs >= 1, f"algo.epochs must be >= 1, got {self.epochs}"),
            (
                self.tasks_per_epoch is None or self.tasks_per_epoch >= 1,
                f"algo.tasks_per_epoch must be >= 1 or null, got {self.tasks_per_epoch}",
            ),
            (self.tasks_per_rollout >= 1, f"algo.tasks_per_rollout must be >= 1, got {self.tasks_per_rollout}"),
            (self.micro_batch_tokens >= 1, f"algo.micro_batch_tokens must be >= 1, got {self.micro_batch_tokens}"),
            (0 < self.clip_eps < 1, f"algo.clip_eps must be in (0, 1), got {self.clip_eps}"),
            (self.max_grad_norm > 0, f"algo.max_grad_norm must be > 0, got {self.max_grad_norm}"),
            (self.lora.r >= 1, f"algo.lora.r must be >= 1, got {self.lora.r}"),
            (0 <= self.lora.dropout < 1, f"algo.lora.dropout must be in [0, 1), got {self.lora.dropout}"),
            (
                self.dtype in DTYPE_CHOICES,
                f"algo.dtype={self.dtype!r} is not a trainer dtype; set it to one of: {', '.join(DTYPE_CHOICES)}",
            ),
            (
                self.rollout_correction.cap >= 1,
                (
                    "algo.rollout_correction.cap must be >= 1 (a cap below 1 would shrink every token's weight even "
                    f"when the sampler equals the trainer; 2.0 is the usual value), got {self.rollout_correction.cap}"
                ),
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        for key, registry, name in (
            ("kl_estimator", KL_ESTIMATORS, self.kl_estimator),
            ("advantage", ADVANTAGES, self.advantage),
            ("loss_agg", LOSS_AGGREGATIONS, self.loss_agg),
            ("objective", POLICY_OBJECTIVES, self.objective),
            ("rollout_correction.mode", ROLLOUT_CORRECTIONS, self.rollout_correction.mode),
            ("rollout_correction.level", IS_LEVELS, self.rollout_correction.level),
        ):
            if name not in registry:
                raise ValueError(
                    f"algo.{key}={name!r} is not a known {registry.kind}; available: "
                    f"{', '.join(registry.names())}. Set it to one of them."
                )
        objective_settings(self)  # its options are ones the objective takes
        if self.dtype == "auto":
            self.dtype, why = machine_trainer_dtype()
            logger.info("algo.dtype=auto chose %s: %s", self.dtype, why)
        return self


def objective_settings(cfg: GRPOConfig) -> dict[str, Any]:
    """The keyword arguments `cfg.objective` is called with: `clip_eps` and its `objective_options`."""
    settings = {"clip_eps": cfg.clip_eps, **dict(cfg.objective_options)}
    params = inspect.signature(POLICY_OBJECTIVES.get(cfg.objective)).parameters.values()
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        taken = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
        unknown = sorted(set(settings) - taken)
        if unknown:
            raise ValueError(
                f"algo.objective_options names {unknown}, which the objective {cfg.objective!r} does not take; "
                f"its options: {sorted(taken - {'clip_eps'})}. Remove them, or choose an objective that takes them"
            )
    return settings


@dataclass
class StepStats:
    """One group's update. loss, kl, grad_norm and clip_frac are None where there is no such value (a skipped
    group; kl when kl_coeff is 0): they are then left out of the metrics, never logged as 0."""

    n_tokens: int
    skipped: bool
    loss: float | None = None
    kl: float | None = None
    grad_norm: float | None = None
    clip_frac: float | None = None
    update_s: float = 0.0  # wall time of this group's update, its share of the behaviour scoring included
    # `rollout_correction/*`: the sampler/trainer gap, when some trajectory of the group carries sampler log-probs
    rollout_gap: dict[str, float] = field(default_factory=dict)
    # `rollout/infra_failures/<cause>` (episodes dropped), `rollout/infra_retries/<cause>` (calls that recovered)
    infra: dict[str, float] = field(default_factory=dict)

    def metrics(self) -> dict[str, float]:
        """`train/*` and `rollout_correction/*` metrics of this update, only those that have a value."""
        values = {
            "train/loss": self.loss,
            "train/kl": self.kl,
            "train/grad_norm": self.grad_norm,
            "train/clip_frac": self.clip_frac,
            "train/model_tokens": self.n_tokens,
            **self.rollout_gap,
            **self.infra,
        }
        return {name: value for name, value in values.items() if value is not None}


def _updates(rewards: torch.Tensor, cfg: GRPOConfig) -> bool:
    """Whether `grpo_step` takes an optimizer step for a group with these rewards (two at least: a baseline)."""
    return len(rewards) >= 2 and (not cfg.skip_zero_std_groups or group_has_signal(rewards))


def scored_episodes(
    group: Sequence[Trajectory], rewards: torch.Tensor
) -> tuple[list[Trajectory], torch.Tensor, dict[str, float]]:
    """group of G, rewards (G,) -> the episodes the policy is scored on, their rewards (G',), and the counts of
    `rollout/infra_failures/<cause>` (episodes dropped) and `rollout/infra_retries/<cause>` (calls that recovered).

    An episode an infrastructure failure ended is dropped rather than scored: its reward says nothing about the
    policy, and a 0 in the group would pull the baseline down and give the other episodes credit they did not earn.
    """
    keep = [i for i, traj in enumerate(group) if traj.infra_failure is None]
    counts: dict[str, float] = {}
    for traj in group:
        keys = [f"rollout/infra_retries/{cause}" for cause in traj.infra_retries()]
        keys += [f"rollout/infra_failures/{traj.infra_failure}"] if traj.infra_failure is not None else []
        for key in keys:
            counts[key] = counts.get(key, 0.0) + 1.0
    if len(keep) == len(group):
        return list(group), rewards, counts
    return [group[i] for i in keep], rewards[keep], counts


def grpo_step(
    model: Any,
    optimizer: torch.optim.Optimizer,
    group: Sequence[Trajectory],
    rewards: torch.Tensor,
    cfg: GRPOConfig,
    pad_id: int,
    *,
    temperature: float,
    old_logprobs: Sequence[torch.Tensor] | None = None,
    sampler_logprobs: Sequence[torch.Tensor | None] | None = None,
    grad_sync: Callable[[list[torch.nn.Parameter]], None] | None = None,
    reference: ReferenceWeights | None = None,
) -> StepStats:
    """One optimizer step on one task's group. `model` is a peft model (adapter on = policy).

    temperature: the rollout's sampling temperature; every log-prob is of softmax(logits / temperature).
    old_logprobs: the trainer's log-probs per trajectory at the rollout weights (`behaviour_logprobs`) when the
        group was sampled before an earlier optimizer step; None when it is on-policy (ratio 1 in value).
    sampler_logprobs: the sampler's own log-probs per trajectory, aligned as `old_logprobs` (None entries: the
        sampler is the trainer); None reads them from the trajectories (`sampler_logprobs_of`). They set the
        rollout-correction weight of each token (`algo.rollout_correction`).
    grad_sync: (data parallel, `agentic_rl.distributed`) replaces the gradients by their mean over ranks
        after the backward pass, before clipping, so every rank clips and steps on the same gradient.
    reference: the KL's reference weights (`algo.kl_reference=warmup`); None: the base model, adapter off.
    """
    if not _updates(rewards, cfg):
        return StepStats(n_tokens=0, skipped=True)
    device = next(model.parameters()).device
    sampler = [sampler_logprobs_of(t) for t in group] if sampler_logprobs is None else list(sampler_logprobs)
    model.train()
    optimizer.zero_grad(set_to_none=True)
    with trainer_precision(cfg.dtype, device):
        sums = _group_backward(
            model,
            group,
            rewards,
            cfg,
            pad_id,
            device,
            temperature=temperature,
            old_logprobs=old_logprobs,
            sampler=sampler,
            reference=reference,
        )
    params = [p for p in model.parameters() if p.requires_grad]
    if grad_sync is not None:
        grad_sync(params)
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm))
    optimizer.step()
    group_tokens = sum(t.n_model_tokens for t in group)
    denom = max(group_tokens, 1)
    return StepStats(
        n_tokens=group_tokens,
        skipped=False,
        loss=sums.loss,
        grad_norm=grad_norm,
        kl=sums.kl / denom if cfg.kl_coeff > 0 else None,
        clip_frac=sums.clipped / denom,
        rollout_gap={} if sums.gap is None else gap_metrics(sums.gap, cfg.rollout_correction.mode),
    )


class _GroupSums(NamedTuple):
    """What `_group_backward` adds up over a group's micro-batches."""

    loss: float
    kl: float  # Σ mask·KL over the group's model tokens
    clipped: float  # model tokens where the PPO clip bound
    gap: GapSums | None  # the sampler/trainer gap, None when no trajectory carries sampler log-probs


def _group_backward(
    model: Any,
    group: Sequence[Trajectory],
    rewards: torch.Tensor,
    cfg: GRPOConfig,
    pad_id: int,
    device: torch.device,
    *,
    temperature: float,
    old_logprobs: Sequence[torch.Tensor] | None,
    sampler: Sequence[torch.Tensor | None],
    reference: ReferenceWeights | None,
) -> _GroupSums:
    """The group's loss, backpropagated micro-batch by micro-batch into the LoRA gradients (`grpo_step`)."""
    advantages = ADVANTAGES.get(cfg.advantage)(rewards)
    objective = functools.partial(POLICY_OBJECTIVES.get(cfg.objective), **objective_settings(cfg))
    kl_fn = KL_ESTIMATORS.get(cfg.kl_estimator)
    aggregate = LOSS_AGGREGATIONS.get(cfg.loss_agg)
    group_tokens = sum(t.n_model_tokens for t in group)
    correction = cfg.rollout_correction
    gap: GapSums | None = None
    total_loss, kl_sum, n_clipped = 0.0, 0.0, 0.0
    # The group's shared prompt runs once per pass instead of once per episode (`PrefixPass`).
    prefix_ids = group_prefix(model, group, device, cfg.lora.dropout)
    ref_prefix = policy_prefix = None
    if prefix_ids is not None:
        ref_prefix = reference_prefix(model, prefix_ids, reference) if cfg.kl_coeff > 0 else None
        policy_prefix = PrefixPass(model, prefix_ids, recompute=cfg.recompute_prefix)
    leaves = None if policy_prefix is None else policy_prefix.leaves
    start = 0 if prefix_ids is None else prefix_ids.shape[1]
    for idx in token_budget_batches([len(t.token_ids) - start for t in group], cfg.micro_batch_tokens):
        ids, attn, mask = padded_batch([group[i] for i in idx], pad_id, device)
        mask = mask[:, 1:]  # aligned with the predicted tokens
        # the no-grad reference pass first, so its transient memory is freed before activations pile up
        ref_logp = (
            reference_logprobs(model, ids, attn, mask, temperature, ref_prefix, reference) if cfg.kl_coeff > 0 else None
        )
        logp = sequence_logprobs(model, ids, attn, mask, temperature, leaves)
        old_logp = (
            logp.detach() if old_logprobs is None else padded_rows([old_logprobs[i] for i in idx], mask.shape, device)
        )
        terms = objective(logp, old_logp, advantages[idx].to(device), mask)
        per_token = terms.per_token
        if any(sampler[i] is not None for i in idx):  # else the sampler is the trainer: weight 1, left out
            samp, recorded = sampler_rows([sampler[i] for i in idx], old_logp, mask)
            weights = rollout_weights(
                old_logp, samp, mask, mode=correction.mode, level=correction.level, cap=correction.cap
            )
            per_token = per_token * weights.weights
            gap = add_gap_sums(gap, gap_sums(old_logp, samp, recorded, correction.level, weights.capped))
        if ref_logp is not None:
            kl = kl_fn(logp, ref_logp)
            per_token = per_token + cfg.kl_coeff * kl
            kl_sum += float((kl.detach() * mask).sum())
        loss = aggregate(per_token, mask, group_tokens=group_tokens, group_size=len(group))
        loss.backward()
        if cfg.trim_heap_each_micro_batch:
            trim_heap()
        total_loss += float(loss.detach())
        n_clipped += float((terms.clipped * mask).sum())
    if policy_prefix is not None:
        policy_prefix.backward()
    return _GroupSums(total_loss, kl_sum, n_clipped, gap)


def sampler_behaviour(group: Sequence[Trajectory]) -> list[torch.Tensor]:
    """The sampler's log-prob rows of a group sampled by older weights (its behaviour policy)."""
    rows = [sampler_logprobs_of(t) for t in group]
    if any(row is None for row in rows):
        raise ValueError(
            "a group sampled ahead of the trainer carries no sampler log-probs, so its behaviour policy is unknown: "
            "algo.max_staleness > 0 needs a sampler that records them (the sampler servers do)"
        )
    return [row for row in rows if row is not None]


def update_rollout_batch(
    model: Any,
    optimizer: torch.optim.Optimizer,
    groups: Sequence[Sequence[Trajectory]],
    rewards: Sequence[torch.Tensor],
    cfg: GRPOConfig,
    pad_id: int,
    *,
    temperature: float,
    step: Callable[..., StepStats] | None = None,
    staleness: Sequence[Sequence[int]] | None = None,
    reference: ReferenceWeights | None = None,
) -> list[StepStats]:
    """One `grpo_step` per task group of a rollout batch, in order (`step` stands in for `grpo_step`, with
    the same signature: data-parallel training passes `Distributed.data_parallel(grpo_step)`).

    The first group that takes a step is on-policy. Every later one was sampled by the policy as it was
    before that step, so its behaviour log-probs are scored now, before any step, and its update uses the
    clipped importance ratio. Groups that will be skipped are not scored. Episodes an infrastructure failure
    ended are dropped from their groups first (`scored_episodes`).

    staleness: per group, per trajectory, the weight versions between its sampling and now (`algo.max_staleness`).
    A group sampled by older weights than the trainer's has no trainer-side behaviour policy to score (those
    weights are gone): the sampler's own log-probs, of the version that sampled each turn, are its `old_logp`,
    so the PPO ratio covers the lag and the rollout-correction weight is 1.

    reference: the KL's reference weights, passed to every step (`grpo_step`).
    """
    stale = {i for i, lags in enumerate(staleness or []) if any(lags)}
    kept = [scored_episodes(group, r) for group, r in zip(groups, rewards)]
    groups, rewards = [k[0] for k in kept], [k[1] for k in kept]
    stepping = [i for i, r in enumerate(rewards) if _updates(r, cfg)]
    off_policy = [i for i in stepping[1:] if i not in stale]
    behaviour: dict[int, list[torch.Tensor]] = {i: sampler_behaviour(groups[i]) for i in stepping if i in stale}
    scoring_started = time.perf_counter()
    if off_policy:
        flat = [t for i in off_policy for t in groups[i]]
        scored = behaviour_logprobs(
            model, flat, pad_id, temperature=temperature, micro_batch_tokens=cfg.micro_batch_tokens, dtype=cfg.dtype
        )
        start = 0
        for i in off_policy:
            behaviour[i] = scored[start : start + len(groups[i])]
            start += len(groups[i])
    scoring_share = (time.perf_counter() - scoring_started) / max(len(off_policy), 1)
    all_stats = []
    for i, (group, r) in enumerate(zip(groups, rewards)):
        started = time.perf_counter()
        stats = (step or grpo_step)(
            model,
            optimizer,
            group,
            r,
            cfg,
            pad_id,
            temperature=temperature,
            old_logprobs=behaviour.get(i),
            reference=reference,
        )
        stats.update_s = time.perf_counter() - started + (scoring_share if i in off_policy else 0.0)
        stats.infra = kept[i][2]
        all_stats.append(stats)
    return all_stats
