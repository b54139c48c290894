"""`python -m agentic_rl.compare`: outcomes judged equal or not, costs only listed; side by side, a run done in
chunks is read by its whole wall time (its `/usr/bin/time -v` reports' walls add up, the peak is the largest)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_rl.compare import main
from agentic_rl.reports.compare import compare_runs, is_cost, time_v_chunks


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


def report(path: Path, wall: str, rss_kb: int) -> Path:
    path.write_text(
        '\tCommand being timed: "python -m agentic_rl.train"\n'
        f"\tElapsed (wall clock) time (h:mm:ss or m:ss): {wall}\n"
        f"\tMaximum resident set size (kbytes): {rss_kb}\n"
    )
    return path


def timed_run(path: Path, update_s: float) -> Path:
    path.mkdir()
    (path / "summary.json").write_text(json.dumps({"train_seconds": 10.0}))
    rows = [{"step": 1, "train/reward_mean": 0.5, "time/update_s": update_s, "time/rollout_s": 1.0}]
    (path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_chunks_add_their_walls_and_keep_the_largest_peak(tmp_path):
    first = report(tmp_path / "a.txt", "25:24.23", 4543264)
    second = report(tmp_path / "b.txt", "5:52.54", 2927604)
    one = time_v_chunks(str(first))
    assert one == {"wall_s": 25 * 60 + 24.23, "peak_rss_gib": 4543264 / 2**20}
    both = time_v_chunks(f"{first}+{second}")
    assert abs(both["wall_s"] - (25 * 60 + 24.23 + 5 * 60 + 52.54)) < 1e-9
    assert both["peak_rss_gib"] == 4543264 / 2**20
    assert both["time -v chunks"] == 2


def test_side_by_side_compares_a_chunked_run_by_its_whole_wall_time(tmp_path):
    hf = timed_run(tmp_path / "hf", update_s=2.0)
    vllm = timed_run(tmp_path / "vllm", update_s=3.0)
    hf_report = report(tmp_path / "hf.txt", "1:40.00", 1048576)
    a = report(tmp_path / "a.txt", "1:00.00", 2097152)
    b = report(tmp_path / "b.txt", "0:50.00", 1048576)
    out = tmp_path / "figures.md"
    assert main([str(hf), str(vllm), "--time-v", str(hf_report), f"{a}+{b}", "--out", str(out)]) == 0
    rows = {line.split(" | ")[0].lstrip("| "): line for line in out.read_text().splitlines()}
    assert rows["wall_s"].endswith("| 100 | 110 | 1.100 |")
    assert rows["peak_rss_gib"].endswith("| 1 | 2 | 2.000 |")
    assert rows["sum time/update_s"].endswith("| 2 | 3 | 1.500 |")
    assert rows["train_steps"].endswith("| 1 | 1 | |")  # a count of steps has no ratio


def test_outcomes_are_compared_between_two_runs_only(tmp_path, capsys):
    runs = [str(make_run(tmp_path / name, [0.1], step_s=1.0)) for name in "abc"]
    with pytest.raises(SystemExit) as exit:
        main(runs)
    assert exit.value.code == 2
    assert "--side-by-side" in capsys.readouterr().err
    assert main([*runs, "--side-by-side"]) == 0
    assert "| quantity | " in capsys.readouterr().out
