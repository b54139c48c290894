"""The warm-up stage of a training run: demonstrations, then SFT of the LoRA adapter on them (`warmup=sft`).

    demonstrations (agentic_rl.warmup.demos) -> epochs x batches of `algo.warmup.sft_step` -> metrics -> summary

It runs once per run, after the evaluation before training and before the first GRPO step (agentic_rl.train).

Metric steps. metrics.jsonl's `step` is the GRPO optimizer step (1..N; the evaluations log at 0 and N), so the
warm-up logs at negative steps that no GRPO step or evaluation can take: with K warm-up optimizer steps, the
demonstrations' record (`warmup/n_demos`, `warmup/dropped`, `warmup/demo_s`) is at step -(K + 1) and warm-up step
k (1..K, also logged as `warmup/step`) at step k - K - 1, so the last one is at -1 and the records sort in the order
they happened. They carry no `train/epoch`, so every reader of training curves leaves them out. In the file they
follow the evaluation before (step 0), which ran first.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from typing import Any

import torch
from tqdm.auto import tqdm

from agentic_rl.algo.warmup import SFTStats, WarmupConfig, sft_step
from agentic_rl.rollout.agent import RolloutConfig
from agentic_rl.types import Task
from agentic_rl.warmup.demos import Demonstrations, build_demonstrations

logger = logging.getLogger(__name__)

Log = Callable[[dict[str, Any], int], None]  # the run's `tracker.log(metrics, step)`


def batches(n: int, batch_size: int, epochs: int, rng: random.Random) -> list[tuple[int, list[int]]]:
    """(epoch, indices) of every warm-up batch: each epoch a fresh shuffle of range(n), cut into `batch_size`s."""
    out = []
    for epoch in range(epochs):
        order = list(range(n))
        rng.shuffle(order)
        out += [(epoch, order[i : i + batch_size]) for i in range(0, n, batch_size)]
    return out


def demo_metrics(demos: Demonstrations) -> dict[str, Any]:
    return {
        "warmup/n_demos": len(demos.kept),
        "warmup/dropped": len(demos.dropped),
        "warmup/demo_tokens": sum(t.n_model_tokens for t in demos.kept),
        "warmup/demo_s": demos.seconds,
    }


def run_warmup(
    model: Any,
    make_optimizer: Callable[[list[torch.nn.Parameter]], torch.optim.Optimizer],
    tasks: Sequence[Task],
    demo_env: tuple[Any, Any, RolloutConfig],
    cfg: WarmupConfig,
    *,
    pad_id: int,
    micro_batch_tokens: int,
    max_grad_norm: float,
    dtype: str,
    lora_dropout: float = 0.0,
    log: Log,
    seed: int,
    progress: bool = True,
) -> dict[str, Any]:
    """Build the demonstrations of `tasks` (the run's `WarmupConfig.split`), train on them, log each step; returns
    the stage's summary.

    demo_env: (tokenizer, environment, rollout config) of the run, which the demonstrations are played in.
    make_optimizer: the warm-up's own optimizer over the given (adapter) parameters.
    """
    tokenizer, env, rollout_cfg = demo_env
    demos = build_demonstrations(list(tasks), tokenizer, env, rollout_cfg)
    plan = batches(len(demos.kept), cfg.batch_size, cfg.epochs, random.Random(seed))
    log(demo_metrics(demos), -(len(plan) + 1))
    if demos.dropped:
        logger.warning(
            "warm-up: dropped %d of %d demonstrations %s", len(demos.dropped), len(tasks), demos.drop_reasons()
        )
    optimizer = make_optimizer([p for p in model.parameters() if p.requires_grad])
    bar = tqdm(total=len(plan), desc="warm-up (SFT steps)", disable=not progress, smoothing=0)
    history: list[SFTStats] = []
    for k, (epoch, idx) in enumerate(plan, start=1):
        stats = sft_step(
            model,
            optimizer,
            [demos.kept[i] for i in idx],
            pad_id,
            micro_batch_tokens=micro_batch_tokens,
            max_grad_norm=max_grad_norm,
            dtype=dtype,
            lora_dropout=lora_dropout,
        )
        history.append(stats)
        log({**stats.metrics(), "warmup/epoch": epoch, "warmup/step": k}, k - len(plan) - 1)
        bar.update(1)
        bar.set_postfix(loss=f"{stats.loss:.3f}", acc=f"{stats.token_accuracy:.2f}")
    bar.close()
    return warmup_summary(demos, history, sum(len(idx) for _, idx in plan))


def warmup_summary(demos: Demonstrations, history: Sequence[SFTStats], demos_seen: int) -> dict[str, Any]:
    """What summary.json (and the checkpoint, which marks the warm-up done) records of the stage.

    sft_seconds_per_demo: update time per demonstration trained on (an epoch over 64 demonstrations costs 64 of
    them), the number to size the stage with; demo_seconds: playing the demonstrations (tools, grading) once."""
    train_seconds = sum(s.update_s for s in history)
    return {
        "n_demos": len(demos.kept),
        "dropped": len(demos.dropped),
        "drop_reasons": demos.drop_reasons(),
        "steps": len(history),
        "loss_first": history[0].loss if history else None,
        "loss_last": history[-1].loss if history else None,
        "token_accuracy_last": history[-1].token_accuracy if history else None,
        "demo_seconds": round(demos.seconds, 2),
        "train_seconds": round(train_seconds, 2),
        "sft_seconds_per_demo": round(train_seconds / demos_seen, 3) if demos_seen else None,
    }
