"""The tables' primary test, tasks as the unit (issue #46): the task mean over seeds and samples, the bootstrap over
tasks, the exact sign test on task means, Holm across the comparisons, unclipped intervals, and the pooled pairs
kept only as a labelled secondary column. Values are hand-computed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentic_rl.reports.runs import across_seeds, task_types_of
from agentic_rl.reports.stats import (
    Bootstrap,
    TaskDifference,
    bootstrap_interval,
    holm_adjust,
    mcnemar_exact_p,
    sign_test_p,
    task_rate,
    task_sums,
)
from agentic_rl.reports.tables import build_table, table_markdown


def make_run(
    path: Path,
    overrides: list[str],
    phases: dict[str, dict[tuple[str, str, int], bool]],
    task_types: dict[str, str] | None = None,
    after_pass_at_1: dict[str, float] | None = None,
) -> Path:
    """A run dir with `.hydra/overrides.yaml`, summary.json and one eval_<phase>.jsonl per phase, each record
    (mode, task, sample) -> passed."""
    (path / ".hydra").mkdir(parents=True)
    (path / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides))
    after = {mode: {"pass@1": rate} for mode, rate in (after_pass_at_1 or {}).items()}
    (path / "summary.json").write_text(json.dumps({"eval": {"after": after}}))
    for phase, outcomes in phases.items():
        records = [
            {"task_id": task, "mode": mode, "sample": sample, "passed": passed}
            | ({"task_type": task_types[task]} if task_types else {})
            for (mode, task, sample), passed in outcomes.items()
        ]
        (path / f"eval_{phase}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_sign_test_is_the_exact_binomial_by_hand():
    assert sign_test_p(10, 0) == pytest.approx(2 / 2**10)  # 0.00195: the transfer study's 10 tasks up, 0 down
    assert sign_test_p(3, 1) == pytest.approx(2 * (1 + 4) / 16)  # 0.625
    assert sign_test_p(2, 2) == 1.0 and sign_test_p(0, 0) == 1.0
    assert mcnemar_exact_p(7, 2) == sign_test_p(7, 2)  # McNemar's exact test is the sign test on discordant pairs
    stats = pytest.importorskip("scipy.stats")
    for up, down in [(9, 1), (12, 2), (5, 5), (0, 6)]:
        assert sign_test_p(up, down) == pytest.approx(stats.binomtest(up, up + down).pvalue)


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04, 0.2 with m = 4: 4 * 0.01 = 0.04; 3 * 0.03 = 0.09; 2 * 0.04 = 0.08 -> 0.09 (monotone);
    # 1 * 0.2 = 0.2. Only the first holds at 0.05, though three raw p are below it.
    assert holm_adjust([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert holm_adjust([]) == []


def test_holm_is_monotone_in_the_sorted_order():
    adjusted = holm_adjust([0.5, 0.9])
    # 2 * 0.5 = 1.0 first, then max(1.0, 1 * 0.9) = 1.0: an adjusted p never falls below a smaller raw p's
    assert adjusted == [1.0, 1.0]


def test_the_bootstrap_is_fixed_by_its_seed_and_is_the_percentile_interval():
    values = [((i * 37) % 11) / 11 - 0.3 for i in range(10)]
    spec = Bootstrap(resamples=2000, seed=7)
    first = bootstrap_interval(values, spec)
    assert bootstrap_interval(values, spec) == first  # same seed, same interval, byte for byte
    assert bootstrap_interval(values, Bootstrap(2000, 8)) != first
    # the same draws by hand: the 2.5% and 97.5% quantiles of 2 blocks of 1,000 resampled means
    rng = np.random.default_rng(7)
    data = np.asarray(values)
    means = np.concatenate([data[rng.integers(0, 10, size=(1000, 10))].mean(axis=1) for _ in range(2)])
    assert first == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])))
    assert first[0] < np.mean(values) < first[1]
    with pytest.raises(ValueError):
        Bootstrap(resamples=0)


def test_the_task_difference_does_not_depend_on_the_order_the_pairs_came_in():
    pairs = [("t1", False, True), ("t2", True, True), ("t3", False, False), ("t1", False, True), ("t4", True, False)]
    spec = Bootstrap(500, 3)
    forward = TaskDifference.from_sums(task_sums(pairs), spec)
    assert TaskDifference.from_sums(task_sums(pairs[::-1]), spec) == forward
    assert (forward.tasks, forward.up, forward.down, forward.tied) == (4, 1, 1, 2)
    assert forward.difference == pytest.approx((1 + 0 + 0 - 1) / 4)


def test_task_mean_over_seeds_and_samples(tmp_path):
    """2 seeds x 2 samples of 2 tasks. Task a: before 0/4, after 3/4 -> +0.75; task b: before 2/4, after 1/4 ->
    -0.25. The mean over tasks is +0.25, one task up and one down (p 1), whatever the 8 pooled pairs say."""
    before = {("m", "a", k): False for k in (0, 1)} | {("m", "b", 0): True, ("m", "b", 1): False}
    afters = [
        {("m", "a", 0): True, ("m", "a", 1): True, ("m", "b", 0): False, ("m", "b", 1): False},
        {("m", "a", 0): True, ("m", "a", 1): False, ("m", "b", 0): True, ("m", "b", 1): False},
    ]
    runs = [
        make_run(tmp_path / f"seed-{seed}", [f"seed={seed}"], {"before": before, "after": after})
        for seed, after in enumerate(afters, 1)
    ]
    (row,) = build_table(runs)["paired"]
    assert (row["tasks"], row["rate_a"], row["rate_b"]) == (2, pytest.approx(0.25), pytest.approx(0.5))
    assert row["difference"] == pytest.approx(0.25)
    assert (row["up"], row["down"], row["p_value"]) == (1, 1, 1.0)
    assert row["pooled"]["n"] == 8  # every (seed, task, sample) a pair: the samples did not collapse
    assert (row["pooled"]["gained"], row["pooled"]["lost"]) == (3, 1)
    rate = task_rate([("a", True), ("a", True), ("a", False), ("b", False)])
    assert (rate["tasks"], rate["rate"], rate["episodes"], rate["passed"]) == (2, pytest.approx(1 / 3), 4, 2)


def test_the_primary_test_is_not_the_pooled_pairs(tmp_path):
    """Three seeds that agree (one base copied into every seed): 6 tasks gained in every seed are 18 pooled pairs,
    McNemar p = 2 / 2**18, but 6 tasks, sign test p = 2 / 2**6. The primary columns are the task-level ones."""
    tasks = [f"t{i}" for i in range(12)]
    before = {("multi_tool", t, 0): False for t in tasks}
    after = {("multi_tool", t, 0): int(t[1:]) < 6 for t in tasks}
    runs = [make_run(tmp_path / f"s{s}", [f"seed={s}"], {"before": before, "after": after}) for s in (1, 2, 3)]
    table = build_table(runs)
    (row,) = table["paired"]
    assert row["p_value"] == pytest.approx(2 / 2**6) and row["pooled"]["p_value"] == pytest.approx(2 / 2**18)
    assert (row["tasks"], row["up"], row["pooled"]["n"]) == (12, 6, 36)
    assert row["low"] < row["pooled"]["low"]  # the bootstrap over 12 tasks is wider than the pooled Newcombe
    line = next(line for line in table_markdown(table).splitlines() if "| 12 |" in line)
    assert f"+0.500 [{row['low']:+.3f}, {row['high']:+.3f}] | 6 / 0 / 6 | 0.0312 |" in line
    assert line.index("0.0312") < line.index("McNemar p")  # the pooled figure comes last, in its labelled column


def test_intervals_are_printed_unclipped(tmp_path):
    """pass@1 of 0.0, 0.0 and 0.05 over three seeds: mean 0.0167, t interval 0.0167 -+ 4.303 * 0.0289 / sqrt(3),
    whose lower end is -0.055. Clipped to 0.000 it would hide that the seeds are too few."""
    runs = [
        make_run(tmp_path / f"s{s}", [f"seed={s}"], {}, after_pass_at_1={"multi_tool": rate})
        for s, rate in ((1, 0.0), (2, 0.0), (3, 0.05))
    ]
    (row,) = build_table(runs)["pass_at_1"]
    assert row["after"]["low"] == pytest.approx(0.05 / 3 - 4.302653 * 0.05 / np.sqrt(3) / np.sqrt(3), abs=1e-6)
    assert row["after"]["low"] < 0
    assert "| 0.017 [-0.055, 0.088] |" in table_markdown(build_table(runs))
    assert across_seeds([0.0, 0.0, 0.05]).low < 0


def test_holm_across_the_arms_compared(tmp_path):
    """Three arms, one mode, 8 tasks: b beats a on all 8 (sign p 2/256), c beats a on 6 of 6 untied (2/64), c - b
    has 2 up and 0 down (p 0.5). Holm, m = 3: 3 * 0.0078 = 0.0234, 2 * 0.03125 = 0.0625, 0.5: only b - a holds."""
    tasks = [f"t{i}" for i in range(8)]
    arms = {
        "a": {t: False for t in tasks},
        "b": {t: True for t in tasks},
        "c": {t: int(t[1:]) < 6 for t in tasks},
    }
    runs = [
        make_run(tmp_path / arm, [f"arm={arm}", "seed=1"], {"after": {("m", t, 0): p for t, p in passed.items()}})
        for arm, passed in arms.items()
    ]
    rows = {(r["a"], r["b"]): r for r in build_table(runs)["arm_pairs"]}
    ab, ac, bc = rows["arm=a", "arm=b"], rows["arm=a", "arm=c"], rows["arm=b", "arm=c"]
    assert (ab["p_value"], ac["p_value"], bc["p_value"]) == pytest.approx((2 / 256, 2 / 64, 0.5))
    assert (bc["up"], bc["down"], bc["difference"]) == (0, 2, pytest.approx(-0.25))
    assert (ab["p_holm"], ac["p_holm"], bc["p_holm"]) == pytest.approx((3 * 2 / 256, 2 * 2 / 64, 0.5))
    assert (ab["holds"], ac["holds"], bc["holds"]) == (True, False, False)
    markdown = table_markdown(build_table(runs))
    assert "Holds at 0.05 after Holm: m: `arm=b` - `arm=a` +1.000." in markdown


def test_task_types_and_any_mode_names_get_their_own_tables(tmp_path):
    """Records with task_type (docs, plain) and modes beyond the three (the format baselines): each type has its
    pass rates and its primary test, and every mode the records hold is tabled."""
    types = {"d1": "docs", "d2": "docs", "p1": "plain"}
    modes = ("multi_tool", "last_block", "forced_submit")
    before = {(m, t, 0): False for m in modes for t in types}
    after = {(m, t, 0): types[t] == "docs" for m in modes for t in types}
    run = make_run(tmp_path / "s1", ["seed=1"], {"before": before, "after": after}, task_types=types)
    table = build_table([run])
    assert {row["mode"] for row in table["paired"]} == set(modes)
    typed = {(r["mode"], r["task_type"]): r for r in table["task_types"]["paired"]}
    assert (typed["last_block", "docs"]["up"], typed["last_block", "docs"]["rate_b"]) == (2, 1.0)
    assert typed["forced_submit", "plain"]["tied"] == 1 and typed["forced_submit", "plain"]["difference"] == 0.0
    rates = {(r["mode"], r["task_type"]): r for r in table["task_types"]["rates"]}
    assert rates["multi_tool", "docs"]["after"]["rate"] == 1.0 and rates["multi_tool", "plain"]["after"]["rate"] == 0
    assert rates["multi_tool", "docs"]["before"]["tasks"] == 2
    markdown = table_markdown(table)
    assert "## By task_type (tasks as the unit)" in markdown
    assert "| last_block | docs | 1 | 2 | 0.000 | 1.000 | +1.000 [+1.000, +1.000] | 2 / 0 / 0 | 0.5 |" in markdown
    untyped = make_run(tmp_path / "s2", ["seed=2"], {"before": before, "after": after})
    assert build_table([untyped])["task_types"] is None and "By task_type" not in table_markdown(build_table([untyped]))


def test_codegym_records_without_a_type_are_split_by_held_out_set(tmp_path):
    """A CodeGym record carries no task_type but says in its `env` field whether its environment was trained on:
    the paired tables then split by held-out set, so a claim about held-out environments rests on their tasks
    alone. A record's own task_type still wins."""
    # ids outside codegym/: the constant-answer section would rebuild codegym/ tasks from their environments
    seen = {f"gym/SeenEnv/{i:03d}": True for i in range(2)}
    unseen = {f"gym/NewEnv/{i:03d}": False for i in range(3)}
    env_of = {**seen, **unseen}
    records = [{"task_id": t, "env": {"seen_env": s}} for t, s in env_of.items()]
    records += [{"task_id": "typed", "task_type": "docs", "env": {"seen_env": False}}, {"task_id": "plain"}]
    assert task_types_of(records) == {
        **{t: "seen_envs" for t in seen},
        **{t: "unseen_envs" for t in unseen},
        "typed": "docs",
    }
    run = tmp_path / "s1"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text("- seed=1\n")
    (run / "summary.json").write_text(json.dumps({"eval": {}}))
    for phase, passing in (("before", set()), ("after", set(unseen))):  # training solves the new environments only
        lines = [
            {"task_id": t, "mode": "multi_tool", "sample": 0, "passed": t in passing, "env": {"seen_env": s}}
            for t, s in env_of.items()
        ]
        (run / f"eval_{phase}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    typed = {r["task_type"]: r for r in build_table([run])["task_types"]["paired"]}
    assert (typed["unseen_envs"]["up"], typed["unseen_envs"]["tasks"]) == (3, 3)
    assert (typed["seen_envs"]["tied"], typed["seen_envs"]["difference"]) == (2, 0.0)
