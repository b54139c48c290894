"""Test hygiene (agentic_rl/data/hygiene.py, `python -m agentic_rl.hygiene`): a task whose tests `return None`
passes is flagged, a task whose test file defines the function under test is flagged, a clean task is kept; the
verdicts come from the sandbox and are cached per task; the command writes the report and the kept ids."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from agentic_rl.data import hygiene
from agentic_rl.data.hygiene import (
    EMPTY,
    candidates,
    defined_by_tests,
    drop_unhygienic,
    expected_literals,
    names_under_test,
)
from agentic_rl.sandbox import Sandbox
from agentic_rl.types import Task


def pytest_task(task_id: str, tests: str, entry_point: str | None = None, reference: str | None = None) -> Task:
    return Task(f"t/{task_id}", "", tests, "pytest", entry_point=entry_point, reference_solution=reference)


RETURNS_NONE = pytest_task(
    "returns_none", "from solution import log_it\n\n\ndef test_logs():\n    assert log_it(3) is None\n", "log_it"
)
# the quick-sort pair's shape: the test file imports everything from solution, then defines the function itself
DEFINES_ITSELF = pytest_task(
    "defines_itself",
    "from solution import *\n\n\ndef double(x):\n    return 2 * x\n\n\n"
    "def test_double():\n    assert double(2) == 4\n    assert double(5) == 10\n",
    "double",
)
CLEAN = pytest_task(
    "clean",
    "from solution import double\n\n\n"
    "def test_double():\n    assert double(2) == 4\n    assert double(5) == 10\n    assert double(0) == 0\n",
    "double",
)
CLASS_BASED = pytest_task(  # no entry point: the names come from the reference solution
    "class_based",
    "from solution import *\n\n\ndef test_push():\n    s = Stack()\n    s.push(1)\n    assert s.pop() == 1\n",
    reference="class Stack:\n    def __init__(self):\n        self.items = []\n\n\ndef _helper():\n    pass\n",
)


# ---------------------------------------------------------------- reading the tests


def test_names_under_test_come_from_the_entry_point_the_imports_and_the_reference():
    assert names_under_test(CLEAN) == ["double"]
    # no entry point, `import *`: the reference's public names the tests use
    assert names_under_test(CLASS_BASED) == ["Stack"]
    # a library both import is not under test (a KodCode row imports numpy in its solution and in its tests)
    numpy_row = pytest_task(
        "numpy_row",
        "from solution import *\nimport numpy as np\n\n\ndef test_a():\n    assert relu(np.array([-1]))[0] == 0\n",
        reference="import numpy as np\n\n\ndef relu(x):\n    return np.maximum(x, 0)\n",
    )
    assert names_under_test(numpy_row) == ["relu"]
    assert defined_by_tests(numpy_row.tests, names_under_test(numpy_row)) == []


def test_a_definition_after_the_import_shadows_the_submission():
    assert defined_by_tests(DEFINES_ITSELF.tests, ["double"]) == ["double"]
    assert defined_by_tests(CLEAN.tests, ["double"]) == []
    # defined first, then imported from solution: the submission's wins
    before = "def double(x):\n    return 0\n\nfrom solution import double\n\ndef test_a():\n    assert double(1) == 2\n"
    assert defined_by_tests(before, ["double"]) == []
    # nested in a top-level try, and an alias of another module's function, count as definitions
    assert defined_by_tests("from solution import *\ntry:\n    f = max\nexcept Exception:\n    pass\n", ["f"]) == ["f"]
    assert defined_by_tests("from solution import *\nfrom heapq import nlargest as f\n", ["f"]) == ["f"]


def test_the_constants_include_the_value_the_tests_expect_most():
    tests = "def test_a():\n    assert f(1) == 7\n    assert f(2) == 7\n    assert 7 == f(3)\n"
    assert expected_literals(tests).most_common(1) == [("7", 3)]
    assert "constant 7" in [c.name for c in candidates(Task("t", "", tests, "pytest", entry_point="f"))]
    main_guard = 'if __name__ == "__main__":\n    pass\n'
    assert "'__main__'" not in expected_literals(main_guard)


# ---------------------------------------------------------------- graded in the sandbox


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2, preload=["pytest"], memory_mb=1024, test_timeout_s=10.0) as sb:
        yield sb


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTIC_RL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def checked(sandbox, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTIC_RL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        codegym = Task("codegym/x/000", "", "", "codegym")
        tasks = [RETURNS_NONE, DEFINES_ITSELF, CLEAN, codegym]
        kept, report = drop_unhygienic(tasks, sandbox, progress=False)
    return tasks, kept, report


def test_tasks_a_trivial_candidate_passes_are_dropped_and_a_clean_one_kept(checked):
    tasks, kept, report = checked
    assert [t.task_id for t in kept] == ["t/clean", "codegym/x/000"]  # CodeGym tasks are not graded by tests
    flagged = {row["task_id"]: row for row in report["flagged"]}
    assert set(flagged) == {"t/returns_none", "t/defines_itself"}
    assert "none" in flagged["t/returns_none"]["passed_by"]
    assert "identity" not in flagged["t/returns_none"]["passed_by"]  # log_it(3) is 3, not None
    assert flagged["t/defines_itself"]["tests_define"] == ["double"]
    assert EMPTY in flagged["t/defines_itself"]["passed_by"]  # a module defining nothing passes its tests
    summary = report["summary"]
    assert (summary["tasks"], summary["checked"], summary["unchecked"], summary["flagged"]) == (4, 3, 1, 2)
    assert summary["by_candidate"]["tests_define"] == 1 and summary["by_candidate"]["none"] == 2


def test_verdicts_are_cached_by_task_and_a_changed_test_is_graded_again(sandbox, cache_dir):
    first = drop_unhygienic([CLEAN], sandbox, progress=False)

    class NoSandbox:
        python = sandbox.python

        def run_tests_many(self, jobs):
            raise AssertionError("graded again although the verdict is cached")

    assert drop_unhygienic([CLEAN], NoSandbox(), progress=False) == first
    changed = replace(CLEAN, tests=CLEAN.tests.replace("== 10", "is None"))
    assert hygiene.verdict_path(changed, sandbox.python) != hygiene.verdict_path(CLEAN, sandbox.python)
    with pytest.raises(AssertionError, match="graded again"):
        drop_unhygienic([changed], NoSandbox(), progress=False)


def test_the_command_writes_the_report_and_the_kept_ids(sample_data_dir, tmp_path, cache_dir, capsys):
    from agentic_rl.hygiene import main

    out = tmp_path / "report"
    code = main(
        [
            "data=kodcode",
            f"data.path={sample_data_dir / 'kodcode_sample.jsonl'}",
            "data.n=null",
            "data.subset_from=null",
            "data.subset_stride=null",
            "data.limit=2",
            "sandbox.preload=[pytest]",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    kept = (out / "kept.txt").read_text().split()
    assert summary["tasks"] == 2 and summary["kept"] == len(kept) == 2 - summary["flagged"]
    assert (out / "flagged.jsonl").is_file()
    assert "2 tasks:" in capsys.readouterr().out


def test_a_wrong_data_option_is_a_config_error(tmp_path, capsys):
    from agentic_rl.hygiene import main

    assert main(["data=no-such-data", "--out", str(tmp_path)]) == 2
    assert "no-such-data" in capsys.readouterr().err
