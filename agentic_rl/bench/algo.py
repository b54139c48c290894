"""Memory and time of one GRPO update, for a group shaped like the multi-tool workload.

    python -m agentic_rl.bench.algo [--model smollm2-135m] [--episodes 4] [--length 1536] [--model-tokens 256]
                                    [--repeats 2] [--setting NAME ...]

The group: `--episodes` episodes of `--length` tokens (tool prompt, task, observations), of which
`--model-tokens` are the model's own, in two turns: the multi-tool training workload (4 KodCode tasks
x G=4, 2 turns x 128 new tokens, ~1.5k-token episodes) gives one such group per task. The episodes share
their prompt (the first half), as the G samples of one task do; the rest of the token ids are random and
differ: the cost of a forward/backward does not depend on them.

Each setting runs in a fresh process, because peak RSS (`ru_maxrss`) only grows within a process:
  whole-group:   all episodes in one micro-batch, no gradient checkpointing (the update before micro-batching)
  micro-batches: `algo.micro_batch_tokens` (default) padded tokens per micro-batch, no checkpointing
  untrimmed:     the default without `algo.trim_heap_each_micro_batch` (freed activations stay resident)
  default:       conf/algo/grpo.yaml as it is
  mmap-pinned:   the default, with glibc's mmap threshold pinned as a run with `rollout.backend=vllm` pins it on
                 a CPU (`memory.mmap_threshold_kib=auto`): is the vLLM run's slower update this pin's cost?
  prefix-held:   the default without `algo.recompute_prefix` (the shared prompt's activations held under every
                 micro-batch's, not recomputed); prefix-held-pinned: that, pinned as mmap-pinned is
Prints, per setting, the update's wall and CPU time (medians over `--repeats` updates), the RSS after loading
the model and the peak RSS of the process, and the time ratio to the first setting (measured in the same
run, so machine load hits all of them alike).
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import statistics
import subprocess
import sys
import time

from agentic_rl.paths import CONF_DIR
from agentic_rl.runtime.memory import ENGINE_MMAP_THRESHOLD_KIB, peak_rss_gib, pin_mmap_threshold

logger = logging.getLogger(__name__)

SETTINGS = {
    "whole-group": {"micro_batch_tokens": 10**9, "gradient_checkpointing": False},
    "micro-batches": {"gradient_checkpointing": False},
    "untrimmed": {"trim_heap_each_micro_batch": False},
    "default": {},
    "mmap-pinned": {"mmap_pinned": True},
    "prefix-held": {"recompute_prefix": False},
    "prefix-held-pinned": {"recompute_prefix": False, "mmap_pinned": True},
}


def cpu_seconds() -> float:
    """CPU time of this process (user + system): on a shared machine it varies far less than wall time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def synthetic_group(n_episodes: int, length: int, model_tokens: int, vocab: int, seed: int = 0) -> list:
    """Episodes of `length` random tokens, the first half (the prompt) the same in all; the model's tokens are two
    equal turns, the first in the middle."""
    import torch

    from agentic_rl.types import Trajectory

    turn = model_tokens // 2
    prompt = length // 2
    observation = length - prompt - 2 * turn
    if observation < 0:
        raise ValueError(f"--model-tokens {model_tokens} does not fit in --length {length}")
    mask = [0] * prompt + [1] * turn + [0] * observation + [1] * (model_tokens - turn)
    gen = torch.Generator().manual_seed(seed)
    shared = torch.randint(10, vocab, (prompt,), generator=gen).tolist()
    return [
        Trajectory(
            task_id="bench",
            loss_mask=mask,
            prompt_len=prompt,
            token_ids=shared + torch.randint(10, vocab, (length - prompt,), generator=gen).tolist(),
        )
        for _ in range(n_episodes)
    ]


def run_setting(args: argparse.Namespace) -> dict:
    """One setting, in this process: load the model, then time `--repeats` updates of the group."""
    import torch
    from omegaconf import OmegaConf

    from agentic_rl.algo.grpo import GRPOConfig, grpo_step
    from agentic_rl.models.lora import add_lora
    from agentic_rl.registry import build

    algo = OmegaConf.load(CONF_DIR / "algo" / "grpo.yaml")
    values = {
        k: v
        for k, v in OmegaConf.to_container(algo).items()
        if k in GRPOConfig.__dataclass_fields__ and k not in ("lora", "defaults")
    }
    overrides = dict(SETTINGS[args.setting])
    pinned = overrides.pop("mmap_pinned", False)
    cfg = GRPOConfig(**{**values, **overrides}).validate()
    model_yaml = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "model" / f"{args.model}.yaml"), resolve=False)
    model_yaml.pop("seed", None)  # `${seed}` interpolates the train config, which is not loaded here
    loaded = build(OmegaConf.create(model_yaml))
    lora = algo.lora
    model = add_lora(
        loaded.model,
        lora.r,
        lora.alpha,
        lora.dropout,
        list(lora.target_modules),
        gradient_checkpointing=cfg.gradient_checkpointing,
    )
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    group = synthetic_group(args.episodes, args.length, args.model_tokens, len(loaded.tokenizer))
    rewards = torch.tensor([1.0, 0.0] * (args.episodes // 2) + [0.5] * (args.episodes % 2))
    loaded_rss = peak_rss_gib()
    kib = None
    if pinned:  # at --mmap-threshold-kib, else what `auto` pins for the vLLM backend
        kib = ENGINE_MMAP_THRESHOLD_KIB if args.mmap_threshold_kib is None else args.mmap_threshold_kib
        if not pin_mmap_threshold(kib):
            raise RuntimeError("this C library does not take mallopt(M_MMAP_THRESHOLD): no glibc, nothing to measure")
    times, cpu_times = [], []
    for _ in range(args.repeats):
        start, start_cpu = time.perf_counter(), cpu_seconds()
        grpo_step(model, optimizer, group, rewards, cfg, loaded.tokenizer.pad_token_id, temperature=0.7)
        times.append(time.perf_counter() - start)
        cpu_times.append(cpu_seconds() - start_cpu)
    return {
        "setting": args.setting,
        "update_s": statistics.median(times),
        "update_cpu_s": statistics.median(cpu_times),
        "rss_after_load_gib": loaded_rss,
        "peak_rss_gib": peak_rss_gib(),
        "micro_batch_tokens": cfg.micro_batch_tokens,
        "gradient_checkpointing": cfg.gradient_checkpointing,
        "trim_heap_each_micro_batch": cfg.trim_heap_each_micro_batch,
        "recompute_prefix": cfg.recompute_prefix,
        "mmap_threshold_kib": kib,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m", help="a conf/model/ name")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--length", type=int, default=1536)
    parser.add_argument("--model-tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--setting", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument(
        "--mmap-threshold-kib",
        type=int,
        help="the threshold of the pinned settings (default: what memory.mmap_threshold_kib=auto pins)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.worker:
        args.setting = args.setting[0]
        row = run_setting(args)
        sys.stdout.write(json.dumps(row) + "\n")
        return [row]
    rows = []
    for setting in args.setting:
        cmd = [
            sys.executable,
            "-m",
            "agentic_rl.bench.algo",
            "--worker",
            "--setting",
            setting,
            "--model",
            args.model,
            "--episodes",
            str(args.episodes),
            "--length",
            str(args.length),
            "--model-tokens",
            str(args.model_tokens),
            "--repeats",
            str(args.repeats),
            *([] if args.mmap_threshold_kib is None else ["--mmap-threshold-kib", str(args.mmap_threshold_kib)]),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"setting {setting} failed:\n{proc.stderr[-3000:]}")
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        logger.info("%s", rows[-1])
    base = rows[0]["update_s"]
    logger.info(
        "\nupdate of one group: %d episodes x %d tokens (%d model tokens each), model %s%s",
        args.episodes,
        args.length,
        args.model_tokens,
        args.model,
        "" if args.mmap_threshold_kib is None else f", mmap-pinned at {args.mmap_threshold_kib} KiB",
    )
    logger.info(
        "%-14s %10s %10s %12s %14s %14s",
        "setting",
        "update_s",
        "x first",
        "update_cpu_s",
        "RSS loaded GiB",
        "peak RSS GiB",
    )
    for row in rows:
        logger.info(
            "%-14s %10.1f %10.2f %12.1f %14.2f %14.2f",
            row["setting"],
            row["update_s"],
            row["update_s"] / base,
            row["update_cpu_s"],
            row["rss_after_load_gib"],
            row["peak_rss_gib"],
        )
    return rows


if __name__ == "__main__":
    main()
