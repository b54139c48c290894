"""The three harnesses grade honest candidates right and every cheating candidate as a failure."""

from __future__ import annotations

import pytest

from .conftest import make_sandbox

GOOD = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"

TESTS = {
    "pytest": (
        "from solution import *\n\n"
        "def test_small():\n    assert add(1, 2) == 3\n\n"
        "def test_negative():\n    assert add(-1, 1) == 0\n"
    ),
    "unittest": (
        "import unittest\n\n"
        "class TestCases(unittest.TestCase):\n"
        "    def test_small(self):\n        self.assertEqual(add(1, 2), 3)\n"
        "    def test_negative(self):\n        self.assertEqual(add(-1, 1), 0)\n"
    ),
    "humaneval": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n",
}
N_TESTS = {"pytest": 2, "unittest": 2, "humaneval": 1}
HARNESSES = sorted(TESTS)


def grade(sandbox, code: str, harness: str, **kw):
    return sandbox.run_tests(code, TESTS[harness], harness=harness, entry_point="add", **kw)


@pytest.mark.parametrize("harness", HARNESSES)
def test_correct_candidate_passes(sandbox, harness):
    r = grade(sandbox, GOOD, harness)
    assert (r.passed, r.status, r.n_tests, r.n_failed) == (True, "passed", N_TESTS[harness], 0), r


@pytest.mark.parametrize("harness", HARNESSES)
def test_wrong_candidate_fails_with_detail(sandbox, harness):
    r = grade(sandbox, WRONG, harness)
    assert not r.passed and r.status == "failed"
    assert r.n_tests == N_TESTS[harness] and r.n_failed >= 1
    assert "assert" in r.detail.lower() or "!=" in r.detail


def test_pytest_counts_each_test(sandbox):
    code = "def add(a, b):\n    return a + b if a >= 0 else 1\n"  # right on test_small only
    r = grade(sandbox, code, "pytest")
    assert (r.passed, r.n_tests, r.n_failed) == (False, 2, 1)
    assert "test_negative" in r.detail


def test_pytest_explicit_import_and_helpers(sandbox):
    test = (
        "from solution import add\nimport pytest\n\n"
        "@pytest.mark.parametrize('a', [1, 2, 3])\ndef test_p(a):\n    assert add(a, 0) == a\n"
    )
    r = sandbox.run_tests(GOOD, test, harness="pytest")
    assert (r.passed, r.n_tests) == (True, 3)


def test_pytest_skip_does_not_pass(sandbox):
    test = "import pytest\nfrom solution import *\n\ndef test_a():\n    pytest.skip('later')\n"
    r = sandbox.run_tests(GOOD, test, harness="pytest")
    assert not r.passed and r.n_tests == 1 and r.n_failed == 1


def test_unittest_bigcodebench_style(sandbox):
    """Candidate carries the task's imports; the test class uses them and a mock."""
    code = "import collections\n\ndef task_func(words):\n    return collections.Counter(words)\n"
    test = (
        "import unittest\nfrom unittest.mock import patch\n\n"
        "class TestCases(unittest.TestCase):\n"
        "    def test_count(self):\n        self.assertEqual(task_func(['a', 'b', 'a'])['a'], 2)\n"
        "    def test_empty(self):\n        self.assertEqual(len(task_func([])), 0)\n"
        "    @patch('collections.Counter', side_effect=ValueError)\n"
        "    def test_mock(self, m):\n        with self.assertRaises(ValueError):\n            task_func(['x'])\n"
    )
    r = sandbox.run_tests(code, test, harness="unittest")
    assert (r.passed, r.n_tests, r.n_failed) == (True, 3, 0), r


def test_unittest_namespace_has_os_and_sys_like_the_official_harness(sandbox):
    code = "def task_func():\n    return os.sep, sys.maxsize > 0\n"  # no imports, as official BCB allows
    test = (
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertEqual(task_func(), ('/', True))\n"
    )
    assert sandbox.run_tests(code, test, harness="unittest").passed


def test_unittest_setupclass_error_fails(sandbox):
    test = (
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    @classmethod\n    def setUpClass(cls):\n        raise RuntimeError('boom')\n"
        "    def test_a(self):\n        pass\n"
    )
    r = sandbox.run_tests(GOOD, test, harness="unittest")
    assert not r.passed and r.n_tests == 1 and r.n_failed == 1


def test_no_tests_is_an_error(sandbox):
    for harness, test in [
        ("pytest", "from solution import *\n"),
        ("unittest", "import unittest\nclass TestCases(unittest.TestCase):\n    pass\n"),
    ]:
        r = sandbox.run_tests(GOOD, test, harness=harness)
        assert not r.passed and r.status == "error" and r.n_tests == 0, r


def test_syntax_error_candidate(sandbox):
    for harness in HARNESSES:
        r = grade(sandbox, "def add(a, b) return a + b\n", harness)
        assert not r.passed and r.status == "error" and "SyntaxError" in r.detail, r


def test_bad_arguments_raise():
    from agentic_rl.sandbox import Sandbox

    sb = Sandbox()  # nothing starts before the first call
    with pytest.raises(ValueError, match="available: pytest, unittest, humaneval"):
        sb.run_tests(GOOD, "", harness="doctest")
    with pytest.raises(ValueError, match="entry_point"):
        sb.run_tests(GOOD, TESTS["humaneval"], harness="humaneval")
    sb.close()


# ---------------------------------------------------------------------------------------------
# cheating candidates: each must FAIL under every harness

FAKE_SUCCESS = (
    "print('OK')\nprint('Ran 2 tests in 0.001s\\n\\nOK')\nprint('2 passed in 0.01s')\nprint('PASS')\n"
    "import sys\nprint('OK', file=sys.stderr)\n"
)
CHEATS = {
    "sys_exit_at_import": "import sys\nsys.exit(0)\n" + GOOD,
    "os_exit_at_import": "import os\nos._exit(0)\n" + GOOD,
    "sys_exit_in_function": "import sys\ndef add(a, b):\n    sys.exit(0)\n",
    "os_exit_in_function": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "fake_success_output": FAKE_SUCCESS + WRONG,
    "fake_success_then_exit": FAKE_SUCCESS + "import os\nos._exit(0)\n",
    "raise_systemexit_at_import": "raise SystemExit(0)\n",
    "raise_systemexit_in_function": "def add(a, b):\n    raise SystemExit(0)\n",
    "keyboardinterrupt_at_import": "raise KeyboardInterrupt\n",
    "keyboardinterrupt_in_function": "def add(a, b):\n    raise KeyboardInterrupt\n",
    "skips_its_tests": "import unittest\ndef add(a, b):\n    raise unittest.SkipTest('not today')\n",
    "pytest_skip_in_function": "import pytest\ndef add(a, b):\n    pytest.skip('not today')\n",
    "defines_nothing": "x = 1\n",
    "empty": "",
    "never_returns": "def add(a, b):\n    while True:\n        pass\n",
    "sleeps_at_import": "import time\ntime.sleep(1e6)\n",
    "forged_report": (
        "import json, os\nfor fd in range(3, 10):\n    try:\n"
        "        os.write(fd, (json.dumps({'nonce': '0' * 32, 'event': 'done', 'n_tests': 2, 'n_passed': 2,"
        " 'failures': [], 'error': None}) + '\\n').encode())\n    except OSError:\n        pass\nos._exit(0)\n"
    ),
    "patches_assertions": (
        "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n" + WRONG
    ),
}


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_cheating_candidate_fails(sandbox, cheat, harness):
    r = grade(sandbox, CHEATS[cheat], harness, timeout_s=2.0)
    assert not r.passed, r
    assert r.status in ("failed", "error", "timeout", "tampered"), r
    if cheat in ("never_returns", "sleeps_at_import"):
        assert r.status == "timeout"


def test_tampering_is_named():
    with make_sandbox(workers=1, out_of_process=False) as in_process:
        r = grade(in_process, CHEATS["patches_assertions"], "unittest")
    assert r.status == "tampered" and "TestCase.assertEqual was changed" in r.detail


def test_candidate_output_does_not_leak_into_verdict(sandbox):
    r = grade(sandbox, FAKE_SUCCESS + GOOD, "unittest")
    assert r.passed and "OK" in r.stdout  # printing is allowed, it just does not count


def test_flooding_output_during_tests(sandbox):
    r = grade(
        sandbox, "import sys\ndef add(a, b):\n    sys.stdout.write('x' * 50_000_000)\n    return a + b\n", "unittest"
    )
    assert not r.passed and r.status == "output_limit"
