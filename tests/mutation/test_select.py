"""Per-mutant test selection: the unmutated run records which tests ran each line, and a mutant runs only those."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.mutation.mutate import find_mutants, run_forked, select_tests

pytest.importorskip("coverage")

MODULE = '''"""A toy module: one function per way a test can reach a line."""

SCALE = 2


def called_by_a(x):
    return x + 1


def called_by_b(x, step=3):
    return x * step


def built_by_the_fixture():
    return 10 - 4


def never_called(x):
    return x - 7
'''

TESTS = """import pytest
import toy_selected


@pytest.fixture(scope="module")
def built():
    return toy_selected.built_by_the_fixture()


def test_a():
    assert toy_selected.called_by_a(1) == 2


def test_b():
    assert toy_selected.called_by_b(2) == 6


def test_uses_fixture(built):
    assert built == 6


def test_other():
    assert toy_selected.SCALE == 2
"""


def test_each_mutant_runs_only_the_tests_that_ran_its_line(tmp_path: Path, monkeypatch) -> None:
    module = tmp_path / "toy_selected.py"
    module.write_text(MODULE)
    (tmp_path / "test_toy_selected.py").write_text(TESTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    trace = tmp_path / "trace.json"
    outcome, _ = run_forked(
        None,
        None,
        [str(tmp_path / "test_toy_selected.py"), "--rootdir", str(tmp_path)],
        120.0,
        trace=((module,), trace),
    )
    assert outcome == "passed"
    record = json.loads(trace.read_text())
    assert set(record["durations"]) == {
        f"test_toy_selected.py::{name}" for name in ("test_a", "test_b", "test_uses_fixture", "test_other")
    }
    by_what = {(m.line, m.what): m for m in find_mutants(module)}

    def selected(line: int, what: str) -> list[str] | None:
        names = select_tests(by_what[(line, what)], record)
        return None if names is None else [n.split("::")[1] for n in names]

    assert selected(7, "+ -> -") == ["test_a"]  # only test_a calls it
    assert selected(11, "* -> /") == ["test_b"]
    # run by a module fixture during test_uses_fixture's setup: every test of the file may use its value
    assert sorted(selected(15, "- -> +")) == ["test_a", "test_b", "test_other", "test_uses_fixture"]
    assert selected(19, "- -> +") == []  # no test reaches it: it cannot change what they see
    # a default value and a module constant run at import: every mapped test
    assert selected(10, "3 -> 4") is None
    assert selected(3, "2 -> 3") is None
    # without a record (no coverage.py, or --all-tests) every mutant runs every mapped test
    assert select_tests(by_what[(7, "+ -> -")], None) is None


def test_placement_tells_function_bodies_from_import_time_sites(tmp_path: Path) -> None:
    path = tmp_path / "placed.py"
    path.write_text(
        "A = 1 + 2\n"
        "def f(x=3):\n"
        "    y = (x <\n"
        "         4)\n"
        "    y += 5\n"
        "    return [z for z in range(6)]\n"
        "class C:\n"
        "    k = 7\n"
        "    def g(self):\n"
        "        return lambda: 8\n"
    )
    placed = {m.what: (m.first_line, m.last_line, m.in_function) for m in find_mutants(path)}
    assert placed["+ -> -"] == (1, 1, False)
    assert placed["3 -> 4"] == (2, 2, False)  # a default: evaluated at import
    assert placed["< -> <="] == (3, 4, True)  # a statement over two lines: both lines count
    assert placed["+= -> -="] == (5, 5, True)
    assert placed["6 -> 7"] == (6, 6, True)
    assert placed["7 -> 8"] == (8, 8, False)  # a class attribute
    assert placed["8 -> 9"] == (10, 10, True)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
