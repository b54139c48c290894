"""Data-parallel training over several processes, on accelerate and torch.distributed.

    accelerate launch --cpu --num_processes 2 -m agentic_rl.train model=tiny-random ...   (CPU, gloo)
    accelerate launch --num_processes 4 -m agentic_rl.train experiment=seed-3b            (4 GPUs, NCCL)

Nothing here is a new engine: accelerate (or torchrun, srun) starts the processes, `PartialState` opens the
process group (gloo on CPU, NCCL on CUDA) and places each rank on its device, and accelerate's collectives
move the tensors. This module only decides *what* is exchanged, so that N ranks run one job:

- **Work.** Every rank draws the same epoch order (same seed); the list is padded to a multiple of N by
  repeating tasks from its start (as torch's DistributedSampler does) and dealt out round-robin, so global
  step k pairs the k-th task group of every rank. Each rank rolls out its groups with its own sandbox.
- **Gradients.** After its group's backward pass, each rank's LoRA gradients are summed over ranks together
  with a count of the ranks whose group took part, and divided by that count: the mean over the step's
  groups, which is the gradient a single process would take over their union (each group's loss is
  normalised within the group). Every rank then clips and steps on that same gradient, so the adapters stay
  identical; `reduce_step` checks this every step.
- **Lockstep.** A rank whose group is skipped (zero reward spread) still joins the all-reduce, with zero
  gradients and a count of 0, and steps with the others; if no rank's group took part, every rank skips the
  optimizer step together. So each rank makes the same collectives in the same order and none waits forever.
- **Writing.** Rank 0 alone writes the run dir (metrics.jsonl with the step's metrics reduced over ranks,
  summary.json, figures, adapter), talks to W&B and runs the before/after evaluation (not sharded: the
  other ranks wait for it in their next collective, up to `distributed.timeout_s`).

`accelerate launch --cpu` starts a single process whatever `--num_processes` says (accelerate's simple
launcher; its multi-CPU path needs mpirun). `launch_ranks_or` closes that gap: it reads the process count
from the `accelerate launch` command line and starts the ranks with torch.distributed.run.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import torch

logger = logging.getLogger(__name__)

T = TypeVar("T")
S = TypeVar("S")  # the stats a wrapped update step returns

# Environment variables by which a launcher (torchrun, MPI) tells a process its rank.
_RANK_VARS = ("RANK", "LOCAL_RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK")
# How a metric of one step is combined over ranks; anything not listed is averaged over the ranks that have it.
_SUMMED = ("train/model_tokens", "rollout/episodes", "rollout/tokens_per_s")  # extensive: all ranks together
_LARGEST = ("time/", "memory/")  # a step lasts as long as its slowest rank; the job needs its largest process


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def env_rank() -> int:
    """This process's rank as its launcher set it (0 when not launched as one of several)."""
    for var in ("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


def _env_world_size() -> int:
    for var in ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 1


def accelerate_state(timeout_s: float | None = None) -> Any:
    """accelerate's process state (opens the process group on first use; a singleton afterwards).

    `--cpu` (ACCELERATE_USE_CPU) is passed on explicitly: PartialState only uses gloo over CPU ranks when told.
    Several ranks on a machine without CUDA also need it, or PartialState would run each rank alone.
    """
    from accelerate import PartialState

    cpu = _flag("ACCELERATE_USE_CPU") or (_env_world_size() > 1 and not torch.cuda.is_available())
    kwargs = {"timeout": timedelta(seconds=timeout_s)} if timeout_s else {}
    return PartialState(cpu=cpu, **kwargs)


@dataclass
class Distributed:
    """This process's place in the job and the few exchanges data parallelism needs.

    With one process every method is a no-op (or the identity), so the training loop has one code path.
    """

    rank: int = 0
    world_size: int = 1
    device: torch.device = torch.device("cpu")
    backend: str | None = None
    steps_verified: int = 0  # steps after which every rank was seen to hold the same adapter

    @classmethod
    def from_env(cls, timeout_s: float | None = None) -> Distributed:
        state = accelerate_state(timeout_s)
        dist = cls(rank=state.process_index, world_size=state.num_processes, device=state.device, backend=state.backend)
        if dist.world_size > 1:
            logger.info("rank %d of %d on %s (backend %s)", dist.rank, dist.world_size, dist.device, dist.backend)
        return dist

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    # ---- set-up -------------------------------------------------------------------------------------------

    def broadcast_object(self, obj: T) -> T:
        """Rank 0's value of `obj` on every rank (e.g. its run dir, whose timestamp may differ elsewhere)."""
        if self.world_size == 1:
            return obj
        from accelerate.utils import broadcast_object_list

        return broadcast_object_list([obj], from_process=0)[0]

    def shared_run_dir(self, own: Path) -> Path:
        """Rank 0's run dir, on every rank (other ranks' Hydra dirs are private temporary ones: `rank_argv`)."""
        return Path(self.broadcast_object(str(own)))

    def align(self, model: torch.nn.Module, seed: int) -> None:
        """Start every rank from rank 0's adapter, then give ranks > 0 their own sampling stream.

        Rank 0 keeps the single-process stream, so a 1-rank run is unchanged; the task order comes from its
        own `random.Random(seed)` and stays common to all ranks.
        """
        if self.world_size == 1:
            return
        from accelerate.utils import broadcast

        params = _trainable(model)
        flat = broadcast(torch.nn.utils.parameters_to_vector(params).detach().contiguous(), from_process=0)
        torch.nn.utils.vector_to_parameters(flat, params)
        if self.rank > 0:
            torch.manual_seed(seed + 7919 * self.rank)

    def shard(self, items: Sequence[T]) -> list[T]:
        """This rank's share of a list every rank holds in the same order.

        Padded to a multiple of the world size by repeating items from its start, then dealt round-robin:
        every rank gets the same number of items, hence the same number of optimizer steps.
        """
        items = list(items)
        if self.world_size == 1 or not items:
            return items
        padded = items + [items[i % len(items)] for i in range(-len(items) % self.world_size)]
        return padded[self.rank :: self.world_size]

    def close(self) -> None:
        """Leave the process group once every rank is done (call on every rank, after its last collective).

        A rank that exits with the group still up tears down gloo's background threads from the interpreter's exit
        and can abort there ("terminate called without an active exception", exit code -6) after all of its work
        succeeded; the barrier keeps a rank from closing its connections while a peer still reads from them."""
        if self.world_size == 1 or not torch.distributed.is_initialized():
            return
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()

    # ---- one step -----------------------------------------------------------------------------------------

    def average_gradients(self, params: Sequence[torch.nn.Parameter], counts: bool) -> int:
        """Replace each `.grad` by the mean over the ranks whose group counts; returns how many did.

        One all-reduce per step: the gradients, flattened, plus this rank's count (1 or 0) in the last slot.
        A rank that does not count must hold zero gradients. Sums are taken in float32 whatever the
        gradients' dtype, so bf16 gradients lose nothing in the exchange.
        """
        if self.world_size == 1:
            return int(counts)
        from accelerate.utils import reduce

        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        device = grads[0].device if grads else self.device
        flat = torch.cat([g.reshape(-1).float() for g in grads] + [torch.tensor([float(counts)], device=device)])
        flat = reduce(flat, reduction="sum")
        n_counted = int(round(float(flat[-1])))
        if n_counted == 0:
            return 0
        offset = 0
        for p, g in zip(params, grads):
            p.grad = (flat[offset : offset + g.numel()] / n_counted).view_as(g).to(g.dtype)
            offset += g.numel()
        return n_counted

    def data_parallel(self, step: Callable[..., S]) -> Callable[..., S]:
        """`step` (one group's update, `algo.grpo.grpo_step`) on this rank's group, its gradients averaged over
        all ranks' groups; `step` itself with one process.

        `step(model, optimizer, group, rewards, cfg, pad_id, *, grad_sync, **kwargs)` calls `grad_sync(params)`
        between its backward pass and clipping, and returns dataclass stats with a `grad_norm` field. Whatever
        rule makes it skip a group (and return before its backward pass), this rank then joins the step with zero
        gradients, so every rank makes exactly one all-reduce per step.
        """
        if self.world_size == 1:
            return step

        def data_parallel_step(
            model: Any,
            optimizer: torch.optim.Optimizer,
            group: Sequence[Any],
            rewards: torch.Tensor,
            cfg: Any,
            pad_id: int,
            **step_kwargs: Any,
        ) -> S:
            synced: list[int] = []

            def sync(params: Sequence[torch.nn.Parameter]) -> None:
                synced.append(self.average_gradients(params, counts=True))

            stats = step(model, optimizer, group, rewards, cfg, pad_id, grad_sync=sync, **step_kwargs)
            if synced:
                return stats
            # the step skipped this group; its step is the mean of the other ranks' groups (or no step at all)
            params = _trainable(model)
            for p in params:
                p.grad = torch.zeros_like(p)
            grad_norm = None  # no step at all when no rank's group counts: absent, never 0
            if self.average_gradients(params, counts=False) > 0:
                grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm))
                optimizer.step()
            return dataclasses.replace(stats, grad_norm=grad_norm)

        return data_parallel_step

    def reduce_step(self, metrics: dict[str, Any], model: torch.nn.Module) -> dict[str, Any]:
        """Every rank's metrics of this step, combined for rank 0's log (other ranks get theirs back).

        Rides along: a digest of each rank's adapter, which must be equal on all ranks after every step.
        """
        if self.world_size == 1:
            return metrics
        from accelerate.utils import gather_object

        gathered = gather_object([(metrics, adapter_digest(model))])
        digests = [d for _, d in gathered]
        if len(set(digests)) != 1:
            raise RuntimeError(
                f"the ranks' LoRA weights differ after a step (digests {digests}): data-parallel "
                "training has diverged; a rank must have missed a gradient exchange"
            )
        self.steps_verified += 1
        return reduce_metrics([m for m, _ in gathered])

    def summary(self) -> dict[str, Any]:
        """What summary.json records about the job's layout (and, on a GPU, rank 0's peak memory)."""
        out = {
            "world_size": self.world_size,
            "backend": self.backend,
            "device": str(self.device),
            "steps_weights_identical": self.steps_verified if self.world_size > 1 else None,
        }
        if self.device.type == "cuda":
            out["cuda_peak_memory_gb"] = round(torch.cuda.max_memory_allocated(self.device) / 2**30, 2)
        return out


def _trainable(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def adapter_digest(model: torch.nn.Module) -> str:
    """SHA-256 of the trainable weights, in parameter order: equal digests mean bit-identical adapters."""
    h = hashlib.sha256()
    for name, p in model.named_parameters():
        if p.requires_grad:
            h.update(name.encode())
            h.update(p.detach().float().cpu().numpy().tobytes())
    return h.hexdigest()


def reduce_metrics(per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One step's metrics from every rank -> one record.

    Rates and means are averaged over the ranks that report them (every rank's group has G episodes, so
    this is the rate over the union); counts and throughputs are summed; times take the slowest rank, memory
    the largest process.
    A metric no rank reports (or all report as None) stays absent, never 0.
    """
    keys = list(dict.fromkeys(k for m in per_rank for k in m))
    out: dict[str, Any] = {}
    for key in keys:
        values = [m[key] for m in per_rank if m.get(key) is not None]
        if not values:
            continue
        if key in _SUMMED:
            out[key] = sum(values)
        elif key.startswith(_LARGEST):
            out[key] = max(values)
        else:
            out[key] = sum(values) / len(values)
    return out


# ---- launching --------------------------------------------------------------------------------------------

# Hydra settings that would make a rank > 0 write into the run dir; `rank_argv` replaces them.
_RANK0_ONLY_OVERRIDES = ("hydra.run.dir=", "hydra.sweep.dir=", "hydra.output_subdir=")


def rank_argv(argv: list[str], rank: int) -> list[str]:
    """The command line for a rank: unchanged on rank 0; on other ranks, Hydra's run and sweep dirs point to a
    private temporary dir and no .hydra/ is written, so rank 0 alone writes the run dir (its path is then
    broadcast by `Distributed.shared_run_dir`)."""
    if rank == 0:
        return argv
    kept = [a for a in argv if not a.lstrip("+").startswith(_RANK0_ONLY_OVERRIDES)]
    private = tempfile.mkdtemp(prefix=f"agentic_rl-rank{rank}-")
    atexit.register(shutil.rmtree, private, ignore_errors=True)
    return kept + [f"hydra.run.dir={private}", f"hydra.sweep.dir={private}", "hydra.output_subdir=null"]


def cpu_processes_requested() -> int | None:
    """N when this process was started by `accelerate launch --cpu --num_processes N` (N > 1) as one process.

    accelerate's simple launcher (used for `--cpu`) starts one process and sets MASTER_ADDR only when
    --num_processes > 1; the count itself is read from the launching `accelerate launch` command line with
    accelerate's own argument parser.
    """
    if not _flag("ACCELERATE_USE_CPU") or "MASTER_ADDR" not in os.environ:
        return None
    if any(var in os.environ for var in _RANK_VARS):
        return None  # already one rank of several (torchrun, MPI)
    import psutil

    parent = psutil.Process().parent()
    return processes_from_launch_cmdline(parent.cmdline() if parent is not None else [])


def processes_from_launch_cmdline(cmdline: list[str]) -> int | None:
    """--num_processes of an `accelerate launch` (or `python -m accelerate.commands.launch`) command line, when
    above 1; None if the command is not one."""
    from accelerate.commands.launch import launch_command_parser

    starts = [i for i, arg in enumerate(cmdline) if arg in ("launch", "accelerate.commands.launch")]
    if not starts:
        return None
    args, _ = launch_command_parser().parse_known_args(cmdline[starts[0] + 1 :])
    if (args.num_machines or 1) > 1:
        raise RuntimeError(
            "accelerate launch --cpu over several machines needs MPI: run `accelerate config`, "
            "choose multi-CPU with an mpirun hostfile, and launch with that config"
        )
    n = args.num_processes
    return n if n and n > 1 else None


def launch_ranks_or(main: Callable[[], Any], module: str) -> Any:
    """Run `main()` as this process's rank, or first start the ranks `accelerate launch --cpu` did not.

    `module` is the `-m` module each started rank runs, with this process's arguments. The ranks are
    started by torch.distributed.run (single node, a free port), which also stops them all if one fails.
    """
    n = cpu_processes_requested()
    if n is None:
        sys.argv = rank_argv(sys.argv, env_rank())
        return main()
    logger.info("accelerate launch --cpu started one process; starting %d CPU ranks with torch.distributed.run", n)
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={n}",
        "-m",
        module,
        *sys.argv[1:],
    ]
    sys.exit(subprocess.run(cmd).returncode)
