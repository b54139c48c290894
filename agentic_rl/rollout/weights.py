"""What a sampler needs of the trainer's weights: whether they changed since it last synced, and which tensors a
sync sends (the policy's merged weights, only the modules LoRA touches)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch

from agentic_rl.models.export import lora_touched, merged_weights, weight_names


def module_siblings(names: set[str], all_names: Sequence[str]) -> set[str]:
    """`names` plus every weight of the same parent module (q_proj -> the whole self_attn): an engine fuses
    sibling projections (q/k/v into one qkv_proj, gate/up into gate_up_proj) and reloads a fused layer whole."""
    parents = {name.rsplit(".", 2)[0] + "." for name in names}
    return {n for n in all_names if any(n.startswith(p) for p in parents)}


@torch.no_grad()
def weights_fingerprint(model: Any) -> tuple[Any, ...]:
    """What changes when an optimizer step (or a checkpoint load) changes the weights: every parameter's identity
    and in-place version counter, and the trainable ones' sums (a fused optimizer or a `.data` write leaves the
    version counter as it was)."""
    versions = tuple((id(p), p._version) for p in model.parameters())
    trainable = [p.detach() for p in model.parameters() if p.requires_grad]
    sums = (
        tuple(
            torch.stack([torch.stack([t.double().sum(), t.double().abs().sum()]) for t in trainable]).flatten().tolist()
        )
        if trainable
        else ()
    )
    return versions, sums


def synced_tensors(model: Any) -> Iterator[tuple[str, torch.Tensor]]:
    """(name, tensor) of the merged weights a sync sends: the modules holding a LoRA-wrapped weight, whole (every
    other weight is the frozen base's, which the sampler already has); every weight when no adapter is active."""
    only = module_siblings(lora_touched(model), weight_names(model)) or None
    return merged_weights(model, only)
