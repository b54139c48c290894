"""W&B as its users expect it: identity (job type, arm name, sweep group, tags), metric axes, one summary
update, trajectory tables under files/media/table/, artifacts — checked in the offline run's own files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from agentic_rl.config import CONF_DIR, register_configs
from agentic_rl.tracking.sinks import Tracker, step_line
from agentic_rl.tracking.wandb_run import run_identity, trajectory_rows, transcript
from agentic_rl.types import Observation, RewardBreakdown, ToolCall, Trajectory, Turn
from tests.tracking.wandb_records import by_type, read_records

REPO = Path(__file__).resolve().parents[2]
register_configs()


def compose_cfg(overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("train", overrides=overrides)


def episode(passed: bool) -> Trajectory:
    turns = [
        Turn(
            [1],
            "<search>json dumps</search>",
            ToolCall("search", "json dumps", 0, 26),
            Observation("search", "<doc_result>\njson.dumps(obj)\n</doc_result>", ok=True),
        ),
        Turn(
            [2],
            "```submit\ndef f(): pass\n```",
            ToolCall("submit", "def f(): pass", 0, 26),
            Observation("submit", "<test_result>\nFAIL: 1 failed\n</test_result>", ok=True, passed=passed),
        ),
    ]
    return Trajectory(
        "builtin/train/001",
        [0, 1, 2],
        [0, 1, 1],
        1,
        turns,
        submitted_code="def f(): pass",
        passed=passed,
        finish_reason="passed" if passed else "max_turns",
    )


SWEEP_CTX = {
    "choices": {
        "experiment": "smoke",
        "model": "tiny-random",
        "tools": "code",
        "reward": "torl",
        "sweep": "exec_penalty",
    },
    "overrides": "model=tiny-random,reward.use_exec_penalty=true",
    "multirun": True,
    "sweep_dir": "outputs/multiruns/2026-11-30/17-40-00",
    "swept": ["seed", "reward.use_exec_penalty"],
}


def test_identity_groups_by_the_arm_and_names_arm_and_seed():
    cfg = compose_cfg(["experiment=smoke", "model=tiny-random", "logger=wandb", "seed=1"])
    ident = run_identity(cfg, "train", SWEEP_CTX)
    assert ident["run_name"] == "smoke reward.use_exec_penalty=true seed=1"  # the arm: what the sweep varies
    assert ident["group"] == "exec_penalty-2026-11-30_17-40-00 smoke reward.use_exec_penalty=true"
    assert (
        run_identity(cfg, "train", {**SWEEP_CTX, "swept": []})["run_name"]
        == "smoke model=tiny-random reward.use_exec_penalty=true seed=1"
    )  # a command-line grid: every override
    assert ident["tags"] == [
        "experiment:smoke",
        "sweep:exec_penalty-2026-11-30_17-40-00",
        "tools:code",
        "reward:torl",
        "model:tiny-random",
    ]
    default = compose_cfg([])
    single = run_identity(default, "eval", {})
    assert single["group"] == "default" and single["run_name"] == "default seed=42" and single["job_type"] == "eval"
    modes = "+".join(default.evaluator.modes)  # whatever modes the evaluator config lists (format baselines too)
    assert "reward:shaped" in single["tags"] and f"modes:{modes}" in single["tags"] and "no_tools+" in modes


def test_jobs_differing_only_in_seed_share_the_group_and_differ_in_name():
    """Each job composed as Hydra composes it for `sweep=exec_penalty`: its override_dirname follows
    conf/train.yaml's exclude_keys, its swept keys are the sweep config's params (seed among them)."""
    idents = []
    for seed in (1, 2):
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose(
                "train",
                overrides=["sweep=exec_penalty", "model=tiny-random", f"seed={seed}", "reward.use_exec_penalty=true"],
                return_hydra_config=True,
            )
        ctx = {
            **SWEEP_CTX,
            "choices": dict(cfg.hydra.runtime.choices),
            "overrides": cfg.hydra.job.override_dirname,
            "swept": list(cfg.hydra.sweeper.params),
        }
        idents.append(run_identity(cfg, "train", ctx))
    assert idents[0]["group"] == idents[1]["group"] == "exec_penalty-2026-11-30_17-40-00 reward.use_exec_penalty=true"
    assert (idents[0]["run_name"], idents[1]["run_name"]) == (
        "reward.use_exec_penalty=true seed=1",
        "reward.use_exec_penalty=true seed=2",
    )


def test_trajectory_rows_hold_the_transcript_with_calls_observations_and_reward_terms():
    trajs = [episode(True), episode(False)]
    rewards = [
        RewardBreakdown(1.0, {"passed": 1.0, "search_bonus": 0.0}),
        RewardBreakdown(0.05, {"passed": 0.0, "search_bonus": 0.05}),
    ]
    columns, rows = trajectory_rows(3, trajs, rewards, prompt="Write f.")
    assert columns == [
        "step",
        "task",
        "prompt",
        "sample",
        "transcript",
        "tool_calls",
        "reward",
        "reward/passed",
        "reward/search_bonus",
        "passed",
        "finish_reason",
    ]
    row = dict(zip(columns, rows[1]))
    assert row["task"] == "builtin/train/001" and row["reward/search_bonus"] == 0.05 and row["passed"] is False
    assert row["tool_calls"] == "search=1, submit=1"
    text = transcript(trajs[0])
    assert (
        text.index("turn 1 -> search")
        < text.index("<doc_result>")
        < text.index("turn 2 -> submit")
        < text.index("<test_result>")
    )


def test_step_line_leaves_absent_metrics_out():
    line = step_line(
        {
            "train/epoch": 0,
            "train/pass_rate": 0.25,
            "train/reward_mean": 0.1,
            "train/loss": float("nan"),
            "tools/search_rate": 0.5,
            "memory/peak_rss_gib": 3.214,
        },
        step=7,
    )
    assert line == "step 7 | epoch 0 | pass 0.25 | reward 0.100 | search 0.50 | peak GiB 3.21"


def test_offline_run_records_identity_axes_tables_one_summary_and_artifacts(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    settings = {
        "name": "wandb",
        "mode": "offline",
        "project": "agentic_rl",
        "job_type": "train",
        "run_name": "smoke tools=code",
        "group": "tools-2026-11-30_17-40-00",
        "tags": ["tools:code"],
        "table_every": 2,
        "log_artifacts": True,
        "log_every": 1,
    }
    tracker = Tracker(tmp_path, settings, {"seed": 1})
    trajs = [episode(True), episode(False)]
    rewards = [RewardBreakdown(1.0, {"passed": 1.0}), RewardBreakdown(0.0, {"passed": 0.0})]
    tracker.log({"eval/multi_tool/pass@1": 0.1}, step=0)
    for step in range(1, 5):
        tracker.log({"train/epoch": 0, "train/pass_rate": 0.5, "tools/search_rate": 0.5}, step)
        tracker.log_trajectories(step, trajs, rewards, prompt="Write f.")
    tracker.log({"eval/multi_tool/pass@1": 0.3}, step=4)
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text("{}")
    tracker.summary({"eval": {"after": {"multi_tool": {"pass@1": 0.25}}}})
    tracker.summary({"eval": {"after": {"multi_tool": {"pass@1": 0.3}}}, "figure": "f.png"})  # the last one counts
    tracker.close()
    import wandb

    wandb.teardown()  # the W&B service writes the run file on its own schedule; stopping it flushes

    run_dir = next((tmp_path / "wandb").glob("offline-run-*"))
    tables = sorted(p.name.split("_")[1] for p in (run_dir / "files" / "media" / "table" / "samples").glob("*.json"))
    assert tables == ["2", "4"]  # every table_every=2 steps
    table = json.loads(next((run_dir / "files" / "media" / "table" / "samples").glob("trajectories_2_*")).read_text())
    assert table["columns"][:2] == ["step", "task"] and len(table["data"]) == 2

    records = read_records(next(run_dir.glob("run-*.wandb")))
    run = by_type(records, "run")[0]
    assert (run.display_name, run.run_group, run.job_type, list(run.tags)) == (
        "smoke tools=code",
        "tools-2026-11-30_17-40-00",
        "train",
        ["tools:code"],
    )
    metrics = {m.glob_name or m.name: m for m in by_type(records, "metric")}
    assert metrics["train/*"].step_metric == "train/step" and metrics["tools/*"].step_metric == "train/step"
    assert metrics["eval/*"].summary.max and metrics["eval/*"].summary.last
    ours = [s for s in by_type(records, "summary") if any(u.key == "figure" for u in s.update)]
    assert len(ours) == 1  # one summary update, with the last values
    values = {u.key: json.loads(u.value_json) for u in ours[0].update}
    assert values["eval/after/multi_tool/pass@1"] == 0.3
    artifacts = {a.type: a.name for a in by_type(records, "artifact")}
    assert artifacts["model"].startswith("adapter-") and artifacts["evaluation"].startswith("eval-")


@pytest.mark.slow
def test_smoke_run_with_wandb_offline_holds_a_trajectory_table(tmp_path):
    """The command of the issue's check: experiment=smoke model=tiny-random logger=wandb, offline."""
    run_dir = tmp_path / "run"
    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentic_rl.train",
            "experiment=smoke",
            "model=tiny-random",
            "logger=wandb",
            "progress=false",
            f"hydra.run.dir={run_dir}",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    wandb_run = next((run_dir / "wandb").glob("offline-run-*"))
    assert list((wandb_run / "files" / "media" / "table").rglob("*.table.json"))
    run = by_type(read_records(next(wandb_run.glob("run-*.wandb"))), "run")[0]
    assert run.display_name == "smoke model=tiny-random seed=42" and run.job_type == "train"
    assert run.run_group == "smoke model=tiny-random"  # the arm: every seed of this command in one group
    assert "model:tiny-random" in run.tags and "experiment:smoke" in run.tags
    log = (run_dir / "train.log").read_text()
    assert f"run dir: {run_dir}" in log and "step 1 | epoch 0 | pass" in log


def test_the_transcript_shows_each_turn_with_the_response_prefix_it_opened_with():
    turn = Turn(generated_ids=[1], text='{"name": "Observe"}</action>', call=None, prefix="<action>")
    traj = Trajectory(task_id="codegym/x/000", token_ids=[1], loss_mask=[1], prompt_len=0, turns=[turn])
    assert '<action>{"name": "Observe"}</action>' in transcript(traj)


class RecordingRun:
    """Stands in for a W&B run: what `log` received, and with which step."""

    def __init__(self) -> None:
        self.logged: list[tuple[dict, int | None]] = []

    def log(self, metrics: dict, step: int | None = None) -> None:
        self.logged.append((metrics, step))


def test_negative_steps_stay_in_the_jsonl_and_never_reach_wandb(tmp_path):
    """W&B drops a step below one it has seen: the warm-up's negative steps would be lost there, or, sent without a
    step, push W&B's counter past the training steps after them."""
    tracker = Tracker(tmp_path, {"name": "none"})
    run = RecordingRun()
    tracker._wandb = run
    tracker.log({"eval/multi_tool/pass@1": 0.1}, 0)
    tracker.log({"warmup/loss": 0.5}, -2)
    tracker.log({"warmup/loss": 0.4}, -1)
    tracker.log({"train/loss": 0.3}, 1)
    assert [step for _, step in run.logged] == [0, 1]
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [0, -2, -1, 1]
