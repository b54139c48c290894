"""`data=codegym` trains with the same loop as the code tasks: one step on the tiny random model, in a subprocess
as a user runs it; the step logs the env/* metrics and the held-out environments are evaluated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV_METRICS = [
    "env/success_rate",
    "env/calls_per_episode",
    "env/invalid_call_rate",
    "env/observe_rate",
    "env/done_rate",
    "env/t_max_rate",
    "env/oracle_calls",
    "env/calls_vs_oracle",
]


@pytest.mark.slow
def test_one_codegym_training_step(tmp_path):
    run_dir = tmp_path / "run"
    args = [
        "experiment=codegym",
        "model=tiny-random",
        "logger=none",
        "algo.group_size=2",
        "algo.epochs=1",
        "algo.tasks_per_epoch=1",
        "algo.tasks_per_rollout=1",
        "rollout.max_turns=2",
        "rollout.max_new_tokens=16",
        "evaluator.limit=1",
        "save_adapter=false",
        "checkpoint_every=0",
        f"hydra.run.dir={run_dir}",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "agentic_rl.train", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "WANDB_MODE": "offline"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    step = next(r for r in records if "train/epoch" in r)
    assert all(k in step for k in ENV_METRICS), set(ENV_METRICS) - set(step)
    assert all(0.0 <= step[k] <= 1.0 for k in ENV_METRICS if k.endswith("_rate"))
    assert step["env/oracle_calls"] >= 10  # the built-in configurations carry the oracle's call counts
    assert step["train/pass_rate"] == step["env/success_rate"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["n_eval_tasks"] == 1 and "multi_tool" in summary["eval"]["after"]
    # beside the CodeGym success rates, what one constant Done answer scores on the evaluated task (0 or 1 of 1)
    constant = summary["constant_answer"]
    assert constant["n_tasks"] == 1 and constant["env/constant_success_rate"] in (0.0, 1.0)
