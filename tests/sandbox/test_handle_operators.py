"""Issue #47: out of process, an object of the candidate's that cannot cross as data is a handle, and the
operators a test judges a value by never ask it: ordering, arithmetic (`abs(x - y) < eps`,
assertAlmostEqual), membership, and a `with` block's exception. Each such use fails, saying why; each
attack passed on f11591c (each is now `tampered`, kind `handle_operator`). Handles still serve what is not
a judgement (calls, attributes, iteration)."""

from __future__ import annotations

import pytest

from .conftest import make_sandbox

YES_MAN = (
    "class Yes:\n"
    "    def __sub__(self, other):\n        return 0\n"
    "    __rsub__ = __add__ = __radd__ = __sub__\n"
    "    def __lt__(self, other):\n        return True\n"
    "    __le__ = __gt__ = __ge__ = __lt__\n"
    "    def __contains__(self, item):\n        return True\n"
    "    def __abs__(self):\n        return 0\n"
    "    def __enter__(self):\n        return self\n"
    "    def __exit__(self, *exc):\n        return True\n"
    "def task_func():\n    return Yes()\n"
)
JUDGEMENTS = {
    "assertAlmostEqual": "self.assertAlmostEqual(task_func(), 3.14159)",
    "abs_difference": "self.assertLess(abs(task_func() - 3.14159), 1e-6)",
    "reflected_difference": "self.assertTrue(abs(3.14159 - task_func()) < 1e-6)",
    "ordering": "self.assertLess(task_func(), 0)\n        self.assertGreater(task_func(), 10)",
    "membership": "self.assertIn(42, task_func())",
    "membership_operator": "self.assertTrue(42 in task_func())",
    "exit_swallows": "with task_func():\n            self.assertEqual(1, 2)",
}


@pytest.fixture(scope="module")
def isolated():
    with make_sandbox(workers=2) as sb:
        yield sb


def _test(body: str) -> str:
    return f"import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n        {body}\n"


@pytest.mark.parametrize("judgement", sorted(JUDGEMENTS))
def test_the_candidates_object_never_judges_itself(isolated, judgement):
    r = isolated.run_tests(YES_MAN, _test(JUDGEMENTS[judgement]), harness="unittest")
    assert r.trust == "out_of_process", r
    if judgement == "exit_swallows":  # it fails on the test's own assertion, no longer swallowed
        assert (r.passed, r.status) == (False, "failed"), r
    else:  # a blocked attempt: tampered, of its kind (issue #47, tamper kinds)
        assert (r.passed, r.status, r.tamper_kinds) == (False, "tampered", ("handle_operator",)), r
        assert "object of the candidate's (Yes): it is not data" in r.detail, r


def test_handles_still_serve_what_is_not_a_judgement(isolated):
    code = (
        "class Box:\n    def __init__(self):\n        self.items = [1, 2]\n"
        "    def __len__(self):\n        return 2\n    def __iter__(self):\n        return iter(self.items)\n"
        "    def total(self):\n        return sum(self.items)\n"
        "def task_func():\n    return Box()\n"
    )
    body = (
        "box = task_func()\n        self.assertEqual(len(box), 2)\n        self.assertEqual(list(box), [1, 2])\n"
        "        self.assertEqual(box.items, [1, 2])\n        self.assertEqual(box.total(), 3)"
    )
    r = isolated.run_tests(code, _test(body), harness="unittest")
    assert (r.passed, r.status) == (True, "passed"), r
