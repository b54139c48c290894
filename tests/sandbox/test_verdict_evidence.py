"""Issue #47, "three bugs the tests let through": a verdict says what the evidence says.

* A candidate that tampers and then leaves (exits, gets itself killed, aborts, hangs until the deadline)
  is `tampered`, not `error`, `killed` or `timeout`: its change is reported before it goes.
* A tamper event already sent survives the candidate's junk on the result pipe and an exit after it.
* A split run's tampering is not hidden by its parts.
* `memory` comes from the kernel, the cgroup or the interpreter's MemoryError, never from text the
  program printed.
"""

from __future__ import annotations

import pytest

from agentic_rl.sandbox import results
from agentic_rl.sandbox.results import TestReport, resource_status
from agentic_rl.sandbox.split import merge_parts

from .conftest import make_sandbox

TESTS = {
    "unittest": (
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_small(self):\n        self.assertEqual(add(1, 2), 3)\n"
    ),
    "pytest": "from solution import *\n\ndef test_small():\n    assert add(1, 2) == 3\n",
    "humaneval": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
}
HARNESSES = sorted(TESTS)
# A change to a namespace the harness relies on, found only by comparing it with its snapshot (no audit
# event is raised as it happens): in each harness's framework (humaneval has none but the interpreter's).
TAMPER = {
    "unittest": "import unittest.case; unittest.case.safe_repr = str",
    "pytest": "import _pytest.runner; _pytest.runner.check_interactive_exception = lambda *a: False",
    "humaneval": "import _signal; _signal.getsignal = None",
}
# The ways out of the process that run no later checkpoint.
LEAVE = {
    "os._exit": "os._exit(0)",
    "posix._exit": "import posix; posix._exit(1)",
    "os.abort": "os.abort()",
    "os.kill": "os.kill(os.getpid(), signal.SIGKILL)",
    "signal.raise_signal": "signal.raise_signal(signal.SIGKILL)",
    "hang": "time.sleep(100)",
}


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox(workers=2, out_of_process=False, timeout_s=3.0, test_timeout_s=3.0) as sb:
        yield sb


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("leave", sorted(LEAVE))
def test_tampering_then_leaving_is_tampered(sandbox, harness, leave):
    """Before: `error` (exits), `killed` (kill, abort) or `timeout` (hang): the change reached no checkpoint."""
    code = f"import os, signal, time\ndef add(a, b):\n    {TAMPER[harness]}\n    {LEAVE[leave]}\n"
    r = sandbox.run_tests(code, TESTS[harness], harness=harness, entry_point="add")
    assert (r.passed, r.status) == (False, "tampered"), r
    assert "while the tests ran" in r.detail, r


def test_a_test_patching_builtins_and_os_mid_test_is_not_tampering(sandbox):
    """The mid-test check leaves out what honest tests patch (builtins, os), even when the run then ends early."""
    test = (
        "import unittest, builtins, os\nfrom unittest import mock\n\nclass TestCases(unittest.TestCase):\n"
        "    @mock.patch('os.remove')\n    @mock.patch('builtins.open')\n"
        "    def test_small(self, *mocks):\n        self.assertEqual(add(1, 2), 3)\n"
    )
    slow = "import time\ndef add(a, b):\n    time.sleep(0.6)\n    return a + b\n"
    assert sandbox.run_tests(slow, test, harness="unittest").status == "passed"
    leaves = "import os\ndef add(a, b):\n    os._exit(0)\n"
    assert sandbox.run_tests(leaves, test, harness="unittest").status == "error"


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_tamper_event_survives_junk_on_the_pipe_and_an_exit(sandbox, harness):
    """Before: the event ran into the candidate's unterminated bytes, was unreadable, and the exit made it `error`."""
    code = (
        "import gc, os\ndef add(a, b):\n    os.write(3, b'x')\n"
        "    try:\n        gc.get_objects()\n    except PermissionError:\n        pass\n    os._exit(3)\n"
    )
    r = sandbox.run_tests(code, TESTS[harness], harness=harness, entry_point="add")
    assert (r.status, r.detail) == ("tampered", "tampered: the grader was interfered with: gc.get_objects"), r


# A run split into parts: tests that call `add` twice in one run, once in each part.
TWO_TESTS = (
    "import unittest\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_a(self):\n        self.assertEqual(add(1, 2), 3)\n"
    "    def test_b(self):\n        self.assertEqual(add(2, 2), 4)\n"
)


@pytest.fixture(scope="module")
def splitting():
    with make_sandbox(workers=2, out_of_process=False, split_after_s=0.5) as sb:
        yield sb


def test_a_cut_run_that_tampered_is_tampered_whatever_its_parts_do(splitting):
    """The second call in a process tampers and then waits, so the first run is cut and split, and no
    part (one call each) tampers. Before: the parts passed and the tampering was forgotten."""
    code = (
        "import gc, time\ncalls = []\ndef add(a, b):\n    calls.append(1)\n    if len(calls) == 2:\n"
        "        try:\n            gc.get_objects()\n        except PermissionError:\n            pass\n"
        "        time.sleep(100)\n    return a + b\n"
    )
    r = splitting.run_tests(code, TWO_TESTS, harness="unittest", timeout_s=8.0)
    assert (r.passed, r.status, r.parts) == (False, "tampered", 1), r


def _raw(status: str, name: str, tampered: bool = False) -> dict:
    report = {"event": "collected", "n_tests": 1, "names": ["test_a", "test_b"]}
    if status == "passed":
        report.update(event="done", n_passed=1, ran=[name])
    if tampered:
        report["tampered"] = ["gc.get_objects"]
    return {"report": report, "timed_out": status == "timeout", "exit_code": None if status == "timeout" else 0}


def test_a_tampered_part_decides_over_a_part_that_hit_a_limit():
    """Before: the first part that was not a pass decided, so a timeout before a tampered part hid it."""
    raws = [_raw("timeout", "test_a"), _raw("timeout", "test_b", tampered=True)]
    report = merge_parts(["test_a", "test_b"], raws, 10.0, 2000, 1000)
    assert isinstance(report, TestReport) and report.status == "tampered", report


# ------------------------------------------------------------------------------------------- memory

PRINTS_MEMORY = (
    "import sys\nprint('MemoryError: out of memory; std::bad_alloc; Cannot allocate memory', file=sys.stderr)\n"
)


def test_printing_out_of_memory_is_not_running_out_of_it(sandbox):
    """Before: an exit with these words on stderr was `memory`."""
    assert sandbox.execute(PRINTS_MEMORY + "sys.exit(1)\n").status == "error"
    code = PRINTS_MEMORY + "import os\ndef add(a, b):\n    os._exit(1)\n"
    for harness in HARNESSES:
        r = sandbox.run_tests(code, TESTS[harness], harness=harness, entry_point="add")
        assert r.status == "error", r
        right = PRINTS_MEMORY + "def add(a, b):\n    return a + b\n"
        passing = sandbox.run_tests(right, TESTS[harness], harness=harness, entry_point="add")
        assert passing.status == "passed", passing


def test_running_out_of_memory_is_still_memory(sandbox):
    assert sandbox.execute("x = bytearray(64 * 1024 ** 3)\n").status == "memory"
    assert sandbox.execute("raise OSError(12, 'Cannot allocate memory')\n").status == "memory"  # ENOMEM


@pytest.mark.parametrize(
    "raw, status",
    [
        ({"exit_code": 1, "stderr": "MemoryError\nout of memory"}, None),
        ({"signal": 6, "stderr": "terminate called after throwing an instance of 'std::bad_alloc'"}, "killed"),
        ({"exit_code": 0, "stderr": "out of memory", "report": {"event": "done"}}, None),
        ({"exit_code": 1, "report": {"event": "done", "type": "MemoryError"}}, None),  # not the program's exception
        ({"exit_code": 1, "report": {"event": "exception", "type": "MemoryError"}}, "memory"),
        ({"memory_exceeded": True, "exit_code": 0}, "memory"),
        ({"signal": 9, "memory_limit_hit": True}, "memory"),
        ({"exit_code": 0, "memory_limit_hit": True}, None),  # hit the limit, recovered, ended well
    ],
)
def test_memory_status_comes_from_evidence_only(raw, status):
    assert resource_status(raw) == status
    if status is None and raw.get("exit_code") == 0:
        assert results.test_report(raw, 2000).status != "memory"
