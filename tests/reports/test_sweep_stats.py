"""Arms and seeds read back from run dirs: grouping (seed excluded), the tables' numbers against hand computation,
and the sweep figure (one legend entry per arm, means and bands across seeds)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import yaml

from agentic_rl import table
from agentic_rl.reports.plots import plot_sweep
from agentic_rl.reports.run_files import find_runs
from agentic_rl.reports.runs import group_by_arm, run_seed
from agentic_rl.reports.tables import build_table, reward_quarters, table_markdown, write_table

T2 = 4.302653  # t(0.975, df=2): three seeds
N_TASKS = 10


def make_run(
    run: Path,
    overrides: list[str] | None,
    *,
    after: dict,
    before: dict | None = None,
    rewards: list[float] = (0.0, 0.1),
    submit: float = 0.5,
    n_tasks: int | None = N_TASKS,
) -> Path:
    """A run dir as train.py leaves it: metrics.jsonl (an eval record, then training steps), summary.json and,
    unless `overrides` is None, .hydra/overrides.yaml."""
    records = [{"step": 0, "eval/multi_tool/pass@1": 0.0}]
    for step, reward in enumerate(rewards, 1):
        records.append(
            {
                "step": step,
                "train/epoch": 0,
                "train/reward_mean": reward,
                "train/pass_rate": reward,
                "tools/search_rate": 0.1,
                "tools/execute_rate": 0.2,
                "tools/submit_rate": submit,
                "tools/none_rate": 1 - submit,
            }
        )
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))

    def section(pass_at_1: dict) -> dict:
        return {
            mode: {
                "pass@1": p,
                **({} if mode == "no_tools" else {"tools/submit_rate": submit, "tools/none_rate": 1 - submit}),
            }
            for mode, p in pass_at_1.items()
        }

    summary = {"eval": {"after": section(after), **({"before": section(before)} if before else {})}}
    if n_tasks:
        summary["n_eval_tasks"] = n_tasks
    (run / "summary.json").write_text(json.dumps(summary))
    if overrides is not None:
        (run / ".hydra").mkdir()
        (run / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    return run


CODE = {1: 0.2, 2: 0.3, 3: 0.4}  # tools=code, multi_tool pass@1 after training, per seed
MULTI = {1: 0.5, 2: 0.5, 3: 0.6}  # tools=multi
CODE_SUBMIT = {1: 0.6, 2: 0.7, 3: 0.8}


@pytest.fixture
def sweep(tmp_path) -> Path:
    """A seed-major sweep as `sweep=tools tools=code,multi` leaves it: jobs 0..5, seed 1 of every arm first."""
    job = 0
    for seed in (1, 2, 3):
        for tools, rates in (("code", CODE), ("multi", MULTI)):
            make_run(
                tmp_path / str(job),
                ["sweep=tools", f"seed={seed}", f"tools={tools}", "progress=false"],
                after={"no_tools": 0.1, "multi_tool": rates[seed]},
                before={"multi_tool": 0.1},
                rewards=[0.0, 0.2, 0.1, 0.1, 0.3, 0.5, 0.7 + 0.1 * seed],
                submit=CODE_SUBMIT[seed] if tools == "code" else 0.9,
            )
            job += 1
    return tmp_path


def test_runs_group_into_arms_without_the_seed_in_job_order(sweep, tmp_path):
    runs = find_runs(sweep)
    arms = group_by_arm(runs)
    assert list(arms) == ["tools=code", "tools=multi"]  # sweep=tools and progress=false are shared or not an arm
    assert [r.name for r in arms["tools=code"]] == ["0", "2", "4"]
    assert [run_seed(r) for r in arms["tools=multi"]] == [1, 2, 3]
    # job 10 sorts after job 9, not after job 1
    for n in range(8, 12):
        make_run(tmp_path / "many" / str(n), ["seed=1"], after={"multi_tool": 0.1})
    assert [r.name for r in find_runs(tmp_path / "many")] == ["8", "9", "10", "11"]


def test_pass_at_1_mean_and_t_interval_across_seeds_and_pooled_wilson(sweep):
    table = build_table(find_runs(sweep))
    rows = {(r["arm"], r["mode"]): r for r in table["pass_at_1"]}
    code = rows[("tools=code", "multi_tool")]
    # 0.2, 0.3, 0.4: mean 0.3, sd 0.1 -> 0.3 -/+ 4.302653 * 0.1 / sqrt(3) = 0.3 -/+ 0.248414
    assert code["after"]["n"] == 3 and code["after"]["method"] == "t"
    assert code["after"]["mean"] == pytest.approx(0.3)
    assert (code["after"]["low"], code["after"]["high"]) == (
        pytest.approx(0.051586, abs=1e-6),
        pytest.approx(0.548414, abs=1e-6),
    )
    assert code["before"] == {
        "mean": pytest.approx(0.1),
        "low": pytest.approx(0.1),
        "high": pytest.approx(0.1),
        "n": 3,
        "method": "t",
    }
    # pooled: 2 + 3 + 4 = 9 passed of 3 x 10 tasks, Wilson 95% (tests/tracking/test_stats.py)
    assert code["after_pooled"] == {
        "k": 9,
        "n": 30,
        "rate": pytest.approx(0.3),
        "low": pytest.approx(0.166647, abs=1e-6),
        "high": pytest.approx(0.478758, abs=1e-6),
    }
    multi = rows[("tools=multi", "multi_tool")]["after"]
    # 0.5, 0.5, 0.6: sd sqrt(0.01 / 3) = 0.057735 -> half 4.302653 * 0.057735 / sqrt(3) = 0.143422; clipped at 1
    assert (multi["mean"], multi["low"], multi["high"]) == (
        pytest.approx(0.533333, abs=1e-6),
        pytest.approx(0.389912, abs=1e-6),
        pytest.approx(0.676755, abs=1e-6),
    )
    assert rows[("tools=code", "no_tools")]["before"] is None  # not evaluated before training


def test_tool_rates_only_for_modes_with_tools_and_training_quarters(sweep):
    table = build_table(find_runs(sweep))
    assert {(r["arm"], r["mode"]) for r in table["tool_rates"]} == {
        ("tools=code", "multi_tool"),
        ("tools=multi", "multi_tool"),
    }
    code = next(r for r in table["tool_rates"] if r["arm"] == "tools=code")
    submit = code["tools/submit_rate/after"]  # 0.6, 0.7, 0.8 -> 0.7 -/+ 0.248414
    assert (submit["mean"], submit["low"], submit["high"]) == (
        pytest.approx(0.7),
        pytest.approx(0.451586, abs=1e-6),
        pytest.approx(0.948414, abs=1e-6),
    )
    none = code["tools/none_rate/after"]
    assert none["mean"] == pytest.approx(0.3) and none["low"] == pytest.approx(0.051586, abs=1e-6)
    # 7 training steps: quarters of ceil(7 / 4) = 2 steps. Seed 1: first (0.0 + 0.2) / 2, last (0.5 + 0.8) / 2
    training = next(r for r in table["training"] if r["arm"] == "tools=code")
    seed1 = training["runs"][0]
    assert (seed1["seed"], seed1["n_steps"], seed1["quarter_steps"]) == (1, 7, 2)
    assert (seed1["first_quarter"], seed1["last_quarter"], seed1["difference"]) == (
        pytest.approx(0.1),
        pytest.approx(0.65),
        pytest.approx(0.55),
    )
    # differences 0.55, 0.6, 0.65 -> 0.6 -/+ 4.302653 * 0.05 / sqrt(3)
    half = T2 * 0.05 / 3**0.5
    assert (training["difference"]["mean"], training["difference"]["low"], training["difference"]["high"]) == (
        pytest.approx(0.6),
        pytest.approx(0.6 - half, abs=1e-6),
        pytest.approx(0.6 + half, abs=1e-6),
    )


def test_reward_quarters_of_a_run_with_fewer_than_four_steps(tmp_path):
    run = make_run(tmp_path / "r", [], after={"multi_tool": 0.0}, rewards=[0.2, 0.4, 0.9])
    assert reward_quarters(run) == {
        "n_steps": 3,
        "quarter_steps": 1,
        "first_quarter": 0.2,
        "last_quarter": 0.9,
        "difference": pytest.approx(0.7),
    }
    assert reward_quarters(make_run(tmp_path / "none", [], after={}, rewards=[])) is None


def test_power_rows_between_arms_and_before_after(sweep):
    power = build_table(find_runs(sweep))["power"]
    between = next(
        r
        for r in power
        if r["mode"] == "multi_tool" and r["a"] == "tools=code (after)" and r["b"] == "tools=multi (after)"
    )
    # pooled 9/30 vs 16/30
    assert (between["p_a"], between["p_b"]) == (pytest.approx(0.3), pytest.approx(16 / 30))
    assert between["tasks_per_arm"] == 69 and between["tasks_now"] == N_TASKS
    same = next(r for r in power if r["mode"] == "no_tools")  # both arms 0.1 after: no number of tasks separates
    assert same["tasks_per_arm"] == float("inf")
    assert any(r["a"] == "tools=code (before)" and r["b"] == "tools=code (after)" for r in power)


def test_table_files_for_a_sweep_dir_via_the_cli(sweep, capsys):
    assert table.main([str(sweep)]) == 0
    md = (sweep / "table.md").read_text()
    assert "| tools=code | multi_tool | 3 | 0.100 [0.100, 0.100] | 0.300 [0.052, 0.548] | " in md
    assert "0.300 [0.167, 0.479] (9/30)" in md
    assert "| multi_tool | tools=code (after) | tools=multi (after) | 0.300 | 0.533 | 69 | 10 |" in md
    assert "never (equal rates)" in md
    data = json.loads((sweep / "table.json").read_text())
    assert next(r for r in data["power"] if r["mode"] == "no_tools")["tasks_per_arm"] is None  # inf -> null
    assert capsys.readouterr().out.split() == [str(sweep / "table.md"), str(sweep / "table.json")]


def test_table_over_a_list_of_run_dirs_one_arm_and_one_seed_wilson(tmp_path, capsys):
    """As in experiments/cpu-default: seed-<n>/ copies of plain runs, one with no .hydra/ at all."""
    study = tmp_path / "cpu-default"
    runs = [
        make_run(study / "seed-1", ["seed=1"], after={"multi_tool": 0.2}),
        make_run(study / "seed-2", ["seed=2"], after={"multi_tool": 0.4}),
        make_run(study / "seed-3", None, after={"multi_tool": 0.3}),
    ]
    assert table.main([str(r) for r in runs]) == 0
    data = json.loads((study / "table.json").read_text())  # the runs' common parent
    assert list(data["arms"]) == ["default"] and [r["seed"] for r in data["arms"]["default"]] == [1, 2, None]
    assert data["pass_at_1"][0]["after"]["mean"] == pytest.approx(0.3)
    md, _ = write_table(runs, out_dir=tmp_path / "report")  # --out DIR
    assert (
        md == tmp_path / "report" / "table.md"
        and "| default | multi_tool | 3 | – | 0.300 [0.052, 0.548] |" in md.read_text()
    )
    # a single run: the Wilson interval of its 3 / 10 tasks
    single = build_table([runs[0].parent / "seed-2"])["pass_at_1"][0]["after"]
    assert single["method"] == "wilson" and (single["low"], single["high"]) == (
        pytest.approx(0.168180, abs=1e-6),
        pytest.approx(0.687326, abs=1e-6),
    )
    assert table.main([str(tmp_path / "empty")]) == 2
    assert "no metrics.jsonl" in capsys.readouterr().err
    # an interrupted run (metrics, no summary) is listed as unfinished; a record kept without metrics still counts
    (runs[2] / "summary.json").rename(tmp_path / "kept.json")
    (runs[1] / "metrics.jsonl").unlink()
    data = build_table(runs)
    assert [r["finished"] for r in data["arms"]["default"]] == [True, True, False]
    assert data["pass_at_1"][0]["after"]["n"] == 2 and [r.get("n_steps") for r in data["training"][0]["runs"]] == [
        2,
        None,
        2,
    ]
    assert "seed-3 (unfinished: no summary.json)" in write_table(runs)[0].read_text()


def test_sweep_figure_has_one_legend_entry_per_arm_and_seed_means(sweep, monkeypatch):
    captured = {}
    real_savefig = plt.Figure.savefig

    def keep(fig, *args, **kwargs):
        captured["fig"] = fig
        return real_savefig(fig, *args, **kwargs)

    monkeypatch.setattr(plt.Figure, "savefig", keep)
    out = plot_sweep(sweep)  # what python -m agentic_rl.plot SWEEP_DIR draws after the runs' own figures
    assert out == sweep / "figures" / "sweep_summary.png" and out.stat().st_size > 10_000
    fig = captured["fig"]
    [legend] = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["tools=code (3 seeds)", "tools=multi (3 seeds)"]
    axes = {ax.get_title(): ax for ax in fig.axes}
    submit = axes["Tool use: submit rate"]
    assert [line.get_label() for line in submit.lines] == ["tools=code", "tools=multi"]
    assert len(submit.collections) == 2  # one CI band per arm
    # constant per-seed rates: the mean over seeds of 0.6, 0.7, 0.8 at every step
    assert list(submit.lines[0].get_ydata()) == pytest.approx([0.7] * 7)
    after = axes["Evaluation: eval pass@1 per mode (after training)"]
    heights = [round(p.get_height(), 6) for p in after.patches]
    assert heights == [0.1, 0.3, 0.1, round(1.6 / 3, 6)]  # code: no_tools, multi_tool; multi: no_tools, multi_tool
    assert "Evaluation: eval pass@1 per mode (before training)" in axes
    assert [t.get_text() for t in after.get_xticklabels()] == ["no_tools", "multi_tool"]


def test_sweep_end_writes_the_tables_and_an_error_never_fails_the_sweep(sweep, caplog, monkeypatch):
    from omegaconf import OmegaConf

    from agentic_rl.reports import tables
    from agentic_rl.reports.callbacks import TabulateSweepOnEnd

    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}})
    TabulateSweepOnEnd().on_multirun_end(config)
    assert "| tools=multi | multi_tool | 3 |" in (sweep / "table.md").read_text()

    def broken(paths, out_dir=None):
        raise OSError("disk full")

    monkeypatch.setattr(tables, "write_table", broken)
    TabulateSweepOnEnd().on_multirun_end(config)
    assert f"could not write the sweep tables; run python -m agentic_rl.table {sweep}" in caplog.text


def test_pooled_counts_use_each_modes_episodes_not_the_eval_data_size(tmp_path):
    # an older run's summary.json gave the eval data's size (60) while evaluator.limit scored 30 tasks
    run = make_run(tmp_path / "r", ["seed=1"], after={"multi_tool": 0.1}, n_tasks=60)
    summary = json.loads((run / "summary.json").read_text())
    summary["eval"]["after"]["multi_tool"]["rollout/episodes"] = 30.0
    (run / "summary.json").write_text(json.dumps(summary))
    (row,) = build_table([run])["pass_at_1"]
    assert (row["after_pooled"]["k"], row["after_pooled"]["n"]) == (3, 30)
    assert build_table([run])["n_eval_tasks"] == [30]
    # n samples per task: episodes count tasks x samples
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump({"evaluator": {"n_samples": 5}}))
    summary["eval"]["after"]["multi_tool"]["rollout/episodes"] = 150.0
    (run / "summary.json").write_text(json.dumps(summary))
    (row,) = build_table([run])["pass_at_1"]
    assert row["after_pooled"]["n"] == 30


def test_training_tool_rates_per_arm_first_and_last_quarter(sweep, tmp_path):
    table = build_table(find_runs(sweep))
    code = {r["metric"]: r for r in table["training_rates"] if r["arm"] == "tools=code"}
    assert set(code) == {"tools/search_rate", "tools/execute_rate", "tools/submit_rate", "tools/none_rate"}
    submit = code["tools/submit_rate"]  # each seed submits at a constant 0.6, 0.7, 0.8 -> 0.7 -/+ 0.248414
    assert submit["seeds"] == 3
    for part in ("first_quarter", "last_quarter"):
        assert (submit[part]["mean"], submit[part]["low"]) == (pytest.approx(0.7), pytest.approx(0.451586, abs=1e-6))
    # a rate that changes over training: the quarters differ, and the markdown shows the section
    run = make_run(tmp_path / "r", [], after={"multi_tool": 0.0}, rewards=[0.0] * 8)
    lines = (run / "metrics.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records[1:]:
        record["tools/capped_rate"] = 0.5 if record["step"] <= 2 else 0.0
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    capped = next(r for r in build_table([run])["training_rates"] if r["metric"] == "tools/capped_rate")
    assert (capped["first_quarter"]["mean"], capped["last_quarter"]["mean"]) == (0.5, 0.0)
    assert "| `tools/capped_rate` | 1 | 0.500" in table_markdown(build_table([run]))


def test_execute_error_rates_at_evaluation_and_in_training(tmp_path):
    """The share of execute calls whose code failed (what the execution penalty acts on): at evaluation beside
    the other tool rates, and in training as first and last quarter; steps without an execute call log no rate."""
    run = make_run(tmp_path / "r", [], after={"no_tools": 0.1, "code_only": 0.0}, rewards=[0.0] * 8)
    summary = json.loads((run / "summary.json").read_text())
    summary["eval"]["after"]["code_only"]["tools/execute/error_rate"] = 0.25
    (run / "summary.json").write_text(json.dumps(summary))
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    for record in records[1:]:
        if record["step"] != 2:  # step 2 made no execute call
            record["tools/execute/error_rate"] = 0.4 if record["step"] <= 2 else 0.1
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    table = build_table([run])
    (code,) = [r for r in table["tool_rates"] if r["mode"] == "code_only"]
    assert code["tools/execute/error_rate/after"]["mean"] == pytest.approx(0.25)
    errors = next(r for r in table["training_rates"] if r["metric"] == "tools/execute/error_rate")
    # 7 logged values: quarters of 2; the first is steps 1 and 3 (0.4, 0.1), the last steps 7 and 8
    assert (errors["first_quarter"]["mean"], errors["last_quarter"]["mean"]) == (pytest.approx(0.25), 0.1)
    markdown = table_markdown(table)
    assert "execute error rate after" in markdown and "| `tools/execute/error_rate` | 1 | 0.250" in markdown


def write_config(run: Path, config: dict) -> None:
    (run / ".hydra").mkdir(exist_ok=True)
    (run / ".hydra" / "config.yaml").write_text(yaml.safe_dump(config))


def test_a_baseline_read_beside_the_arms_is_labelled_by_its_own_values_from_its_config(tmp_path):
    """Runs of `tools=none` and `tools=code` beside runs that set no `tools`: the baseline arm is named by the
    tools group its config resolved to, not by the overrides every run shares; a key it does not hold, or no
    config at all, leaves the old label."""
    shared = ["experiment=transfer-cpu", "eval_before=false"]
    for seed in (1, 2):
        for tools in ("none", "code"):
            run = make_run(tmp_path / f"{tools}-{seed}", [*shared, f"tools={tools}", f"seed={seed}"], after={})
            write_config(run, {"tools": {"name": tools}, "rollout": {"max_tool_calls": 3}})
        base = make_run(tmp_path / f"multi-{seed}", [*shared, f"seed={seed}"], after={})
        write_config(base, {"tools": {"name": "multi", "active": ["search"]}, "evaluator": {"limit": None}})
    runs = sorted(tmp_path.iterdir())
    arms = group_by_arm(runs)
    assert list(arms) == ["tools=code", "tools=multi (from its config)", "tools=none"]
    assert [r.name for r in arms["tools=multi (from its config)"]] == ["multi-1", "multi-2"]

    # the arms set a plain key and a boolean: the baseline's values, spelled as overrides
    for run in runs:
        if run.name.startswith("code"):
            (run / ".hydra" / "overrides.yaml").write_text(
                yaml.safe_dump([*shared, "evaluator.limit=5", "reward.use_exec_penalty=true"])
            )
    config = {"evaluator": {"limit": None}, "reward": {"use_exec_penalty": False}, "tools": {"name": "multi"}}
    for seed in (1, 2):
        write_config(tmp_path / f"multi-{seed}", config)
    runs = [r for r in runs if not r.name.startswith("none")]
    assert list(group_by_arm(runs)) == [
        "evaluator.limit=5 reward.use_exec_penalty=true",
        "evaluator.limit=null reward.use_exec_penalty=false (from its config)",
    ]

    # seeds of the baseline that disagree, or that lack a key the arms set, or kept no config: still one arm (the
    # overrides group it), under the shared overrides, as before
    write_config(tmp_path / "multi-1", {**config, "reward": {"use_exec_penalty": True}})
    assert list(group_by_arm(runs))[1] == "eval_before=false experiment=transfer-cpu"
    write_config(tmp_path / "multi-1", {"tools": {"name": "multi"}})
    assert list(group_by_arm(runs))[1] == "eval_before=false experiment=transfer-cpu"
    (tmp_path / "multi-2" / ".hydra" / "config.yaml").unlink()
    write_config(tmp_path / "multi-1", config)
    arms = group_by_arm(runs)
    assert list(arms)[1] == "eval_before=false experiment=transfer-cpu" and len(arms) == 2
