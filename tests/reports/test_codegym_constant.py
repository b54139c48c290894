"""The constant-answer baseline beside CodeGym scores in the tables (issue #50, `reports/constant.py`): computed in the
sandbox from the environments' own configurations, over exactly the evaluated tasks (not the environments file's
other configurations), and set against the policy task by task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.reports.constant import ConstantBaselines
from agentic_rl.reports.stats import Bootstrap
from agentic_rl.reports.tables import CONSTANT_SECTION, build_table, table_markdown, write_table
from agentic_rl.sandbox import Sandbox
from agentic_rl.table import main as table_main
from tests.envs.test_constant_answer import CODE

SPEC = Bootstrap(500, 3)
# IsPositive: every answer is `true`. Sum: three of four configurations sum to 5. Over the whole file `true` is the
# best constant (6 of 10); over the evaluated tasks (one IsPositive, every Sum) it is 5 (3 of 5, `true` 1 of 5).
IS_POSITIVE = {
    "env_id": "t/IsPositiveEnv",
    "class_name": "IsPositiveEnv",
    "code": CODE,
    "configs": [{"n": n} for n in range(1, 7)],
}
SUM = {
    "env_id": "t/SumEnv",
    "class_name": "SumEnv",
    "code": CODE,
    "split": "heldout",
    "configs": [{"nums": nums} for nums in ([2, 3], [1, 4], [0, 5], [5, 6])],
}
EVALUATED = ["codegym/t/IsPositiveEnv/000"] + [f"codegym/t/SumEnv/{i:03d}" for i in range(4)]
SOLVED_BY_FIVE = {f"codegym/t/SumEnv/{i:03d}" for i in range(3)}


@pytest.fixture(scope="module")
def constants():
    with Sandbox(workers=2, preload=["gymnasium"], memory_mb=1024) as sandbox:
        yield ConstantBaselines(runner=CodeGymRunner(sandbox=sandbox))


@pytest.fixture
def env_file(tmp_path) -> Path:
    path = tmp_path / "envs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (IS_POSITIVE, SUM)))
    return path


def episodes(passing: set[str], samples=(0, 1), mode="multi_tool") -> list[dict]:
    return [
        {"task_id": t, "mode": mode, "sample": s, "passed": t in passing, "status": "ok"}
        for t in EVALUATED
        for s in samples
    ]


def make_run(path: Path, seed: int, env_file: Path | None, before: set[str], after: set[str]) -> Path:
    """A training run whose held-out evaluation (`eval_data`) is CodeGym tasks of `env_file` (no config: None)."""
    (path / ".hydra").mkdir(parents=True)
    (path / ".hydra" / "overrides.yaml").write_text(f"- seed={seed}\n")
    if env_file is not None:
        node = {"_target_": "agentic_rl.envs.tasks.load_codegym", "path": str(env_file), "split": "heldout"}
        (path / ".hydra" / "config.yaml").write_text(yaml.safe_dump({"seed": seed, "eval_data": node}))
    (path / "summary.json").write_text(json.dumps({"eval": {}}))
    for phase, passing in (("before", before), ("after", after)):
        (path / f"eval_{phase}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in episodes(passing)))
    return path


def test_the_baseline_is_the_best_constant_of_the_evaluated_tasks_and_the_policy_is_set_against_it(
    tmp_path, env_file, constants
):
    after = {"codegym/t/IsPositiveEnv/000", *SOLVED_BY_FIVE, "codegym/t/SumEnv/003"}  # every task
    runs = [make_run(tmp_path / f"seed-{s}", s, env_file, before=set(), after=after) for s in (1, 2)]
    section = build_table(runs, spec=SPEC, constants=constants)["codegym_constant"]
    (arm,) = section["arms"]
    # computed over the whole file (or the training split), the constant would be `true` and score 1/5 here
    assert arm["answer"] == 5
    assert {r["task_id"]: r["passed"] for r in arm["tasks"]} == {t: t in SOLVED_BY_FIVE for t in EVALUATED}
    assert arm["rates"]["all"]["rate"] == pytest.approx(0.6) and arm["rates"]["all"]["tasks"] == 5
    assert arm["rates"]["seen_envs"]["rate"] == 0.0 and arm["rates"]["unseen_envs"]["rate"] == pytest.approx(0.75)
    everything = {row["phase"]: row for row in section["rows"] if row["set"] == "all"}
    assert everything["before"]["rate_a"] == pytest.approx(0.6) and everything["before"]["rate_b"] == 0.0
    assert (everything["before"]["up"], everything["before"]["down"]) == (0, 3)
    # after: every task passes; over the constant, the two tasks it misses go up, the three it solves tie
    after = everything["after"]
    assert after["difference"] == pytest.approx(0.4) and after["runs"] == 2
    assert (after["up"], after["down"], after["tied"]) == (2, 0, 3)
    assert after["pooled"]["n"] == 2 * 2 * 5  # seeds x samples x tasks
    # each held-out set is tested on its own tasks alone: the seen environment's one task (the constant misses
    # it), the held-out environment's four (the constant solves three)
    by_set = {row["set"]: row for row in section["rows"] if row["phase"] == "after"}
    assert set(by_set) == {"all", "seen_envs", "unseen_envs"}
    assert by_set["seen_envs"]["tasks"] == 1 and by_set["seen_envs"]["difference"] == pytest.approx(1.0)
    unseen = by_set["unseen_envs"]
    assert unseen["tasks"] == 4 and unseen["rate_a"] == pytest.approx(0.75) and unseen["rate_b"] == 1.0
    assert (unseen["up"], unseen["down"], unseen["tied"]) == (1, 0, 3) and unseen["pooled"]["n"] == 2 * 2 * 4
    # one Holm family over every row: six rows (two phases x three sets), so Holm multiplies the smallest p by 6
    assert len(section["rows"]) == 6
    smallest = min(section["rows"], key=lambda row: row["p_value"])
    assert smallest["p_holm"] == pytest.approx(min(1.0, 6 * smallest["p_value"]))


def test_the_table_prints_the_baseline_and_writes_it_per_task(tmp_path, env_file, constants):
    run = make_run(tmp_path / "seed-1", 1, env_file, before=set(), after=SOLVED_BY_FIVE)
    written = write_table([run], tmp_path / "out", spec=SPEC, constants=constants)
    text = (tmp_path / "out" / "table.md").read_text()
    assert f"## {CONSTANT_SECTION}" in text
    assert "| default | `5` | every evaluated task | 0.600 [" in text
    assert "| default | after | multi_tool | every evaluated task | 1 | 5 | 0.600 | 0.600 | +0.000 [" in text
    assert "| default | after | multi_tool | held-out environments | 1 | 4 | 0.750 | 0.750 | +0.000 [" in text
    constant_file = tmp_path / "out" / "constant.jsonl"
    assert constant_file in written
    rows = [json.loads(line) for line in constant_file.read_text().splitlines()]
    assert [(r["task_id"], r["passed"]) for r in rows] == [(t, t in SOLVED_BY_FIVE) for t in sorted(EVALUATED)]
    assert "codegym_constant" in json.loads((tmp_path / "out" / "table.json").read_text())


def test_code_tasks_have_no_constant_section(tmp_path, constants):
    run = tmp_path / "seed-1"
    (run / ".hydra").mkdir(parents=True)
    (run / "summary.json").write_text("{}")
    (run / "eval_after.jsonl").write_text(json.dumps({"task_id": "t0", "mode": "multi_tool", "passed": True}) + "\n")
    table = build_table([run], spec=SPEC, constants=constants)
    assert table["codegym_constant"] is None and CONSTANT_SECTION not in table_markdown(table)


def test_tasks_of_other_environments_are_an_error_that_names_the_fix(tmp_path, env_file, constants):
    run = make_run(tmp_path / "seed-1", 1, env_file, before=set(), after=set())
    with pytest.raises(ValueError, match="--environments"):
        build_table([run], spec=SPEC, constants=ConstantBaselines("builtin", runner=constants.runner))
    # a run without its config: the built-in set, where these ids are not configurations
    bare = make_run(tmp_path / "bare", 2, None, before=set(), after=set())
    assert table_main([str(bare), "--out", str(tmp_path / "o")]) == 2
    # --environments names the file the run was evaluated on
    assert ConstantBaselines(str(env_file), runner=constants.runner).of(EVALUATED, [bare]).answer == 5
