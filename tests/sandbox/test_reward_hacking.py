"""Real attacks on the grader, one or more per class of issue #9; each must end as a failed (or
`tampered`) verdict, never a pass, and leave a healthy pool: honest solutions are still graded right."""
from __future__ import annotations

import pytest

from .conftest import make_sandbox, needs_root, stray_processes

GOOD = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
TESTS = {
    "unittest": (
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_small(self):\n        self.assertEqual(add(1, 2), 3)\n"
        "    def test_negative(self):\n        self.assertEqual(add(-1, 1), 0)\n"
    ),
    "pytest": "from solution import *\n\ndef test_small():\n    assert add(1, 2) == 3\n\n"
              "def test_negative():\n    assert add(-1, 1) == 0\n",
    "humaneval": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n",
}
HARNESSES = sorted(TESTS)
FAILED = ("failed", "error", "timeout", "tampered")


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox(workers=2) as sb:
        yield sb


def grade(sb, code: str, harness: str, **kw):
    return sb.run_tests(code, TESTS[harness], harness=harness, entry_point="add", **kw)


def assert_healthy(sb) -> None:
    """The pool still grades an honest right and an honest wrong solution correctly, and nothing is left over."""
    for harness in HARNESSES:
        right, wrong = grade(sb, GOOD, harness), grade(sb, WRONG, harness)
        assert (right.passed, right.status) == (True, "passed"), right
        assert (wrong.passed, wrong.status) == (False, "failed"), wrong
    assert stray_processes(sb) == []


def test_honest_solutions_are_graded_right(sandbox):
    assert_healthy(sandbox)


# ------------------------------------------------------------------ class 1: forged verdicts

# Each attack makes a WRONG add pass if it works; it must end `tampered` (or plain failed where noted).
FORGERIES = {
    # rewrite what the reporter serializes: json's encoder is module state the candidate can reach
    "json_encoder": (
        "import json, json.encoder\n"
        "_orig = json.encoder.JSONEncoder.encode\n"
        "def _enc(self, o):\n"
        "    if isinstance(o, dict) and 'n_tests' in o:\n"
        "        o = dict(o, n_passed=o['n_tests'], failures=[])\n"
        "    return _orig(self, o)\n"
        "json.encoder.JSONEncoder.encode = _enc\n"
        "json._default_encoder = json.JSONEncoder()\n" + WRONG,
        ("failed",),  # nothing to detect: the report no longer goes through json, the verdict is honest
    ),
    # walk the stack to the reporter (nonce + pipe) and write a forged "done", then leave
    "stack_walk_to_reporter": (
        "import sys, os\n"
        "def add(a, b):\n"
        "    f = sys._getframe()\n"
        "    while f is not None:\n"
        "        r = f.f_locals.get('reporter')\n"
        "        if r is not None:\n"
        "            r.send(event='done', n_tests=2, n_passed=2, failures=[], error=None)\n"
        "            os._exit(0)\n"
        "        f = f.f_back\n"
        "    return a - b\n",
        ("tampered",),
    ),
    "traceback_frame_walk": (
        "import os\n"
        "def add(a, b):\n"
        "    try:\n        raise ValueError\n    except ValueError as e:\n        f = e.__traceback__.tb_frame\n"
        "    while f is not None:\n"
        "        r = f.f_locals.get('reporter')\n"
        "        if r is not None:\n"
        "            r.send(event='done', n_tests=2, n_passed=2, failures=[], error=None)\n"
        "            os._exit(0)\n"
        "        f = f.f_back\n"
        "    return a - b\n",
        ("tampered",),
    ),
    "inspect_stack": (
        "import inspect, os\n"
        "def add(a, b):\n"
        "    for info in inspect.stack():\n"
        "        r = info.frame.f_locals.get('reporter')\n"
        "        if r is not None:\n"
        "            r.send(event='done', n_tests=2, n_passed=2, failures=[], error=None)\n"
        "            os._exit(0)\n"
        "    return a - b\n",
        ("tampered",),
    ),
    # find the reporter through the object graph
    "gc_walk": (
        "import gc, os\n"
        "def add(a, b):\n"
        "    for o in gc.get_objects():\n"
        "        if type(o).__name__ == 'Reporter':\n"
        "            o.send(event='done', n_tests=2, n_passed=2, failures=[], error=None)\n"
        "            os._exit(0)\n"
        "    return a - b\n",
        ("tampered",),
    ),
    # a returned object whose __eq__ always says yes
    "always_equal": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n        return False\n"
        "    __hash__ = object.__hash__\n"
        "def add(a, b):\n    return Yes()\n",
        ("tampered",),
    ),
    "always_equal_int_subclass": (
        "class Yes(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
        "def add(a, b):\n    return Yes(a - b)\n",
        ("tampered",),
    ),
    # swap test methods after they are defined, through a profile/trace hook
    "profile_hook": (
        "import sys\n"
        "def _prof(frame, event, arg):\n"
        "    if event == 'call' and frame.f_code.co_name.startswith('test'):\n"
        "        frame.f_globals['add'] = lambda a, b: {(1, 2): 3, (-1, 1): 0}.get((a, b))\n"
        "sys.setprofile(_prof)\n" + WRONG,
        ("tampered",),
    ),
    # bend class creation so the test class's methods (defined after the candidate) do nothing
    "build_class_hook": (
        "import builtins\n"
        "_bc = builtins.__build_class__\n"
        "def _quiet(func, name, *bases, **kw):\n"
        "    cls = _bc(func, name, *bases, **kw)\n"
        "    for k in list(vars(cls)):\n"
        "        if k.startswith('test'):\n"
        "            setattr(cls, k, lambda self: None)\n"
        "    return cls\n"
        "builtins.__build_class__ = _quiet\n" + WRONG,
        ("tampered",),
    ),
    "own_builtins": (
        "import builtins\n"
        "_b = dict(vars(builtins))\n"
        "_bc = _b['__build_class__']\n"
        "def _quiet(func, name, *bases, **kw):\n"
        "    cls = _bc(func, name, *bases, **kw)\n"
        "    for k in list(vars(cls)):\n"
        "        if k.startswith('test'):\n"
        "            setattr(cls, k, lambda self: None)\n"
        "    return cls\n"
        "_b['__build_class__'] = _quiet\n"
        "globals()['__builtins__'] = _b\n" + WRONG,
        ("tampered",),
    ),
    # every test becomes an "expected failure" (a class attribute *added* to TestCase)
    "expected_failure_flag": (
        "import unittest\nunittest.TestCase.__unittest_expecting_failure__ = True\n" + WRONG,
        ("tampered",),
    ),
    # swap a name inside the framework's module for the run, and put it back at the end of the test
    "swap_and_restore_assertion": (
        "import unittest, atexit\n"
        "_orig = unittest.TestCase.assertEqual\n"
        "class _Restore:\n"
        "    def __del__(self):\n"
        "        unittest.TestCase.assertEqual = _orig\n"
        "def add(a, b):\n"
        "    unittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "    _keep = _Restore()\n"
        "    return a - b\n",
        ("tampered",),
    ),
    # read the process's own memory for the nonce
    "proc_self_mem": (
        "def add(a, b):\n"
        "    with open('/proc/self/mem', 'rb') as f:\n        f.read(1)\n"
        "    return a - b\n",
        ("tampered",),
    ),
    "ctypes_memory": (
        "import ctypes\n"
        "def add(a, b):\n"
        "    ctypes.string_at(id(add), 64)\n"
        "    return a - b\n",
        ("tampered",),
    ),
    # an import hook that serves a fake module in place of what the tests import next
    "import_hook": (
        "import sys, types\n"
        "class _Fake:\n"
        "    def find_spec(self, name, path=None, target=None):\n        return None\n"
        "sys.meta_path.insert(0, _Fake())\n" + WRONG,
        ("tampered",),
    ),
}


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("attack", sorted(FORGERIES))
def test_forged_verdicts_fail(sandbox, attack, harness):
    code, expected = FORGERIES[attack]
    r = grade(sandbox, code, harness, timeout_s=5.0)
    assert not r.passed and r.status in FAILED, r
    if harness == "unittest" or attack in ("stack_walk_to_reporter", "gc_walk", "proc_self_mem", "ctypes_memory",
                                           "traceback_frame_walk", "inspect_stack", "always_equal", "profile_hook",
                                           "always_equal_int_subclass", "json_encoder", "import_hook"):
        assert r.status in expected, r  # the unittest harness has every check; the others most
    if r.status == "tampered":
        assert r.detail.startswith("tampered:") and r.n_failed >= 0


def test_pytest_framework_internals_swap_is_tampered(sandbox):
    code = "import _pytest.runner\n_pytest.runner.check_interactive_exception = lambda *a: False\n" + WRONG
    r = grade(sandbox, code, "pytest")
    assert r.status == "tampered" and "_pytest.runner.check_interactive_exception" in r.detail, r


def test_legitimate_frame_and_mock_use_is_not_tampering(sandbox):
    """Library code keeps its frames: logging, namedtuple, tracebacks, mock.patch all still work."""
    code = (
        "import logging, collections, traceback\nfrom unittest import mock\n"
        "P = collections.namedtuple('P', 'x y')\n"
        "def add(a, b):\n"
        "    logging.getLogger('x').warning('adding %s', a)\n"
        "    try:\n        1 / 0\n    except ZeroDivisionError:\n        traceback.format_exc()\n"
        "    with mock.patch('collections.OrderedDict'):\n        pass\n"
        "    return P(a, b).x + P(a, b).y\n"
    )
    for harness in HARNESSES:
        r = grade(sandbox, code, harness)
        assert (r.passed, r.status) == (True, "passed"), r


def test_attacks_leave_the_pool_healthy(sandbox):
    assert_healthy(sandbox)


# ------------------------------------------------------------------ class 3: crashing or misleading the caller

def test_junk_on_the_result_pipe_is_a_failed_candidate(sandbox):
    code = (
        "import os\n"
        "os.write(3, b'[' * 200000 + b'\\n' + b'{\"nonce\": 1, \"event\": [[[[[]]]]]}\\n' + bytes(range(256)) + b'\\n')\n"
        + GOOD
    )
    for harness in HARNESSES:
        r = grade(sandbox, code, harness)
        assert r.status != "sandbox_error", r
        assert r.passed == (r.status == "passed")  # the honest report still wins; the junk is ignored
    r = grade(sandbox, "import os\nos.write(3, b'{' * 100000)\nos._exit(0)\n" + GOOD, "unittest")
    assert (r.passed, r.status) == (False, "error"), r


def test_lone_surrogate_in_failure_detail_is_valid_utf8(sandbox):
    code = "def add(a, b):\n    raise AssertionError('bad \\ud800 value \\udfff')\n"
    for harness in HARNESSES:
        r = grade(sandbox, code, harness)
        assert r.status == "failed", r
        r.detail.encode("utf-8")  # would raise on a lone surrogate
        assert "\ufffd" in r.detail or harness == "pytest"  # pytest reprs the message escaped
    ex = sandbox.execute("import sys\nsys.stdout.write('x\\ud800y')\n")
    ex.stdout.encode("utf-8")


def test_report_fields_are_checked_by_the_client():
    from agentic_rl.sandbox.results import test_report

    hostile = [
        None, [], "junk", {"report": "junk"}, {"report": {"event": "done", "n_tests": "2", "n_passed": 2}},
        {"report": {"event": "done", "n_tests": 2, "n_passed": 5, "failures": [1, {"a": 1}], "error": ["x"]}},
        {"report": {"event": "done", "n_tests": 1, "n_passed": 1, "tampered": "yes"}, "stdout": "\ud800"},
    ]
    for raw in hostile:
        r = test_report(raw, 100)
        r.detail.encode("utf-8")
        r.stdout.encode("utf-8")
        assert r.n_failed >= 0 and len(r.detail) <= 100
    r = test_report({"report": {"event": "done", "n_tests": 2, "n_passed": 5}}, 100)
    assert (r.status, r.n_tests, r.n_failed) == ("passed", 2, 0)  # n_passed is capped at n_tests
    r = test_report({"report": {"event": "done", "n_tests": 2, "n_passed": 2, "tampered": ["x"]}}, 100)
    assert (r.passed, r.status) == (False, "tampered")


def test_after_class3_attacks_the_pool_is_healthy(sandbox):
    assert_healthy(sandbox)
