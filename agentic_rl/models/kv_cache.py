"""KV-cache layers over transformers' `DynamicCache`, shared by the HF sampler and the trainer's scoring.

- `slot_layer_class()`: `SlotLayer`, a cache layer over a preallocated (B, H, capacity, D) buffer whose
  `update` writes new positions in place (the HF sampler's batched decode);
- `joined_layer_class()`: `JoinedLayer`, a prefill's layer over past keys/values kept in pieces (a shared
  prefix's, then an episode's own), joined with the new positions in one copy;
- `cache_from_layers(layers)`: a `DynamicCache` holding the given layers;
- `cache_kwarg(model)`: the name of the forward argument that takes the cache in this transformers version.
The classes are defined on first use, so importing this module does not import transformers.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import torch


@functools.cache
def slot_layer_class() -> type:
    """The `SlotLayer` class, defined on first use so that importing this module does not import transformers."""
    from transformers.cache_utils import DynamicLayer

    class SlotLayer(DynamicLayer):
        """A cache layer over a preallocated buffer (B, H, capacity, D): `update` writes the new positions in
        place and returns views of the first `rows` rows, where `DynamicLayer.update` would concatenate
        (copying the whole batch cache at every token)."""

        is_croppable = False

        def __init__(self, buf_k: torch.Tensor, buf_v: torch.Tensor, length: int) -> None:
            super().__init__()
            self.buf_k, self.buf_v, self.length = buf_k, buf_v, length
            self.device = buf_k.device
            self.is_initialized = True
            self.set_rows(buf_k.shape[0])

        def set_rows(self, rows: int) -> None:
            self.rows = rows
            self.keys = self.buf_k[:rows, :, : self.length]
            self.values = self.buf_v[:rows, :, : self.length]

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any):
            n = key_states.shape[-2]
            self.buf_k[: self.rows, :, self.length : self.length + n] = key_states
            self.buf_v[: self.rows, :, self.length : self.length + n] = value_states
            self.length += n
            self.set_rows(self.rows)
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.length

    return SlotLayer


@functools.cache
def joined_layer_class() -> type:
    """The `JoinedLayer` class, defined on first use (as `SlotLayer`)."""
    from transformers.cache_utils import DynamicLayer

    class JoinedLayer(DynamicLayer):
        """A prefill's cache layer over past keys/values kept in pieces (a shared prefix's, then an episode's
        own): `update` joins them and the new positions in one copy, where a `DynamicLayer` built from the
        pieces would copy the past twice (once to build, once to append)."""

        is_croppable = False

        def __init__(self, pieces: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
            super().__init__()
            self.pieces = pieces
            self.device, self.is_initialized = pieces[0][0].device, True
            self.length = sum(k.shape[-2] for k, _ in pieces)

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any):
            self.keys = torch.cat([k for k, _ in self.pieces] + [key_states], dim=-2)
            self.values = torch.cat([v for _, v in self.pieces] + [value_states], dim=-2)
            self.pieces, self.length = [(self.keys, self.values)], self.keys.shape[-2]
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.length

    return JoinedLayer


def cache_from_layers(layers: list[Any]) -> Any:
    from transformers import DynamicCache

    cache = DynamicCache()
    cache.layers = layers
    return cache


def cache_kwarg(model: Any) -> str:
    """Newer transformers call the cache argument `cache` (`past_key_values` is deprecated there)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "cache" if "cache" in inspect.signature(base.forward).parameters else "past_key_values"
