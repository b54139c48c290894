"""The scoring passes of the GRPO update: per-token log-probs of a group's trajectories at the sampling temperature.

One job: turn trajectories into log-prob rows, without an optimizer. It holds the micro-batching (padded
batches within a token budget), the shared-prefix pass (the prompt a group's G episodes share runs once, its
keys/values reused by every micro-batch), and the passes the update needs:
  - `sequence_logprobs`: the policy (adapter on), with or without grad, only at the model's own tokens;
  - `reference_logprobs` / `reference_prefix`: the reference policy: the same weights with the LoRA adapter off
    (the base model), or with the adapter's weights as they were when `ReferenceWeights` took them (the policy
    the warm-up left, `algo.kl_reference=warmup`);
  - `behaviour_logprobs`: the trainer's own log-probs at the rollout weights (eval mode, no grad), scored before
    a rollout batch's first optimizer step for the groups updated after it (the `old_logp` of the PPO ratio);
  - `sampler_logprobs_of` / `sampler_rows`: the sampler's own recorded log-probs, aligned with those rows (the
    other side of `algo.rollout_correction`).
Row t of every (B, L-1) result is the log-prob of token t + 1; rows are 0 off the loss mask.

Cost: only the model's own tokens go through the LM head, whose log-probs never materialise full-vocabulary
tensors (`core.head_logprobs`); a micro-batch holds at most `micro_batch_tokens` padded tokens after the
shared prefix.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from agentic_rl.algo.core import head_logprobs, token_logprobs
from agentic_rl.runtime.cpu import cpu_flags
from agentic_rl.types import Trajectory


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


def padded_batch(trajs: Sequence[Trajectory], pad_id: int, device: torch.device) -> tuple[torch.Tensor, ...]:
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


def padded_rows(rows: Sequence[torch.Tensor], shape: torch.Size, device: torch.device) -> torch.Tensor:
    """Stack 1-D per-trajectory log-probs (length L_i - 1) into a zero-padded (B, L-1) tensor."""
    out = torch.zeros(shape, dtype=torch.float32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out.to(device)


def sampler_logprobs_of(traj: Trajectory) -> torch.Tensor | None:
    """The sampler's own log-probs of a trajectory's tokens as one (len(token_ids) - 1,) row aligned like
    `behaviour_logprobs` (entry t: the log-prob of token t + 1; 0 off the loss mask), or None when it carries
    none (then the sampler is taken to be the trainer).

    Read from `traj.sampler_logprobs` (a list, or a method returning one), recorded by the rollout backend: either
    one value per token id (values off the loss mask are ignored) or one per model token, in order.
    """
    values = getattr(traj, "sampler_logprobs", None)  # absent on trajectories of a backend that records none
    if callable(values):  # a method that gathers them from the rollout's turns; hand-built trajectories have none
        values = values() if traj.turns else None
    if values is None:
        return None
    mask = torch.tensor(traj.loss_mask[1:], dtype=torch.bool)
    values = torch.as_tensor(values, dtype=torch.float32)
    if len(values) == len(traj.token_ids):
        return values[1:].masked_fill(~mask, 0.0)
    if len(values) == int(mask.sum()):
        return torch.zeros(len(mask)).masked_scatter(mask, values)
    raise ValueError(
        f"trajectory {traj.task_id!r} (sample {traj.sample_index}) has {len(values)} sampler log-probs "
        f"for {len(traj.token_ids)} token ids and {int(mask.sum())} model tokens: the rollout backend "
        "must record one per token id or one per model token"
    )


# algo.dtype -> the autocast dtype of the trainer's forward passes (None: plain fp32, no autocast)
TRAINER_DTYPES: dict[str, torch.dtype | None] = {"fp32": None, "bf16": torch.bfloat16}

# The GRPO update in bf16 autocast against fp32 (`make bench-dtype`), per CPU kind: bf16 is chosen by `auto` only
# where it measured faster. A CPU with amx_bf16 also has avx512_bf16, so AMX is asked first.
MEASURED_UPDATE = {
    "amx_bf16": "bf16 measured 0.60x the fp32 update's wall (experiments/update-dtype/amx/)",
    "avx512_bf16": "bf16 measured 0.90x the fp32 update's wall on an AMD EPYC (experiments/update-dtype/avx512-bf16/)",
    "avx2": "bf16 measured 4.98x the fp32 update's wall: emulated (experiments/update-dtype/)",
}


def choose_trainer_dtype(flags: set[str], cuda_bf16: bool | None) -> tuple[str, str]:
    """(dtype, why) for `algo.dtype=auto`: bf16 on a CUDA device that supports it and on a CPU kind where bf16
    measured faster than fp32, else fp32. `cuda_bf16`: None without a CUDA device, else whether it has bf16."""
    if cuda_bf16 is not None:
        return ("bf16", "a CUDA device with bf16") if cuda_bf16 else ("fp32", "a CUDA device without bf16")
    if "amx_bf16" in flags:
        return "bf16", f"the CPU has amx_bf16: {MEASURED_UPDATE['amx_bf16']}"
    if "avx512_bf16" in flags:
        return "bf16", f"the CPU has avx512_bf16 and no AMX: {MEASURED_UPDATE['avx512_bf16']}"
    return "fp32", f"the CPU computes no bf16 natively: {MEASURED_UPDATE['avx2']}"


def machine_trainer_dtype() -> tuple[str, str]:
    """`choose_trainer_dtype` on this machine: its CUDA device if any, else its CPU's flags."""
    cuda_bf16 = torch.cuda.is_bf16_supported() if torch.cuda.is_available() else None
    return choose_trainer_dtype(cpu_flags(), cuda_bf16)


def trainer_precision(dtype: str, device: torch.device) -> contextlib.AbstractContextManager:
    """The context every trainer pass runs in: autocast to `TRAINER_DTYPES[dtype]`, or nothing for fp32 (the
    weights stay fp32 masters either way; `core.head_logprobs` takes the LM head back to fp32)."""
    autocast_dtype = TRAINER_DTYPES[dtype]
    if autocast_dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=autocast_dtype)


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


@functools.cache
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
            keys, values = (
                torch.cat([past.expand(rows, -1, -1, -1), new], dim=-2)
                for past, new in zip(self.prefix, (key_states, value_states))
            )
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


def agent_hidden_states(
    model: Any, ids: torch.Tensor, attn: torch.Tensor, keep: torch.Tensor, prefix: SharedPrefix | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The decoder's last hidden states at the predictions `keep` marks, and the tokens they predict.

    ids, attn: (B, L); keep: (B, L-1) bool, True where token t+1 is to be predicted -> hidden (N, H), targets (N,),
    in row-major order of `keep`. `prefix`: the keys/values of the first `prefix.length` tokens, which every row
    shares (`shared_prefix_len`); only the rest of each row runs, and `keep` must be False inside it. Only the
    kept rows go on to the LM head: on long, mostly-prompt-and-observation sequences the vocabulary projection is
    most of the cost and memory. Needs a model with a decoder stack and an LM head (`_body_and_head`).
    """
    body, _ = _body_and_head(model)
    start = 0 if prefix is None else prefix.length
    kwargs: dict[str, Any] = {}
    if prefix is not None:
        from agentic_rl.models.kv_cache import cache_from_layers, cache_kwarg

        layer_class = _frozen_layer_class()
        kwargs[cache_kwarg(model)] = cache_from_layers([layer_class(k, v) for k, v in prefix.layers])
        kwargs["position_ids"] = torch.arange(start, ids.shape[1], device=ids.device)[None].expand(ids.shape[0], -1)
    with _cache_kept_under_checkpointing(body) if prefix is not None else contextlib.nullcontext():
        hidden = body(input_ids=ids[:, start:], attention_mask=attn, use_cache=False, **kwargs).last_hidden_state
    suffix_keep = keep[:, start:]  # hidden[:, j] (position start + j) predicts token start + j + 1
    return hidden[:, :-1][suffix_keep], ids[:, start + 1 :][suffix_keep]


def sequence_logprobs(
    model: Any,
    ids: torch.Tensor,
    attn: torch.Tensor,
    mask: torch.Tensor,
    temperature: float,
    prefix: SharedPrefix | None = None,
) -> torch.Tensor:
    """ids, attn: (B, L); mask: (B, L-1) -> (B, L-1) log-prob at `temperature` of token t+1 given the prefix.

    Only positions where `mask` is 1 are computed (others are 0), through `agent_hidden_states` and the LM head at
    those rows only (`head_logprobs`). `prefix`: the keys/values of the first `prefix.length` tokens, which every
    row shares (`shared_prefix_len`); only the rest of each row is run.
    """
    body, head = _body_and_head(model)
    if body is None or head is None:  # an architecture without the usual split: project every position
        if prefix is not None:
            raise ValueError("a shared prefix needs a model with a decoder stack and an LM head (`model`, `lm_head`)")
        logits = model(input_ids=ids, attention_mask=attn, use_cache=False).logits[:, :-1]
        return token_logprobs(logits, ids[:, 1:], temperature) * mask
    keep = mask.bool()
    hidden, targets = agent_hidden_states(model, ids, attn, keep, prefix)
    picked = head_logprobs(head, hidden, targets, temperature)
    out = torch.zeros(keep.shape, dtype=picked.dtype, device=picked.device)
    return out.index_put(keep.nonzero(as_tuple=True), picked)


class PrefixPass:
    """The policy's pass over a prefix that a batch's sequences share, for a training step: run once, its keys and
    values handed to every micro-batch as leaves (`leaves`) that collect the micro-batches' gradients, which
    `backward` sends through the prefix pass once at the end (the chain rule summed over the sequences, as
    separate passes would give).

    recompute: the first pass keeps no graph (keys/values only) and `backward` runs it again with one, so the
    prefix's activations are not held across the micro-batches; without it the first pass keeps its graph.
    """

    def __init__(self, model: Any, ids: torch.Tensor, *, recompute: bool) -> None:
        self.model, self.ids, self.recompute = model, ids, recompute
        with torch.set_grad_enabled(not recompute):
            self.states = prefix_states(model, ids)
        self.leaves = SharedPrefix(
            self.states.length,
            # without a graph yet, which keys/values depend on the adapter is not known: all collect gradients
            [tuple(t.detach().requires_grad_(t.requires_grad or recompute) for t in kv) for kv in self.states.layers],
        )

    def backward(self) -> None:
        """Back-propagate the gradients the leaves collected through the prefix pass (call once, after every
        micro-batch's backward)."""
        states = prefix_states(self.model, self.ids) if self.recompute else self.states
        pairs = [
            (out, leaf.grad)
            for kv_out, kv_leaf in zip(states.layers, self.leaves.layers)
            for out, leaf in zip(kv_out, kv_leaf)
            if leaf.grad is not None and out.requires_grad
        ]
        if pairs:
            torch.autograd.backward([out for out, _ in pairs], grad_tensors=[grad for _, grad in pairs])


def _adapter_disabled(model: Any) -> contextlib.AbstractContextManager:
    disable = getattr(model, "disable_adapter", None)
    if disable is None:
        raise TypeError("grpo_step needs a peft model: the reference is the base model with the adapter disabled")
    return disable()


class ReferenceWeights:
    """A copy of the adapter's trainable weights, taken once, that the KL's reference passes run with.

    After a warm-up the adapter is far from zero, so the base model (adapter off) is a policy the run has
    already left: a KL to it pulls GRPO back towards what the warm-up trained away (`algo.kl_reference`). Taken
    when the warm-up ends, these weights make the reference that policy instead. A pass swaps each parameter's
    storage with its copy and back (no copy of the values, the optimizer's parameters stay the same objects),
    in eval mode, so LoRA dropout does not draw in a pass that stands for a fixed policy."""

    def __init__(self, weights: dict[str, torch.Tensor]) -> None:
        self.weights = weights

    @classmethod
    def of(cls, model: Any) -> ReferenceWeights:
        """The adapter's trainable weights of `model` as they are now (copies)."""
        return cls({name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad})

    def state(self) -> dict[str, torch.Tensor]:
        """What a checkpoint stores to rebuild them (`ReferenceWeights(state)`)."""
        return self.weights

    @contextlib.contextmanager
    def active(self, model: Any) -> Iterator[None]:
        params = dict(model.named_parameters())
        missing = sorted(set(self.weights) - set(params))
        if missing:
            raise ValueError(f"the KL reference's weights do not fit this model (no parameter {missing[0]!r})")
        was_training = model.training
        model.eval()
        swapped = [(params[name], copy) for name, copy in self.weights.items()]
        for p, copy in swapped:
            p.data, copy.data = copy.data, p.data
        try:
            yield
        finally:
            for p, copy in swapped:
                p.data, copy.data = copy.data, p.data
            model.train(was_training)


def _reference(model: Any, reference: ReferenceWeights | None) -> contextlib.AbstractContextManager:
    return _adapter_disabled(model) if reference is None else reference.active(model)


@torch.no_grad()
def reference_logprobs(
    model: Any,
    ids: torch.Tensor,
    attn: torch.Tensor,
    mask: torch.Tensor,
    temperature: float,
    prefix: SharedPrefix | None = None,
    reference: ReferenceWeights | None = None,
) -> torch.Tensor:
    """(B, L-1) log-probs of the reference policy: the same weights with the LoRA adapter switched off, or
    with `reference`'s weights in it. `prefix` must then be the reference's own (`reference_prefix`)."""
    with _reference(model, reference):
        return sequence_logprobs(model, ids, attn, mask, temperature, prefix)


@torch.no_grad()
def reference_prefix(model: Any, ids: torch.Tensor, reference: ReferenceWeights | None = None) -> SharedPrefix:
    """`prefix_states` of the reference policy (adapter off, or `reference`'s weights)."""
    with _reference(model, reference):
        return prefix_states(model, ids)


def group_prefix(
    model: Any, trajs: Sequence[Trajectory], device: torch.device, lora_dropout: float
) -> torch.Tensor | None:
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
def behaviour_logprobs(
    model: Any,
    trajs: Sequence[Trajectory],
    pad_id: int,
    *,
    temperature: float,
    micro_batch_tokens: int,
    dtype: str = "fp32",
) -> list[torch.Tensor]:
    """Log-probs of each trajectory's tokens under the current policy as the trainer scores it (eval mode, at the
    sampling temperature, in the trainer's `dtype`): one (len(token_ids) - 1,) tensor per trajectory, 0 off the
    loss mask."""
    device = next(model.parameters()).device
    out: list[torch.Tensor] = [torch.empty(0)] * len(trajs)
    with _eval_mode(model), trainer_precision(dtype, device):
        prefix_ids = group_prefix(model, trajs, device, lora_dropout=0.0)
        prefix = prefix_states(model, prefix_ids) if prefix_ids is not None else None
        start = 0 if prefix is None else prefix.length
        for idx in token_budget_batches([len(t.token_ids) - start for t in trajs], micro_batch_tokens):
            ids, attn, mask = padded_batch([trajs[i] for i in idx], pad_id, device)
            logp = sequence_logprobs(model, ids, attn, mask[:, 1:], temperature, prefix).cpu()
            for row, i in enumerate(idx):
                out[i] = logp[row, : len(trajs[i].token_ids) - 1]
    return out


def sampler_rows(
    rows: Sequence[torch.Tensor | None], old_logp: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The sampler's log-probs of a micro-batch (B, L-1), a row without any taking the trainer's own (`old_logp`:
    log ratio 0, weight 1), and the loss mask of the rows that have them (where the gap is measured)."""
    samp = old_logp.detach().clone()
    recorded = torch.zeros_like(mask)
    for row, values in enumerate(rows):
        if values is not None:
            samp[row].zero_()[: len(values)] = values.to(samp.device)
            recorded[row] = mask[row]
    return samp, recorded
