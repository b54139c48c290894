"""The GRPO update: one optimizer step per task group, gradients accumulated over its G trajectories.

Reads top to bottom: rewards -> group advantages -> per-token log-probs at the sampling temperature
(policy; behaviour, scored before the batch's first step; reference with the adapter disabled) ->
per-token loss (policy objective + KL) -> masked aggregation -> backward -> clip -> step.
The maths lives in `core.py`; this module only moves tensors.

Cost: the prompt a group's G episodes share (system text, worked examples, task; most of a multi-tool
episode) runs once per pass instead of G times (`shared_prefix_len`, `prefix_states`); only the model's own
tokens go through the LM head, whose log-probs never materialise full-vocabulary tensors (`head_logprobs`).
Memory: a micro-batch holds at most `micro_batch_tokens` padded tokens after the shared prefix, and gradient
checkpointing (`algo.gradient_checkpointing`, set up in `models.lora.add_lora`) keeps one layer's activations
instead of all of them.
"""
from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import torch

from agentic_rl.algo.core import (ADVANTAGES, KL_ESTIMATORS, LOSS_AGGREGATIONS, POLICY_OBJECTIVES, group_has_signal,
                                  head_logprobs, token_logprobs)
from agentic_rl.types import Trajectory


@dataclass
class LoraSchema:
    r: int = 16
    alpha: int = 32
    # 0 by default: LoRA dropout is active in the loss pass but off while sampling, so any dropout makes
    # the loss pass's log-probs differ from the sampler's (the behaviour scoring runs in eval mode).
    dropout: float = 0.0
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "v_proj"])


@dataclass
class GRPOConfig:
    """Hyperparameters of the GRPO algorithm (conf/algo/grpo.yaml, validated at start-up).

    group_size: G rollouts per task; advantages are normalised within the group (>= 2).
    lr: AdamW learning rate of the LoRA parameters.
    kl_coeff: weight β of the per-token KL to the reference (base model, adapter off); 0 disables it.
    kl_estimator: k1 | k2 | k3.  advantage: grpo | mean_only.  loss_agg: token_mean | seq_mean.
    objective: the policy objective, grpo_clip | gspo (core.POLICY_OBJECTIVES).
    clip_eps: ε of the PPO clip on the importance ratio to the behaviour policy (groups updated after an
        earlier optimizer step of the same rollout batch are off-policy).
    epochs, tasks_per_epoch: passes over the train split and tasks drawn per pass (null = all).
    tasks_per_rollout: tasks whose groups are generated together as one batch (throughput), each
        still getting its own optimizer step, importance-corrected as above.
    micro_batch_tokens: padded tokens (sequences x longest, not counting the prompt the group shares, which
        runs once) per forward/backward inside a group; bounds the update's activation memory. A sequence
        longer than this gets a micro-batch of its own.
    gradient_checkpointing: recompute each layer's activations in the backward pass instead of storing
        them (more update time for a fraction of its memory).
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
    objective: str = "grpo_clip"
    clip_eps: float = 0.2
    epochs: int = 1
    tasks_per_epoch: int | None = None
    tasks_per_rollout: int = 1
    micro_batch_tokens: int = 2048
    gradient_checkpointing: bool = True
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
            (self.micro_batch_tokens >= 1, f"algo.micro_batch_tokens must be >= 1, got {self.micro_batch_tokens}"),
            (0 < self.clip_eps < 1, f"algo.clip_eps must be in (0, 1), got {self.clip_eps}"),
            (self.max_grad_norm > 0, f"algo.max_grad_norm must be > 0, got {self.max_grad_norm}"),
            (self.lora.r >= 1, f"algo.lora.r must be >= 1, got {self.lora.r}"),
            (0 <= self.lora.dropout < 1, f"algo.lora.dropout must be in [0, 1), got {self.lora.dropout}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        for registry, name in ((KL_ESTIMATORS, self.kl_estimator), (ADVANTAGES, self.advantage),
                               (LOSS_AGGREGATIONS, self.loss_agg), (POLICY_OBJECTIVES, self.objective)):
            registry.get(name)  # raises with the list of available names
        return self


def check_training_temperature(temperature: float) -> float:
    """The rollout temperature the loss uses; training needs sampling (> 0), greedy decoding has no spread."""
    if temperature <= 0:
        raise ValueError(f"rollout.temperature={temperature}: training samples at this temperature and the loss "
                         "divides the logits by it, so it must be > 0 (e.g. rollout.temperature=0.7)")
    return temperature


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

    def metrics(self) -> dict[str, float]:
        """`train/*` metrics of this update, only those that have a value."""
        values = {"train/loss": self.loss, "train/kl": self.kl, "train/grad_norm": self.grad_norm,
                  "train/clip_frac": self.clip_frac, "train/model_tokens": self.n_tokens}
        return {name: value for name, value in values.items() if value is not None}


def token_budget_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indices of sequences grouped into micro-batches of at most `budget` padded tokens (count x longest).

    Shortest first, so sequences of similar length share a micro-batch and little is padding. A sequence
    longer than the budget gets a micro-batch of its own.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda j: lengths[j]):
        if current and (len(current) + 1) * lengths[i] > budget:  # lengths[i] is the longest so far
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


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


def _padded_rows(rows: Sequence[torch.Tensor], shape: torch.Size, device: torch.device) -> torch.Tensor:
    """Stack 1-D per-trajectory log-probs (length L_i - 1) into a zero-padded (B, L-1) tensor."""
    out = torch.zeros(shape, dtype=torch.float32)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out.to(device)


@dataclass
class SharedPrefix:
    """Keys/values of the first `length` tokens of every sequence of a batch, run once (`prefix_states`).

    layers: one (keys, values) pair of batch size 1 per decoder layer. In the policy pass they are leaves that
    collect the micro-batches' gradients (`grpo_step` back-propagates those through the prefix pass once).
    """

    length: int
    layers: list[tuple[torch.Tensor, torch.Tensor]]


def shared_prefix_len(trajs: Sequence[Trajectory]) -> int:
    """How many leading tokens every trajectory can share in one pass: tokens common to all of them whose
    hidden states predict no model token (so they need no LM head), each trajectory keeping >= 1 token after.

    In a GRPO group the G episodes of one task share the whole prompt (system text, worked examples, task),
    most of each episode on the multi-tool workload.
    """
    if len(trajs) < 2:
        return 0
    first = trajs[0].token_ids
    n = min(len(t.token_ids) for t in trajs) - 1
    for t in trajs:
        # hidden state j predicts token j + 1: the prefix stops before the state that predicts a model token
        n = min(n, next((j for j in range(1, n + 1) if t.loss_mask[j]), n + 1) - 1)
        n = next((j for j in range(n) if t.token_ids[j] != first[j]), n)
    return max(n, 0)


def _body_and_head(model: Any) -> tuple[Any, Any]:
    """The decoder stack and the LM head of a causal LM (peft-wrapped or not); None where it has no such split."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return getattr(base, "model", None), getattr(base, "lm_head", None)


@functools.lru_cache(maxsize=None)
def _frozen_layer_class() -> type:
    """The `FrozenPrefixLayer` class, defined on first use so that importing this module does not import
    transformers."""
    from transformers.cache_utils import DynamicLayer

    class FrozenPrefixLayer(DynamicLayer):
        """A cache layer that never changes. Without keys it remembers the keys/values it is given (`captured`)
        and returns them (the prefix pass); with keys it returns them, repeated over the batch, followed by the
        new ones (a suffix pass). A growing cache would give a checkpointed layer, whose forward is replayed in
        the backward pass, different keys on the replay."""

        is_croppable = False

        def __init__(self, keys: torch.Tensor | None = None, values: torch.Tensor | None = None) -> None:
            super().__init__()
            self.prefix = None if keys is None else (keys, values)
            self.captured: tuple[torch.Tensor, torch.Tensor] | None = None
            if keys is not None:
                self.keys, self.values, self.device, self.is_initialized = keys, values, keys.device, True

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any):
            if self.prefix is None:
                self.captured = (key_states, value_states)
                return key_states, value_states
            rows = key_states.shape[0]
            keys, values = (torch.cat([past.expand(rows, -1, -1, -1), new], dim=-2)
                            for past, new in zip(self.prefix, (key_states, value_states)))
            return keys, values

        def get_seq_length(self) -> int:
            return 0 if self.prefix is None else self.prefix[0].shape[-2]

    return FrozenPrefixLayer


@contextlib.contextmanager
def _cache_kept_under_checkpointing(body: Any) -> Iterator[None]:
    """Let checkpointed decoder layers read a `FrozenPrefixLayer` cache (transformers drops any cache under
    gradient checkpointing, because a cache that grows would be written twice; this one is never written)."""
    layers = [m for m in body.modules() if hasattr(type(m), "_can_checkpoint_with_cache")]
    for layer in layers:
        layer._can_checkpoint_with_cache = True
    try:
        yield
    finally:
        for layer in layers:
            del layer._can_checkpoint_with_cache  # back to the class default


def prefix_states(model: Any, ids: torch.Tensor) -> SharedPrefix:
    """Run the shared prefix `ids` (1, S) once through the decoder stack (grad as the caller's mode has it)."""
    from agentic_rl.models.kv_cache import cache_from_layers, cache_kwarg

    body, _ = _body_and_head(model)
    layers = [_frozen_layer_class()() for _ in range(body.config.num_hidden_layers)]
    with _cache_kept_under_checkpointing(body):
        body(input_ids=ids, use_cache=False, **{cache_kwarg(model): cache_from_layers(layers)})
    return SharedPrefix(ids.shape[1], [layer.captured for layer in layers])


def _sequence_logprobs(model: Any, ids: torch.Tensor, attn: torch.Tensor, mask: torch.Tensor,
                       temperature: float, prefix: SharedPrefix | None = None) -> torch.Tensor:
    """ids, attn: (B, L); mask: (B, L-1) -> (B, L-1) log-prob at `temperature` of token t+1 given the prefix.

    Only positions where `mask` is 1 are computed (others are 0): the vocabulary projection and softmax are
    most of the cost and memory on long, mostly-prompt-and-observation sequences, so the hidden states are
    gathered at the model's own tokens first and only those rows go through the LM head (`head_logprobs`).
    `prefix`: the keys/values of the first `prefix.length` tokens, which every row shares (`shared_prefix_len`);
    only the rest of each row is run.
    """
    body, head = _body_and_head(model)
    if body is None or head is None:  # an architecture without the usual split: project every position
        if prefix is not None:
            raise ValueError("a shared prefix needs a model with a decoder stack and an LM head (`model`, `lm_head`)")
        logits = model(input_ids=ids, attention_mask=attn, use_cache=False).logits[:, :-1]
        return token_logprobs(logits, ids[:, 1:], temperature) * mask
    start = 0 if prefix is None else prefix.length
    kwargs: dict[str, Any] = {}
    if prefix is not None:
        from agentic_rl.models.kv_cache import cache_from_layers, cache_kwarg

        layer_class = _frozen_layer_class()
        kwargs[cache_kwarg(model)] = cache_from_layers([layer_class(k, v) for k, v in prefix.layers])
        kwargs["position_ids"] = torch.arange(start, ids.shape[1], device=ids.device)[None].expand(ids.shape[0], -1)
    with _cache_kept_under_checkpointing(body) if prefix is not None else contextlib.nullcontext():
        hidden = body(input_ids=ids[:, start:], attention_mask=attn, use_cache=False, **kwargs).last_hidden_state
    keep = mask[:, start:].bool()  # hidden[:, j] (position start + j) predicts token start + j + 1
    picked = head_logprobs(head, hidden[:, :-1][keep], ids[:, start + 1:][keep], temperature)
    out = torch.zeros((ids.shape[0], ids.shape[1] - 1 - start), dtype=picked.dtype, device=picked.device)
    out = out.index_put(keep.nonzero(as_tuple=True), picked)
    return torch.cat([out.new_zeros((ids.shape[0], start)), out], dim=1) if start else out


def _adapter_disabled(model: Any) -> contextlib.AbstractContextManager:
    disable = getattr(model, "disable_adapter", None)
    if disable is None:
        raise TypeError("grpo_step needs a peft model: the reference is the base model with the adapter disabled")
    return disable()


@torch.no_grad()
def reference_logprobs(model: Any, ids: torch.Tensor, attn: torch.Tensor, mask: torch.Tensor,
                       temperature: float, prefix: SharedPrefix | None = None) -> torch.Tensor:
    """(B, L-1) log-probs of the reference policy: the same weights with the LoRA adapter switched off.
    `prefix` must then be the reference's own (`reference_prefix`)."""
    with _adapter_disabled(model):
        return _sequence_logprobs(model, ids, attn, mask, temperature, prefix)


@torch.no_grad()
def reference_prefix(model: Any, ids: torch.Tensor) -> SharedPrefix:
    """`prefix_states` of the reference policy (adapter off)."""
    with _adapter_disabled(model):
        return prefix_states(model, ids)


def _group_prefix(model: Any, trajs: Sequence[Trajectory], device: torch.device, lora_dropout: float) -> torch.Tensor | None:
    """The ids (1, S) of the prefix the trajectories share (`shared_prefix_len`), or None where there is none
    or it cannot be shared: an architecture without a decoder/LM-head split, or LoRA dropout in a training
    pass (one dropout draw for the shared prefix would correlate the G episodes that separate passes keep apart)."""
    body, head = _body_and_head(model)
    if body is None or head is None or (lora_dropout > 0 and model.training):
        return None
    length = shared_prefix_len(trajs)
    return torch.tensor([trajs[0].token_ids[:length]], device=device) if length else None


@contextlib.contextmanager
def _eval_mode(model: Any) -> Iterator[None]:
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


@torch.no_grad()
def behaviour_logprobs(model: Any, trajs: Sequence[Trajectory], pad_id: int, *, temperature: float,
                       micro_batch_tokens: int) -> list[torch.Tensor]:
    """Log-probs of each trajectory's tokens under the current policy as the sampler uses it (eval mode,
    at the sampling temperature): one (len(token_ids) - 1,) tensor per trajectory, 0 off the loss mask."""
    device = next(model.parameters()).device
    out: list[torch.Tensor] = [torch.empty(0)] * len(trajs)
    with _eval_mode(model):
        prefix_ids = _group_prefix(model, trajs, device, lora_dropout=0.0)
        prefix = prefix_states(model, prefix_ids) if prefix_ids is not None else None
        start = 0 if prefix is None else prefix.length
        for idx in token_budget_batches([len(t.token_ids) - start for t in trajs], micro_batch_tokens):
            ids, attn, mask = _padded([trajs[i] for i in idx], pad_id, device)
            logp = _sequence_logprobs(model, ids, attn, mask[:, 1:], temperature, prefix).cpu()
            for row, i in enumerate(idx):
                out[i] = logp[row, :len(trajs[i].token_ids) - 1]
    return out


def _updates(rewards: torch.Tensor, cfg: GRPOConfig) -> bool:
    """Whether `grpo_step` takes an optimizer step for a group with these rewards."""
    return not cfg.skip_zero_std_groups or group_has_signal(rewards)


def grpo_step(model: Any, optimizer: torch.optim.Optimizer, group: Sequence[Trajectory], rewards: torch.Tensor,
              cfg: GRPOConfig, pad_id: int, *, temperature: float,
              old_logprobs: Sequence[torch.Tensor] | None = None,
              grad_sync: Callable[[list[torch.nn.Parameter]], None] | None = None) -> StepStats:
    """One optimizer step on one task's group. `model` is a peft model (adapter on = policy).

    temperature: the rollout's sampling temperature; every log-prob is of softmax(logits / temperature).
    old_logprobs: the behaviour policy's log-probs per trajectory (`behaviour_logprobs`) when the group was
        sampled before an earlier optimizer step; None when it is on-policy (ratio 1 in value).
    grad_sync: (data parallel, `agentic_rl.distributed`) replaces the gradients by their mean over ranks
        after the backward pass, before clipping, so every rank clips and steps on the same gradient.
    """
    if not _updates(rewards, cfg):
        return StepStats(n_tokens=0, skipped=True)
    advantages = ADVANTAGES.get(cfg.advantage)(rewards)
    objective = POLICY_OBJECTIVES.get(cfg.objective)
    kl_fn = KL_ESTIMATORS.get(cfg.kl_estimator)
    aggregate = LOSS_AGGREGATIONS.get(cfg.loss_agg)
    device = next(model.parameters()).device
    group_tokens = sum(t.n_model_tokens for t in group)
    model.train()
    optimizer.zero_grad(set_to_none=True)
    total_loss, kl_sum, n_clipped = 0.0, 0.0, 0.0
    # The group's shared prompt runs once per pass instead of once per episode. The policy's prefix pass stays
    # alive across the micro-batches: their gradients w.r.t. its keys/values collect in `leaves` and go back
    # through it once at the end (the chain rule summed over the episodes, as separate passes would give).
    prefix_ids = _group_prefix(model, group, device, cfg.lora.dropout)
    ref_prefix = policy_prefix = leaves = None
    if prefix_ids is not None:
        ref_prefix = reference_prefix(model, prefix_ids) if cfg.kl_coeff > 0 else None
        policy_prefix = prefix_states(model, prefix_ids)
        leaves = SharedPrefix(policy_prefix.length, [tuple(t.detach().requires_grad_(t.requires_grad) for t in kv)
                                                     for kv in policy_prefix.layers])
    start = 0 if prefix_ids is None else prefix_ids.shape[1]
    for idx in token_budget_batches([len(t.token_ids) - start for t in group], cfg.micro_batch_tokens):
        ids, attn, mask = _padded([group[i] for i in idx], pad_id, device)
        mask = mask[:, 1:]  # aligned with the predicted tokens
        # the no-grad reference pass first, so its transient memory is freed before activations pile up
        ref_logp = reference_logprobs(model, ids, attn, mask, temperature, ref_prefix) if cfg.kl_coeff > 0 else None
        logp = _sequence_logprobs(model, ids, attn, mask, temperature, leaves)
        old_logp = (logp.detach() if old_logprobs is None
                    else _padded_rows([old_logprobs[i] for i in idx], mask.shape, device))
        terms = objective(logp, old_logp, advantages[idx].to(device), mask, clip_eps=cfg.clip_eps)
        per_token = terms.per_token
        if ref_logp is not None:
            kl = kl_fn(logp, ref_logp)
            per_token = per_token + cfg.kl_coeff * kl
            kl_sum += float((kl.detach() * mask).sum())
        loss = aggregate(per_token, mask, group_tokens=group_tokens, group_size=len(group))
        loss.backward()
        total_loss += float(loss.detach())
        n_clipped += float((terms.clipped * mask).sum())
    if policy_prefix is not None and leaves is not None:
        pairs = [(out, leaf.grad) for kv_out, kv_leaf in zip(policy_prefix.layers, leaves.layers)
                 for out, leaf in zip(kv_out, kv_leaf) if leaf.grad is not None]
        if pairs:
            torch.autograd.backward([out for out, _ in pairs], grad_tensors=[grad for _, grad in pairs])
    params = [p for p in model.parameters() if p.requires_grad]
    if grad_sync is not None:
        grad_sync(params)
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm))
    optimizer.step()
    denom = max(group_tokens, 1)
    return StepStats(n_tokens=group_tokens, skipped=False, loss=total_loss, grad_norm=grad_norm,
                     kl=kl_sum / denom if cfg.kl_coeff > 0 else None, clip_frac=n_clipped / denom)


def update_rollout_batch(model: Any, optimizer: torch.optim.Optimizer, groups: Sequence[Sequence[Trajectory]],
                         rewards: Sequence[torch.Tensor], cfg: GRPOConfig, pad_id: int, *,
                         temperature: float, step: Callable[..., StepStats] | None = None) -> list[StepStats]:
    """One `grpo_step` per task group of a rollout batch, in order (`step` stands in for `grpo_step`, with
    the same signature: data-parallel training passes `Distributed.grpo_step`).

    The first group that takes a step is on-policy. Every later one was sampled by the policy as it was
    before that step, so its behaviour log-probs are scored now, before any step, and its update uses the
    clipped importance ratio. Groups that will be skipped are not scored.
    """
    stepping = [i for i, r in enumerate(rewards) if _updates(r, cfg)]
    off_policy = stepping[1:]
    behaviour: dict[int, list[torch.Tensor]] = {}
    scoring_started = time.perf_counter()
    if off_policy:
        flat = [t for i in off_policy for t in groups[i]]
        scored = behaviour_logprobs(model, flat, pad_id, temperature=temperature,
                                    micro_batch_tokens=cfg.micro_batch_tokens)
        start = 0
        for i in off_policy:
            behaviour[i] = scored[start:start + len(groups[i])]
            start += len(groups[i])
    scoring_share = (time.perf_counter() - scoring_started) / max(len(off_policy), 1)
    all_stats = []
    for i, (group, r) in enumerate(zip(groups, rewards)):
        started = time.perf_counter()
        stats = (step or grpo_step)(model, optimizer, group, r, cfg, pad_id, temperature=temperature,
                                    old_logprobs=behaviour.get(i))
        stats.update_s = time.perf_counter() - started + (scoring_share if i in behaviour else 0.0)
        all_stats.append(stats)
    return all_stats
