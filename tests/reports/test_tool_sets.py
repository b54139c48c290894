"""The table's section "Tool sets compared" (issue #46, the tools ablation): each arm's trained policy in the mode of
the tool set it trained with, read from the run's own config, against the other arms on the same seeds, tasks and
samples, fewer tools on side a, tasks as the unit, Holm across the rows."""

from __future__ import annotations

import json

import pytest
import yaml

from agentic_rl.reports.tables import BASELINE_SECTION, TOOL_SETS_SECTION, build_table, table_markdown

from .test_vs_baselines import SPEC, TASKS, first, make_run, records

MODES = ["no_tools", "code_only", "multi_tool", "last_block", "forced_submit"]
TOOLSETS = {"no_tools": "none", "code_only": "code", "multi_tool": "multi", "last_block": "multi"}
TOOLSETS["forced_submit"] = "multi"


def arm_run(path, seed, tools, after):
    run = make_run(path, seed, None, records(after))
    overrides = [f"seed={seed}"] + ([] if tools == "multi" else [f"tools={tools}"])
    (run / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    config = {
        "seed": seed,
        "tools": {"name": tools},
        "evaluator": {"modes": MODES, "toolsets": {mode: {"name": name} for mode, name in TOOLSETS.items()}},
    }
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))
    return run


# every arm passes everything in the modes it did not train for: only its own mode may be read
EVERYTHING = {mode: set(TASKS) for mode in MODES}
ARMS = {
    "none": {**EVERYTHING, "no_tools": first(1)},
    "code": {**EVERYTHING, "code_only": first(3)},
    "multi": {**EVERYTHING, "multi_tool": first(6), "last_block": set()},
}


def study(tmp_path, arms=ARMS, seeds=(1, 2)):
    return [arm_run(tmp_path / f"{tools}-{s}", s, tools, after) for tools, after in arms.items() for s in seeds]


def test_each_arm_is_read_in_its_own_tools_mode_with_fewer_tools_on_side_a(tmp_path):
    rows = build_table(study(tmp_path), spec=SPEC)["tool_sets"]
    got = {(row["mode_a"], row["mode_b"]): row for row in rows}
    assert list(got) == [("no_tools", "code_only"), ("no_tools", "multi_tool"), ("code_only", "multi_tool")]
    for (mode_a, mode_b), (n_a, n_b) in {
        ("no_tools", "code_only"): (1, 3),
        ("no_tools", "multi_tool"): (1, 6),
        ("code_only", "multi_tool"): (3, 6),
    }.items():
        row = got[(mode_a, mode_b)]
        assert (row["rate_a"], row["rate_b"]) == (pytest.approx(n_a / 8), pytest.approx(n_b / 8))
        assert (row["up"], row["down"], row["tasks"], row["seeds"]) == (n_b - n_a, 0, 8, 2)
        assert row["difference"] == pytest.approx((n_b - n_a) / 8) and row["low"] <= row["difference"]
    # Holm over the three: the smallest sign p (5 tasks up, 2^-4) times 3
    assert got[("no_tools", "multi_tool")]["p_holm"] == pytest.approx(3 * 2**-4)
    assert got[("no_tools", "code_only")]["tools_a"] == "none"
    assert got[("code_only", "multi_tool")]["tools_b"] == "multi"


def test_a_tool_set_that_lost_reads_below_zero_and_the_section_prints_it(tmp_path):
    arms = {"code": {"code_only": first(5)}, "multi": {"multi_tool": first(2)}}
    table = build_table(study(tmp_path, arms, seeds=(1,)), spec=SPEC)
    (row,) = table["tool_sets"]
    assert (row["mode_a"], row["mode_b"], row["up"], row["down"]) == ("code_only", "multi_tool", 0, 3)
    assert row["high"] <= 0  # unclipped
    text = table_markdown(table)
    assert f"## {TOOL_SETS_SECTION}" in text and "-0.375 [" in text.split(TOOL_SETS_SECTION)[1]


def test_only_seeds_both_arms_ran_pair_and_one_tool_set_gives_no_section(tmp_path):
    runs = [
        arm_run(tmp_path / "code-1", 1, "code", ARMS["code"]),
        arm_run(tmp_path / "multi-2", 2, "multi", ARMS["multi"]),
    ]
    assert build_table(runs, spec=SPEC)["tool_sets"] == []  # no seed in common
    one_set = [arm_run(tmp_path / f"multi-{s}", s, "multi", ARMS["multi"]) for s in (3, 4)]
    table = build_table(one_set, spec=SPEC)
    assert table["tool_sets"] == [] and TOOL_SETS_SECTION not in table_markdown(table)


def test_an_arm_whose_config_names_no_evaluated_mode_is_left_out(tmp_path, caplog):
    runs = study(tmp_path, {"code": ARMS["code"], "multi": ARMS["multi"]}, seeds=(1,))
    (runs[0] / ".hydra" / "config.yaml").unlink()  # the code arm's run kept no config
    assert build_table(runs, spec=SPEC)["tool_sets"] == []
    assert "has no one tool set and mode" in caplog.text


def test_the_baseline_section_reads_each_arm_in_its_own_mode(tmp_path):
    """After RL vs the base: a `tools=code` arm is its code-only policy against the base, not its policy asked to
    use tools it never had (every other mode passes everything here, so a wrong mode reads 1.0)."""
    before = records({mode: set() for mode in MODES})
    runs = []
    for tools in ("code", "multi"):
        run = arm_run(tmp_path / tools, 1, tools, ARMS[tools])
        (run / "eval_before.jsonl").write_text("".join(json.dumps(r) + "\n" for r in before))
        runs.append(run)
    section = build_table(runs, spec=SPEC)["vs_baselines"]
    assert {arm["arm"]: arm["mode"] for arm in section["arms"]} == {
        "tools=code": "code_only",
        "tools=multi (from its config)": "multi_tool",
    }
    rates = {(row["arm"], row["mode"]): row["rate_b"] for row in section["rows"]}
    assert rates == {
        ("tools=code", "code_only"): pytest.approx(3 / 8),
        ("tools=multi (from its config)", "multi_tool"): pytest.approx(6 / 8),
    }
    assert "| tools=code | code_only | " in table_markdown(build_table(runs, spec=SPEC)).split(BASELINE_SECTION)[1]
