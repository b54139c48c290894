"""`rollout.vllm`: the vLLM backend's settings (`VLLMConfig`), checked when the rollout config is read.

Kept apart from the backend (`vllm_policy`) and from the choice of backend (`backends`) so that both read them
without importing each other, and reading a config never imports vLLM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WEIGHT_SYNCS = ("merged", "lora")
SYNC_TENSORS = ("touched", "all")
ENGINE_DTYPES = ("auto", "float32", "bfloat16", "float16")
CPU_BLOCK_MULTIPLE = 32  # vLLM's CPU attention kernels take KV blocks of a multiple of 32 tokens


class VLLMSettingError(ValueError):
    """A `rollout.vllm` value the engine cannot run with: a config error, never a reason to fall back to HF."""


@dataclass
class VLLMConfig:
    """`rollout.vllm` (conf/rollout/multi_turn.yaml documents each key)."""

    dtype: str = "auto"
    weight_sync: str = "merged"
    sync_tensors: str = "touched"
    max_num_seqs: int = 32
    max_model_len: int | None = None
    block_size: int | None = 32
    kv_cache_tokens: int | None = None
    gpu_memory_utilization: float = 0.35
    enable_sleep_mode: bool = False
    enforce_eager: bool = True
    max_lora_rank: int = 64
    release_kv_after_rollout: bool = True
    continuous_batching: bool = True

    def __post_init__(self) -> None:
        for key, value, allowed in (
            ("dtype", self.dtype, ENGINE_DTYPES),
            ("weight_sync", self.weight_sync, WEIGHT_SYNCS),
            ("sync_tensors", self.sync_tensors, SYNC_TENSORS),
        ):
            if value not in allowed:
                raise ValueError(f"rollout.vllm.{key} must be one of {allowed}, got {value!r}")
        if self.max_num_seqs < 1:
            raise ValueError(f"rollout.vllm.max_num_seqs must be >= 1, got {self.max_num_seqs}")
        if self.block_size is not None and (isinstance(self.block_size, bool) or self.block_size < 1):
            raise ValueError(
                f"rollout.vllm.block_size must be a positive number of tokens or null (the engine's default), "
                f"got {self.block_size!r}"
            )
        if self.kv_cache_tokens is not None and self.kv_cache_tokens < 16:
            raise ValueError(f"rollout.vllm.kv_cache_tokens must be >= 16 or null, got {self.kv_cache_tokens}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(
                f"rollout.vllm.gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}"
            )


def check_block_size(block_size: int | None, on_gpu: bool) -> None:
    """The device's own rule on `rollout.vllm.block_size`, known only where the engine starts: on a CPU a multiple
    of `CPU_BLOCK_MULTIPLE`. vLLM refuses any other size once the engine is half built ("No common block size for
    48"), which the backend choice would take for an engine that cannot start and fall back to HF."""
    if block_size is not None and not on_gpu and block_size % CPU_BLOCK_MULTIPLE:
        below = block_size // CPU_BLOCK_MULTIPLE * CPU_BLOCK_MULTIPLE
        nearest = ", ".join(str(n) for n in (below, below + CPU_BLOCK_MULTIPLE) if n > 0)
        raise VLLMSettingError(
            f"rollout.vllm.block_size={block_size}: vLLM's CPU backend needs a multiple of {CPU_BLOCK_MULTIPLE}; "
            f"set it to {nearest} or to null (the engine's default)"
        )


def vllm_config(value: Any) -> VLLMConfig:
    """A `VLLMConfig` from a config node / dict (or one already built)."""
    if isinstance(value, VLLMConfig):
        return value
    if value is None:
        return VLLMConfig()
    from omegaconf import DictConfig, OmegaConf

    if isinstance(value, DictConfig):
        value = OmegaConf.to_container(value, resolve=True)
    return VLLMConfig(**dict(value))
