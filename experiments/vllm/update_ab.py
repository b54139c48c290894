"""Does an in-process vLLM engine slow the trainer down? (issue 23, experiments/vllm/README.md)

    python experiments/vllm/update_ab.py OUT.json      (from the repo root, with vLLM installed)

The trainer's forward and backward as `algo=grpo` runs it (SmolLM2-135M, LoRA r16 on q/v, fp32, four 512-token
micro-batches, log-probs at T=0.7), timed four times in one process before a `VLLMPolicy` with the default
`rollout.vllm` settings starts on the same model, and four times after; the 1-minute load average is recorded with
each time, and torch's thread count and the threads' CPU affinity before and after.
"""

import json
import os
import sys
import time

import torch

from agentic_rl.algo.core import token_logprobs
from agentic_rl.bench.rollout import compose_overrides
from agentic_rl.config import to_dataclass
from agentic_rl.models import add_lora
from agentic_rl.registry import build
from agentic_rl.rollout.agent import RolloutConfig


def main(out: str | None) -> None:
    cfg = compose_overrides([])
    rollout = to_dataclass(cfg.rollout, RolloutConfig)
    loaded = build(cfg.model)
    model = add_lora(loaded.model, 16, 32, 0.0, ["q_proj", "v_proj"], seed=42)
    model.train()
    gen = torch.Generator().manual_seed(0)
    batches = [torch.randint(0, 49152, (1, 512), generator=gen) for _ in range(4)]

    def update_once() -> float:
        start = time.perf_counter()
        for ids in batches:
            logits = model(input_ids=ids).logits[:, :-1]
            token_logprobs(logits, ids[:, 1:], 0.7).sum().backward()
        model.zero_grad(set_to_none=True)
        return time.perf_counter() - start

    def affinities() -> list[tuple[int, ...]]:
        return sorted({tuple(sorted(os.sched_getaffinity(int(t)))) for t in os.listdir("/proc/self/task")})

    res: dict = {"threads_before": torch.get_num_threads(), "affinity_before": affinities(), "before": [], "after": []}
    update_once()  # warm-up
    for _ in range(4):
        res["before"].append((update_once(), os.getloadavg()[0]))
    from agentic_rl.rollout.vllm_policy import VLLMPolicy

    policy = VLLMPolicy(
        model, loaded.tokenizer, rollout.vllm, rollout.max_context_tokens, rollout.max_new_tokens, rollout.max_turns, 42
    )
    res["threads_after"] = torch.get_num_threads()
    res["affinity_after"] = affinities()
    prefixes = ("OMP", "KMP", "MKL", "VLLM_CPU", "DNNL", "ONEDNN", "LD_PRELOAD")
    res["env_after"] = {k: v for k, v in os.environ.items() if k.startswith(prefixes)}
    model.train()
    update_once()
    for _ in range(4):
        res["after"].append((update_once(), os.getloadavg()[0]))
    res["median_before_s"] = sorted(t for t, _ in res["before"])[2]
    res["median_after_s"] = sorted(t for t, _ in res["after"])[2]
    res["after_over_before"] = res["median_after_s"] / res["median_before_s"]
    policy.close()
    text = json.dumps(res, indent=1)
    sys.stdout.write(text + "\n")
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
