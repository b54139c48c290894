"""End to end, as a user runs it: `python -m agentic_rl.train ...` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_rl.reports.run_files import read_eval_records

REPO = Path(__file__).resolve().parents[2]
METRICS = [
    "train/pass_rate",
    "train/reward_mean",
    "train/frac_zero_std",
    "tools/search_rate",
    "tools/execute_rate",
    "tools/submit_rate",
    "tools/none_rate",
    "tools/calls_per_episode",
    "rollout/turns_mean",
    "rollout/tokens_per_s",
    "reward/passed",
    "rollout/prefill_tokens",
    "rollout/context_tokens",
    "time/rollout_s",
    "time/tools_s",
    "time/update_s",
    "time/step_s",
]


def train(args: list[str], timeout: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "WANDB_MODE": "offline", "HYDRA_FULL_ERROR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "agentic_rl.train", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_smoke_experiment_writes_the_run_dir(tmp_path):
    run_dir = tmp_path / "smoke"
    # the smoke experiment's eval data has 2 tasks; evaluator.limit scores the first one only
    train(["experiment=smoke", "evaluator.limit=1", f"hydra.run.dir={run_dir}"], timeout=600)
    assert (run_dir / ".hydra" / "config.yaml").is_file()
    records = read_jsonl(run_dir / "metrics.jsonl")
    train_steps = [r for r in records if "train/epoch" in r]
    assert len(train_steps) == 1
    assert all(name in train_steps[0] for name in METRICS), set(METRICS) - set(train_steps[0])
    # a group with zero reward spread takes no update: its loss, KL and grad norm are absent, never 0
    update_metrics = {"train/loss", "train/kl", "train/grad_norm"}
    if train_steps[0]["train/frac_zero_std"] == 1.0:
        assert not update_metrics & set(train_steps[0])
    else:
        assert update_metrics <= set(train_steps[0])
    step = train_steps[0]
    # the engine computes each context token at most once per episode (a shared prompt prefix once in all)
    assert 0 < step["rollout/prefill_tokens"] <= 1.1 * step["rollout/context_tokens"]
    assert step["time/step_s"] >= step["time/rollout_s"] >= step["time/tools_s"] >= 0
    # the process's memory: resident now and its peak so far, after the step and after each evaluation
    assert 0.1 < step["memory/rss_gib"] <= step["memory/peak_rss_gib"] + 1e-3
    evals = [r for r in records if "eval/multi_tool/pass@1" in r]
    assert len(evals) == 2 and all(0.1 < r["memory/rss_gib"] <= r["memory/peak_rss_gib"] + 1e-3 for r in evals)
    summary = json.loads((run_dir / "summary.json").read_text())
    # the run's peak: at least every peak logged on the way
    assert summary["peak_rss_gib"] >= max(r["memory/peak_rss_gib"] for r in records) - 1e-3
    assert summary["mmap_threshold_kib"] is None  # the HF backend under memory.mmap_threshold_kib=auto: glibc's own
    for phase in ("before", "after"):
        assert set(summary["eval"][phase]) == {"no_tools", "multi_tool"}
        assert all(0.0 <= m["pass@1"] <= 1.0 for m in summary["eval"][phase].values())
        assert all(m["rollout/episodes"] == 1 for m in summary["eval"][phase].values())
        # the per-task records behind each mode's pass@1, for the paired before/after analysis
        kept = read_eval_records(run_dir, phase)
        assert sorted(r["mode"] for r in kept) == ["multi_tool", "no_tools"]
        assert all(float(r["passed"]) == summary["eval"][phase][r["mode"]]["pass@1"] for r in kept)
    assert summary["n_eval_tasks"] == 1  # what was scored, not the size of the eval data
    assert records[0]["step"] == 0 and "eval/multi_tool/pass@1" in records[0]
    assert (run_dir / "figures" / "training_summary.png").stat().st_size > 10_000
    assert (run_dir / "adapter" / "adapter_config.json").is_file()


@pytest.mark.slow
def test_multirun_over_arms_and_seeds_gives_one_wandb_group_per_arm(tmp_path):
    """`sweep=tools tools=none,code seed=1,2`: the command line narrows the sweep config's arms and seeds."""
    sweep_dir = tmp_path / "sweep"
    train(
        [
            "sweep=tools",
            "tools=none,code",
            "seed=1,2",
            "model=tiny-random",
            "logger=wandb",
            f"hydra.sweep.dir={sweep_dir}",
            "algo.group_size=2",
            "algo.epochs=1",
            "algo.tasks_per_epoch=1",
            "data.limit=1",
            "eval_data.limit=1",
            "rollout.max_turns=1",
            "rollout.max_new_tokens=8",
            "evaluator.modes=[no_tools]",
        ],
        timeout=900,
    )
    jobs = sorted(p.parent for p in sweep_dir.glob("*/metrics.jsonl"))
    assert [j.name for j in jobs] == ["0", "1", "2", "3"]
    summaries = {j.name: json.loads((j / "summary.json").read_text()) for j in jobs}
    # seed-major: every arm with seed 1, then every arm with seed 2
    assert [s["tools"] for _, s in sorted(summaries.items())] == ["none", "code", "none", "code"]
    # one W&B run per job (never merged); the seeds of an arm share its group, each run has its own name
    assert len({s["wandb"]["id"] for s in summaries.values()}) == 4
    stamp = f"tools-{tmp_path.name}_sweep"  # sweep config + its dir
    assert {s["wandb"]["group"] for s in summaries.values()} == {f"{stamp} tools=none", f"{stamp} tools=code"}
    assert {s["wandb"]["name"] for s in summaries.values()} == {
        f"tools={t} seed={n}" for t in ("none", "code") for n in (1, 2)
    }
    for job in jobs:
        assert len(list((job / "wandb").glob("offline-run-*"))) == 1
    assert (sweep_dir / "figures" / "sweep_summary.png").stat().st_size > 10_000  # drawn when the sweep ended
    table = json.loads((sweep_dir / "table.json").read_text())  # written when the sweep ended
    assert {arm: [r["seed"] for r in runs] for arm, runs in table["arms"].items()} == {
        "tools=none": [1, 2],
        "tools=code": [1, 2],
    }
