"""Train a tool-using code policy with GRPO + LoRA.

    python -m agentic_rl.train [overrides]        e.g. reward=shaped tools=multi algo.lr=1e-5

`main` only resolves the config; `run(cfg)` does the work and returns the final metrics (tests call it).
One training step, top to bottom: rollout (tasks x G, one batch) -> reward -> group advantages ->
masked token-level loss + KL to the base model -> one optimizer step per task group -> metrics.
"""
from __future__ import annotations

import logging
import random
import time
from pathlib import Path
from typing import Any

import hydra
import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from tqdm.auto import tqdm

from agentic_rl.algo.core import group_has_signal
from agentic_rl.algo.grpo import grpo_step
from agentic_rl.config import CONFIG_PATH, algo_config, component_name, register_configs, to_dataclass, validate
from agentic_rl.evaluation.evaluator import EvalConfig, evaluate, flat_metrics
from agentic_rl.models.lora import add_lora
from agentic_rl.registry import build
from agentic_rl.rollout.agent import RolloutConfig, run_episodes
from agentic_rl.rollout.policy import HFPolicy
from agentic_rl.tools import build_toolset
from agentic_rl.tracking.metrics import episode_metrics, reward_metrics
from agentic_rl.tracking.plots import plot_run, read_metrics
from agentic_rl.tracking.sinks import Tracker
from agentic_rl.tracking.wandb_run import wandb_settings
from agentic_rl.types import Task

logger = logging.getLogger(__name__)
register_configs()


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def run_dir_of(cfg: DictConfig) -> Path:
    from hydra.core.hydra_config import HydraConfig

    return Path(cfg.get("run_dir") or HydraConfig.get().runtime.output_dir)


def train_epoch_tasks(tasks: list[Task], per_epoch: int | None, rng: random.Random) -> list[Task]:
    order = tasks[:]
    rng.shuffle(order)
    return order[:per_epoch] if per_epoch else order


def run(cfg: DictConfig) -> dict[str, Any]:
    """Train, evaluate before/after, write metrics.jsonl, summary.json, figures/ and the adapter."""
    validate(cfg)
    if cfg.get("require_gpu") and not torch.cuda.is_available():
        raise RuntimeError("this experiment needs a CUDA GPU (require_gpu=true) and none is visible. Run it on a GPU "
                           "machine, or use the CPU default: python -m agentic_rl.train")
    algo = algo_config(cfg)
    rollout_cfg = to_dataclass(cfg.rollout, RolloutConfig)
    eval_cfg = to_dataclass(cfg.evaluator, EvalConfig)
    seed_everything(cfg.seed)
    run_dir = run_dir_of(cfg)
    tracker = Tracker(run_dir, wandb_settings(cfg), OmegaConf.to_container(cfg, resolve=True))
    sandbox = None
    exit_code = 1
    try:
        train_tasks: list[Task] = build(cfg.data)
        eval_tasks: list[Task] = build(cfg.eval_data)
        if not train_tasks:
            raise ValueError("the training data is empty: check data.split / data.limit")
        sandbox = build(cfg.sandbox)
        reward_fn = build(cfg.reward)
        toolset = build_toolset(cfg.tools, sandbox)
        eval_toolsets = {m: build_toolset(cfg.evaluator.toolsets[m], sandbox) for m in eval_cfg.modes}

        loaded = build(cfg.model)
        model = add_lora(loaded.model, algo.lora.r, algo.lora.alpha, algo.lora.dropout,
                         list(algo.lora.target_modules), seed=cfg.seed)
        policy = HFPolicy(model, loaded.tokenizer)
        pad_id = loaded.tokenizer.pad_token_id
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                      lr=algo.lr, weight_decay=algo.weight_decay)
        summary: dict[str, Any] = {"model": loaded.name, "tools": cfg.tools.name, "reward": component_name(cfg.reward),
                                   "n_train_tasks": len(train_tasks), "n_eval_tasks": len(eval_tasks), "eval": {},
                                   "wandb": tracker.wandb_info}

        if cfg.eval_before and eval_tasks:
            summary["eval"]["before"] = _evaluate(eval_tasks, policy, eval_toolsets, rollout_cfg, eval_cfg,
                                                  tracker, step=0, phase="before", progress=cfg.progress)

        step = 0
        rng = random.Random(cfg.seed)
        n_steps = algo.epochs * len(train_epoch_tasks(train_tasks, algo.tasks_per_epoch, random.Random(0)))
        bar = tqdm(total=n_steps, desc="train (task groups)", disable=not cfg.progress)
        train_start = time.perf_counter()
        for epoch in range(algo.epochs):
            tasks = train_epoch_tasks(train_tasks, algo.tasks_per_epoch, rng)
            for start in range(0, len(tasks), algo.tasks_per_rollout):
                chunk = tasks[start:start + algo.tasks_per_rollout]
                # 1. rollout: the G samples of every task in the chunk, generated as one batch
                t0 = time.perf_counter()
                trajs = run_episodes([(t, g) for t in chunk for g in range(algo.group_size)],
                                     policy, toolset, rollout_cfg)
                rollout_s = time.perf_counter() - t0
                # 2-5. per task group: reward -> advantages -> loss -> one optimizer step
                for i, task in enumerate(chunk):
                    group = trajs[i * algo.group_size:(i + 1) * algo.group_size]
                    breakdowns = [reward_fn(t) for t in group]
                    rewards = torch.tensor([b.total for b in breakdowns], dtype=torch.float64)
                    stats = grpo_step(model, optimizer, group, rewards, algo, pad_id)
                    step += 1
                    # 6. log
                    metrics = {
                        "train/epoch": epoch, "train/pass_rate": sum(t.passed for t in group) / len(group),
                        "train/loss": stats.loss, "train/kl": stats.kl, "train/grad_norm": stats.grad_norm,
                        "train/frac_zero_std": float(not group_has_signal(rewards)),
                        "train/model_tokens": stats.n_tokens,
                        "rollout/tokens_per_s": sum(t.n_model_tokens for t in trajs) / max(rollout_s, 1e-9),
                        **reward_metrics(breakdowns), **episode_metrics(group),
                    }
                    tracker.log(metrics, step)
                    tracker.log_trajectories(step, group, breakdowns, task.prompt)
                    bar.update(1)
                    bar.set_postfix(pass_rate=f"{metrics['train/pass_rate']:.2f}",
                                    reward=f"{metrics['train/reward_mean']:.2f}")
        bar.close()
        summary["train_seconds"] = round(time.perf_counter() - train_start, 1)
        summary["train_steps"] = step

        if cfg.eval_after and eval_tasks:
            summary["eval"]["after"] = _evaluate(eval_tasks, policy, eval_toolsets, rollout_cfg, eval_cfg,
                                                 tracker, step=step, phase="after", progress=cfg.progress)
        if cfg.save_adapter:
            model.save_pretrained(run_dir / "adapter")
        summary["frac_zero_std"] = _mean_metric(run_dir, "train/frac_zero_std")
        tracker.summary(summary)
        summary["figure"] = str(plot_run(run_dir))
        tracker.summary(summary)
        exit_code = 0
        return summary
    finally:
        tracker.close(exit_code)
        if sandbox is not None:
            sandbox.close()


def _mean_metric(run_dir: Path, key: str) -> float | None:
    vals = [r[key] for r in read_metrics(run_dir) if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def _evaluate(tasks, policy, toolsets, rollout_cfg, eval_cfg, tracker, step, phase, progress) -> dict:
    results = evaluate(tasks, policy, toolsets, rollout_cfg, eval_cfg, progress=progress)
    flat = flat_metrics(results)
    tracker.log(flat, step)  # same names before (step 0) and after training: one curve per metric
    for mode, res in results.items():
        logger.info("eval %s %s: pass@1 %.3f", phase, mode, res.pass_at.get(1, float("nan")))
    return {mode: {**{f"pass@{k}": v for k, v in res.pass_at.items()}, **res.metrics} for mode, res in results.items()}


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="train")
def main(cfg: DictConfig) -> float:
    summary = run(cfg)
    after = summary["eval"].get("after") or {}
    return max((m.get("pass@1", 0.0) for m in after.values()), default=0.0)


if __name__ == "__main__":
    from agentic_rl.cli import run_cli

    run_cli(main, "train")
