"""GRPOConfig: each start-up check's boundary (the last valid and first invalid value) and where defaults come from."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from agentic_rl.algo.grpo import GRPOConfig, LoraSchema, RolloutCorrectionSchema

CONF = Path(__file__).resolve().parents[2] / "conf"


@pytest.mark.parametrize(
    "valid, invalid",
    [
        ({"group_size": 2}, {"group_size": 1}),
        ({"lr": 1e-9}, {"lr": 0.0}),
        ({"lr": 0.5}, {"lr": -0.5}),
        ({"kl_coeff": 0.0}, {"kl_coeff": -1e-9}),
        ({"kl_coeff": 0.5}, {"kl_coeff": -0.5}),
        ({"epochs": 1}, {"epochs": 0}),
        ({"tasks_per_epoch": 1}, {"tasks_per_epoch": 0}),
        ({"tasks_per_epoch": None}, {"tasks_per_epoch": -1}),
        ({"tasks_per_rollout": 1}, {"tasks_per_rollout": 0}),
        ({"micro_batch_tokens": 1}, {"micro_batch_tokens": 0}),
        ({"clip_eps": 1e-6}, {"clip_eps": 0.0}),
        ({"clip_eps": 0.999}, {"clip_eps": 1.0}),
        ({"clip_eps": 0.5}, {"clip_eps": 1.5}),
        ({"max_grad_norm": 1e-6}, {"max_grad_norm": 0.0}),
        ({"max_grad_norm": 0.5}, {"max_grad_norm": -0.5}),
        ({"lora": LoraSchema(r=1)}, {"lora": LoraSchema(r=0)}),
        ({"lora": LoraSchema(dropout=0.0)}, {"lora": LoraSchema(dropout=-0.1)}),
        ({"lora": LoraSchema(dropout=0.999)}, {"lora": LoraSchema(dropout=1.0)}),
        ({"lora": LoraSchema(dropout=0.5)}, {"lora": LoraSchema(dropout=1.5)}),
        ({"dtype": "bf16"}, {"dtype": "fp16"}),
        (
            {"rollout_correction": RolloutCorrectionSchema(cap=1.0)},
            {"rollout_correction": RolloutCorrectionSchema(cap=0.99)},
        ),
        (
            {"rollout_correction": RolloutCorrectionSchema(cap=1.5)},
            {"rollout_correction": RolloutCorrectionSchema(cap=0.5)},
        ),
        ({"objective": "gspo"}, {"objective": "ppo"}),
    ],
)
def test_each_check_accepts_its_boundary_and_rejects_the_next_value(valid, invalid) -> None:
    assert GRPOConfig(**valid).validate() is not None
    key = next(iter(invalid))
    with pytest.raises(ValueError, match=f"algo.{key}"):
        GRPOConfig(**invalid).validate()


def test_the_algo_yaml_sets_every_schema_key_but_weight_decay() -> None:
    """The run's values come from conf/algo/grpo.yaml, so the schema's defaults reach a run only for keys it omits."""
    values = yaml.safe_load((CONF / "algo" / "grpo.yaml").read_text())
    top = {f.name for f in fields(GRPOConfig)}
    assert top - set(values) == {"weight_decay"}
    assert set(values["lora"]) == {f.name for f in fields(LoraSchema)}
    assert set(values["rollout_correction"]) == {f.name for f in fields(RolloutCorrectionSchema)}


def test_the_default_run_has_no_weight_decay() -> None:
    """weight_decay is the one key the YAML leaves to the schema: the default run's AdamW decays nothing."""
    from hydra import compose, initialize_config_dir

    from agentic_rl.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("train")
    assert cfg.algo.weight_decay == 0.0
    assert cfg.optimizer.weight_decay == 0.0
