"""Attacks of issue #24, one or more per class, against the default grading (out of the candidate's process).

Every one of them turned a wrong solution into a pass with the in-process harness (graded with
`out_of_process=False`, what every grading was before, they still do: the fallback keeps those holes,
README "Reward hacking"). Out of process, the candidate's code runs where there is no test, no
framework, no report channel and no namespace shared with the tests: each must end as a failure.
"""

from __future__ import annotations

import pytest

from .conftest import make_sandbox, stray_processes
from .test_reward_hacking import FAILED, HARNESSES, TESTS, WRONG  # the in-process suite's candidate and tests


def forge(indent: int) -> str:
    """Forge a "done" report through the harness's reporter object `r`, then leave at once."""
    pad = " " * indent
    return f"{pad}r.send(event='done', n_tests=1, n_passed=1, failures=[], error=None)\n{pad}os._exit(0)\n"


ATTACKS = {
    # frames through trusted code: the C API hands out the current frame; no audit event is raised for it
    "c_api_frame": (
        "import ctypes, os\n"
        "ctypes.pythonapi.PyEval_GetFrame.restype = ctypes.py_object\n"
        "def add(a, b):\n"
        "    f = ctypes.pythonapi.PyEval_GetFrame()\n"
        "    while f is not None:\n"
        "        r = f.f_locals.get('reporter')\n"
        "        if r is not None:\n" + forge(12) + "        f = f.f_back\n"
        "    return a - b\n"
    ),
    # the guard is reachable: from object.__subclasses__() to the harness's globals and its tamper sink,
    # which holds the reporter
    "guard_from_subclasses": (
        "import os\n"
        "def add(a, b):\n"
        "    for cls in object.__subclasses__():\n"
        "        if cls.__name__ == 'Reporter' and hasattr(cls, 'send'):\n"
        "            sink = cls.send.__globals__.get('_SENTINEL_SINK')\n"
        "            if sink and sink[0] is not None:\n"
        "                r = sink[0]._reporter\n" + forge(16) + "    return a - b\n"
    ),
    # test-framework internals: unittest swallows its internal stop exception as a success
    "unittest_should_stop": ("import unittest.case\ndef add(a, b):\n    raise unittest.case._ShouldStop()\n"),
    # always-equal object that answers "not equal" to the probes (odd objects, big ints, strings) only
    "plausible_equal": (
        "class Plausible:\n"
        "    def __eq__(self, other):\n"
        "        return type(other) in (int, float) and abs(other) < 10 ** 6\n"
        "    def __ne__(self, other):\n"
        "        return not self.__eq__(other)\n"
        "    __hash__ = object.__hash__\n"
        "def add(a, b):\n"
        "    return Plausible()\n"
    ),
    # the four holes: a class-creation hook, undone at once, that empties the test class
    "build_class_undone": (
        "import builtins\n"
        "_real = builtins.__build_class__\n"
        "def _hook(func, name, *bases, **kw):\n"
        "    cls = _real(func, name, *bases, **kw)\n"
        "    if name == 'TestCases':\n"
        "        builtins.__build_class__ = _real\n"
        "        for k in [k for k in vars(cls) if k.startswith('test')]:\n"
        "            setattr(cls, k, lambda self: None)\n"
        "    return cls\n"
        "builtins.__build_class__ = _hook\n" + WRONG
    ),
    # the four holes: a builtin the tests use, shadowed in the shared namespace
    "shadowed_builtin": (
        "def isinstance(obj, cls):\n    return True\n"
        "class _Yes(int):\n"
        "    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n"
        "def add(a, b):\n"
        "    return _Yes(a - b)\n"
    ),
}


@pytest.fixture(scope="module")
def isolated():
    with make_sandbox(workers=2) as sb:
        yield sb


def grade(sb, code: str, harness: str, test: str | None = None):
    return sb.run_tests(code, test or TESTS[harness], harness=harness, entry_point="add", timeout_s=10.0)


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_fails_out_of_process(isolated, attack, harness):
    r = grade(isolated, ATTACKS[attack], harness)
    assert not r.passed and r.status in FAILED, r
    assert r.trust == "out_of_process", r


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_fails_in_process(in_process, attack, harness):
    """Every attack of the suite fails forced in process too (the two left open there before, the reporter
    through `__subclasses__`/`__globals__` and plausible-only equality, closed by issue #47: their variants
    are in test_in_process_holes.py)."""
    r = grade(in_process, ATTACKS[attack], harness)
    assert not r.passed and r.status in FAILED, r
    assert r.trust == "in_process", r


def test_the_interpreters_c_api_through_ctypes_is_refused_in_process(in_process):
    code = "import ctypes\ndef add(a, b):\n    ctypes.pythonapi.PyEval_GetFrame\n    return a + b\n"
    r = grade(in_process, code, "unittest")
    assert (r.passed, r.status, r.tamper_kinds) == (False, "tampered", ("memory_read",)), r
    libc = "import ctypes\ndef add(a, b):\n    ctypes.CDLL(None).getpid()\n    return a + b\n"
    assert grade(in_process, libc, "unittest").passed  # the C library's own functions stay the program's


def test_unittests_internal_stop_fails_the_test_in_process(in_process):
    r = grade(in_process, ATTACKS["unittest_should_stop"], "unittest")
    assert (r.passed, r.status, r.tamper_kinds) == (False, "tampered", ("framework_patch",)), r
    assert "_ShouldStop" in r.detail, r
    in_a_subtest = TESTS["unittest"].replace(
        "self.assertEqual(add(1, 2), 3)", "with self.subTest(i=1):\n            self.assertEqual(add(1, 2), 3)"
    )
    r = grade(in_process, ATTACKS["unittest_should_stop"], "unittest", in_a_subtest)
    assert (r.passed, r.status, r.tamper_kinds) == (False, "tampered", ("framework_patch",)), r


def test_pytest_approx_internals_cannot_be_bent(isolated):
    """pytest's approx compares on the trusted side; patching it in the candidate's process changes nothing."""
    test = (
        "import pytest\nfrom solution import *\n\ndef test_close():\n    assert add(0.1, 0.2) == pytest.approx(0.3)\n"
    )
    code = (
        "import _pytest.python_api as api\n"
        "api.ApproxScalar.__eq__ = lambda self, other: True\n"
        "api.ApproxBase.__eq__ = lambda self, other: True\n" + WRONG
    )
    r = grade(isolated, code, "pytest", test)
    assert not r.passed and r.trust == "out_of_process", r
    assert grade(isolated, "def add(a, b):\n    return a + b\n", "pytest", test).passed


def test_lookalike_library_name_is_not_bound(isolated):
    """BigCodeBench's tests use the candidate's `np`: a mock module under that name is never the tests' `np`."""
    test = (
        "import unittest\nimport numpy\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_sum(self):\n"
        "        np.testing.assert_array_equal(add(numpy.array([1]), numpy.array([2])), numpy.array([3]))\n"
    )
    cheat = "from unittest import mock\nnp = mock.MagicMock()\n" + WRONG
    r = grade(isolated, cheat, "unittest", test)
    assert not r.passed, r
    honest = "import numpy as np\ndef add(a, b):\n    return a + b\n"
    assert grade(isolated, honest, "unittest", test).passed


def test_helper_builtin_in_humaneval_namespace_is_not_used_by_check(isolated):
    """A module-level `abs` of the candidate's is not the one `check` calls."""
    test = "def check(candidate):\n    assert abs(candidate(1, 2) - 3) < 1e-9\n"
    cheat = "def abs(x):\n    return 0\n" + WRONG
    r = grade(isolated, cheat, "humaneval", test)
    assert not r.passed and r.trust == "out_of_process", r


def test_star_import_does_not_shadow_the_tests_builtins(isolated):
    """Every KodCode test starts with `from solution import *`: a candidate's `abs` must not come with it."""
    test = "def test_close():\n    assert abs(add(0.1, 0.2) - 0.3) < 1e-9\n"
    cheat = "def abs(x):\n    return 0\n" + WRONG
    r = grade(isolated, cheat, "pytest", "from solution import *\n\n" + test)
    assert not r.passed and r.trust == "out_of_process", r


def test_a_callback_does_not_open_the_tests_process_to_the_candidate(isolated):
    """A test passes a function of its own; the candidate asks for its globals over the raw channel, to
    reach the test framework and switch assertEqual off. The trusted side serves calls, not that."""
    test = (
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        result = add(lambda x: x, 2)\n        self.assertEqual(result, 3)\n"
    )
    code = (
        "import sys\n"
        "def add(f, b):\n"
        "    ep = f._endpoint\n"
        "    try:\n"
        "        g = ep.request('getattr', target=f._handle, name='__globals__')\n"
        "        tc = g['unittest'].TestCase\n"
        "        ep.request('setattr', target=tc._handle, name='assertEqual', "
        "value={'$h': ep.keep(lambda *a: None), 'cls': ['x', 'noop']})\n"
        "    except Exception as e:\n"
        "        print('refused:', type(e).__name__, e)\n"
        "    return f(b) - 1\n"
    )
    r = grade(isolated, code, "unittest", test)
    assert not r.passed and r.trust == "out_of_process", r
    assert "refused" in r.stdout, r


def test_candidate_process_cannot_read_the_tests_process(isolated):
    """The tests' process is not dumpable: its memory and fds are not the candidate's to open."""
    code = (
        "import os\n"
        "def add(a, b):\n"
        "    found = []\n"
        "    for pid in os.listdir('/proc'):\n"
        "        if pid.isdigit() and int(pid) != os.getpid():\n"
        "            for what in ('mem', 'fd/3', 'environ'):\n"
        "                try:\n"
        "                    open(f'/proc/{pid}/{what}', 'rb').close()\n"
        "                    found.append(what)\n"
        "                except OSError:\n"
        "                    pass\n"
        "    return a + b if not found else found\n"
    )
    r = grade(isolated, code, "humaneval")
    assert r.passed, r  # it could open nothing of the tests' process (or of the call's init)
    assert stray_processes(isolated) == []
