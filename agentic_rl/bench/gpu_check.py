"""`make gpu-check`: the sampling service on a lent GPU machine, in one command and under 10 minutes.

    python -m agentic_rl.bench.gpu_check [--out DIR] [--no-install] [overrides ...]

1. Refuses, with one message and exit status 2, where no NVIDIA GPU is visible (`nvidia-smi -L` lists none, or torch
   sees no CUDA device): the check means nothing on a CPU (CPU machines run `make test` and the vLLM tests instead).
2. Installs `vllm` beside the project (`pip install vllm` into this interpreter) unless it already imports.
3. Runs `experiment=smoke` with `rollout.backend=vllm algo.max_staleness=1` (and two batches in the epoch, so one
   of them is rolled out while the trainer updates), vLLM on one sampler server, the GPU path being the same code.
4. Prints the run's tokens/s, sync time and bytes, staleness, and the sampler/trainer gap
   (`rollout_correction/*`), from the run's own metrics.jsonl, step by step.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)
SMOKE = ["experiment=smoke", "rollout.backend=vllm", "algo.max_staleness=1", "algo.tasks_per_epoch=2"]
SHOWN = ("rollout/tokens_per_s", "time/rollout_s", "time/sync_s", "rollout/sync_bytes", "time/update_s", "time/step_s")
SHOWN_PREFIXES = ("rollout/staleness_", "rollout_correction/")
NO_GPU = (
    "make gpu-check needs an NVIDIA GPU, and this machine has none ({why}). It installs vLLM for CUDA and runs the "
    "smoke run on it; on a CPU machine run `make test` and the vLLM tests (.ci/run) instead, or run this target on "
    "a lent GPU machine."
)


class NoGPU(RuntimeError):
    """No CUDA device is visible: the check cannot run here."""


def find_gpu(nvidia_smi: str | None = None, cuda_available: bool | None = None) -> str:
    """The GPUs `nvidia-smi -L` lists (one line each); NoGPU with the reason where there is none."""
    smi = nvidia_smi if nvidia_smi is not None else shutil.which("nvidia-smi")
    if not smi:
        raise NoGPU(NO_GPU.format(why="no nvidia-smi on PATH"))
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NoGPU(NO_GPU.format(why=f"nvidia-smi -L failed: {exc}")) from None
    gpus = [line for line in listed.stdout.splitlines() if line.startswith("GPU ")]
    if listed.returncode != 0 or not gpus:
        said = (listed.stderr or listed.stdout).strip().splitlines()
        raise NoGPU(NO_GPU.format(why=f"nvidia-smi -L lists no GPU: {said[0] if said else listed.returncode}"))
    if cuda_available is None:
        import torch

        cuda_available = torch.cuda.is_available()
    if not cuda_available:
        raise NoGPU(NO_GPU.format(why="nvidia-smi lists a GPU but torch sees no CUDA device: a CPU build of torch?"))
    return "\n".join(gpus)


def install_vllm() -> None:
    """`pip install vllm` into this interpreter, where it does not import yet."""
    if importlib.util.find_spec("vllm") is not None:
        logger.info("vllm already installed")
        return
    logger.info("installing vllm beside the project (pip install vllm)")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "vllm"], check=True)


def summary_lines(metrics_path: Path) -> list[str]:
    """The shown metrics of every logged step of a run's metrics.jsonl, one line a step."""
    lines = []
    for raw in metrics_path.read_text().splitlines():
        row: dict[str, Any] = json.loads(raw)
        if not any(key in row for key in SHOWN):
            continue
        keys = [k for k in SHOWN if k in row] + sorted(k for k in row if k.startswith(SHOWN_PREFIXES))
        shown = ", ".join(f"{k}={row[k]:.4g}" if isinstance(row[k], float) else f"{k}={row[k]}" for k in keys)
        lines.append(f"step {row.get('step', '?')}: {shown}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.bench.gpu_check", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=f"outputs/gpu-check/{time.strftime('%Y%m%d-%H%M%S')}", help="the run dir")
    parser.add_argument("--no-install", action="store_true", help="do not pip install vllm")
    parser.add_argument("overrides", nargs="*", help="more overrides for the smoke run")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # stderr: the run's own output interleaves
    try:
        gpus = find_gpu()
    except NoGPU as exc:
        logger.error("gpu-check: %s", exc)
        return 2
    logger.info("%s", gpus)
    if not args.no_install:
        install_vllm()
    command = [sys.executable, "-m", "agentic_rl.train", *SMOKE, *args.overrides, f"hydra.run.dir={args.out}"]
    logger.info("%s", " ".join(command))
    started = time.perf_counter()
    subprocess.run(command, check=True)
    wall = time.perf_counter() - started
    lines = summary_lines(Path(args.out) / "metrics.jsonl")
    logger.info("smoke run with vLLM servers, max_staleness=1: %.1f s wall (%s)\n%s", wall, args.out, "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
