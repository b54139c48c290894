"""Exactness of the vLLM backend on a real model: greedy agreement and log-prob gap against the HF model.

    python -m agentic_rl.bench.vllm_check [--dtypes float32 bfloat16] [--tokens 64] [overrides ...]

The model of `model=` (SmolLM2-135M by default) gets a LoRA adapter (r16 on q/v, as training) with a non-zero
delta, so the engine runs merged weights. For each engine dtype: a `VLLMPolicy` is started, the adapter is moved
(as an optimizer step would) and synced, then on fixed chat prompts it reports the share of greedy tokens equal
to the HF model's (up to each pair's first difference, and position by position), the sampler log-probs' gap to
the trainer's scoring of the same tokens at T=`rollout.temperature` with top_p=1 (mean and max |Δ log p|), and
the sync time with `sync_tensors` touched and all.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

import torch

from agentic_rl.bench.rollout import compose_overrides
from agentic_rl.reports.run_files import markdown_header, markdown_row

logger = logging.getLogger(__name__)
PROMPTS = [
    "Write a Python function that returns the sum of a list.",
    "Explain what a hash map is.",
    "Write a function is_prime(n).",
    "Reverse a string in Python.",
    "What does `yield` do?",
    "Sort a list of tuples by their second element.",
    "Write a class Stack with push and pop.",
    "Parse a CSV line into fields.",
]


def scored_logprobs(model: Any, prompt: list[int], ids: list[int], temperature: float) -> torch.Tensor:
    from agentic_rl.algo.core import token_logprobs

    full = torch.tensor([prompt + ids])
    with torch.no_grad():
        return token_logprobs(model(input_ids=full).logits[:, :-1], full[:, 1:], temperature)[0, len(prompt) - 1 :]


def nudge_lora(model: Any, part: str, gen: torch.Generator) -> None:
    """Add N(0, 0.01) noise to every weight whose name holds `part` ("lora_A"): an optimizer step's move."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if part in name:
                p.add_(torch.randn(p.shape, generator=gen) * 0.01)


def greedy_agreement(ours: list[list[int]], theirs: list[list[int]]) -> dict[str, float]:
    """How far two greedy decodings of the same prompts agree: up to each pair's first difference, position by
    position, and whole sequences (shares of the reference's tokens)."""
    prefix = sum(
        next((i for i, (a, b) in enumerate(zip(x, y)) if a != b), min(len(x), len(y))) for x, y in zip(ours, theirs)
    )
    positions = sum(a == b for x, y in zip(ours, theirs) for a, b in zip(x, y))
    total = sum(len(y) for y in theirs)
    return {
        "greedy_equal_prefix_share": prefix / total,
        "greedy_equal_position_share": positions / total,
        "identical_sequences": sum(x == y for x, y in zip(ours, theirs)),
        "sequences": len(ours),
    }


def check_dtype(
    dtype: str, model: Any, hf: Any, prompts: list[list[int]], rollout: Any, tokens: int, seed: int, gen: Any
) -> dict[str, Any]:
    """One engine dtype: start the engine, move the adapter and sync it, then greedy agreement with the HF model,
    the sampler's log-prob gap to the trainer's scoring, and both sync times. `hf`: the HFPolicy on `model`."""
    from agentic_rl.rollout.policy import SamplingParams, TurnRequest
    from agentic_rl.rollout.vllm_policy import VLLMPolicy
    from agentic_rl.types import Task

    task = Task("check", "", "", "pytest")
    requests = [TurnRequest(p, task, 0, 0) for p in prompts]
    greedy = SamplingParams(max_new_tokens=tokens, temperature=0)
    sampled = SamplingParams(max_new_tokens=tokens, temperature=rollout.temperature or 0.7, top_p=1.0)
    never = lambda text: False  # noqa: E731 - the whole budget, no stop
    settings = rollout.vllm
    settings.dtype = dtype
    policy = VLLMPolicy(model, hf.hf_tokenizer, settings, rollout.max_context_tokens, tokens, seed=seed)
    nudge_lora(model, "lora_A", gen)  # what an optimizer step does: the adapter moves, the engine must follow
    sync = {}
    for tensors in ("all", "touched"):
        policy.cfg.sync_tensors = tensors
        sync[tensors] = policy.sync_weights()
    ours = policy.generate(requests, greedy, never)
    theirs = hf.generate(requests, greedy, never)
    torch.manual_seed(seed)
    gaps = []
    for prompt, (ids, logps) in zip(prompts, policy.generate_with_logprobs(requests, sampled, never)):
        gaps.append((scored_logprobs(model, prompt, ids, sampled.temperature) - torch.tensor(logps)).abs())
    gap = torch.cat(gaps)
    policy.close()
    return {
        **greedy_agreement(ours, theirs),
        "logp_gap_mean": float(gap.mean()),
        "logp_gap_max": float(gap.max()),
        "sync_s_all": sync["all"],
        "sync_s_touched": sync["touched"],
    }


def table_lines(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = markdown_header(
        ["engine dtype", "identical seqs", "greedy equal (to 1st diff)", "equal positions", "mean abs dlogp"]
        + ["max abs dlogp", "sync all s", "sync touched s"]
    )
    for dtype, r in results.items():
        shares = [f"{r['greedy_equal_prefix_share']:.3f}", f"{r['greedy_equal_position_share']:.3f}"]
        gaps = [f"{r['logp_gap_mean']:.2e}", f"{r['logp_gap_max']:.2e}"]
        syncs = [f"{r['sync_s_all']:.2f}", f"{r['sync_s_touched']:.2f}"]
        lines.append(markdown_row([dtype, f"{r['identical_sequences']}/{r['sequences']}", *shares, *gaps, *syncs]))
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of conf/train.yaml")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    from agentic_rl.config import to_dataclass
    from agentic_rl.models import add_lora
    from agentic_rl.registry import build
    from agentic_rl.rollout.agent import RolloutConfig
    from agentic_rl.rollout.hf_policy import HFPolicy

    cfg = compose_overrides(args.overrides)
    torch.manual_seed(cfg.seed)
    rollout = to_dataclass(cfg.rollout, RolloutConfig)
    loaded = build(cfg.model)
    model = add_lora(loaded.model.eval(), 16, 32, 0.0, ["q_proj", "v_proj"], seed=cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    with torch.no_grad():  # a non-zero adapter, so the engine runs merged weights
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.01)
    hf = HFPolicy(model, loaded.tokenizer)
    prompts = [hf.tokenizer.chat_prompt_ids([{"role": "user", "content": p}]) for p in PROMPTS]
    results = {}
    for dtype in args.dtypes:
        results[dtype] = check_dtype(dtype, model, hf, prompts, rollout, args.tokens, cfg.seed, gen)
    logger.info("\n%s", "\n".join(table_lines(results)))
    if args.json:
        Path(args.json).write_text(json.dumps({"argv": argv or sys.argv[1:], **results}, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
