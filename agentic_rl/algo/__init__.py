"""GRPO: pure maths (`core`, `rollout_correction`), the log-prob passes (`logprobs`) and the optimizer step (`grpo`)."""

from agentic_rl.algo.core import (
    ADVANTAGES,
    KL_ESTIMATORS,
    LOSS_AGGREGATIONS,
    POLICY_OBJECTIVES,
    ZERO_STD_TOL,
    group_has_signal,
)
from agentic_rl.algo.grpo import (
    GRPOConfig,
    LoraSchema,
    RolloutCorrectionSchema,
    StepStats,
    grpo_step,
    update_rollout_batch,
)
from agentic_rl.algo.logprobs import ReferenceWeights
from agentic_rl.algo.rollout_correction import IS_LEVELS, ROLLOUT_CORRECTIONS

__all__ = [
    "ADVANTAGES",
    "KL_ESTIMATORS",
    "LOSS_AGGREGATIONS",
    "POLICY_OBJECTIVES",
    "ZERO_STD_TOL",
    "group_has_signal",
    "GRPOConfig",
    "LoraSchema",
    "RolloutCorrectionSchema",
    "StepStats",
    "grpo_step",
    "update_rollout_batch",
    "ReferenceWeights",
    "IS_LEVELS",
    "ROLLOUT_CORRECTIONS",
]
