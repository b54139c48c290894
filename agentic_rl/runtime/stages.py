"""The stages every run goes through, shared by `train.py` and `evaluate.py`.

    with open_run(cfg, run_dir, tracker) as ctx:   # build: sandbox, signal handlers (the tracker is given)
        ...                                        # loop: the entry point's own work, logging through ctx.tracker
        finish(ctx, summary, late=[...])           # finish: summary.json first, then whatever may fail late

The entry point makes the tracker (`tracking.sinks.open_tracker`) and hands it in, so this module needs nothing
above the runtime layer. `open_run` always closes the tracker (W&B with the run's outcome) and the sandbox,
whatever happens inside. `finish` writes summary.json before the late artifacts (adapter, figures), so a
failure there never loses the run's results.
"""

from __future__ import annotations

import contextlib
import logging
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from agentic_rl.registry import build
from agentic_rl.runtime.allocator import allocator_for, loaded_allocator, restart_on
from agentic_rl.runtime.files import DiskFullError
from agentic_rl.runtime.interrupt import InterruptGuard
from agentic_rl.runtime.memory import MemoryConfig, apply_memory_config

logger = logging.getLogger(__name__)

# `hydra.run.dir: ${agentic_rl.or_else:${resume},outputs/...}`: a resumed run writes into its own run dir.
OmegaConf.register_new_resolver(
    "agentic_rl.or_else", lambda value, default: default if value is None else value, replace=True
)
OmegaConf.register_new_resolver(
    "agentic_rl.if_resume", lambda resume, then, otherwise: otherwise if resume is None else then, replace=True
)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class SamplerClass(Protocol):
    """What the run's sampler says about itself before it is built: a `Policy` class (agentic_rl.rollout.policy;
    `agentic_rl.rollout.backends.policy_class(cfg.rollout)` finds the run's, `auto` resolved)."""

    def shares_trainer_heap(self, on_gpu: bool) -> bool: ...


def pin_run_heap(cfg: DictConfig, sampler: SamplerClass) -> int | None:
    """`memory.mmap_threshold_kib` applied to this process, before the model is loaded: `auto` pins where the run's
    sampler class says its engine shares the heap with the trainer on this device (`VLLMPolicy` without a GPU).
    The entry point passes the class, as this layer sits below the rollout. The KiB pinned, or None.

    First, where `memory.allocator` asks for another malloc than this process's (`auto`: where the heap would be
    pinned), the command starts again on it into the same run dir (agentic_rl.runtime.allocator); nothing of the
    run has been opened yet."""
    memory = MemoryConfig(**(OmegaConf.to_container(cfg.memory, resolve=True) if cfg.get("memory") else {}))
    shares_heap = sampler.shares_trainer_heap(on_gpu=torch.cuda.is_available())
    loaded = loaded_allocator()
    wanted, library = allocator_for(memory.allocator, shares_heap)
    if library is not None and wanted != loaded:
        single_job = in_hydra() and not in_multirun()
        if not (single_job and restart_on(wanted, library, [_same_run_dir()])):
            logger.warning(
                "memory.allocator=%s asks for %s, but this process runs on %s and cannot start again on it (%s)",
                memory.allocator,
                wanted,
                loaded,
                "a run called in process, or started again already" if single_job else "-m: its jobs share it",
            )
    return apply_memory_config(memory, shares_heap, loaded)


def _same_run_dir() -> str:
    """The override that keeps a command started again in this job's run dir (Hydra's own, already made: a dir
    named by the time would otherwise be a new one)."""
    from hydra.core.hydra_config import HydraConfig

    folder = HydraConfig.get().runtime.output_dir
    return f"hydra.run.dir='{folder}'" if "'" not in folder else f'hydra.run.dir="{folder}"'


def in_hydra() -> bool:
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.initialized()


def in_multirun() -> bool:
    """Inside a Hydra multirun's job (`-m`: the jobs share this process)."""
    from hydra.core.hydra_config import HydraConfig

    return in_hydra() and HydraConfig.get().mode.name == "MULTIRUN"


def run_dir_of(cfg: DictConfig) -> Path:
    """`resume` (train) or `resume_dir` (evaluate), else `run_dir` (tests), else Hydra's output dir."""
    explicit = cfg.get("resume") or cfg.get("resume_dir") or cfg.get("run_dir")
    if explicit:
        return Path(explicit)
    from hydra.core.hydra_config import HydraConfig

    return Path(HydraConfig.get().runtime.output_dir)


@dataclass
class RunContext:
    """What the build stage opened and the finish stage must close."""

    run_dir: Path
    tracker: Any  # a `tracking.sinks.Tracker` (or its silent stand-in on ranks > 0): log, summary, close
    interrupts: InterruptGuard
    sandbox: Any = None


@contextlib.contextmanager
def open_run(
    cfg: DictConfig,
    run_dir: Path,
    tracker: Any,
    *,
    step: int | None = None,
    sandbox_overrides: dict[str, Any] | None = None,
) -> Iterator[RunContext]:
    """Open the signal handlers and the sandbox; close them and `tracker` (W&B with the run's outcome) on exit.

    `step` is the step a resume starts from (for the interruption message).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    ctx = RunContext(run_dir=run_dir, tracker=tracker, interrupts=InterruptGuard(run_dir, step))
    exit_code = 1
    try:
        with ctx.interrupts:
            ctx.sandbox = build(cfg.sandbox, **(sandbox_overrides or {}))
            yield ctx
            exit_code = 0
    finally:
        tracker.close(exit_code)
        if ctx.sandbox is not None and hasattr(ctx.sandbox, "close"):
            ctx.sandbox.close()


def finish(ctx: RunContext, summary: dict[str, Any], late: list[tuple[str, Callable[[], Any], bool]]) -> dict[str, Any]:
    """Write summary.json, then each late artifact `(summary key, make it, required)`, recording its path.

    A required artifact that fails (the adapter) raises after summary.json is safe; an optional one
    (a figure) is logged and skipped. A full disk always raises: every later write would fail too.
    `status` is "finishing" until the last write says "complete" (a sweep rerun skips complete jobs only).
    """
    summary["status"] = "finishing"
    ctx.tracker.summary(summary)
    for key, make, required in late:
        try:
            summary[key] = str(make())
        except DiskFullError:
            raise
        except Exception:
            if required:
                raise
            logger.warning("could not write the %s; metrics.jsonl and summary.json are complete", key, exc_info=True)
    summary["status"] = "complete"
    ctx.tracker.summary(summary)
    return summary
