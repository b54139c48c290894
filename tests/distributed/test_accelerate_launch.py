"""`accelerate launch --cpu --num_processes 2 -m agentic_rl.train` on the tiny model: one job on two ranks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GROUP_SIZE = 2

# two ranks each load the model, start a sandbox and evaluate (rank 0): ~40 s of CPU, minutes on a loaded machine
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def launched(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("launch")
    run_dir = root / "run"
    env = {**os.environ, "WANDB_MODE": "offline", "HYDRA_FULL_ERROR": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--cpu",
            "--num_processes",
            "2",
            "-m",
            "agentic_rl.train",
            "model=tiny-random",
            "logger=none",
            f"hydra.run.dir={run_dir}",
            f"algo.group_size={GROUP_SIZE}",
            "algo.epochs=1",
            "algo.tasks_per_epoch=3",
            "algo.tasks_per_rollout=1",
            "data.limit=3",
            "eval_data.limit=1",
            "rollout.max_turns=1",
            "rollout.max_new_tokens=8",
            "evaluator.modes=[no_tools]",
            "progress=false",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, proc


def test_summary_records_two_ranks_that_stayed_identical(launched):
    run_dir, _ = launched
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["world_size"] == 2 and summary["backend"] == "gloo"
    # 3 tasks over 2 ranks: padded to 4, so 2 global steps, after each of which the adapters were compared
    assert summary["train_steps"] == 2
    assert summary["steps_weights_identical"] == 2
    assert set(summary["eval"]) == {"before", "after"}  # rank 0 evaluated


def test_every_step_is_logged_once_with_both_ranks_metrics(launched):
    run_dir, _ = launched
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if "train/epoch" in r]
    assert [r["step"] for r in train] == [1, 2]
    assert all(r["rollout/episodes"] == 2 * GROUP_SIZE for r in train)  # summed over the two ranks' groups
    evals = [r["step"] for r in records if "eval/no_tools/pass@1" in r]
    assert evals == [0, 2]  # before and after, once each


def test_rank_zero_alone_wrote_one_run_dir_and_one_adapter(launched):
    run_dir, proc = launched
    root = run_dir.parent
    assert [p.name for p in root.iterdir()] == ["run"]
    adapters = sorted(p.relative_to(root) for p in root.rglob("adapter_model.safetensors"))
    # the final adapter once, plus rank 0's checkpoints (resumable snapshots), nothing from rank 1
    assert [a for a in adapters if a.parts[1] != "checkpoints"] == [Path("run/adapter/adapter_model.safetensors")]
    assert all(a.parts[:2] == ("run", "checkpoints") for a in adapters if a.parts[1] == "checkpoints")
    assert len(list(root.rglob(".hydra"))) == 1
    assert "rank 1 of 2" in proc.stderr + proc.stdout  # the second rank really ran
