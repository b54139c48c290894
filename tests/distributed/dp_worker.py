"""One rank of the gradient-equivalence test (started by torch.distributed.run): runs SCHEDULE through
`Distributed.data_parallel(grpo_step)` and saves, after each step, this rank's gradients and LoRA weights to
OUT/rank<r>.pt."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from agentic_rl.algo.grpo import grpo_step
from agentic_rl.distributed import Distributed
from agentic_rl.models import lora_state
from tests.distributed.cases import CFG, SCHEDULE, make_group, rewards_of, tiny_policy


def main(out: Path) -> None:
    dist = Distributed.from_env(timeout_s=120)
    model, pad_id = tiny_policy()
    dist.align(model, seed=0)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=CFG.lr)
    steps = []
    for schedule in SCHEDULE:
        seed, rewards = schedule[dist.rank]
        stats = dist.data_parallel(grpo_step)(
            model, optimizer, make_group(seed), rewards_of(rewards), CFG, pad_id, temperature=1.0
        )
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        steps.append({"grads": grads, "weights": lora_state(model), "skipped": stats.skipped})
    torch.save({"world_size": dist.world_size, "steps": steps}, out / f"rank{dist.rank}.pt")
    dist.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
