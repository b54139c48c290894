"""The paired before/after analysis: McNemar's exact test, Newcombe's paired interval, the pairs a paired test
needs, and the table rows built from the runs' per-task evaluation records."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from agentic_rl.reports.run_files import read_eval_records
from agentic_rl.reports.runs import episode_outcomes
from agentic_rl.reports.stats import PairedChange, mcnemar_exact_p, pairs_to_resolve, sign_test_p
from agentic_rl.reports.tables import build_table, paired_rows, table_markdown, write_table
from agentic_rl.runtime.files import eval_records_path
from agentic_rl.table import main as table_main


def test_mcnemar_exact_p_is_the_two_sided_binomial_tail_of_the_discordant_pairs():
    assert mcnemar_exact_p(9, 1) == pytest.approx(2 * (1 + 10) / 2**10)
    assert mcnemar_exact_p(1, 9) == mcnemar_exact_p(9, 1)  # two-sided
    assert mcnemar_exact_p(5, 5) == 1.0 and mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(6, 0) == pytest.approx(2 / 64)
    with pytest.raises(ValueError, match="counts"):
        mcnemar_exact_p(-1, 2)
    scipy_stats = pytest.importorskip("scipy.stats")
    for gained, lost in [(12, 3), (7, 2), (30, 18), (4, 0)]:
        expected = scipy_stats.binomtest(gained, gained + lost, 0.5).pvalue
        assert mcnemar_exact_p(gained, lost) == pytest.approx(expected, rel=1e-9)


def test_counts_rates_and_change_from_pairs():
    pairs = [(True, True)] * 3 + [(False, True)] * 5 + [(True, False)] * 2 + [(False, False)] * 10
    change = PairedChange.from_pairs(pairs)
    assert (change.both, change.gained, change.lost, change.neither, change.n) == (3, 5, 2, 10, 20)
    assert change.before == pytest.approx(5 / 20) and change.after == pytest.approx(8 / 20)
    assert change.change == pytest.approx(3 / 20)
    assert change.p_value == pytest.approx(mcnemar_exact_p(5, 2))


def test_newcombe_interval_by_hand():
    # both=10, gained=9, lost=1, neither=80: Wilson intervals of 19/100 and 11/100, phi from the 2x2 table
    change = PairedChange(both=10, gained=9, lost=1, neither=80)
    z = 1.959963984540054

    def wilson(k, n):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return centre - half, centre + half

    (l1, u1), (l2, u2) = wilson(19, 100), wilson(11, 100)
    phi = (10 * 80 - 9 * 1) / math.sqrt(19 * 81 * 11 * 89)
    low = 0.08 - math.sqrt((0.19 - l1) ** 2 - 2 * phi * (0.19 - l1) * (u2 - 0.11) + (u2 - 0.11) ** 2)
    high = 0.08 + math.sqrt((u1 - 0.19) ** 2 - 2 * phi * (u1 - 0.19) * (0.11 - l2) + (0.11 - l2) ** 2)
    assert change.interval() == pytest.approx((low, high), abs=1e-12)
    assert low > 0  # 9 gained against 1 lost in 100 pairs is a change the interval tells from zero


def test_interval_is_antisymmetric_and_excludes_zero_only_with_a_clear_change():
    up, down = PairedChange(20, 12, 3, 165), PairedChange(20, 3, 12, 165)
    assert up.interval() == pytest.approx(tuple(-x for x in reversed(down.interval())))
    assert up.interval()[0] > 0 and down.interval()[1] < 0
    even = PairedChange(20, 6, 6, 168)
    low, high = even.interval()
    assert low < 0 < high and even.change == 0 and math.isinf(even.pairs_needed)
    assert PairedChange(0, 0, 0, 0).interval() == (-1.0, 1.0)


def test_newcombe_interval_covers_the_true_change_about_95_percent_of_the_time():
    rng = random.Random(7)
    probabilities = (0.2, 0.06, 0.02, 0.72)  # both, gained, lost, neither: strongly correlated pairs
    true_change, n, trials = 0.04, 200, 1500
    covered = 0
    for _ in range(trials):
        counts = [0, 0, 0, 0]
        for draw in rng.choices(range(4), weights=probabilities, k=n):
            counts[draw] += 1
        low, high = PairedChange(*counts).interval()
        covered += low <= true_change <= high
    assert 0.93 <= covered / trials <= 0.97


def test_pairs_to_resolve_grows_as_the_change_shrinks():
    # Connor 1987 by hand: psi = 0.08, delta = 0.04
    expected = math.ceil((1.959964 * math.sqrt(0.08) + 0.841621 * math.sqrt(0.08 - 0.0016)) ** 2 / 0.0016)
    assert pairs_to_resolve(0.06, 0.02) == expected
    assert pairs_to_resolve(0.05, 0.03) > pairs_to_resolve(0.06, 0.02)
    assert math.isinf(pairs_to_resolve(0.04, 0.04))
    with pytest.raises(ValueError, match="exceeds 1"):
        pairs_to_resolve(0.7, 0.6)
    assert PairedChange(10, 9, 1, 80).pairs_needed == pairs_to_resolve(0.09, 0.01)


def write_records(run: Path, phase: str, passed: dict[tuple[str, str], bool]) -> None:
    lines = [json.dumps({"task_id": t, "mode": m, "sample": 0, "passed": p}) for (m, t), p in passed.items()]
    eval_records_path(run, phase).write_text("".join(line + "\n" for line in lines))


def make_seed_run(run: Path, before: dict, after: dict) -> Path:
    run.mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps({"eval": {}}))
    write_records(run, "before", before)
    write_records(run, "after", after)
    return run


def test_paired_rows_pool_the_seeds_and_match_tasks_by_id(tmp_path):
    seed1 = make_seed_run(
        tmp_path / "seed-1",
        {("multi_tool", "a"): False, ("multi_tool", "b"): True, ("no_tools", "a"): False},
        {("multi_tool", "a"): True, ("multi_tool", "b"): True, ("no_tools", "a"): False},
    )
    # seed 2's after evaluation misses task b: only matched pairs count
    seed2 = make_seed_run(
        tmp_path / "seed-2",
        {("multi_tool", "a"): True, ("multi_tool", "b"): False},
        {("multi_tool", "a"): False},
    )
    rows = {row["mode"]: row for row in paired_rows("default", [seed1, seed2])}
    tool = rows["multi_tool"]
    assert tool["runs"] == 2 and tool["pooled"]["n"] == 3 and tool["tasks"] == 2
    assert (tool["pooled"]["both"], tool["pooled"]["gained"], tool["pooled"]["lost"]) == (1, 1, 1)
    # task a: before (0 + 1) / 2, after (1 + 0) / 2: tied; task b: 1 -> 1, tied
    assert (tool["up"], tool["down"], tool["tied"], tool["difference"]) == (0, 0, 2, 0.0)
    assert rows["no_tools"]["runs"] == 1 and rows["no_tools"]["pooled"]["neither"] == 1
    table = build_table([seed1, seed2])
    assert {row["mode"] for row in table["paired"]} == {"multi_tool", "no_tools"}
    markdown = table_markdown(table)
    assert "## Held-out change, paired" in markdown and "| 0 / 0 / 2 |" in markdown
    assert "pooled pairs (secondary, not independent)" in markdown


def test_runs_without_records_give_no_paired_rows_and_bad_lines_are_skipped(tmp_path, caplog):
    run = tmp_path / "old"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"eval": {}}))
    assert paired_rows("default", [run]) == []
    assert "No run kept per-task records" in table_markdown(build_table([run]))
    eval_records_path(run, "before").write_text('{"task_id": "a", "mode": "m", "passed": true}\nnot json\n[1]\n')
    assert read_eval_records(run, "before") == [{"task_id": "a", "mode": "m", "passed": True}]
    assert caplog.text.count("is not an evaluation record") == 2


def test_runs_evaluated_after_only_are_paired_with_the_base_evaluation(tmp_path):
    base = tmp_path / "base"  # python -m agentic_rl.evaluate: results.jsonl
    base.mkdir()
    write_records(base, "eval", {("multi_tool", "a"): False, ("multi_tool", "b"): False, ("multi_tool", "c"): True})
    after_only = tmp_path / "seed-1"  # eval_before=false: no records before training
    after_only.mkdir()
    (after_only / "summary.json").write_text(json.dumps({"eval": {}}))
    write_records(
        after_only, "after", {("multi_tool", "a"): True, ("multi_tool", "b"): True, ("multi_tool", "c"): False}
    )
    own = make_seed_run(tmp_path / "seed-2", {("multi_tool", "a"): True}, {("multi_tool", "a"): True})

    assert paired_rows("default", [after_only]) == []  # nothing to pair it with
    rows = paired_rows("default", [after_only, own], episode_outcomes(base, "before"))
    pooled = rows[0]["pooled"]
    assert len(rows) == 1 and rows[0]["runs"] == 2 and pooled["n"] == 4
    # after_only against the base (2 gained, 1 lost); own against its own before (both), not the base's False
    assert (pooled["gained"], pooled["lost"], pooled["both"], pooled["neither"]) == (2, 1, 1, 0)
    # tasks: a (False, True) and (True, True): 0.5 -> 1 up; b 0 -> 1 up; c 1 -> 0 down
    assert (rows[0]["tasks"], rows[0]["up"], rows[0]["down"]) == (3, 2, 1)
    assert rows[0]["difference"] == pytest.approx((0.5 + 1 - 1) / 3)

    md, js, _ = write_table([after_only, own], tmp_path / "out", base=base)
    assert json.loads(js.read_text())["paired_base"] == str(base)
    assert f"the base evaluation `{base}`" in md.read_text() and "| 2 / 1 / 0 |" in md.read_text()
    assert table_main([str(after_only), str(own), "--before", str(base), "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "table.md").read_text() == md.read_text()


def test_a_base_without_records_is_a_clear_error(tmp_path, capsys):
    run = make_seed_run(tmp_path / "seed-1", {("m", "a"): False}, {("m", "a"): True})
    empty = tmp_path / "not-an-eval"
    empty.mkdir()
    with pytest.raises(ValueError, match="no per-task evaluation records"):
        write_table([run], tmp_path / "out", base=empty)
    assert table_main([str(run), "--before", str(empty)]) == 2
    assert "--before" in capsys.readouterr().err


def test_the_base_evaluation_fills_the_before_columns_once_not_once_per_seed(tmp_path):
    base = tmp_path / "base"  # an evaluate run: summary.json's eval is mode -> metrics
    base.mkdir()
    write_records(base, "eval", {("multi_tool", str(t)): t < 2 for t in range(10)})
    base_metrics = {"pass@1": 0.2, "rollout/episodes": 10.0, "tools/submit_rate": 0.3, "tools/none_rate": 0.5}
    (base / "summary.json").write_text(json.dumps({"eval": {"multi_tool": base_metrics}}))
    seeds = []
    for seed, (rate, submit) in enumerate([(0.4, 0.6), (0.6, 0.8)], 1):
        run = tmp_path / f"seed-{seed}"  # eval_before=false: an after section only
        run.mkdir()
        after = {"pass@1": rate, "rollout/episodes": 10.0, "tools/submit_rate": submit, "tools/none_rate": 0.1}
        (run / "summary.json").write_text(json.dumps({"eval": {"before": {}, "after": {"multi_tool": after}}}))
        write_records(run, "after", {("multi_tool", str(t)): t < 10 * rate for t in range(10)})
        seeds.append(run)

    table = build_table(seeds, base)
    (row,) = table["pass_at_1"]
    assert row["before_pooled"] == pytest.approx({**row["before_pooled"], "k": 2, "n": 10, "rate": 0.2})
    assert row["before"]["n"] == 1 and row["before"]["method"] == "wilson"  # one evaluation, not one per seed
    assert row["before"]["mean"] == pytest.approx(0.2) and row["before"]["low"] < 0.2 < row["before"]["high"]
    assert row["after_pooled"]["k"] == 10 and row["after_pooled"]["n"] == 20
    (rates,) = table["tool_rates"]
    assert rates["tools/submit_rate/before"]["mean"] == pytest.approx(0.3)
    assert rates["tools/submit_rate/after"]["mean"] == pytest.approx(0.7)
    markdown = table_markdown(table)
    assert f"the base evaluation `{base}`, one evaluation" in markdown
    # without --before the before columns stay empty: nothing is made up
    (bare,) = build_table(seeds)["pass_at_1"]
    assert bare["before"] is None and bare["before_pooled"] is None


def test_a_mode_the_base_summary_lacks_is_scored_from_its_records(tmp_path):
    base = tmp_path / "base"  # evaluated a mode at a time: summary.json kept the last mode only
    base.mkdir()
    write_records(
        base,
        "eval",
        {**{("no_tools", str(t)): t < 3 for t in range(8)}, ("multi_tool", "0"): True, ("code_only", "0"): True},
    )
    (base / "summary.json").write_text(json.dumps({"eval": {"no_tools": {"pass@1": 0.375, "rollout/episodes": 8}}}))
    run = tmp_path / "seed-1"
    run.mkdir()
    after = {"multi_tool": {"pass@1": 1.0}, "no_tools": {"pass@1": 0.5}}
    (run / "summary.json").write_text(json.dumps({"eval": {"after": after}}))
    rows = {row["mode"]: row for row in build_table([run], base)["pass_at_1"]}
    assert set(rows) == {"multi_tool", "no_tools"}  # the base's code_only: a mode this arm was never evaluated in
    assert (rows["multi_tool"]["before_pooled"]["k"], rows["multi_tool"]["before_pooled"]["n"]) == (1, 1)
    assert (rows["no_tools"]["before_pooled"]["k"], rows["no_tools"]["before_pooled"]["n"]) == (3, 8)


def make_arm_run(run: Path, overrides: list[str], after: dict) -> Path:
    run.mkdir(parents=True)
    (run / ".hydra").mkdir()
    (run / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides))
    (run / "summary.json").write_text(json.dumps({"eval": {}}))
    write_records(run, "after", after)
    return run


def test_each_arm_is_paired_with_the_base_evaluated_under_its_own_overrides(tmp_path, caplog):
    """The tool-cap ablation's case: the base model evaluated under each cap C is that arm's before; an arm whose
    base is not there yet has none; two bases that fit one arm are an error."""
    bases = {}
    for cap, passed in [(1, {"a": True, "b": False}), (2, {"a": False, "b": False})]:
        base = make_arm_run(tmp_path / f"base-c{cap}", ["data=pipelines-heldout", f"rollout.max_tool_calls={cap}"], {})
        write_records(base, "eval", {("multi_tool", t): p for t, p in passed.items()})
        bases[cap] = base
    runs = [
        make_arm_run(tmp_path / f"c{cap}-s{seed}", [f"rollout.max_tool_calls={cap}", f"seed={seed}"], after)
        for cap, after in [
            (1, {("multi_tool", "a"): True, ("multi_tool", "b"): True}),
            (2, {("multi_tool", "a"): True}),
        ]
        for seed in (1, 2)
    ]
    table = build_table(runs, [bases[2], bases[1]])
    paired = {row["arm"]: row["pooled"] for row in table["paired"]}
    assert (paired["rollout.max_tool_calls=1"]["gained"], paired["rollout.max_tool_calls=1"]["both"]) == (2, 2)
    assert (paired["rollout.max_tool_calls=2"]["gained"], paired["rollout.max_tool_calls=2"]["n"]) == (2, 2)
    assert table["paired_base"] == {
        "rollout.max_tool_calls=1": str(bases[1]),
        "rollout.max_tool_calls=2": str(bases[2]),
    }
    assert f"`rollout.max_tool_calls=2`: `{bases[2]}`" in table_markdown(table)
    # a base that fits no arm, or two that fit one, is a clear error
    other = make_arm_run(tmp_path / "base-c4", ["rollout.max_tool_calls=4"], {})
    write_records(other, "eval", {("multi_tool", "a"): True})
    partial = build_table(runs, [bases[1], other])  # C = 2's base not run yet: that arm has no before
    assert {row["arm"] for row in partial["paired"]} == {"rollout.max_tool_calls=1"}
    assert "no base evaluation has the overrides of the arm `rollout.max_tool_calls=2`" in caplog.text
    assert "`rollout.max_tool_calls=2`: none yet" in table_markdown(partial)
    with pytest.raises(ValueError, match=r"max_tool_calls=1` needs the one base .* matches .*base-c1, .*base-c1"):
        build_table(runs, [bases[1], bases[1]])
    assert table_main([*map(str, runs), "--before", str(bases[1]), str(bases[2]), "--out", str(tmp_path / "o")]) == 0


def test_arms_are_compared_on_the_same_seed_and_task_after_training(tmp_path):
    """Arm a's outcome is the pair's first, arm b's its second; a seed only one arm ran, and a run whose seed is
    unknown, pair nothing."""
    code = [
        make_arm_run(
            tmp_path / "code-s1",
            ["tools=code", "seed=1"],
            {
                ("multi_tool", "a"): True,
                ("multi_tool", "b"): False,
                ("multi_tool", "c"): False,
                ("no_tools", "a"): True,
            },
        ),
        make_arm_run(tmp_path / "code-s2", ["tools=code", "seed=2"], {("multi_tool", "a"): True}),
    ]
    multi = [
        make_arm_run(
            tmp_path / "multi-s1",
            ["tools=multi", "seed=1"],
            {
                ("multi_tool", "a"): True,
                ("multi_tool", "b"): True,
                ("multi_tool", "c"): True,
                ("no_tools", "a"): False,
            },
        ),
        make_arm_run(tmp_path / "multi-s3", ["tools=multi", "seed=3"], {("multi_tool", "a"): False}),
        make_arm_run(tmp_path / "multi-unseeded", ["tools=multi"], {("multi_tool", "a"): False}),
    ]
    table = build_table(code + multi)
    rows = {row["mode"]: row for row in table["arm_pairs"]}
    assert set(rows) == {"multi_tool", "no_tools"}
    tool = rows["multi_tool"]
    assert (tool["a"], tool["b"], tool["seeds"], tool["tasks"]) == ("tools=code", "tools=multi", 1, 3)
    assert (tool["up"], tool["down"], tool["tied"]) == (2, 0, 1)
    assert (tool["rate_a"], tool["rate_b"], tool["difference"]) == pytest.approx((1 / 3, 1.0, 2 / 3))
    assert tool["p_value"] == pytest.approx(sign_test_p(2, 0)) == 0.5
    assert tool["low"] <= tool["difference"] <= tool["high"]
    assert (tool["pooled"]["gained"], tool["pooled"]["lost"]) == (2, 0)
    assert (rows["no_tools"]["up"], rows["no_tools"]["down"], rows["no_tools"]["difference"]) == (0, 1, -1.0)
    # two comparisons, one Holm family: 0.5 -> min(1, 2 * 0.5), 1 -> 1
    assert [row["p_holm"] for row in table["arm_pairs"]] == [1.0, 1.0]
    markdown = table_markdown(table)
    assert "## Arms compared, paired" in markdown
    assert "| multi_tool | tools=code | tools=multi | 1 | 3 | 0.333 | 1.000 | +0.667 [" in markdown
    # arms that share no seed have nothing to pair, and the section is left out
    apart = build_table([code[1], multi[1]])
    assert apart["arm_pairs"] == [] and "## Arms compared" not in table_markdown(apart)


def test_the_table_command_draws_the_paired_changes_only_when_there_are_pairs(tmp_path):
    seed1 = make_seed_run(tmp_path / "runs" / "seed-1", {("multi_tool", "a"): False}, {("multi_tool", "a"): True})
    written = write_table([seed1], out_dir=tmp_path / "report")
    assert [p.name for p in written] == ["table.md", "table.json", "paired_changes.png"]
    assert written[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and written[2].parent == tmp_path / "report" / "figures"
    unpaired = tmp_path / "runs" / "old"
    unpaired.mkdir()
    (unpaired / "summary.json").write_text(json.dumps({"eval": {}}))
    assert [p.name for p in write_table([unpaired], out_dir=tmp_path / "plain")] == ["table.md", "table.json"]
    assert not (tmp_path / "plain" / "figures").exists()
