"""`make gpu-check` where there is no GPU: one clear message and exit status 2, nothing installed or run; the GPU
listing as nvidia-smi prints it; the summary read from a run's metrics.jsonl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_rl.bench.gpu_check import NoGPU, find_gpu, summary_lines
from agentic_rl.paths import repo_root


def tool(folder: Path, name: str, script: str) -> str:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    return str(path)


def test_make_gpu_check_without_a_gpu_stops_with_one_message(tmp_path):
    """PATH holds make and sh only, so no nvidia-smi is found even on a machine that has one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("make", "sh"):
        os.symlink(shutil.which(name), bin_dir / name)
    done = subprocess.run(
        ["make", "--no-print-directory", "gpu-check", f"PYTHON={sys.executable}", f"ARGS=--out {tmp_path / 'run'}"],
        cwd=repo_root(),
        env={**os.environ, "PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "gpu-check: make gpu-check needs an NVIDIA GPU, and this machine has none (no nvidia-smi on PATH)" in (
        done.stderr
    )
    assert "installing vllm" not in done.stdout and not (tmp_path / "run").exists()


def test_a_driver_that_lists_no_gpu_or_a_torch_without_cuda_is_no_gpu(tmp_path):
    failing = tool(tmp_path, "smi-down", 'echo "NVIDIA-SMI has failed: couldn\'t communicate with the driver"; exit 9')
    with pytest.raises(NoGPU, match="lists no GPU: NVIDIA-SMI has failed"):
        find_gpu(failing)
    listing = tool(tmp_path, "smi", 'echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)"')
    with pytest.raises(NoGPU, match="torch sees no CUDA device"):
        find_gpu(listing, cuda_available=False)
    assert find_gpu(listing, cuda_available=True) == "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)"


def test_the_summary_shows_speed_sync_staleness_and_the_gap_per_step(tmp_path):
    rows = [
        {"step": 0, "eval/multi_tool/pass@1": 0.5},
        {
            "step": 1,
            "rollout/tokens_per_s": 812.25,
            "time/sync_s": 0.125,
            "rollout/staleness_max": 1.0,
            "rollout_correction/logp_abs_diff": 0.0021,
            "train/loss": 0.3,
        },
    ]
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert summary_lines(metrics) == [
        "step 1: rollout/tokens_per_s=812.2, time/sync_s=0.125, rollout/staleness_max=1, "
        "rollout_correction/logp_abs_diff=0.0021"
    ]
