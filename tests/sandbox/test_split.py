"""Split unittest runs (one call per test method once a run outlasts split_after_s): same verdicts
as one run, and the limit still binds."""

from __future__ import annotations

import pytest

from agentic_rl.sandbox import Sandbox
from agentic_rl.sandbox.split import plan_test_names

from .conftest import make_sandbox, stray_processes
from .test_graders import CHEATS, GOOD, TESTS, WRONG


def unittest_source(*methods: str, header: str = "class TestCases(unittest.TestCase):\n") -> str:
    return "import unittest\n\n" + header + "".join(methods)


def method(name: str, body: str) -> str:
    return f"    def {name}(self):\n        {body}\n"


THREE = unittest_source(
    method("test_c", "self.assertEqual(add(2, 2), 4)"),
    method("test_a", "self.assertEqual(add(1, 2), 3)"),
    method("test_b", "self.assertEqual(add(0, 0), 1)"),
)


SPLIT_AFTER_S = 0.5
SLOW = "import time; time.sleep(0.8)"  # makes a one-run outlast SPLIT_AFTER_S, so the task is split
LOUD_GOOD = "print('loaded')\n" + GOOD  # one 'loaded' per run of the program: counts the parts


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox(workers=4, split_after_s=SPLIT_AFTER_S) as sb:
        yield sb


@pytest.fixture(scope="module")
def unsplit():
    with make_sandbox(workers=4, split_after_s=None) as sb:
        yield sb


# ------------------------------------------------------------------------------- the plan


def test_plan_lists_test_methods_in_loader_order():
    assert plan_test_names(THREE, "unittest") == ["test_a", "test_b", "test_c"]


@pytest.mark.parametrize(
    "test, harness",
    [
        (THREE, "pytest"),  # only unittest runs are split
        (TESTS["humaneval"], "humaneval"),
        (unittest_source(method("test_only", "pass")), "unittest"),  # one test: nothing to gain
        (unittest_source(method("helper", "pass"), method("test_x", "pass")), "unittest"),
        ("class TestCases(:\n", "unittest"),  # the unsplit run reports the syntax error
        (THREE + "\nclass TestCases(unittest.TestCase):\n    def test_z(self): pass\n", "unittest"),  # redefined
        (
            "import unittest\nclass Other(unittest.TestCase):\n"
            "    def test_a(self): pass\n    def test_b(self): pass\n",
            "unittest",
        ),
    ],
)
def test_plan_declines(test, harness):
    assert plan_test_names(test, harness) is None


# ------------------------------------------------------------------------------- verdicts


def test_quick_task_runs_once(sandbox):
    r = sandbox.run_tests(LOUD_GOOD, THREE, harness="unittest")
    assert (r.status, r.n_tests, r.n_failed) == ("failed", 3, 1) and "test_b" in r.detail
    assert r.stdout.count("loaded") == 1


def test_slow_task_runs_one_part_per_test(sandbox):
    test = unittest_source(
        method("test_slow", SLOW),
        method("test_a", "self.assertEqual(add(1, 2), 3)"),
        method("test_b", "self.assertEqual(add(2, 2), 4)"),
    )
    r = sandbox.run_tests(LOUD_GOOD, test, harness="unittest")
    assert (r.passed, r.status, r.n_tests, r.n_failed, r.detail) == (True, "passed", 3, 0, "3/3 tests passed")
    assert r.parts == 3 and r.stdout.count("loaded") == 3  # the cut first run's output is dropped


def test_task_that_computes_is_not_split(sandbox):
    """Busy for as long as SLOW sleeps: splitting would only multiply the work, so it runs once."""
    busy = "import time\n        end = time.monotonic() + 0.8\n        while time.monotonic() < end: pass"
    test = unittest_source(method("test_busy", busy), method("test_a", "self.assertEqual(add(1, 2), 3)"))
    r = sandbox.run_tests(LOUD_GOOD, test, harness="unittest")
    assert r.passed and r.parts == 1 and r.stdout.count("loaded") == 1


def test_split_failure_is_graded_in_one_run(sandbox):
    test = unittest_source(method("test_slow", SLOW), method("test_wrong", "self.assertEqual(add(1, 2), 4)"))
    r = sandbox.run_tests(LOUD_GOOD, test, harness="unittest")
    assert (r.status, r.n_tests, r.n_failed) == ("failed", 2, 1) and r.detail.startswith("1/2 tests failed: ")
    assert "test_wrong" in r.detail and r.stdout.count("loaded") == 1


def test_order_dependent_tests_keep_their_one_run_verdict(sandbox):
    """test_b needs the state test_a leaves: it fails alone, so the failed split run is graded again."""
    test = unittest_source(
        "    seen = []\n",
        method("test_a", SLOW + "; TestCases.seen.append(add(1, 1))"),
        method("test_b", "self.assertEqual(TestCases.seen, [2])"),
    )
    r = sandbox.run_tests(GOOD, test, harness="unittest", timeout_s=10)
    assert (r.passed, r.n_tests, r.n_failed) == (True, 2, 0)


def test_same_verdicts_split_and_unsplit(sandbox, unsplit):
    slow_three = THREE + method("test_slow", SLOW + "; self.assertEqual(add(2, 3), 5)")
    candidates = [GOOD, WRONG, *CHEATS.values()]
    jobs = [
        {"code": c, "test": t, "harness": "unittest", "timeout_s": 2.0}
        for c in candidates
        for t in (TESTS["unittest"], slow_three)
    ]
    split_reports, unsplit_reports = sandbox.run_tests_many(jobs), unsplit.run_tests_many(jobs)
    for job, a, b in zip(jobs, split_reports, unsplit_reports):
        assert (a.passed, a.status, a.n_tests, a.n_failed) == (b.passed, b.status, b.n_tests, b.n_failed), job


def test_hanging_test_is_a_timeout_named_by_its_part(sandbox):
    test = unittest_source(
        method("test_fast", "self.assertEqual(add(1, 1), 2)"), method("test_hangs", "import time; time.sleep(1e6)")
    )
    r = sandbox.run_tests(GOOD, test, harness="unittest", timeout_s=2.5)
    assert (r.passed, r.status, r.n_tests, r.n_failed) == (False, "timeout", 2, 1)
    assert r.detail.endswith("(in test_hangs)")
    assert stray_processes(sandbox) == []


def test_limit_bounds_the_summed_time_of_the_parts(sandbox):
    """Each part fits in the limit, their sum does not: a one-run would time out, so must this. The parts
    share one budget, so they are stopped once it is used up (not checked only afterwards)."""
    sleepy = unittest_source(*(method(f"test_{i}", SLOW) for i in range(3)))
    r = sandbox.run_tests(GOOD, sleepy, harness="unittest", timeout_s=2.0)
    assert (r.passed, r.status, r.n_failed) == (False, "timeout", 3)
    assert "in all" in r.detail and "the 2 s limit" in r.detail and 1.5 < r.duration_s < 3.5


def test_class_fixtures_run_in_every_part(sandbox):
    test = unittest_source(
        "    @classmethod\n    def setUpClass(cls):\n        cls.base = add(1, 1)\n",
        method("test_a", SLOW + "; self.assertEqual(self.base, 2)"),
        method("test_b", "self.assertEqual(add(self.base, 1), 3)"),
    )
    r = sandbox.run_tests(LOUD_GOOD, test, harness="unittest")
    assert r.passed and r.n_tests == 2 and r.stdout.count("loaded") == 2


def test_tests_the_plan_missed_fall_back_to_one_run(sandbox):
    """An inherited test is not in the plan: the parts' collection disagrees, the task runs unsplit."""
    test = (
        "import unittest\n\nclass Base(unittest.TestCase):\n"
        + method("test_inherited", "self.assertEqual(add(1, 2), 3)")
        + "\nclass TestCases(Base):\n"
        + method("test_a", SLOW)
        + method("test_b", "self.assertEqual(add(2, 2), 4)")
    )
    assert plan_test_names(test, "unittest") == ["test_a", "test_b"]
    r = sandbox.run_tests(LOUD_GOOD, test, harness="unittest")
    assert (r.passed, r.n_tests) == (True, 3) and r.stdout.count("loaded") == 1


def test_split_after_must_be_positive():
    with pytest.raises(ValueError, match="split_after_s must be > 0"):
        Sandbox(split_after_s=0)
