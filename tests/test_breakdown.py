"""`python -m agentic_rl.breakdown`: pass rates split by a task metadata field, tasks rebuilt from the run's config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from agentic_rl.breakdown import breakdown_rows, main, paired_rows
from agentic_rl.data.pipelines import load_pipelines
from agentic_rl.reports.stats import holm_adjust

DATA = {
    "_target_": "agentic_rl.data.pipelines.load_pipelines",
    "split": "heldout",
    "n_train": 6,
    "n_heldout": 8,
    "steps": [1, 2],
    "limit": 4,  # a limit cuts the evaluated list; the breakdown must still find every evaluated task
}


def _tasks():
    kwargs = {k: v for k, v in DATA.items() if k not in ("_target_", "limit")}
    return load_pipelines(**kwargs)


def _write_run(run_dir: Path, config: dict, files: dict[str, list[dict]]) -> Path:
    (run_dir / ".hydra").mkdir(parents=True)
    OmegaConf.save(OmegaConf.create(config), run_dir / ".hydra" / "config.yaml")
    for name, records in files.items():
        (run_dir / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    return run_dir


def _record(task_id: str, mode: str, passed: bool) -> dict:
    return {"task_id": task_id, "mode": mode, "sample": 0, "passed": passed}


def test_evaluation_run_splits_by_difficulty(tmp_path):
    tasks = _tasks()
    # pass exactly the one-step tasks in multi_tool, nothing in no_tools; one task past the config's limit
    records = [_record(t.task_id, "multi_tool", t.metadata["difficulty"] == 1) for t in tasks]
    records += [_record(t.task_id, "no_tools", False) for t in tasks[:3]]
    run = _write_run(tmp_path / "eval", {"data": DATA}, {"results.jsonl": records})
    rows = breakdown_rows([run], "difficulty")
    by = {(r["mode"], r["difficulty"]): r for r in rows}
    ones = sum(t.metadata["difficulty"] == 1 for t in tasks)
    twos = len(tasks) - ones
    assert ones and twos
    assert by["multi_tool", "1"]["n"] == ones and by["multi_tool", "1"]["passed"] == ones
    assert by["multi_tool", "2"]["n"] == twos and by["multi_tool", "2"]["rate"] == 0.0
    assert sum(r["n"] for r in rows if r["mode"] == "no_tools") == 3
    assert all(r["phase"] == "eval" for r in rows)
    assert by["multi_tool", "1"]["low"] < 1.0 <= by["multi_tool", "1"]["high"]


def test_training_runs_are_pooled_per_phase_from_their_eval_data(tmp_path):
    tasks = _tasks()[:2]
    runs = []
    for seed, after in ((1, True), (2, False)):
        files = {
            "eval_before.jsonl": [_record(t.task_id, "multi_tool", False) for t in tasks],
            "eval_after.jsonl": [_record(t.task_id, "multi_tool", after) for t in tasks],
        }
        config = {"data": {"_target_": "not.a.module"}, "eval_data": DATA}  # eval_data, not data, is rebuilt
        runs.append(_write_run(tmp_path / f"seed{seed}", config, files))
    rows = breakdown_rows(runs, "split")
    by_phase = {r["phase"]: r for r in rows}
    assert set(by_phase) == {"before", "after"}
    assert by_phase["before"]["n"] == 4 and by_phase["before"]["passed"] == 0
    assert by_phase["after"]["n"] == 4 and by_phase["after"]["passed"] == 2
    assert by_phase["after"]["split"] == "heldout"


def test_unknown_tasks_and_fields_are_counted_apart(tmp_path):
    tasks = _tasks()
    records = [_record("elsewhere/1", "multi_tool", True), _record(tasks[0].task_id, "multi_tool", True)]
    run = _write_run(tmp_path / "eval", {"data": DATA}, {"results.jsonl": records})
    assert [(r["no_such_field"], r["n"]) for r in breakdown_rows([run], "no_such_field")] == [("(none)", 2)]


def test_cli_writes_markdown_and_reports_bad_input(tmp_path, capsys):
    tasks = _tasks()
    run = _write_run(tmp_path / "eval", {"data": DATA}, {"results.jsonl": [_record(tasks[0].task_id, "x", True)]})
    out = tmp_path / "breakdown.md"
    assert main([str(run), "--out", str(out)]) == 0
    text = out.read_text()
    difficulty = tasks[0].metadata["difficulty"]
    # tasks, episodes, passed, the rate and its Wilson interval over one task
    assert f"| eval | x | {difficulty} | 1 | 1 | 1 | 1.000 | 0.207-1.000 |" in text
    bare = tmp_path / "bare"  # records, but no config to rebuild the tasks' difficulty from
    bare.mkdir()
    (bare / "results.jsonl").write_text(json.dumps(_record(tasks[0].task_id, "x", True)) + "\n")
    assert main([str(bare)]) == 2
    assert "no .hydra/config.yaml" in capsys.readouterr().err
    empty = _write_run(tmp_path / "empty", {"data": DATA}, {})
    assert main([str(empty)]) == 2
    assert "no evaluation records" in capsys.readouterr().err


def test_a_record_with_its_config_beside_the_results_is_read(tmp_path):
    tasks = _tasks()
    run = _write_run(tmp_path / "record", {"data": DATA}, {"results.jsonl": [_record(tasks[0].task_id, "m", True)]})
    (run / ".hydra" / "config.yaml").rename(run / "config.yaml")
    [row] = breakdown_rows([run], "split")
    assert (row["split"], row["n"], row["passed"]) == ("heldout", 1, 1)


def test_a_config_without_data_is_an_error(tmp_path):
    run = _write_run(tmp_path / "run", {"seed": 1}, {"results.jsonl": [_record("t", "m", True)]})
    with pytest.raises(ValueError, match="neither eval_data nor data"):
        breakdown_rows([run], "difficulty")


def test_paired_change_pools_seeds_against_one_base_evaluation(tmp_path):
    tasks = _tasks()[:4]
    d = {t.task_id: str(t.metadata["difficulty"]) for t in tasks}
    base = [_record(t.task_id, "multi_tool", i == 0) for i, t in enumerate(tasks)]  # only the first passes
    before = _write_run(tmp_path / "base", {"data": DATA}, {"results.jsonl": base})
    # seed 1 gains tasks 1 and 2 and loses task 0; seed 2 gains task 3; an episode of another mode has no partner
    seed1 = [_record(t.task_id, "multi_tool", i in (1, 2)) for i, t in enumerate(tasks)]
    seed2 = [_record(t.task_id, "multi_tool", i in (0, 3)) for i, t in enumerate(tasks)]
    seed2.append(_record(tasks[0].task_id, "no_tools", True))
    afters = [
        _write_run(tmp_path / "s1", {"data": DATA}, {"results.jsonl": seed1}),
        _write_run(tmp_path / "s2", {"data": DATA}, {"results.jsonl": seed2}),
    ]
    rows, unpaired = paired_rows(before, afters, "difficulty")
    assert unpaired == 1
    overall = next(r for r in rows if r["difficulty"] == "all")
    assert (overall["tasks"], overall["runs"]) == (4, 2)
    # task means over the two seeds: task 0 1 -> 0.5, tasks 1, 2, 3: 0 -> 0.5; mean difference (-0.5 + 3 * 0.5) / 4
    assert (overall["up"], overall["down"], overall["tied"]) == (3, 1, 0)
    assert overall["rate_a"] == 0.25 and overall["rate_b"] == 0.5 and overall["difference"] == 0.25
    assert overall["p_value"] == pytest.approx(0.625)  # sign test: 2 * P(X <= 1), X ~ Bin(4, 1/2)
    assert overall["low"] <= overall["difference"] <= overall["high"]
    # secondary: the 8 (seed, task) pairs pooled
    pooled = overall["pooled"]
    assert (pooled["n"], pooled["both"], pooled["gained"], pooled["lost"], pooled["neither"]) == (8, 1, 3, 1, 3)
    per_value = [r for r in rows if r["difficulty"] != "all"]
    assert sum(r["tasks"] for r in per_value) == 4
    for r in per_value:
        mine = [i for i, t in enumerate(tasks) if d[t.task_id] == r["difficulty"]]
        assert r["tasks"] == len(mine) and r["pooled"]["n"] == 2 * len(mine)
        assert r["up"] == sum(i != 0 for i in mine) and r["down"] == (0 in mine)
    assert [r["p_holm"] for r in rows] == pytest.approx(holm_adjust([r["p_value"] for r in rows]))


def test_several_samples_of_a_task_are_several_pairs_not_one(tmp_path):
    """The sample is part of the pairing key: with 2 samples per task, keyed by task alone the second sample
    overwrites the first and the pairs (and the task means) collapse."""
    tasks = _tasks()[:2]
    base = [{**_record(t.task_id, "m", False), "sample": k} for t in tasks for k in (0, 1)]
    before = _write_run(tmp_path / "base", {"data": DATA}, {"results.jsonl": base})
    # task 0: samples 0 and 1 pass (mean 1.0); task 1: only sample 0 passes (mean 0.5)
    after = [{**_record(t.task_id, "m", i == 0 or k == 0), "sample": k} for i, t in enumerate(tasks) for k in (0, 1)]
    run = _write_run(tmp_path / "s1", {"data": DATA}, {"results.jsonl": after})
    rows, unpaired = paired_rows(before, [run], "split")
    overall = next(r for r in rows if r["split"] == "all")
    assert unpaired == 0 and overall["pooled"]["n"] == 4 and overall["pooled"]["gained"] == 3
    assert overall["rate_b"] == 0.75 and overall["difference"] == 0.75
    [rate] = [r for r in breakdown_rows([run], "split") if r["mode"] == "m"]
    assert (rate["tasks"], rate["n"], rate["passed"], rate["rate"]) == (2, 4, 3, 0.75)


def test_task_type_is_read_from_the_records_without_rebuilding_the_tasks(tmp_path, capsys):
    """`--by task_type`: the records carry the field, so no config is needed."""

    def records(passed: dict[str, bool]) -> list[dict]:
        return [{**_record(t, "multi_tool", p), "task_type": t.split("/")[0]} for t, p in passed.items()]

    base, run = tmp_path / "base", tmp_path / "s1"
    for path, passed in ((base, [False, False, False]), (run, [True, True, False])):
        path.mkdir()
        tasks = dict(zip(["docs/a", "docs/b", "plain/c"], passed))
        (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records(tasks)))
    rows = {(r["phase"], r["task_type"]): r for r in breakdown_rows([run], "task_type")}
    assert rows["eval", "docs"]["rate"] == 1.0 and rows["eval", "plain"]["rate"] == 0.0
    paired, _ = paired_rows(base, [run], "task_type")
    by = {r["task_type"]: r for r in paired}
    assert (by["docs"]["up"], by["docs"]["tasks"], by["plain"]["tied"], by["all"]["up"]) == (2, 2, 1, 2)
    out = tmp_path / "by-type.md"
    assert main([str(run), "--before", str(base), "--by", "task_type", "--out", str(out)]) == 0
    assert (
        "| multi_tool | docs | 1 | 2 | 0.000 | 1.000 | +1.000 [+1.000, +1.000] | 2 / 0 / 0 | 0.5 |" in out.read_text()
    )


def test_paired_cli_writes_the_table_and_says_when_nothing_pairs(tmp_path, capsys):
    tasks = _tasks()[:2]
    before = _write_run(tmp_path / "base", {"data": DATA}, {"results.jsonl": [_record(tasks[0].task_id, "m", False)]})
    after = _write_run(tmp_path / "s1", {"data": DATA}, {"results.jsonl": [_record(tasks[0].task_id, "m", True)]})
    out = tmp_path / "paired.md"
    assert main([str(after), "--before", str(before), "--out", str(out), "--resamples", "100"]) == 0
    text = out.read_text()
    assert "| m | all | 1 | 1 | 0.000 | 1.000 | +1.000 [+1.000, +1.000] | 1 / 0 / 0 | 1 |" in text
    assert "(100 resamples, seed 0)" in text and "pooled pairs (secondary, not independent)" in text
    other = _write_run(tmp_path / "s2", {"data": DATA}, {"results.jsonl": [_record(tasks[1].task_id, "m", True)]})
    assert main([str(other), "--before", str(before)]) == 2
    assert "pair with" in capsys.readouterr().err


def test_a_training_run_pairs_by_its_evaluation_after_training(tmp_path):
    """A training run that evaluated on the held-out tasks itself (eval_after.jsonl; its eval_data) pairs with the
    base evaluation; its eval_before.jsonl is not the trained side."""
    tasks = _tasks()[:3]
    before = _write_run(
        tmp_path / "base", {"data": DATA}, {"results.jsonl": [_record(t.task_id, "no_tools", False) for t in tasks]}
    )
    train = {"data": {**DATA, "split": "train"}, "eval_data": DATA}
    run = _write_run(
        tmp_path / "seed1",
        train,
        {
            "eval_before.jsonl": [_record(t.task_id, "no_tools", False) for t in tasks],
            "eval_after.jsonl": [_record(t.task_id, "no_tools", i == 0) for i, t in enumerate(tasks)],
        },
    )
    rows, unpaired = paired_rows(before, [run], "difficulty")
    overall = next(r for r in rows if r["difficulty"] == "all")
    assert unpaired == 0
    assert (overall["tasks"], overall["up"], overall["down"], overall["pooled"]["n"]) == (3, 1, 0, 3)


def test_data_path_replaces_the_task_file_a_record_names_by_placeholder(tmp_path, sample_data_dir, capsys):
    """A record's config names the task file by a placeholder (<shared>/...): --data-path points at a real copy;
    without it the error names the file; for tasks that read no file it is refused."""
    from agentic_rl.data.kodcode import load_kodcode

    sample = sample_data_dir / "kodcode_sample.jsonl"
    tasks = load_kodcode(sample, n=None, subset_from=None, subset_stride=None)
    data = {"_target_": "agentic_rl.data.kodcode.load_kodcode", "path": "<shared>/data/kodcode_sample.jsonl"}
    data |= {"n": None, "subset_from": None, "subset_stride": None}
    records = [_record(t.task_id, "code_only", t.metadata["difficulty"] == "easy") for t in tasks]
    run = _write_run(tmp_path / "record", {"data": data}, {"results.jsonl": records})
    rows = breakdown_rows([run], "difficulty", data_path=sample)
    by = {r["difficulty"]: r for r in rows}
    n_easy = sum(t.metadata["difficulty"] == "easy" for t in tasks)
    assert by["easy"]["n"] == by["easy"]["passed"] == by["easy"]["tasks"] == n_easy and by["medium"]["passed"] == 0
    assert main([str(run)]) == 2 and "kodcode_sample.jsonl" in capsys.readouterr().err
    pipelines_run = _write_run(tmp_path / "pipelines", {"data": DATA}, {"results.jsonl": [_record("t", "m", True)]})
    with pytest.raises(ValueError, match="read no file"):
        breakdown_rows([pipelines_run], "difficulty", data_path=sample)
