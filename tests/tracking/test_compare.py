"""`python -m agentic_rl.compare`: outcomes judged equal or not, costs only listed."""

from __future__ import annotations

import json
from pathlib import Path

from agentic_rl.compare import main
from agentic_rl.tracking.compare import compare_runs, is_cost


def make_run(path: Path, rewards: list[float], step_s: float, pass_after: float = 0.5) -> Path:
    path.mkdir(parents=True)
    records = [{"step": 0, "eval/multi_tool/pass@1": 0.1, "eval/multi_tool/time/rollout_s": step_s}]
    records += [
        {"step": i, "train/epoch": 0, "train/reward_mean": r, "time/step_s": step_s, "rollout/tokens_per_s": 9 / step_s}
        for i, r in enumerate(rewards, 1)
    ]
    (path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = {
        "eval": {"after": {"multi_tool": {"pass@1": pass_after, "time/rollout_s": step_s}}},
        "train_seconds": step_s * len(rewards),
        "peak_rss_gib": 3.0 + step_s,
    }
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def test_costs_are_listed_not_judged(tmp_path):
    a = make_run(tmp_path / "a", [0.1, 0.2], step_s=10.0)
    b = make_run(tmp_path / "b", [0.1, 0.2], step_s=5.0)
    result = compare_runs(a, b)
    # two rewards and two epochs, the step-0 record's pass@1, the summary's pass@1
    assert result.equal and result.compared == 6
    assert result.rewards == [(1, 0.1, 0.1), (2, 0.2, 0.2)]
    costs = dict((name, (x, y)) for name, x, y in result.costs)
    assert costs["sum of time/step_s over training steps"] == (20.0, 10.0)
    assert costs["train_seconds"] == (20.0, 10.0)
    assert main([str(a), str(b)]) == 0


def test_a_changed_reward_or_pass_rate_is_reported_and_fails_the_command(tmp_path, capsys):
    a = make_run(tmp_path / "a", [0.1, 0.2], step_s=1.0)
    b = make_run(tmp_path / "b", [0.1, 0.25], step_s=1.0, pass_after=0.6)
    result = compare_runs(a, b)
    assert [where for where, _, _ in result.differ] == ["step 2 train/reward_mean", "eval after/multi_tool/pass@1"]
    out = tmp_path / "compare.md"
    assert main([str(a), str(b), "--out", str(out)]) == 1
    assert "**different**: 2 differ" in out.read_text()
    assert compare_runs(a, b, tolerance=0.5).equal  # within a relative tolerance


def test_a_step_one_run_lacks_is_a_difference(tmp_path, capsys):
    a = make_run(tmp_path / "a", [0.1, 0.2, 0.3], step_s=1.0)
    b = make_run(tmp_path / "b", [0.1, 0.2], step_s=1.0)
    result = compare_runs(a, b)
    assert result.only_one == ["step 3 (train) in the first only"] and not result.equal
    assert main([str(a), str(tmp_path / "missing")]) == 2
    assert "not run dirs" in capsys.readouterr().err


def test_cost_names():
    assert is_cost("time/update_s") and is_cost("eval/code_only/time/tools_s") and is_cost("memory/rss_gib")
    assert is_cost("rollout/tokens_per_s") and is_cost("tools/submit/latency_ms")
    assert not is_cost("train/reward_mean") and not is_cost("tools/submit_rate") and not is_cost("pass@1")


def make_evaluation(path: Path, details: list[str]) -> Path:
    """An evaluation run (`python -m agentic_rl.evaluate`): its summary holds one evaluation by mode, and its
    results.jsonl one record per episode."""
    path.mkdir(parents=True)
    (path / "metrics.jsonl").write_text(json.dumps({"step": 0, "eval/code_only/pass@1": 0.0}) + "\n")
    summary = {"eval": {"code_only": {"pass@1": 0.0, "n_tasks": len(details), "statuses": {"failed": 2}}}}
    (path / "summary.json").write_text(json.dumps(summary))
    records = [
        {
            "task_id": f"t{i}",
            "mode": "code_only",
            "sample": 0,
            "passed": False,
            "status": "failed",
            "turns": 2,
            "tool_calls": {"submit": 1},
            "detail": detail,
            "tool_latency_ms": {"submit": 10.0 * (i + 1)},
        }
        for i, detail in enumerate(details)
    ]
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_two_evaluations_compare_episode_by_episode(tmp_path):
    """An evaluation run's summary is read by mode (not by phase), and each episode's outcomes are paired by
    task, mode and sample: a changed failure text is a difference, a changed latency is not."""
    a = make_evaluation(tmp_path / "a", ["FAIL: x", "FAIL: y"])
    same = make_evaluation(tmp_path / "same", ["FAIL: x", "FAIL: y"])
    (same / "results.jsonl").write_text((same / "results.jsonl").read_text().replace("10.0", "99.0"))
    assert compare_runs(a, same).equal
    b = make_evaluation(tmp_path / "b", ["FAIL: x", "FAIL: y | z\nw"])
    result = compare_runs(a, b)
    assert [where for where, _, _ in result.differ] == ["eval t1 (code_only, sample 0) detail"]
    out = tmp_path / "compare.md"
    assert main([str(a), str(b), "--out", str(out)]) == 1
    assert "| eval t1 (code_only, sample 0) detail | FAIL: y | FAIL: y \\| z\\nw |" in out.read_text()
    assert "per training step" not in out.read_text()
