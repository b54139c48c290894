"""Metric names and values from hand-made episodes; jsonl sink; W&B never blocks; figures render."""

from __future__ import annotations

import json

import pytest

from agentic_rl.reports.plots import plot_run, plot_sweep, rolling_mean
from agentic_rl.tracking.metrics import episode_metrics, reward_metrics, task_type_metrics
from agentic_rl.tracking.sinks import Tracker
from agentic_rl.types import Observation, RewardBreakdown, ToolCall, Trajectory, Turn


def turn(name: str | None, ok: bool = True, executed: bool = True, latency: float = 10.0, status: str = "ok") -> Turn:
    if name is None:
        return Turn(generated_ids=[1], text="")
    return Turn(
        generated_ids=[1],
        text="",
        call=ToolCall(name, "x", 0, 1),
        observation=Observation(tool=name, text="", ok=ok, latency_ms=latency, executed=executed, status=status),
    )


def traj(*turns: Turn, passed=False) -> Trajectory:
    return Trajectory(
        task_id="t", token_ids=[0, 1, 2], loss_mask=[0, 1, 1], prompt_len=1, turns=list(turns), passed=passed
    )


def test_episode_metrics_are_shares_of_turns():
    trajs = [
        traj(turn("search"), turn("execute", ok=False, latency=30.0), turn("submit")),
        traj(turn(None), turn("execute", latency=10.0), turn("search", ok=False, executed=False, status="capped")),
    ]
    m = episode_metrics(trajs)
    assert m["tools/search_rate"] == pytest.approx(1 / 6)  # the refused (capped) search does not count
    assert m["tools/capped_rate"] == pytest.approx(1 / 6)  # ... it counts as refused by the cap
    rates = [v for k, v in m.items() if k.startswith("tools/") and k.endswith("_rate") and k.count("/") == 1]
    assert sum(rates) == pytest.approx(1.0)  # every turn is exactly one of: a tool's call, no call, refused
    assert m["tools/execute_rate"] == pytest.approx(2 / 6)
    assert m["tools/submit_rate"] == pytest.approx(1 / 6)
    assert m["tools/none_rate"] == pytest.approx(1 / 6)
    assert m["tools/calls_per_episode"] == pytest.approx(4 / 2)
    assert m["tools/execute/error_rate"] == pytest.approx(0.5)
    assert m["tools/execute/latency_ms"] == pytest.approx(20.0)
    assert m["rollout/turns_mean"] == 3.0 and m["rollout/model_tokens_mean"] == 2.0


def test_reward_metrics_average_every_term():
    m = reward_metrics(
        [RewardBreakdown(1.0, {"passed": 1.0, "bonus": 0.0}), RewardBreakdown(0.1, {"passed": 0.0, "bonus": 0.1})]
    )
    assert m == pytest.approx({"reward/passed": 0.5, "reward/bonus": 0.05, "train/reward_mean": 0.55})


def test_jsonl_is_append_only_and_nan_is_null(tmp_path):
    t = Tracker(tmp_path)
    t.log({"train/loss": 1.5}, step=1)
    t.log({"train/loss": float("nan")}, step=2)
    t.close()
    Tracker(tmp_path).log({"train/loss": 0.5}, step=3)  # a resumed writer appends
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert rows == [{"step": 1, "train/loss": 1.5}, {"step": 2, "train/loss": None}, {"step": 3, "train/loss": 0.5}]


def test_wandb_failure_never_blocks(tmp_path, monkeypatch):
    import wandb

    def broken(*a, **k):
        raise RuntimeError("no account")

    monkeypatch.setattr(wandb, "init", broken)
    t = Tracker(tmp_path, {"name": "wandb", "mode": "online"})
    t.log({"x": 1.0}, step=1)
    t.close()
    assert (tmp_path / "metrics.jsonl").is_file() and t.wandb_info == {}


def test_rolling_mean():
    assert rolling_mean([1.0, 3.0, 5.0, 7.0], window=2) == [1.0, 2.0, 4.0, 6.0]


def test_figures_render_from_files(tmp_path):
    for job, rate in (("0", 0.2), ("1", 0.6)):
        run = tmp_path / job
        t = Tracker(run)
        for step in range(1, 5):
            t.log(
                {
                    "train/epoch": (step - 1) // 2,
                    "train/pass_rate": rate,
                    "train/reward_mean": rate,
                    "tools/search_rate": 0.1,
                    "tools/submit_rate": 0.3,
                    "tools/execute_rate": 0.4,
                    "tools/calls_per_episode": 2.0,
                },
                step,
            )
        t.summary({"eval": {"before": {"multi_tool": {"pass@1": 0.1}}, "after": {"multi_tool": {"pass@1": rate}}}})
        (run / ".hydra").mkdir()
        (run / ".hydra" / "overrides.yaml").write_text(f"- tools={'code' if job == '0' else 'multi'}\n- seed=1\n")
        assert plot_run(run).stat().st_size > 10_000
    assert plot_sweep(tmp_path).stat().st_size > 10_000


def test_training_and_evaluation_metrics_are_the_same_numbers():
    from agentic_rl.evaluation.records import metrics_from_records, record_from_trajectory

    trajs = [
        traj(turn("search"), turn("execute", ok=False, latency=30.0), turn("submit")),
        traj(turn(None), turn("execute", latency=10.0), turn("search", executed=False)),
    ]
    from_training = episode_metrics(trajs)
    from_records = metrics_from_records(
        [json.loads(json.dumps(record_from_trajectory(t, "multi_tool"))) for t in trajs]
    )  # as read back from results.jsonl
    assert from_records == pytest.approx(from_training)
    assert from_training["tools/execute/error_rate"] == 0.5


def test_task_type_metrics_split_pass_and_search_by_the_tasks_type():
    group = [
        traj(turn("search"), turn("submit"), passed=True),
        traj(turn("execute"), turn("search", executed=False, status="capped"), turn("submit")),
        traj(turn("submit")),
        traj(turn("search"), turn("search"), turn(None)),
    ]
    m = task_type_metrics("docs", group)
    assert m == {
        "train/pass_rate/docs": 0.25,
        "tools/search_rate/docs": 3 / 9,  # executed searches over turns; the refused one is no search
        "tools/search_episodes/docs": 0.5,
    }
    assert task_type_metrics(None, group) == {}
