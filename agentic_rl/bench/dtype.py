"""The GRPO update in bf16 autocast against fp32, on the embedded model: time ratio and gradient agreement.

    python -m agentic_rl.bench.dtype [--model smollm2-135m] [--episodes 4] [--length 384] [--repeats 3]

Loads the model and its LoRA adapter as `agentic_rl.train` does (conf/model, conf/algo), gives the adapter's B
matrices small random values (at B = 0 the A matrices get no gradient to compare), and runs `grpo_step` with
`algo.dtype=fp32` and `algo.dtype=bf16` in turns on one group of `--episodes` episodes of `--length` tokens
(4 x 384 = 1.5k tokens by default: the source text of this package, a shared prompt and two model turns per
episode). The optimizer has lr 0 and no gradient clipping, so every update leaves the same weights and the raw
gradients. Prints the median wall and CPU time of each dtype, their ratio (bf16 / fp32, same run), and the
cosine and relative error ||g_bf16 - g_fp32|| / ||g_fp32|| of the LoRA gradients.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import resource
import statistics
import time
from pathlib import Path

import torch

logger = logging.getLogger(__name__)
CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def text_group(tokenizer, n_episodes: int, length: int) -> list:
    """Episodes cut from real text: a shared prompt (the first half), then per episode its own slice, with two model
    turns of an eighth of the length each (the rest of the slice is prompt and observation)."""
    import agentic_rl.algo.grpo as source_module
    from agentic_rl.types import Trajectory

    ids = tokenizer.encode(inspect.getsource(source_module), add_special_tokens=False)
    prompt, turn = length // 2, length // 8
    if prompt + n_episodes * (length - prompt) > len(ids):
        raise ValueError(f"the source text has {len(ids)} tokens, too few for {n_episodes} x {length}")
    mask = [0] * prompt + [1] * turn + [0] * (length - prompt - 2 * turn) + [1] * turn
    rest = length - prompt  # each episode's own slice of `ids` after the shared prompt
    return [
        Trajectory(
            task_id="bench",
            prompt_len=prompt,
            loss_mask=mask,
            token_ids=ids[:prompt] + ids[prompt + i * rest : prompt + (i + 1) * rest],
        )
        for i in range(n_episodes)
    ]


def measure(model_name: str = "smollm2-135m", episodes: int = 4, length: int = 384, repeats: int = 3) -> dict:
    """Time and LoRA gradients of `grpo_step` per `algo.dtype`, the dtypes taking turns so load drift hits both."""
    from omegaconf import OmegaConf

    from agentic_rl.algo.grpo import GRPOConfig, LoraSchema, grpo_step
    from agentic_rl.models.lora import add_lora
    from agentic_rl.registry import build

    algo = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "algo" / "grpo.yaml"))
    algo.pop("defaults", None)
    model_yaml = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "model" / f"{model_name}.yaml"), resolve=False)
    model_yaml.pop("seed", None)  # `${seed}` interpolates the train config, which is not loaded here
    loaded = build(OmegaConf.create(model_yaml))
    lora = algo["lora"]
    model = add_lora(
        loaded.model,
        lora["r"],
        lora["alpha"],
        lora["dropout"],
        list(lora["target_modules"]),
        seed=0,
        gradient_checkpointing=algo["gradient_checkpointing"],
    )
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.01)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.0)
    group = text_group(loaded.tokenizer, episodes, length)
    rewards = torch.tensor([1.0, 0.0] * (episodes // 2) + [0.5] * (episodes % 2))
    results: dict[str, dict] = {}
    for dtype in ("fp32", "bf16"):
        cfg = GRPOConfig(**{**algo, "lora": LoraSchema(**lora), "max_grad_norm": 1e9, "dtype": dtype}).validate()
        results[dtype] = {"cfg": cfg, "wall": [], "cpu": []}
    for rep in range(repeats + 1):  # the first round warms up (allocations, kernel selection) and is not timed
        for row in results.values():
            start, start_cpu = time.perf_counter(), _cpu_seconds()
            stats = grpo_step(
                model, optimizer, group, rewards, row["cfg"], loaded.tokenizer.pad_token_id, temperature=0.7
            )
            if rep:
                row["wall"].append(time.perf_counter() - start)
                row["cpu"].append(_cpu_seconds() - start_cpu)
            row["grads"] = torch.cat([p.grad.flatten().double() for p in params])
            row["loss"], row["kl"] = stats.loss, stats.kl
    g32, g16 = results["fp32"]["grads"], results["bf16"]["grads"]
    out = {
        "model": model_name,
        "episodes": episodes,
        "length": length,
        "tokens": episodes * length,
        "repeats": repeats,
        "threads": torch.get_num_threads(),
    }
    for dtype, row in results.items():
        out[f"{dtype}_update_s"] = statistics.median(row["wall"])
        out[f"{dtype}_update_cpu_s"] = statistics.median(row["cpu"])
        out[f"{dtype}_kl"] = row["kl"]
    out["time_ratio_bf16_over_fp32"] = out["bf16_update_s"] / out["fp32_update_s"]
    out["cpu_ratio_bf16_over_fp32"] = out["bf16_update_cpu_s"] / out["fp32_update_cpu_s"]
    out["grad_cosine"] = float(torch.nn.functional.cosine_similarity(g32, g16, dim=0))
    out["grad_rel_error"] = float((g16 - g32).norm() / g32.norm())
    out["amx_bf16"] = "amx_bf16" in Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else None
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m", help="a conf/model/ name")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--length", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logger.info("%s", json.dumps(measure(args.model, args.episodes, args.length, args.repeats), indent=1))


if __name__ == "__main__":
    main()
