"""Train a tool-using code policy with GRPO + LoRA.

    python -m agentic_rl.train [overrides]        e.g. reward=shaped tools=multi algo.lr=1e-5
    python -m agentic_rl.train resume=RUN_DIR     continue an interrupted run exactly, with its own config

`main` only resolves the config; `run(cfg)` does the work and returns the final metrics (tests call it).
`run` reads in stages: build (data, sandbox, the `env` environment, model + LoRA, the `rollout.backend` sampler, the
`optimizer`; or
restore them from the newest checkpoint), warm-up (`warmup=sft`: SFT of the adapter on scripted demonstrations,
once, after the evaluation before), loop, finish (evaluate after, summary.json, then adapter and figures).
One training step, top to bottom: rollout (tasks x G, one batch) -> reward -> group advantages ->
masked token-level loss + KL to the base model -> one optimizer step per task group (importance-corrected
when an earlier group of the same batch already stepped) -> metrics.
Safe points (a checkpoint, or a stop on SIGINT/SIGTERM) fall between rollout batches.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hydra
import torch
from omegaconf import DictConfig, OmegaConf
from tqdm.auto import tqdm

from agentic_rl.algo.core import group_has_signal
from agentic_rl.algo.grpo import GRPOConfig, grpo_step, update_rollout_batch
from agentic_rl.algo.logprobs import ReferenceWeights
from agentic_rl.config import algo_config, register_configs, validate, warmup_config
from agentic_rl.distributed import Distributed, launch_ranks_or
from agentic_rl.envs.base import Environment
from agentic_rl.envs.serve import environment_servers, served
from agentic_rl.envs.toolset import environment_from_config
from agentic_rl.envs.verify import evaluation_constant
from agentic_rl.evaluation.base_cache import (
    BaseEvalConfig,
    base_eval_key,
    package_version,
    shared_base_eval,
    with_seed,
)
from agentic_rl.evaluation.evaluator import EVALUATORS, EvalConfig, flat_metrics
from agentic_rl.evaluation.records import ResultStore
from agentic_rl.hydra_main import run_cli
from agentic_rl.models.lora import add_lora
from agentic_rl.paths import CONFIG_PATH
from agentic_rl.registry import build, component_name, to_dataclass
from agentic_rl.reports.plots import plot_run
from agentic_rl.reports.run_files import read_metrics
from agentic_rl.rollout.agent import RolloutConfig, run_episodes
from agentic_rl.rollout.ahead import RolloutsAhead, batch_jobs, staleness_metrics, sync_metrics
from agentic_rl.rollout.backends import make_policy, policy_class
from agentic_rl.rollout.policy import Policy
from agentic_rl.runtime.allocator import loaded_allocator
from agentic_rl.runtime.checkpoint import (
    CHECKPOINT_DIR,
    Checkpoint,
    load_latest,
    restore_adapter,
    restore_rng_states,
    rng_states,
    save_checkpoint,
)
from agentic_rl.runtime.files import atomic_write_text, disk_errors, eval_records_path
from agentic_rl.runtime.jobs import completed_summary, experiment_hash, multirun_dirs, resolve_resume, run_job
from agentic_rl.runtime.memory import memory_metrics, peak_rss_gib, release_free_memory
from agentic_rl.runtime.stages import RunContext, finish, open_run, pin_run_heap, run_dir_of, seed_everything
from agentic_rl.tools import build_toolset
from agentic_rl.tracking.metrics import episode_metrics, reward_metrics, rollout_metrics, task_type_metrics
from agentic_rl.tracking.sinks import open_tracker, truncate_metrics
from agentic_rl.types import Task
from agentic_rl.warmup import run_warmup

logger = logging.getLogger(__name__)
register_configs()


@dataclass
class Training:
    """What the build stage makes and the loop uses."""

    cfg: DictConfig
    algo: GRPOConfig
    rollout_cfg: RolloutConfig
    eval_cfg: EvalConfig
    train_tasks: list[Task]  # what GRPO draws from (warmup.rl_tasks: all of the data, or those not demonstrated)
    warmup_tasks: list[Task]  # what the warm-up demonstrates (empty without one)
    eval_tasks: list[Task]
    model: Any
    policy: Policy  # the `rollout.backend` sampler over `model`
    optimizer: torch.optim.Optimizer
    reward_fn: Callable
    env: Environment  # the `env` group's environment with the tool set of `tools=`
    eval_envs: dict[str, Environment]  # per evaluation mode, with that mode's tool set
    pad_id: int
    model_name: str
    dist: Distributed  # this process's rank under `accelerate launch` (or the only one)
    reference: ReferenceWeights | None = None  # the KL's reference (algo.kl_reference=warmup): set as the warm-up ends

    @property
    def n_steps(self) -> int:
        per_epoch = epoch_order(len(self.train_tasks), self.algo.tasks_per_epoch, random.Random(0))
        return self.algo.epochs * len(self.dist.shard(per_epoch))


@dataclass
class Position:
    """Where the loop stands; with the model, optimizer and RNG states, all a checkpoint needs to continue."""

    data_rng: random.Random  # draws each epoch's task order
    step: int = 0  # optimizer steps (task groups) done
    epoch: int = 0
    order: list[int] | None = None  # the current epoch's task indices, in drawn order (None: not drawn yet)
    index: int = 0  # next position in `order`
    train_seconds: float = 0.0
    checkpoint_seconds: float = 0.0


def epoch_order(n_tasks: int, per_epoch: int | None, rng: random.Random) -> list[int]:
    """Indices of one epoch's tasks: a fresh shuffle, cut to `per_epoch`."""
    order = list(range(n_tasks))
    rng.shuffle(order)
    return order[:per_epoch] if per_epoch else order


def run(cfg: DictConfig) -> dict[str, Any]:
    """Train, evaluate before/after, write metrics.jsonl, summary.json, figures/, checkpoints/ and the adapter."""
    cfg = resolve_resume(cfg)
    validate(cfg)
    if cfg.get("require_gpu") and not torch.cuda.is_available():
        raise RuntimeError(
            "this experiment needs a CUDA GPU (require_gpu=true) and none is visible. Run it on a GPU "
            "machine, or use the CPU default: python -m agentic_rl.train"
        )
    seed_everything(cfg.seed)
    pinned_kib = pin_run_heap(cfg, policy_class(cfg.rollout))
    dist = Distributed.from_env(cfg.distributed.timeout_s)  # one rank of `accelerate launch`, or the only one
    run_dir = dist.shared_run_dir(run_dir_of(cfg))
    if cfg.get("resume") and dist.world_size > 1:
        raise ValueError(
            "resume= under accelerate launch is not supported yet: a checkpoint holds rank 0's RNG "
            "states only, so the ranks could not continue exactly. Fix: resume with one process, "
            "python -m agentic_rl.train resume=RUN_DIR"
        )
    if cfg.get("resume") and (done := completed_summary(run_dir, cfg)) is not None:
        logger.info("%s is a complete run: nothing to resume", run_dir)
        return done
    checkpoint = resume_point(cfg, run_dir)
    state = checkpoint.state if checkpoint else {}
    tracker = open_tracker(cfg, run_dir, resume_id=state.get("wandb_id"), writer=dist.is_main)
    with (
        open_run(cfg, run_dir, tracker, step=state.get("step", 0)) as ctx,
        # envs.servers, building the run's `env`: stopped at the run's end
        environment_servers(cfg.get("envs"), cfg.sandbox, cfg.get("env")) as servers,
    ):
        training = build_training(cfg, ctx.sandbox, dist, servers)
        position = Position(data_rng=random.Random(cfg.seed))
        summary = {
            "model": training.model_name,
            "tools": cfg.tools.name,
            "reward": component_name(cfg.reward),
            "n_train_tasks": len(training.train_tasks),  # GRPO's
            "n_warmup_tasks": len(training.warmup_tasks),
            "n_eval_tasks": len(training.eval_tasks),
            "eval": {},
            "wandb": ctx.tracker.wandb_info,
            "config_hash": experiment_hash(cfg),
            "mmap_threshold_kib": pinned_kib,  # null: glibc's own threshold (memory.mmap_threshold_kib)
            "allocator": loaded_allocator(),  # the malloc the run ran on (memory.allocator)
        }
        if checkpoint is not None:
            summary["eval"] = restore(training, position, checkpoint)
            logger.info("resumed %s from %s (step %d of %d)", run_dir, checkpoint.path, position.step, training.n_steps)
        elif cfg.eval_before and training.eval_tasks and dist.is_main:
            summary["eval"]["before"] = evaluate_phase(training, ctx, step=0, phase="before")
        warm_up(training, position, ctx, summary, checkpoint)
        if not warmup_config(cfg).only:  # warmup=sft-only: the warm-up arm of a study, no GRPO step
            train_loop(training, position, ctx, summary)
        summary = finish_training(training, position, ctx, summary)
    dist.close()  # every rank got here: a failed rank raised instead, and its peers' collectives time out
    return summary


def resume_point(cfg: DictConfig, run_dir: Path) -> Checkpoint | None:
    """The checkpoint a resumed run (or a rerun sweep job) continues from, with metrics.jsonl cut back to it."""
    resuming = bool(cfg.get("resume")) or multirun_dirs() is not None
    if not resuming:
        if (run_dir / CHECKPOINT_DIR).is_dir():
            raise ValueError(
                f"{run_dir} already holds a training run. Fix: continue it with "
                f"python -m agentic_rl.train resume={run_dir}, or train into a new hydra.run.dir"
            )
        return None
    checkpoint = load_latest(run_dir)
    if checkpoint is not None and checkpoint.state["config_hash"] != experiment_hash(cfg):
        raise ValueError(
            f"the checkpoint {checkpoint.path} belongs to a different experiment than this config. "
            "Fix: resume with resume=RUN_DIR and no overrides, or use a new run / sweep dir"
        )
    if checkpoint is None and (run_dir / "metrics.jsonl").is_file():
        logger.warning("no usable checkpoint in %s: the run starts over", run_dir)
    truncate_metrics(run_dir, checkpoint.state["metrics_bytes"] if checkpoint else 0)
    return checkpoint


def build_training(cfg: DictConfig, sandbox: Any, dist: Distributed, servers: Any = None) -> Training:
    """Build stage: data, reward, tools (stepping on `servers` when envs.servers starts or names some), the model
    with its LoRA adapter, and the optimizer."""
    algo = algo_config(cfg)
    eval_cfg = to_dataclass(cfg.evaluator, EvalConfig)
    data_tasks: list[Task] = build(cfg.data)
    if not data_tasks:
        raise ValueError("the training data is empty: check data.split / data.limit")
    warmup_tasks, train_tasks = warmup_config(cfg).split(data_tasks)
    eval_tasks = eval_cfg.scored_tasks(build(cfg.eval_data))  # summary.json's n_eval_tasks is what was scored
    loaded = build(cfg.model)
    model = add_lora(
        loaded.model,
        algo.lora.r,
        algo.lora.alpha,
        algo.lora.dropout,
        list(algo.lora.target_modules),
        seed=cfg.seed,
        gradient_checkpointing=algo.gradient_checkpointing,
    )
    dist.align(model, cfg.seed)
    optimizer = build(cfg.optimizer, params=[p for p in model.parameters() if p.requires_grad])
    rollout_cfg = to_dataclass(cfg.rollout, RolloutConfig)
    return Training(
        cfg=cfg,
        algo=algo,
        rollout_cfg=rollout_cfg,
        eval_cfg=eval_cfg,
        train_tasks=train_tasks,
        warmup_tasks=warmup_tasks,
        eval_tasks=eval_tasks,
        model=model,
        policy=make_policy(model, loaded.tokenizer, rollout_cfg, seed=cfg.seed),
        optimizer=optimizer,
        reward_fn=build(cfg.reward),
        env=run_environment(cfg, cfg.tools, sandbox, servers),
        eval_envs={m: run_environment(cfg, cfg.evaluator.toolsets[m], sandbox, servers) for m in eval_cfg.modes},
        pad_id=loaded.tokenizer.pad_token_id,
        model_name=loaded.name,
        dist=dist,
    )


def run_environment(cfg: DictConfig, tools_cfg: DictConfig, sandbox: Any, servers: Any) -> Environment:
    """The `env` group's environment with the tool set `tools_cfg`, its episodes stepping on `servers` if any."""
    return environment_from_config(
        cfg.get("env"), build_toolset(tools_cfg, sandbox), sandbox, served(servers, tools_cfg)
    )


def warm_up(
    training: Training, pos: Position, ctx: RunContext, summary: dict[str, Any], checkpoint: Checkpoint | None
) -> None:
    """Warm-up stage (`warmup=sft`, agentic_rl.warmup): SFT of the adapter on scripted demonstrations, before GRPO.

    It runs once per run. Every checkpoint of a run that has one comes after it and records it (its state's
    `warmup`), so a resumed run takes the summary from there and goes straight on; with checkpoints on, one is
    written right after the stage (step 0), so a run stopped during GRPO never trains the warm-up twice.
    """
    warm = warmup_config(training.cfg)
    if not warm.enabled:
        return
    if checkpoint is not None:
        summary["warmup"] = checkpoint.state["warmup"]
        return
    lr = {} if warm.lr is None else {"lr": warm.lr}  # its own optimizer: GRPO starts with fresh moments
    summary["warmup"] = run_warmup(
        training.model,
        lambda params: build(training.cfg.optimizer, params=params, **lr),
        training.warmup_tasks,
        (training.policy.tokenizer, training.env, training.rollout_cfg),
        warm,
        pad_id=training.pad_id,
        micro_batch_tokens=warm.micro_batch_tokens or training.algo.micro_batch_tokens,
        max_grad_norm=training.algo.max_grad_norm,
        dtype=training.algo.dtype,
        lora_dropout=training.algo.lora.dropout,
        log=lambda metrics, step: ctx.tracker.log({**metrics, **memory_metrics()}, step),  # its memory, as GRPO's
        seed=training.cfg.seed,
        progress=bool(training.cfg.progress) and training.dist.is_main,
    )
    if training.algo.kl_to_warmup:
        training.reference = ReferenceWeights.of(training.model)  # the policy the warm-up left, kept as it is now
    if int(training.cfg.get("checkpoint_every") or 0) > 0 and training.dist.is_main:
        save_training(training, pos, ctx, summary)


def train_loop(training: Training, pos: Position, ctx: RunContext, summary: dict[str, Any]) -> None:
    """Loop stage: rollout batches until the last epoch ends; checkpoint and honour signals between batches."""
    every = int(training.cfg.get("checkpoint_every") or 0)
    # Steps arrive in bursts (a rollout batch, then one short update per group): a moving-average rate swings
    # with every burst, so the ETA uses the average rate since the start (smoothing=0).
    bar = tqdm(
        total=training.n_steps,
        initial=pos.step,
        desc="train (task groups)",
        disable=not (training.cfg.progress and training.dist.is_main),
        smoothing=0,
    )
    started, seconds_before = time.perf_counter(), pos.train_seconds
    roll = lambda jobs: run_episodes(jobs, training.policy, training.env, training.rollout_cfg)  # noqa: E731
    # algo.max_staleness: the next batches roll out while this one updates (0: nothing ahead, the synchronous loop)
    with (
        ctx.interrupts.deferred(),
        contextlib.closing(RolloutsAhead(roll, training.policy, training.algo.max_staleness)) as ahead,
    ):
        while pos.epoch < training.algo.epochs:
            if pos.order is None:
                # every rank draws the same order and takes its own share of it
                order = epoch_order(len(training.train_tasks), training.algo.tasks_per_epoch, pos.data_rng)
                pos.order, pos.index = training.dist.shard(order), 0
            chunk = pos.order[pos.index : pos.index + training.algo.tasks_per_rollout]
            step_before = pos.step
            after = range(
                pos.index + len(chunk), len(pos.order), training.algo.tasks_per_rollout
            )  # this epoch's next batches
            upcoming = [
                [training.train_tasks[i] for i in pos.order[j : j + training.algo.tasks_per_rollout]] for j in after
            ]
            train_on_chunk(training, [training.train_tasks[i] for i in chunk], pos, ctx, bar, ahead, upcoming)
            pos.index += len(chunk)
            if pos.index >= len(pos.order):
                pos.epoch, pos.order = pos.epoch + 1, None
            pos.train_seconds = seconds_before + time.perf_counter() - started
            # safe point: nothing of this batch is left in flight
            due = every > 0 and (pos.step // every > step_before // every or pos.step == training.n_steps)
            if (due or ctx.interrupts.requested) and training.dist.is_main:
                save_training(training, pos, ctx, summary)
            if ctx.interrupts.requested:
                bar.close()
                raise ctx.interrupts.interrupted()
    bar.close()


def train_on_chunk(
    training: Training,
    chunk: list[Task],
    pos: Position,
    ctx: RunContext,
    bar: tqdm,
    ahead: RolloutsAhead | None = None,
    upcoming: list[list[Task]] | None = None,
) -> None:
    """One rollout batch (the G samples of every task in `chunk`), then one optimizer step per task group; with
    `ahead`, the batch may have been rolled out while the previous one updated, and the `upcoming` ones start."""
    algo = training.algo
    ahead = ahead or RolloutsAhead(
        lambda jobs: run_episodes(jobs, training.policy, training.env, training.rollout_cfg), training.policy, 0
    )
    # Freed heap that glibc keeps resident would otherwise stack under each phase's peak: the rollout's caches and
    # the update's activations are each gigabyte-sized, allocated and freed in different sizes.
    release_free_memory()
    # 1. rollout: the G samples of every task in the chunk, generated as one batch
    trajs, lags = ahead.take(
        batch_jobs(chunk, algo.group_size), [batch_jobs(c, algo.group_size) for c in upcoming or []]
    )
    # 2. reward, per task group
    groups = [trajs[i * algo.group_size : (i + 1) * algo.group_size] for i in range(len(chunk))]
    breakdowns = [[training.reward_fn(traj) for traj in group] for group in groups]
    rewards = [torch.tensor([b.total for b in bds], dtype=torch.float64) for bds in breakdowns]
    release_free_memory()  # what the rollout freed (see above)
    # 3-5. advantages -> loss -> one optimizer step per task group
    all_stats = update_rollout_batch(
        training.model,
        training.optimizer,
        groups,
        rewards,
        algo,
        training.pad_id,
        temperature=training.rollout_cfg.temperature,
        step=training.dist.data_parallel(grpo_step),
        reference=training.reference,
        **(
            {"staleness": [lags[i * algo.group_size : (i + 1) * algo.group_size] for i in range(len(chunk))]}
            if any(lags)
            else {}
        ),
    )
    synced_s = ahead.updated()  # the new weights go to the sampler servers (max_staleness >= 1)
    # the batch's rollout is shared by its groups: each step carries an equal share of its time, so a run's
    # time/* columns add up to its wall time
    shared = {**rollout_metrics(trajs.stats), **staleness_metrics(lags), **sync_metrics(training.policy)}
    shared["time/sync_s"] += synced_s  # a sync between updates is outside the rollout's own time
    for key in ("time/rollout_s", "time/tools_s", "time/sync_s", "rollout/sync_bytes"):
        if key in shared:
            shared[key] /= len(groups)
    for task, group, bds, group_rewards, stats in zip(chunk, groups, breakdowns, rewards, all_stats):
        pos.step += 1
        # 6. log (a skipped group has no loss, KL or grad norm: those keys are absent)
        metrics = {
            "train/epoch": pos.epoch,
            "train/pass_rate": sum(traj.passed for traj in group) / len(group),
            **stats.metrics(),
            "train/frac_zero_std": float(not group_has_signal(group_rewards)),
            **reward_metrics(bds),
            **episode_metrics(group),
            **shared,
            **training.env.group_metrics(group, [task] * len(group)),  # the environment's own (CodeGym's env/*)
            **task_type_metrics(task.metadata.get("task_type"), group),  # per type: only for typed tasks
            "time/update_s": stats.update_s,
            "time/step_s": shared["time/rollout_s"] + stats.update_s,
            **memory_metrics(),
        }
        ctx.tracker.log(training.dist.reduce_step(metrics, training.model), pos.step)
        ctx.tracker.log_trajectories(pos.step, group, bds, task.prompt)
        bar.update(1)
        bar.set_postfix(pass_rate=f"{metrics['train/pass_rate']:.2f}", reward=f"{metrics['train/reward_mean']:.2f}")


def save_training(training: Training, pos: Position, ctx: RunContext, summary: dict[str, Any]) -> None:
    """A resumable checkpoint of everything the rest of the run depends on."""
    started = time.perf_counter()
    state = {
        "step": pos.step,
        "epoch": pos.epoch,
        "order": pos.order,
        "index": pos.index,
        "order_task_ids": [training.train_tasks[i].task_id for i in pos.order or []],
        "data_rng": pos.data_rng.getstate(),
        "rng": rng_states(),
        "optimizer": training.optimizer.state_dict(),
        "train_seconds": pos.train_seconds,
        "checkpoint_seconds": pos.checkpoint_seconds,
        "metrics_bytes": ctx.tracker.metrics_bytes(),
        "eval": summary["eval"],
        "config_hash": summary["config_hash"],
        "wandb_id": ctx.tracker.wandb_info.get("id"),
    }
    if "warmup" in summary:  # the warm-up is done: a run resumed from here never repeats it
        state["warmup"] = summary["warmup"]
    if training.reference is not None:  # what the warm-up left: gone from the model once GRPO has stepped
        state["kl_reference"] = training.reference.state()
    save_checkpoint(
        ctx.run_dir, pos.step, training.model, state, keep=max(int(training.cfg.get("checkpoint_keep") or 1), 1)
    )
    ctx.interrupts.saved_step = pos.step
    pos.checkpoint_seconds += time.perf_counter() - started


def restore(training: Training, pos: Position, checkpoint: Checkpoint) -> dict[str, Any]:
    """Put the model, optimizer, loop position and RNGs back as they were at the checkpoint; return its evals."""
    s = checkpoint.state
    order_ids = [training.train_tasks[i].task_id for i in s["order"] or [] if i < len(training.train_tasks)]
    if order_ids != s["order_task_ids"]:
        raise ValueError(
            f"the training tasks differ from those of {checkpoint.path} (the data files changed since "
            "the run started), so the run cannot continue exactly. Fix: restore the data, or start a "
            "new run"
        )
    restore_adapter(training.model, checkpoint)
    if training.algo.kl_to_warmup:
        if "kl_reference" not in s:
            raise ValueError(
                f"{checkpoint.path} holds no KL reference weights, which algo.kl_reference=warmup needs to continue "
                "exactly. Fix: resume with the settings it was saved with, or start a new run"
            )
        training.reference = ReferenceWeights(s["kl_reference"])
    training.optimizer.load_state_dict(s["optimizer"])
    pos.step, pos.epoch, pos.order, pos.index = s["step"], s["epoch"], s["order"], s["index"]
    pos.train_seconds, pos.checkpoint_seconds = s["train_seconds"], s["checkpoint_seconds"]
    pos.data_rng.setstate(s["data_rng"])
    restore_rng_states(s["rng"])  # last: building the model above drew from the global RNGs
    return s["eval"]


def finish_training(training: Training, pos: Position, ctx: RunContext, summary: dict[str, Any]) -> dict[str, Any]:
    """Finish stage: evaluate after training, then summary.json, then the adapter and the figure (rank 0 only)."""
    summary.update(training.dist.summary())
    if not training.dist.is_main:
        return summary
    if training.cfg.eval_after and training.eval_tasks:
        summary["eval"]["after"] = evaluate_phase(training, ctx, step=pos.step, phase="after")
    if summary["eval"] and (constant := evaluation_constant(training.eval_tasks, ctx.sandbox)) is not None:
        # a CodeGym success rate beside what one constant Done answer scores on the same tasks (as `evaluate`'s)
        summary["constant_answer"] = constant
    summary.update(
        train_steps=pos.step,
        train_seconds=round(pos.train_seconds, 1),
        checkpoint_seconds=round(pos.checkpoint_seconds, 2),
        # a resumed run's earlier processes logged their own peaks: the run's peak is the highest of all
        peak_rss_gib=round(max(peak_rss_gib(), _max_metric(ctx.run_dir, "memory/peak_rss_gib") or 0.0), 3),
        frac_zero_std=_mean_metric(ctx.run_dir, "train/frac_zero_std"),
    )
    late = [("figure", lambda: plot_run(ctx.run_dir), False)]
    if training.cfg.save_adapter:
        late.insert(0, ("adapter", lambda: save_adapter(training.model, ctx.run_dir / "adapter"), True))
    return finish(ctx, summary, late)


def save_adapter(model: Any, path: Path) -> Path:
    with disk_errors(path):
        model.save_pretrained(str(path))
    return path


def _metric_values(run_dir: Path, key: str) -> list[float]:
    return [r[key] for r in read_metrics(run_dir) if r.get(key) is not None]


def _mean_metric(run_dir: Path, key: str) -> float | None:
    vals = _metric_values(run_dir, key)
    return sum(vals) / len(vals) if vals else None


def _max_metric(run_dir: Path, key: str) -> float | None:
    return max(_metric_values(run_dir, key), default=None)


def base_eval_config(cfg: DictConfig) -> BaseEvalConfig:
    node = cfg.get("base_eval")
    return BaseEvalConfig() if node is None else to_dataclass(node, BaseEvalConfig)


@contextlib.contextmanager
def base_evaluation(training: Training) -> Iterator[tuple[EvalConfig, ResultStore]]:
    """The evaluator settings and store of the shared base evaluation (agentic_rl.evaluation.base_cache)."""
    base = base_eval_config(training.cfg)
    settings: dict[str, Any] = {
        name: OmegaConf.to_container(training.cfg[name], resolve=True)
        for name in ("model", "evaluator", "rollout", "sandbox")
    }
    settings["evaluator"]["seed"] = base.seed
    settings["version"] = package_version()
    with shared_base_eval(base, base_eval_key(settings, training.eval_tasks)) as store:
        logger.info("eval before: the shared base evaluation in %s (%d episodes there)", store.path.parent, len(store))
        yield with_seed(training.eval_cfg, base.seed), store


def evaluate_phase(training: Training, ctx: RunContext, step: int, phase: str) -> dict:
    release_free_memory()  # what training freed, so the evaluation's peak does not stack on top of it
    evaluate = EVALUATORS.get(training.eval_cfg.name)
    shared = phase == "before" and base_eval_config(training.cfg).cache is not None
    with (
        base_evaluation(training) if shared else contextlib.nullcontext((training.eval_cfg, None)) as (eval_cfg, store)
    ):
        results = evaluate(
            training.eval_tasks,
            training.policy,
            training.eval_envs,
            training.rollout_cfg,
            eval_cfg,
            progress=training.cfg.progress,
            store=store,
        )
    # same names before (step 0) and after training: one curve each
    ctx.tracker.log({**flat_metrics(results), **memory_metrics()}, step)
    for mode, res in results.items():
        logger.info("eval %s %s: pass@1 %.3f", phase, mode, res.pass_at.get(1, float("nan")))
    # per-task records, for the paired before/after analysis of the tables (reports/tables.py)
    records = [json.dumps(record) for res in results.values() for record in res.records]
    atomic_write_text(eval_records_path(ctx.run_dir, phase), "".join(f"{line}\n" for line in records))
    return {mode: {**{f"pass@{k}": v for k, v in res.pass_at.items()}, **res.metrics} for mode, res in results.items()}


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="train")
def main(cfg: DictConfig) -> float | None:
    summary = run_job(cfg, run, entry="agentic_rl.train", resume_key="resume")
    if summary is None:  # a failed sweep job, recorded in the sweep's failures.json
        return None
    after = summary["eval"].get("after") or {}
    return max((m.get("pass@1", 0.0) for m in after.values()), default=0.0)


def cli() -> None:
    """`agentic-rl-train` and `python -m agentic_rl.train`: config errors as one message (exit 2)."""
    # under `accelerate launch --cpu`, first start the ranks accelerate did not (see distributed.py)
    launch_ranks_or(lambda: run_cli(main, "train"), "agentic_rl.train")


if __name__ == "__main__":
    cli()
