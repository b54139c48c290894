"""Out-of-process grading (issue #24): honest candidates still pass across the channel (values, objects,
exceptions, in-place changes, callbacks), the channel's format is strict, and the trust of each verdict
is the one `trust.py` chose from the test source."""

from __future__ import annotations

import os
import socket
import stat
import sys
import tempfile

import numpy as np
import pandas as pd
import pytest

from agentic_rl.sandbox import remote
from agentic_rl.sandbox.isolation import import_before_fork, modules_the_tests_import
from agentic_rl.sandbox.trust import plan

from .conftest import make_sandbox, needs_root


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox(workers=2, preload=["pytest", "numpy", "pandas"]) as sb:
        yield sb


def pytest_grade(sb, code: str, test: str):
    return sb.run_tests(code, "from solution import *\n\n" + test, harness="pytest", timeout_s=20.0)


def test_values_of_every_supported_kind_cross_both_ways(sandbox):
    code = (
        "import numpy as np, pandas as pd, datetime, decimal, fractions\n"
        "def echo(x):\n    return x\n"
        "def frame():\n    return pd.DataFrame({'a': [1, 2], 'b': ['x', None]}, index=['r', 's'])\n"
        "def series():\n    return pd.Series([1.5, float('nan')], name='s')\n"
        "def array():\n    return np.arange(6, dtype=np.int32).reshape(2, 3)\n"
        "import collections\nPoint = collections.namedtuple('Point', 'x y')\n"
        "def point():\n    return Point(3, 4)\n"
    )
    test = (
        "import collections, math, datetime, decimal, fractions\nimport numpy as np, pandas as pd\n"
        "def test_echo():\n"
        "    for v in [None, True, 3, 2 ** 80, 1.5, 'é', b'\\x00', bytearray(b'a'), (1, [2]), {1: 'a', (2,): {3}},\n"
        "              frozenset({1}), 1 + 2j, datetime.date(2024, 1, 2), datetime.timedelta(3),\n"
        "              decimal.Decimal('1.10'), fractions.Fraction(1, 3), np.float32(1.5), range(1, 5, 2),\n"
        "              collections.Counter('abca'), collections.OrderedDict(a=1), collections.deque([1], 3),\n"
        "              collections.defaultdict(list, {1: [2]})]:\n"
        "        back = echo(v)\n"
        "        assert back == v and type(back) is type(v), (v, back)\n"
        "    assert math.isinf(echo(float('inf'))) and math.isnan(echo(float('nan')))\n"
        "def test_namedtuple():\n"
        "    p = point()\n"
        "    assert p == (3, 4) and p.x == 3 and type(p).__name__ == 'Point' and p._asdict() == {'x': 3, 'y': 4}\n"
        "def test_numpy_pandas():\n"
        "    a = array()\n"
        "    assert type(a) is np.ndarray and a.dtype == np.int32 and a.shape == (2, 3) and a[1, 2] == 5\n"
        "    pd.testing.assert_frame_equal(frame(), pd.DataFrame({'a': [1, 2], 'b': ['x', None]}, index=['r', 's']))\n"
        "    pd.testing.assert_series_equal(series(), pd.Series([1.5, float('nan')], name='s'))\n"
    )
    r = pytest_grade(sandbox, code, test)
    assert r.passed and r.trust == "out_of_process", r


def test_objects_exceptions_in_place_changes_and_callbacks(sandbox):
    code = (
        "class InsufficientFunds(ValueError):\n    pass\n"
        "class Account:\n"
        "    def __init__(self, balance=0):\n        self.balance = balance\n"
        "    def withdraw(self, n):\n"
        "        if n > self.balance:\n            raise InsufficientFunds('not enough')\n"
        "        self.balance -= n\n        return self.balance\n"
        "    def __len__(self):\n        return self.balance\n"
        "def sort_in_place(xs):\n    xs.sort()\n"
        "def apply(f, xs):\n    return [f(x) for x in xs]\n"
        "def count():\n    yield from range(3)\n"
        "import fractions, decimal\n"
        "class Weird(decimal.Context):\n    pass\n"
        "def library_object():\n    return decimal.Context(prec=5)\n"
    )
    test = (
        "import pytest\n"
        "def test_account():\n"
        "    acct = Account(10)\n"
        "    assert acct.withdraw(3) == 7 and acct.balance == 7 and len(acct) == 7\n"
        "    assert isinstance(acct, Account)\n"
        "    with pytest.raises(InsufficientFunds, match='not enough'):\n        acct.withdraw(100)\n"
        "    with pytest.raises(ValueError):\n        acct.withdraw(100)\n"
        "def test_in_place():\n"
        "    xs = [3, 1, 2]\n    sort_in_place(xs)\n    assert xs == [1, 2, 3]\n"
        "def test_callback_and_generator():\n"
        "    assert apply(lambda x: x * 10, [1, 2]) == [10, 20]\n"
        "    assert list(count()) == [0, 1, 2]\n"
        "def test_library_object_by_reference():\n"
        "    import decimal\n"
        "    ctx = library_object()\n"
        "    assert isinstance(ctx, decimal.Context) and ctx.prec == 5\n"
    )
    r = pytest_grade(sandbox, code, test)
    assert (r.passed, r.n_tests, r.trust) == (True, 4, "out_of_process"), r


def test_a_callback_of_the_tests_answers_refused_attributes_as_missing(sandbox):
    # pandas' apply probes the function it is given (`hasattr(f, "ndim")`) before calling it
    # (BigCodeBench/187): a refused attribute is an AttributeError there, never an error of the channel.
    code = (
        "def apply(f, xs):\n"
        "    assert not hasattr(f, 'ndim')\n"
        "    leaked = getattr(f, '__globals__', None)\n"
        "    return [f(x) for x in xs], leaked is None\n"
    )
    r = pytest_grade(sandbox, code, "def test_it():\n    assert apply(lambda x: x + 1, [1, 2]) == ([2, 3], True)\n")
    assert (r.passed, r.trust) == (True, "out_of_process"), r


def test_a_candidate_object_never_equals_a_value_of_the_tests(sandbox):
    code = (
        "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
        "def answer():\n    return Anything()\n"
    )
    r = pytest_grade(sandbox, code, "def test_it():\n    assert answer() == [1, 2]\n")
    assert (r.passed, r.status) == (False, "failed"), r


def test_unittest_and_humaneval_out_of_process(sandbox):
    test = (
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertEqual(task_func([3, 1]), [1, 3])\n"
        "    def test_np(self):\n"
        "        np.testing.assert_array_equal(task_func(np.array([2, 1])), np.array([1, 2]))\n"
    )
    code = "import numpy as np\ndef task_func(xs):\n    return sorted(xs) if isinstance(xs, list) else np.sort(xs)\n"
    r = sandbox.run_tests(code, test, harness="unittest")
    assert (r.passed, r.n_tests, r.trust) == (True, 2, "out_of_process"), r
    r = sandbox.run_tests(
        "def f(x):\n    return x + 1\n", "def check(c):\n    assert c(1) == 2\n", harness="humaneval", entry_point="f"
    )
    assert (r.passed, r.trust) == (True, "out_of_process"), r


def test_tests_that_read_the_candidates_output_run_in_its_process(sandbox):
    # A patch crosses the boundary (test_patching.py); reading what the candidate's process printed does not.
    test = (
        "import unittest, io\nfrom unittest.mock import patch\nclass TestCases(unittest.TestCase):\n"
        "    @patch('sys.stdout', new_callable=io.StringIO)\n"
        "    def test_a(self, out):\n        task_func()\n        self.assertEqual(out.getvalue(), 'hi\\n')\n"
    )
    r = sandbox.run_tests("def task_func():\n    print('hi')\n", test, harness="unittest")
    assert (r.passed, r.trust) == (True, "in_process"), r
    assert plan(test, "unittest") == ("in_process", "capture: patch('sys.stdout')")
    assert plan("def test_a(capsys):\n    pass\n", "pytest") == ("in_process", "capture: capsys")
    assert plan("from solution import f\ndef test_a():\n    assert f() == 1\n", "pytest") == ("out_of_process", None)
    assert plan("def check(c):\n    patch = 1\n", "humaneval") == ("out_of_process", None)
    # the candidate's pickle, unpickled out of process, would run its code beside the report channel
    assert plan("import pickle\ndef test_a():\n    assert pickle.load(open('out.pkl', 'rb')) == 1\n", "pytest") == (
        "in_process",
        "runs_data: pickle",
    )


def test_tests_that_seed_a_shared_random_generator_run_in_the_candidates_process(sandbox):
    # The official harness runs the tests and the candidate in one process: a seed the test sets decides
    # what the candidate draws (BigCodeBench/93's expected values come from such draws).
    test = (
        "import unittest\nimport numpy as np\nimport random\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n"
        "        np.random.seed(7)\n        want = (np.random.randint(0, 10**9), random.random())\n"
        "        np.random.seed(7)\n        self.assertEqual(task_func(), want[0])\n"
    )
    code = "import numpy as np\ndef task_func():\n    return int(np.random.randint(0, 10**9))\n"
    r = sandbox.run_tests(code, test, harness="unittest")
    assert (r.passed, r.trust) == (True, "in_process"), r
    assert plan(test, "unittest") == ("in_process", "shared_random: numpy.random.seed")
    seeds = "import random\ndef test_a():\n    random.seed(1)\n"
    assert plan(seeds, "pytest") == ("in_process", "shared_random: random.seed")
    # drawing data, without seeding a generator the candidate shares, stays out of process
    assert plan("import random\ndef test_a():\n    xs = [random.random()]\n", "pytest") == ("out_of_process", None)


def test_switched_off_every_verdict_is_in_process():
    with make_sandbox(workers=1, out_of_process=False) as sb:
        r = sb.run_tests(
            "def f(x):\n    return x\n", "def check(c):\n    assert c(1) == 1\n", harness="humaneval", entry_point="f"
        )
    assert (r.passed, r.trust) == (True, "in_process"), r


# ------------------------------------------------------------------ the channel's format, without a sandbox


def _pair():
    a, b = socket.socketpair()
    return remote.Endpoint(a.fileno()), a, b


def test_codec_round_trips_and_rejects_what_is_not_its_format():
    ep, a, b = _pair()
    try:
        codec = ep.codec
        for value in [[1, (2, 3)], {"k": {1, 2}}, np.arange(4.0), pd.Series([1, 2], name="x")]:
            back = codec.decode(codec.encode(value))
            if isinstance(value, pd.Series):
                pd.testing.assert_series_equal(back, value)
            elif isinstance(value, np.ndarray):
                np.testing.assert_array_equal(back, value)
            else:
                assert back == value
        for junk in [
            {"$nope": 1},
            {"$t": "not a list"},
            {"$nd": ["|O", [1], "AA=="]},
            {"a": 1, "b": 2, "c": 3},
            {"$b": "***"},
            {"$f": "1e999"},
        ]:
            with pytest.raises((remote.Unsupported, ValueError)):
                codec.decode(junk)

        class Custom:
            pass

        class Sized:
            def __len__(self):
                return 0

        # stays here, as a handle; "$ht": its class defines no truth of its own (RemoteObject.__bool__)
        assert set(codec.encode(Custom())) == {"$ht", "cls"}
        assert set(codec.encode(Sized())) == {"$h", "cls"}
    finally:
        a.close()
        b.close()


def test_an_exception_of_an_unknown_type_becomes_a_trusted_stand_in():
    ep, a, b = _pair()
    try:
        e = ep.codec.decode_exception(
            {"type": "BankError", "bases": ["LookupError", "Exception"], "message": "m", "args": None},
            ep.known_exceptions,
        )
        assert isinstance(e, LookupError) and type(e).__name__ == "BankError" and str(e) == "m"
        assert type(e).__module__ == "solution" and type(e).__dict__.keys() <= {
            "__module__",
            "__doc__",
            "__dict__",
            "__weakref__",
        }
        stop = ep.codec.decode_exception({"type": "StopIteration", "message": ""}, {})
        assert type(stop) is StopIteration
    finally:
        a.close()
        b.close()


def test_closed_channel_is_an_error_not_a_hang():
    a, b = socket.socketpair()
    b.close()
    ep = remote.Endpoint(a.fileno())
    with pytest.raises(remote.ChannelClosed):
        ep.request("lookup", name="x")
    a.close()


def test_the_modules_sent_ahead_are_the_tests_top_level_absolute_imports():
    test = (
        "import unittest, os.path as p\nfrom tensorflow import keras\nfrom matplotlib.axes import Axes\n"
        "from . import sibling\nimport unittest\n"
        "def helper():\n    import json\n"
        "class TestCases(unittest.TestCase):\n    def test_a(self):\n        import csv\n"
    )
    assert modules_the_tests_import(test) == ["unittest", "os.path", "tensorflow", "matplotlib.axes"]
    assert modules_the_tests_import("def broken(:\n") == []


@needs_root
def test_the_tests_libraries_are_in_the_candidates_process_before_its_code_runs(sandbox):
    """Out of process, the modules the tests import at their top level are imported once, before the candidate's
    process is forked, not once in each process: the candidate's code finds them loaded, and nothing the tests do
    not import. A name no installed module has (the candidate's own, a typo) changes nothing there."""
    code = (
        "import sys\nLOADED = sorted(m for m in ('wave', 'tabnanny') if m in sys.modules)\n"
        "def task_func():\n    return LOADED\n"
    )
    test = (
        "import unittest\nimport wave\nimport no_such_module_here\n"
        "class TestCases(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(task_func(), ['wave'])\n"
    )
    report = sandbox.run_tests(code, test, harness="unittest", timeout_s=20.0)
    assert report.trust == "out_of_process" and not report.passed and "no_such_module_here" in report.detail
    report = sandbox.run_tests(code, test.replace("import no_such_module_here\n", ""), harness="unittest")
    assert report.trust == "out_of_process" and report.passed, report.detail


@needs_root
def test_the_tests_libraries_are_imported_as_the_calls_uid_then_root_again(monkeypatch):
    """A library that writes at import writes as the call would: the effective uid and gid are the call's while
    the modules import, root's again after (the runner still mounts the tests' files); one that fails is skipped."""
    where = tempfile.mkdtemp()
    os.chmod(where, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    with open(os.path.join(where, "records_its_ids.py"), "w") as f:
        f.write("import os\nIDS = (os.geteuid(), os.getegid())\n")
    os.chmod(os.path.join(where, "records_its_ids.py"), 0o644)
    monkeypatch.syspath_prepend(where)
    monkeypatch.delitem(sys.modules, "records_its_ids", raising=False)
    import_before_fork(["records_its_ids", "no_such_module_here"], 65534)
    assert sys.modules.pop("records_its_ids").IDS == (65534, 65534)
    assert (os.geteuid(), os.getegid()) == (0, 0)
