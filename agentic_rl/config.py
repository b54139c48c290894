"""Typed config schemas (ConfigStore) and start-up validation of a composed config.

Types are checked by OmegaConf when the config is composed (`algo.group_size=abc` fails there); value
checks with a message on how to fix them run in `validate()` before any model is loaded.
"""
from __future__ import annotations

from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from agentic_rl.algo.grpo import GRPOConfig, check_training_temperature
from agentic_rl.evaluation.evaluator import EvalConfig
from agentic_rl.rewards import make_reward_fn
from agentic_rl.rollout.agent import RolloutConfig


def register_configs() -> None:
    cs = ConfigStore.instance()
    cs.store(group="algo", name="grpo_schema", node=GRPOConfig)
    cs.store(group="rollout", name="rollout_schema", node=RolloutConfig)


def to_dataclass(node: DictConfig, cls: type) -> Any:
    """A plain dataclass instance from a config node (extra keys such as `toolsets` are ignored)."""
    fields = cls.__dataclass_fields__
    values = {k: v for k, v in OmegaConf.to_container(node, resolve=True).items() if k in fields}
    return cls(**values)


def algo_config(cfg: DictConfig) -> GRPOConfig:
    from agentic_rl.algo.grpo import LoraSchema

    algo = to_dataclass(cfg.algo, GRPOConfig)
    algo.lora = LoraSchema(**algo.lora) if isinstance(algo.lora, dict) else algo.lora
    return algo.validate()


def validate(cfg: DictConfig) -> None:
    """Fail fast, before loading anything heavy, on values that cannot work."""
    algo_config(cfg)
    check_training_temperature(cfg.rollout.temperature)
    to_dataclass(cfg.rollout, RolloutConfig)
    make_reward_fn(**OmegaConf.to_container(cfg.reward, resolve=True))
    to_dataclass(cfg.evaluator, EvalConfig).validate(list(cfg.evaluator.toolsets))
