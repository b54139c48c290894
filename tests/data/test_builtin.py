"""The built-in task set: its size and mix, every problem graded by the sandbox (references pass,
stubs and plausible-but-wrong variants fail), and the loader's split / limit / shuffle behaviour."""

from __future__ import annotations

import importlib
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from agentic_rl.data.builtin import VALID_SPLITS, load_builtin
from agentic_rl.data.builtin_tasks import BUILTIN_PROBLEMS, BuiltinProblem
from agentic_rl.types import Task

REPO_ROOT = Path(__file__).resolve().parents[2]
TRAIN = [p for p in BUILTIN_PROBLEMS if p.split == "train"]
EVAL = [p for p in BUILTIN_PROBLEMS if p.split == "eval"]
TEST_DEF = re.compile(r"^def (test_\w+)\(", re.MULTILINE)


def n_test_functions(test: str) -> int:
    return len(TEST_DEF.findall(test))


def stub(name: str) -> str:
    """A solution that defines the entry point with a `pass` body (it returns None for every input)."""
    return f"def {name}(*args, **kwargs):\n    pass\n"


# ---------------------------------------------------------------- size and mix


def test_counts():
    assert len(TRAIN) >= 44
    # one held-out task is then worth under 2 points of pass@1
    assert len(EVAL) >= 60
    assert 100 / len(EVAL) < 2
    assert len(TRAIN) + len(EVAL) == len(BUILTIN_PROBLEMS)


def test_train_has_many_easy_problems_and_eval_mixes_both():
    assert sum(p.difficulty == "easy" for p in TRAIN) >= 20
    assert sum(p.difficulty == "medium" for p in TRAIN) >= 15
    assert sum(p.difficulty == "easy" for p in EVAL) >= 20
    assert sum(p.difficulty == "medium" for p in EVAL) >= 20


@pytest.mark.parametrize("split", ["train", "eval"])
def test_about_half_need_an_api(split):
    problems = TRAIN if split == "train" else EVAL
    share = sum(p.needs_api for p in problems) / len(problems)
    assert 0.4 <= share <= 0.6, f"{split}: {share:.0%} of problems need a standard-library API"
    # and both difficulties of the split have some of them
    assert any(p.needs_api for p in problems if p.difficulty == "easy")
    assert any(p.needs_api for p in problems if p.difficulty == "medium")


def test_unique_ids_and_entry_points():
    tasks = load_builtin("all")
    assert len(tasks) == len(BUILTIN_PROBLEMS)
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert len({t.entry_point for t in tasks}) == len(tasks)


@pytest.mark.parametrize("p", BUILTIN_PROBLEMS, ids=lambda p: p.name)
def test_problem_shape(p: BuiltinProblem):
    assert p.test.startswith(f"from solution import {p.name}\n")
    assert 3 <= n_test_functions(p.test) <= 6
    assert "assert " in p.test
    assert f"`{p.name}(" in p.question, "the question states the exact name and signature"
    assert len(p.question.split()) <= 80, "questions stay short: generations are short"
    assert re.search(rf"^def {p.name}\(", p.solution, re.MULTILINE)
    assert re.search(rf"^def {p.name}\(", p.wrong_solution, re.MULTILINE)
    assert p.wrong_solution != p.solution
    for code in (p.solution, p.wrong_solution, p.test):
        compile(code, p.name, "exec")


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("p", [p for p in BUILTIN_PROBLEMS if p.needs_api], ids=lambda p: p.name)
def test_api_names_resolve_and_are_used(p: BuiltinProblem):
    for qualname in p.api:
        parts = qualname.split(".")
        # the longest importable prefix is the module (`urllib.parse` of `urllib.parse.quote`)
        n_module = max(i for i in range(1, len(parts) + 1) if _importable(".".join(parts[:i])))
        obj = importlib.import_module(".".join(parts[:n_module]))
        for attr in parts[n_module:]:
            obj = getattr(obj, attr)  # AttributeError = a misspelt API name
        assert qualname.rsplit(".", 1)[-1] in p.solution, f"reference does not use {qualname}"


# ---------------------------------------------------------------- graded by the sandbox


@pytest.fixture(scope="module")
def grades():
    """Every (problem, variant) graded once: 4 calls at a time, results keyed by (name, variant)."""
    from agentic_rl.sandbox import run_tests

    jobs = {}
    for p in BUILTIN_PROBLEMS:
        jobs[(p.name, "reference")] = (p.solution, p)
        jobs[(p.name, "stub")] = (stub(p.name), p)
        jobs[(p.name, "wrong")] = (p.wrong_solution, p)

    def grade(item):
        code, p = item
        return run_tests(code, p.test, harness="pytest", entry_point=p.name)

    with ThreadPoolExecutor(4) as pool:
        reports = list(pool.map(grade, jobs.values()))
    return dict(zip(jobs, reports))


@pytest.mark.slow
@pytest.mark.parametrize("p", BUILTIN_PROBLEMS, ids=lambda p: p.name)
def test_reference_passes(grades, p: BuiltinProblem):
    report = grades[(p.name, "reference")]
    assert report.passed, f"{p.name}: {report.status}: {report.detail}"
    assert report.status == "passed"
    assert report.n_tests == n_test_functions(p.test) >= 3
    assert report.n_failed == 0


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["stub", "wrong"])
@pytest.mark.parametrize("p", BUILTIN_PROBLEMS, ids=lambda p: p.name)
def test_wrong_solution_fails(grades, p: BuiltinProblem, variant: str):
    report = grades[(p.name, variant)]
    assert not report.passed, f"{p.name}: the {variant} solution passed its tests"
    # rejected by the test asserts (all tests ran), not by a crash of the harness
    assert report.status == "failed", f"{p.name} ({variant}): {report.status}: {report.detail}"
    assert report.n_tests == n_test_functions(p.test)
    assert report.n_failed >= 1


# ---------------------------------------------------------------- loader


def test_tasks_carry_the_problem():
    by_name = {p.name: p for p in BUILTIN_PROBLEMS}
    for task in load_builtin("all"):
        assert isinstance(task, Task)
        p = by_name[task.entry_point]
        assert task.harness == "pytest"
        assert task.prompt == p.question
        assert task.tests == p.test
        assert task.reference_solution == p.solution
        assert task.task_id.startswith(f"builtin/{p.split}/") and task.task_id.endswith(f"_{p.name}")
        assert task.metadata["split"] == p.split
        assert task.metadata["difficulty"] == p.difficulty
        assert task.metadata["needs_api"] is p.needs_api
        assert task.metadata["api"] == list(p.api)


def test_ids_are_stable():
    assert load_builtin("train")[0].task_id == "builtin/train/000_add_numbers"
    assert load_builtin("eval")[0].task_id == "builtin/eval/000_hamming_distance"
    for split, problems in (("train", TRAIN), ("eval", EVAL)):
        numbers = [int(t.task_id.split("/")[2][:3]) for t in load_builtin(split)]
        assert numbers == list(range(len(problems)))
    # the problems added to reach 60 held-out tasks come after the first 28, whose ids did not move
    assert load_builtin("eval")[27].task_id == "builtin/eval/027_missing_number"
    assert load_builtin("eval")[28].task_id == "builtin/eval/028_triangle_kind"


def test_split_filtering():
    train, evals, everything = load_builtin("train"), load_builtin("eval"), load_builtin("all")
    assert load_builtin() == train
    assert [t.entry_point for t in train] == [p.name for p in TRAIN]
    assert [t.entry_point for t in evals] == [p.name for p in EVAL]
    assert all(t.metadata["split"] == "train" for t in train)
    assert all(t.metadata["split"] == "eval" for t in evals)
    assert everything == train + evals
    assert not {t.task_id for t in train} & {t.task_id for t in evals}


def test_limit():
    train = load_builtin("train")
    assert load_builtin("train", limit=5) == train[:5]
    assert load_builtin("train", limit=0) == []
    assert load_builtin("train", limit=10_000) == train
    with pytest.raises(ValueError, match="limit"):
        load_builtin("train", limit=-1)


def test_shuffle_is_seeded():
    train = load_builtin("train")
    a = load_builtin("train", shuffle=True, seed=7)
    assert a == load_builtin("train", shuffle=True, seed=7)
    assert a != train
    assert sorted(t.task_id for t in a) == sorted(t.task_id for t in train)
    assert load_builtin("train", shuffle=True, seed=8) != a
    # limit applies after the shuffle
    assert load_builtin("train", shuffle=True, seed=7, limit=6) == a[:6]
    # seed without shuffle changes nothing
    assert load_builtin("train", seed=7) == train


def test_bad_split_lists_the_valid_ones():
    with pytest.raises(ValueError) as info:
        load_builtin("test")
    message = str(info.value)
    assert "'test'" in message
    for split in VALID_SPLITS:
        assert split in message
    assert set(VALID_SPLITS) == {"train", "eval", "all"}


def test_config_instantiates():
    cfg = OmegaConf.load(REPO_ROOT / "conf" / "data" / "builtin.yaml")
    assert cfg._target_ == "agentic_rl.data.builtin.load_builtin"
    root = OmegaConf.merge({"seed": 3}, {"data": cfg})
    # the CPU default's pool: 6 train tasks drawn by the run's seed
    tasks = instantiate(root.data)
    assert tasks == load_builtin("train", shuffle=True, seed=3, limit=6) and len(tasks) == 6
    other_seed = instantiate(OmegaConf.merge({"seed": 4}, {"data": cfg}).data)
    assert {t.task_id for t in other_seed} != {t.task_id for t in tasks}
    everything = instantiate(root.data, shuffle=False, limit=None)
    assert everything == load_builtin("train")
