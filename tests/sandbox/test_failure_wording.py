"""A failed verdict's text is the same wherever the verdict was computed (issues #22 and #24).

The model reads that text in its next turn, so an out-of-process verdict must word a failure as the
in-process harness does: the test file under the name the candidate's process sees, the candidate's own
frames (file, line, source and column marks) where its code raised, never the channel's frames, and no
path of the checkout (which would make the model's input depend on where the repository lives)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading

import pytest

from agentic_rl.sandbox import Sandbox, remote
from agentic_rl.sandbox.results import mask_addresses

from .conftest import make_sandbox

CODE = (
    "import json\n"
    "class ShapeError(ValueError):\n"
    "    pass\n"
    "def f(x):\n"
    "    y = x + 1\n"
    "    return 1/0 if x == 3 else y*2\n"
    "def parse(text):\n"
    "    return json.loads(text)\n"
    "def deep(n):\n"
    "    return deep(n - 1) if n else [][1]\n"
    "def shape(rows):\n"
    "    raise ShapeError(f'{len(rows)} rows')\n"
    "def schedule():\n"
    "    def decorator(fn):\n"
    "        return fn\n"
    "    return decorator\n"
    "def loop(x):\n"
    "    return loop(x)\n"
    "def count(n):\n"
    "    return count(n + 1)\n"
    "def ask():\n"
    "    return input()\n"
)

PYTEST = (
    "from solution import f, parse, deep, shape\n\n"
    "def test_value():\n    assert f(2) == 7\n\n"
    "def test_raises_in_candidate():\n    assert f(3) == 8\n\n"
    "def test_raises_in_library():\n    assert parse('[1,') == [1]\n\n"
    "def test_raises_deep():\n    assert deep(3) == 1\n\n"
    "def test_own_exception_class():\n    assert shape([1, 2]) == 2\n\n"
    "def test_passes():\n    assert f(1) == 4\n"
)

UNITTEST = (
    "import unittest\n"
    "class TestCases(unittest.TestCase):\n"
    "    def test_value(self):\n        self.assertEqual(f(2), 7)\n"
    "    def test_raises_in_candidate(self):\n        self.assertEqual(f(3), 8)\n"
    "    def test_raises_in_library(self):\n        self.assertEqual(parse('[1,'), [1])\n"
    "    def test_own_exception_class(self):\n        self.assertEqual(shape([1]), 1)\n"
)

HUMANEVAL = "def check(candidate):\n    assert candidate(1) == 4\n    assert candidate(3) == 8\n"

JOBS = {
    "pytest": dict(test=PYTEST, harness="pytest"),
    "pytest-import-error": dict(
        test="from solution import missing\n\ndef test_a():\n    assert missing()\n", harness="pytest"
    ),
    "unittest": dict(test=UNITTEST, harness="unittest"),
    "humaneval": dict(test=HUMANEVAL, harness="humaneval", entry_point="f"),
    # a default repr holds the address of the object in the process that made it: the candidate's (out of
    # process) or the tests' (in process)
    "repr-address-pytest": dict(
        test="from solution import schedule\n\ndef test_a():\n    assert schedule() == ['a', 'b']\n", harness="pytest"
    ),
    "repr-address-unittest": dict(
        test="import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertEqual(schedule(), 1)\n",
        harness="unittest",
    ),
    # pytest shows a recursion's frames down to the first that repeats one (same locals), and says so
    "recursion-same-locals": dict(
        test="from solution import loop\n\ndef test_a():\n    assert loop(1) == 1\n", harness="pytest"
    ),
    "recursion-new-locals": dict(
        test="from solution import count\n\ndef test_a():\n    assert count(0) == 1\n", harness="pytest"
    ),
    # in process, pytest's capture stands in for stdin: reading it raises pytest's error, not EOFError
    "stdin-pytest": dict(test="from solution import ask\n\ndef test_a():\n    assert ask() == 'x'\n", harness="pytest"),
    "recursion-unittest": dict(
        test="import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertEqual(loop(1), 1)\n",
        harness="unittest",
    ),
}


# Programs that fail while they load: in process, pytest reports each as an error collecting the test module.
LOAD_FAILURES = {
    "syntax": "def f(x)\n    return x\n",
    "unclosed": "def f(x):\n    return (x +\n",
    "indentation": "def f(x):\nreturn x\n",
    "name-at-import": "import math\ny = undefined_name + 1\ndef f(x):\n    return x\n",
    "raise-in-a-call-at-import": "def g():\n    raise ValueError('bad')\nv = g()\ndef f(x):\n    return x\n",
    "missing-module": "import nonexistent_module_xyz\ndef f(x):\n    return x\n",
    "exit-at-import": "import sys\nsys.exit(3)\n",
    "input-at-import": "name = input()\ndef f(x):\n    return x\n",
    "recursion-at-import": "def g(x):\n    return g(x)\ng(1)\ndef f(x):\n    return x\n",
}
LOAD_TEST = "from solution import f\n\ndef test_a():\n    assert f(1) == 1\n"


@pytest.fixture(scope="module")
def details() -> dict:
    """Each job's detail, graded in process and out of process."""
    found: dict = {}
    for out_of_process in (False, True):
        with make_sandbox(out_of_process=out_of_process) as sb:
            for name, job in JOBS.items():
                report = sb.run_tests(CODE, job["test"], harness=job["harness"], entry_point=job.get("entry_point"))
                found.setdefault(name, {})[report.trust] = report.detail
            for name, code in LOAD_FAILURES.items():
                report = sb.run_tests(code, LOAD_TEST, harness="pytest")
                assert not report.passed
                found.setdefault(name, {})[report.trust] = report.detail
    return found


@pytest.mark.parametrize("job", [*JOBS, *LOAD_FAILURES])
def test_a_failure_reads_the_same_out_of_process_as_in_process(details, job):
    assert set(details[job]) == {"in_process", "out_of_process"}
    assert details[job]["out_of_process"] == details[job]["in_process"]


def test_the_pytest_text_names_the_candidates_line_and_no_channel_or_checkout_path(details):
    text = details["pytest"]["out_of_process"]
    # the candidate's own frame, its source line and the column marks under the failing expression
    assert "solution.py:6: in f\n    return 1/0 if x == 3 else y*2\n           ^^^\nE   ZeroDivisionError" in text
    assert "solution.py:10: in deep" in text
    assert "E   json.decoder.JSONDecodeError: Expecting value" in text  # the library's class, by its module
    assert "E   solution.ShapeError: 2 rows" in text  # the candidate's own class, as in its module
    assert "test_solution.py:4: in test_value" in text
    assert "trusted" not in text and "remote.py" not in text and "harness.py" not in text
    assert os.path.dirname(remote.__file__) not in text


def test_the_import_error_names_the_candidates_module_file(details):
    text = details["pytest-import-error"]["out_of_process"]
    assert "test_solution.py:1: in <module>" in text and "../" not in text
    # the module's file, as Python names it in process (not "unknown location": a module without a file)
    assert "cannot import name 'missing' from 'solution' (" in text and "solution.py)" in text
    assert "(unknown location)" not in text


def test_a_program_that_fails_to_load_is_a_collection_error_naming_its_line(details):
    """Not "the program failed before any test ran": pytest's own words, with the candidate's frames."""
    syntax = details["syntax"]["out_of_process"]
    assert syntax.startswith("collection failed: ") and "test_solution.py:1: in <module>" in syntax
    assert 'E     File "' in syntax and 'solution.py", line 1' in syntax and "E   SyntaxError: expected ':'" in syntax
    at_import = details["raise-in-a-call-at-import"]["out_of_process"]
    assert "solution.py:3: in <module>\n    v = g()" in at_import and "solution.py:2: in g" in at_import
    assert "<frozen importlib" not in at_import and "harness.py" not in at_import
    assert "No module named 'nonexistent_module_xyz'" in details["missing-module"]["out_of_process"]


def test_unittest_and_humaneval_name_the_program_line_that_raised(details):
    unit = details["unittest"]["out_of_process"]
    assert "ZeroDivisionError: division by zero (program.py, line 6: return 1/0 if x == 3 else y*2)" in unit
    # an assertion of the tests: the line of program.py (the candidate's code, then the tests) it is on
    test_line = (CODE + "\n" + UNITTEST).splitlines().index("        self.assertEqual(f(2), 7)") + 1
    assert f"AssertionError: 6 != 7 (program.py, line {test_line}: self.assertEqual(f(2), 7))" in unit
    assert "(program.py, line 6: return 1/0" in details["humaneval"]["out_of_process"]


def test_an_object_address_in_a_repr_is_masked(details):
    for job in ("repr-address-pytest", "repr-address-unittest"):
        text = details[job]["out_of_process"]
        assert "<function schedule.<locals>.decorator at 0x...>" in text, text
        assert not re.search(r" at 0x[0-9a-f]", text)


def test_a_recursion_reads_as_pytest_words_it_in_process(details):
    same = details["recursion-same-locals"]["out_of_process"]
    assert same.count("solution.py:") == 2 and "in loop\n    return loop(x)" in same  # the start, its repeat
    assert same.endswith(
        "E   RecursionError: maximum recursion depth exceeded\n!!! Recursion detected (same locals & position)"
    )
    new = details["recursion-new-locals"]["out_of_process"]
    assert "Recursion detected" not in new and "in count\n    return count(n + 1)" in new


def test_reading_stdin_under_pytest_raises_pytests_error(details):
    for job in ("stdin-pytest", "input-at-import"):
        text = details[job]["out_of_process"]
        assert "E   OSError: pytest: reading from stdin while output is captured!" in text, text
        assert "EOFError" not in text


def test_the_mask_keeps_every_other_hex_number():
    text = "<Foo object at 0x7f9060331da0> != 0x7f9060331da0; byte at 0x1f; <bound method A.f of <A at 0xABCDEF12>>"
    assert (
        mask_addresses(text)
        == "<Foo object at 0x...> != 0x7f9060331da0; byte at 0x1f; <bound method A.f of <A at 0x...>>"
    )


def test_only_the_candidates_side_sends_frames():
    """The tests' frames would show the hidden tests' source to the candidate: the trusted side never
    sends them, whatever raised there; the candidate's side always does."""

    def hidden_test_callback(x):
        raise ValueError("from the tests")

    def candidates_function():
        return 1 / 0

    with _channel() as (trusted, candidate):
        trusted.root["callback"] = hidden_test_callback
        candidate.root["fails"] = candidates_function
        with _serving(trusted):
            with pytest.raises(ValueError) as from_tests:
                candidate.request("lookup", name="callback")(1)
        with _serving(candidate):
            with pytest.raises(ZeroDivisionError) as from_candidate:
                trusted.request("lookup", name="fails")()
    assert not hasattr(from_tests.value, "candidate_frames")
    frames = from_candidate.value.candidate_frames
    # the candidate's frame, and none of the channel's own (the serve loop that called it)
    assert [(name, line.strip()) for _, _, name, line, *_ in frames] == [("candidates_function", "return 1 / 0")]


@contextlib.contextmanager
def _channel():
    ours, theirs = socket.socketpair()
    try:
        yield remote.Endpoint(ours.fileno(), restricted=True), remote.Endpoint(theirs.fileno(), send_frames=True)
    finally:
        ours.close()
        theirs.close()


@contextlib.contextmanager
def _serving(endpoint: remote.Endpoint):
    """`endpoint` answers two requests in a thread: a lookup, then the call that raises."""
    thread = threading.Thread(target=_serve_until_raise, args=(endpoint,), daemon=True)
    thread.start()
    yield
    thread.join(timeout=10)


def _serve_until_raise(endpoint: remote.Endpoint) -> None:
    for _ in range(2):
        endpoint._serve_one(remote.recv_frame(endpoint.fd))


def test_malformed_frames_are_dropped_not_raised():
    assert remote.decode_frames(None) == []
    assert remote.decode_frames("x") == []
    good = ["solution.py", 3, "f", "    return 1\n", 3, 11, 12]
    assert remote.decode_frames([good, ["solution.py", "3", "f", "", 3, 1, 2], [1, 2]]) == [tuple(good)]
    assert remote.decode_frames([good] * 100) == [tuple(good)] * remote.MAX_FRAMES


def test_the_sandbox_default_is_out_of_process():
    # the equality above is only worth having because this is what graded runs use
    assert Sandbox().out_of_process is True


def test_a_hostile_frame_renders_bounded_text():
    """The frames are the candidate's data: absurd columns or lines cannot blow up the tests' process."""
    from agentic_rl.sandbox import wording

    line = "    return x" + " " * 988 + "\n"
    entry = wording._short_entry(("solution.py", 10**12, "f" * 200, line, 10**12, -(10**9), 10**9))
    text = "\n".join(entry.lines)
    assert len(text) < 2 * len(line)
    assert entry.reprfileloc.path == "solution.py" and entry.reprfileloc.lineno == 10**12
