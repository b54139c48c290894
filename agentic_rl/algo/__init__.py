"""GRPO: pure maths (`core`) and the optimizer step (`grpo`)."""
from agentic_rl.algo.core import (ADVANTAGES, KL_ESTIMATORS, LOSS_AGGREGATIONS, POLICY_OBJECTIVES, ZERO_STD_TOL,
                                  group_has_signal)
from agentic_rl.algo.grpo import GRPOConfig, LoraSchema, StepStats, grpo_step, update_rollout_batch

__all__ = ["ADVANTAGES", "KL_ESTIMATORS", "LOSS_AGGREGATIONS", "POLICY_OBJECTIVES", "ZERO_STD_TOL", "group_has_signal",
           "GRPOConfig", "LoraSchema", "StepStats", "grpo_step", "update_rollout_batch"]
