"""The table's section "Modes compared after training" (issue #46, the notebook's second result): the trained
policy's multi-tool pass rate against its code-only one, and code-only against no tools, on the same tasks after
training, tasks as the unit, Holm across the rows."""

from __future__ import annotations

import pytest

from agentic_rl.reports.tables import MODES_SECTION, build_table, table_markdown

from .test_vs_baselines import SPEC, TASKS, first, make_run, records

AFTER = {"no_tools": first(1), "code_only": first(3), "multi_tool": first(7)}


def test_each_mode_is_set_against_the_one_with_a_tool_fewer_task_by_task(tmp_path):
    runs = [make_run(tmp_path / f"seed-{s}", s, None, records(AFTER)) for s in (1, 2)]
    rows = {(row["a"], row["b"]): row for row in build_table(runs, spec=SPEC)["mode_ladder"]}
    assert list(rows) == [("code_only", "multi_tool"), ("no_tools", "code_only"), ("no_tools", "multi_tool")]
    expected = {
        ("code_only", "multi_tool"): (3, 7),
        ("no_tools", "code_only"): (1, 3),
        ("no_tools", "multi_tool"): (1, 7),
    }
    for key, (n_a, n_b) in expected.items():
        row = rows[key]
        assert (row["rate_a"], row["rate_b"]) == (pytest.approx(n_a / 8), pytest.approx(n_b / 8))
        assert (row["up"], row["down"], row["tied"], row["tasks"]) == (n_b - n_a, 0, 8 - (n_b - n_a), 8)
        assert row["difference"] == pytest.approx((n_b - n_a) / 8) and row["runs"] == 2
        assert row["low"] <= row["difference"] <= row["high"]
    # Holm across the three rows: the smallest sign p (6 tasks up of 8 -> 2^-5) times 3
    assert rows[("no_tools", "multi_tool")]["p_holm"] == pytest.approx(3 * 2**-5)
    assert rows[("no_tools", "code_only")]["p_value"] == pytest.approx(0.5)


def test_a_mode_that_lost_shows_below_zero_and_a_missing_mode_pairs_nothing(tmp_path):
    after = {"code_only": first(5), "multi_tool": first(2)}  # no no_tools evaluation after
    run = make_run(tmp_path / "seed-1", 1, None, records(after))
    table = build_table([run], spec=SPEC)
    (row,) = table["mode_ladder"]
    assert (row["a"], row["b"], row["up"], row["down"]) == ("code_only", "multi_tool", 0, 3)
    assert row["difference"] == pytest.approx(-3 / 8) and row["high"] <= 0  # below zero, printed unclipped
    text = table_markdown(table)
    assert f"## {MODES_SECTION}" in text and "-0.375 [" in text.split(MODES_SECTION)[1]


def test_no_section_without_evaluations_after_training(tmp_path):
    run = make_run(tmp_path / "seed-1", 1, None, [])
    table = build_table([run], spec=SPEC)
    assert table["mode_ladder"] == [] and MODES_SECTION not in table_markdown(table)


def test_tasks_are_the_unit_not_the_pooled_samples(tmp_path):
    # one task passes in every sample in multi_tool and never in code_only; 7 tasks tie: a pooled count of
    # 2 seeds x 2 samples would look like 4 wins, the task-level test counts 1 task up
    after = {"code_only": set(), "multi_tool": {TASKS[0]}}
    runs = [make_run(tmp_path / f"seed-{s}", s, None, records(after)) for s in (1, 2)]
    (row,) = build_table(runs, spec=SPEC)["mode_ladder"]
    assert (row["up"], row["down"], row["tied"]) == (1, 0, 7) and row["p_value"] == pytest.approx(1.0)
    assert (row["pooled"]["gained"], row["pooled"]["n"]) == (4, 32)  # the secondary column counts the episodes
