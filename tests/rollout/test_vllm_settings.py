"""`rollout.vllm` (VLLMConfig): each check's last valid and first invalid value, where the defaults come from, and
how a config node becomes the settings. Runs without vLLM: reading the settings never imports it."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from agentic_rl.rollout.vllm_settings import ENGINE_DTYPES, SYNC_TENSORS, WEIGHT_SYNCS, VLLMConfig, vllm_config

CONF = Path(__file__).resolve().parents[2] / "conf"


@pytest.mark.parametrize(
    "valid, invalid",
    [
        ({"max_num_seqs": 1}, {"max_num_seqs": 0}),
        ({"block_size": 1}, {"block_size": 0}),
        ({"block_size": None}, {"block_size": True}),
        ({"kv_cache_tokens": 16}, {"kv_cache_tokens": 15}),
        ({"kv_cache_tokens": None}, {"kv_cache_tokens": -16}),
        ({"gpu_memory_utilization": 1.0}, {"gpu_memory_utilization": 1.01}),
        ({"gpu_memory_utilization": 0.01}, {"gpu_memory_utilization": 0.0}),
        ({"gpu_memory_utilization": 0.5}, {"gpu_memory_utilization": 1.5}),
        ({"gpu_memory_utilization": 0.99}, {"gpu_memory_utilization": -0.5}),
        ({"dtype": "bfloat16"}, {"dtype": "bf16"}),
        ({"weight_sync": "lora"}, {"weight_sync": "delta"}),
        ({"sync_tensors": "all"}, {"sync_tensors": "some"}),
    ],
)
def test_each_check_accepts_its_boundary_and_rejects_the_next_value(valid, invalid) -> None:
    assert VLLMConfig(**valid) is not None
    key = next(iter(invalid))
    with pytest.raises(ValueError, match=f"rollout.vllm.{key}"):
        VLLMConfig(**invalid)


@pytest.mark.parametrize(
    "key, allowed", [("dtype", ENGINE_DTYPES), ("weight_sync", WEIGHT_SYNCS), ("sync_tensors", SYNC_TENSORS)]
)
def test_every_listed_choice_is_accepted(key, allowed) -> None:
    assert [getattr(VLLMConfig(**{key: value}), key) for value in allowed] == list(allowed)


def test_the_defaults_are_the_rollout_configs_values() -> None:
    """A backend built in code without `rollout.vllm` (`vllm_config(None)`) runs with what the config file sets."""
    node = OmegaConf.load(CONF / "rollout" / "multi_turn.yaml").vllm
    assert asdict(vllm_config(None)) == asdict(vllm_config(node)) == OmegaConf.to_container(node)


def test_a_config_node_a_dict_or_settings_become_settings() -> None:
    built = VLLMConfig(dtype="float32")
    assert vllm_config(built) is built
    assert vllm_config({"dtype": "float32", "max_num_seqs": 4}) == VLLMConfig(dtype="float32", max_num_seqs=4)
    # an interpolation in the run's config is resolved before the checks read the value
    cfg = OmegaConf.create({"engine": {"seqs": 8}, "vllm": {"max_num_seqs": "${engine.seqs}"}})
    assert vllm_config(cfg.vllm).max_num_seqs == 8
    with pytest.raises(ValueError, match="rollout.vllm.max_num_seqs"):
        vllm_config(OmegaConf.create({"max_num_seqs": 0}))
