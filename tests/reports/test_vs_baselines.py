"""The table's section "After RL vs the base's best mode and its format baselines" (issue #46): the trained multi-tool
pass rate after training against, task by task, the base's best mode before training and each format baseline before
training, with the task-level primary test, Holm across its rows, unclipped intervals, and no invented baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_rl.reports.stats import Bootstrap, bootstrap_interval
from agentic_rl.reports.tables import BASELINE_SECTION, build_table, table_markdown

TASKS = [f"t{i}" for i in range(8)]
SPEC = Bootstrap(2000, 5)


def records(passing: dict[str, set[str]], samples=(1, 2), greedy: dict[str, set[str]] | None = None) -> list[dict]:
    """Per mode, the tasks whose sampled episodes pass (every sample of them), and optionally a greedy episode
    (sample 0) per task passing on the tasks of `greedy[mode]`."""
    rows = [
        {"task_id": t, "mode": mode, "sample": s, "greedy": False, "passed": t in passed}
        for mode, passed in passing.items()
        for t in TASKS
        for s in samples
    ]
    rows += [
        {"task_id": t, "mode": mode, "sample": 0, "greedy": True, "passed": t in passed}
        for mode, passed in (greedy or {}).items()
        for t in TASKS
    ]
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def make_run(path: Path, seed: int, before: list[dict] | None, after: list[dict]) -> Path:
    (path / ".hydra").mkdir(parents=True)
    (path / ".hydra" / "overrides.yaml").write_text(f"- seed={seed}\n")
    (path / "summary.json").write_text(json.dumps({"eval": {}}))
    if before is not None:
        write_jsonl(path / "eval_before.jsonl", before)
    write_jsonl(path / "eval_after.jsonl", after)
    return path


def first(n: int) -> set[str]:
    return set(TASKS[:n])


BEFORE = {
    "no_tools": first(4),  # 0.5: the base's best mode
    "code_only": first(2),  # 0.25, but its greedy episode passes every task: counted, it would tie no_tools
    "multi_tool": set(),  # 0.0: what "after - before" of multi_tool is measured against
    "last_block": first(3),  # 0.375
    "forced_submit": first(1),  # 0.125
}
AFTER = {"multi_tool": first(6), "code_only": set(TASKS)}  # code_only after is the highest of all: not a baseline


def test_the_baseline_is_the_base_best_mode_before_training_and_each_format_baseline(tmp_path):
    """The best mode is no_tools (0.5 over tasks before training), not code_only (best after training, and tied
    with no_tools if its greedy episode were averaged in), not multi_tool. Each row's 'before' side is that mode's
    task means, the 'after' side the trained multi_tool's."""
    before = records(BEFORE, greedy={"code_only": set(TASKS)})
    run = make_run(tmp_path / "seed-1", 1, before, records(AFTER))
    section = build_table([run], spec=SPEC)["vs_baselines"]
    (arm,) = section["arms"]
    assert arm["best_mode"] == "no_tools" and arm["notes"] == []
    assert arm["before_rates"]["code_only"]["rate"] == pytest.approx(0.25)  # the greedy episode left out
    rows = {row["baseline"]: row for row in section["rows"]}
    assert list(rows) == ["no_tools", "last_block", "forced_submit"]
    assert [row["role"] for row in rows.values()] == ["base's best mode", "format baseline", "format baseline"]
    expected = {"no_tools": (0.5, 2, 0), "last_block": (0.375, 3, 0), "forced_submit": (0.125, 5, 0)}
    for mode, (rate_before, up, down) in expected.items():
        row = rows[mode]
        assert (row["rate_a"], row["rate_b"]) == (pytest.approx(rate_before), pytest.approx(0.75))
        assert row["difference"] == pytest.approx(0.75 - rate_before)
        assert (row["tasks"], row["up"], row["down"]) == (8, up, down)
        assert row["pooled"]["n"] == 16  # 8 tasks x 2 samples, the greedy episode not among them
    # one Holm family of the three rows: sign p 2/4, 2/8, 2/32 -> Holm 3 * 2/32, max(2 * 2/8, .), max(2/4, .)
    assert [rows[m]["p_holm"] for m in expected] == pytest.approx([0.5, 0.5, 3 * 2 / 32])
    markdown = table_markdown(build_table([run], spec=SPEC))
    assert f"## {BASELINE_SECTION}" in markdown
    assert "| default | no_tools | 0.500 [" in markdown and "| yes |" in markdown
    assert "Holds at 0.05 after Holm: none." in markdown.split(BASELINE_SECTION)[1]


def test_a_loss_to_the_baseline_is_printed_negative_and_unclipped(tmp_path):
    """The trained policy below the base's best mode: the difference and the lower end of its bootstrap interval
    are negative and printed as they are (a clipped interval would read [0.000, ...] or [+0.000, ...])."""
    before = records({"no_tools": first(6), "last_block": set(), "forced_submit": set()})
    after = records({"multi_tool": first(2) | {"t6"}})
    run = make_run(tmp_path / "seed-1", 1, before, after)
    table = build_table([run], spec=SPEC)
    row = next(r for r in table["vs_baselines"]["rows"] if r["baseline"] == "no_tools")
    differences = [1 - 1, 1 - 1, 0 - 1, 0 - 1, 0 - 1, 0 - 1, 1 - 0, 0 - 0]  # after - before, t0..t7
    assert row["difference"] == pytest.approx(sum(differences) / 8) == pytest.approx(-0.375)
    assert (row["low"], row["high"]) == pytest.approx(bootstrap_interval(differences, SPEC))
    assert row["low"] < -0.5 < row["difference"] < row["high"] and (row["up"], row["down"]) == (1, 4)
    line = next(
        line
        for line in table_markdown(table).splitlines()
        if line.startswith("| default | multi_tool | no_tools | base's best mode |")
    )
    assert f"-0.375 [{row['low']:+.3f}, {row['high']:+.3f}] | 1 / 4 / 3 |" in line


def test_a_best_mode_that_is_a_format_baseline_is_one_row(tmp_path):
    before = records({"no_tools": first(1), "multi_tool": set(), "last_block": first(5), "forced_submit": first(2)})
    run = make_run(tmp_path / "seed-1", 1, before, records({"multi_tool": first(5)}))
    section = build_table([run], spec=SPEC)["vs_baselines"]
    assert section["arms"][0]["best_mode"] == "last_block"
    assert [(r["baseline"], r["role"]) for r in section["rows"]] == [
        ("last_block", "base's best mode, format baseline"),
        ("forced_submit", "format baseline"),
    ]


def test_no_baseline_is_invented(tmp_path):
    """A run without an evaluation before training gets a note and no row; a format baseline the base evaluation
    lacks (records written before it existed) gets a note, and the other rows stand."""
    alone = make_run(tmp_path / "alone" / "seed-1", 1, None, records({"multi_tool": first(4)}))
    table = build_table([alone], spec=SPEC)
    (arm,) = table["vs_baselines"]["arms"]
    assert table["vs_baselines"]["rows"] == [] and arm["best_mode"] is None
    assert "no evaluation before training" in arm["notes"][0]
    assert "no evaluation before training (no eval_before.jsonl, no --before): no baseline" in table_markdown(table)

    old = make_run(tmp_path / "old" / "seed-1", 1, records({"no_tools": first(2)}), records({"multi_tool": first(4)}))
    section = build_table([old], spec=SPEC)["vs_baselines"]
    assert [r["baseline"] for r in section["rows"]] == ["no_tools"]
    assert [n.split(":")[0] for n in section["arms"][0]["notes"]] == ["last_block", "forced_submit"]


def test_runs_without_their_own_before_stand_on_the_base_evaluation(tmp_path):
    """Two seeds evaluated after training only, paired with one base evaluation (`--before`): the base's best mode
    is chosen from that evaluation, counted once, and each task's after side is its mean over both seeds."""
    base = tmp_path / "base"
    base.mkdir()
    write_jsonl(base / "results.jsonl", records(BEFORE))
    runs = [
        make_run(tmp_path / "seed-1", 1, None, records({"multi_tool": first(6)})),
        make_run(tmp_path / "seed-2", 2, None, records({"multi_tool": first(4)})),
    ]
    section = build_table(runs, base, SPEC)["vs_baselines"]
    assert section["arms"][0]["best_mode"] == "no_tools"
    row = section["rows"][0]
    assert (row["baseline"], row["runs"], row["tasks"]) == ("no_tools", 2, 8)
    assert row["rate_b"] == pytest.approx((4 * 1 + 2 * 0.5) / 8)  # t0..t3 pass in both seeds, t4, t5 in one
    assert row["difference"] == pytest.approx(0.625 - 0.5) and (row["up"], row["down"]) == (2, 0)
