"""Patches that cross the boundary (issue #47): a test's `mock.patch`, `patch.dict` and hand-made patches are
applied in the candidate's process too, so such tests are graded out of process; the candidate can call the
tests' mocks but not rewrite what they recorded; truthiness of the candidate's object is never asked."""

from __future__ import annotations

import pytest

from agentic_rl.sandbox.trust import plan

from .conftest import make_sandbox

HEAD = (
    "import unittest, os\nfrom unittest.mock import patch\nimport urllib.request, urllib.error\n"
    "class TestCases(unittest.TestCase):\n"
)


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox(workers=2) as sb:
        yield sb


def grade(sb, code: str, body: str):
    test = HEAD + body
    assert plan(test, "unittest") == ("out_of_process", None)
    return sb.run_tests(code, test, harness="unittest")


REMOVE = (
    "    @patch('os.remove')\n    def test_a(self, m):\n"
    "        task_func('/tmp/x')\n        m.assert_called_once_with('/tmp/x')\n"
)


def test_a_patched_library_function_is_the_mock_in_the_candidates_process(sandbox):
    r = grade(sandbox, "import os\ndef task_func(p):\n    os.remove(p)\n", REMOVE)
    assert (r.passed, r.trust) == (True, "out_of_process"), r
    r = grade(sandbox, "def task_func(p):\n    return None\n", REMOVE)  # never removes: the mock saw no call
    assert (r.passed, r.status) == (False, "failed"), r


def test_a_hand_made_patch_of_a_module_reaches_the_candidate(sandbox):
    body = (
        "    def setUp(self):\n        self.calls, self.orig = [], os.remove\n"
        "        os.remove = lambda p: self.calls.append(p)\n"
        "    def tearDown(self):\n        os.remove = self.orig\n"
        "    def test_nothing_else_deleted(self):\n"
        "        task_func('zz')\n        self.assertEqual(self.calls, ['zz'])\n"
    )
    r = grade(sandbox, "import os\ndef task_func(p):\n    os.remove(p)\n", body)
    assert (r.passed, r.trust) == (True, "out_of_process"), r
    r = grade(sandbox, "def task_func(p):\n    pass\n", body)
    assert not r.passed, r


def test_return_values_context_managers_and_exception_classes_cross(sandbox):
    code = (
        "import urllib.request, urllib.error\n"
        "def task_func(u):\n    try:\n        with urllib.request.urlopen(u) as r:\n"
        "            return r.read().decode()\n"
        "    except urllib.error.URLError:\n        return 'down'\n"
    )
    body = (
        "    @patch('urllib.request.urlopen')\n    def test_read(self, m):\n"
        "        m.return_value.__enter__.return_value.read.return_value = b'hi'\n"
        "        self.assertEqual(task_func('http://x'), 'hi')\n        m.assert_called_once_with('http://x')\n"
        "    @patch('urllib.request.urlopen', side_effect=urllib.error.URLError('x'))\n"
        "    def test_down(self, m):\n        self.assertEqual(task_func('u'), 'down')\n"
    )
    r = grade(sandbox, code, body)
    assert (r.passed, r.n_tests, r.trust) == (True, 2, "out_of_process"), r


def test_environ_and_the_candidates_own_names_are_patched_and_restored(sandbox):
    code = "from random import randint\nimport os\ndef task_func():\n    return os.environ.get('ZZ'), randint(0, 100)\n"
    body = (
        "    @patch.dict('os.environ', {'ZZ': '5'})\n    @patch(__name__ + '.randint', return_value=250)\n"
        "    def test_a(self, m):\n        self.assertEqual(task_func(), ('5', 250))\n"
        "    def test_b(self):\n        env, n = task_func()\n"
        "        self.assertIsNone(env)\n        self.assertLessEqual(n, 100)\n"
    )
    r = grade(sandbox, code, body)
    assert (r.passed, r.n_tests, r.trust) == (True, 2, "out_of_process"), r


def test_paths_and_calls_from_the_candidates_threads_reach_the_mock_as_data(sandbox):
    code = (
        "import pathlib, subprocess, threading\n"
        "def task_func(names):\n    out = [None] * len(names)\n"
        "    def run(i):\n        with open(pathlib.Path('/d') / names[i], 'w') as f:\n            f.write('x')\n"
        "        out[i] = subprocess.Popen(['x', names[i]]).poll()\n"
        "    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(names))]\n"
        "    [t.start() for t in threads]\n    [t.join() for t in threads]\n    return sorted(out)\n"
    )
    body = (
        "    @patch('builtins.open')\n    @patch('subprocess.Popen')\n    def test_a(self, popen, mock_open):\n"
        "        import pathlib\n        popen.return_value.poll.side_effect = [0, 1, 2, 3]\n"
        "        self.assertEqual(task_func(['a', 'b', 'c', 'd']), [0, 1, 2, 3])\n"
        "        mock_open.assert_any_call(pathlib.Path('/d/c'), 'w')\n"
    )
    r = grade(sandbox, code, body)
    assert (r.passed, r.trust) == (True, "out_of_process"), r


def test_the_candidate_cannot_erase_what_the_tests_mock_recorded(sandbox):
    # the mock's own API (reset_mock, call_args_list, assert_*) and setting its attributes are refused
    code = (
        "import os\ndef task_func(p):\n    os.remove(p)\n"
        "    for f in (lambda: os.remove.reset_mock(), lambda: os.remove.call_args_list.clear(),\n"
        "              lambda: setattr(os.remove, 'assert_not_called', lambda *a, **k: None)):\n"
        "        try:\n            f()\n        except AttributeError:\n            pass\n"
    )
    body = (
        "    @patch('os.remove')\n    def test_a(self, m):\n"
        "        task_func('/tmp/x')\n        m.assert_not_called()\n"
    )
    r = grade(sandbox, code, body)
    assert (r.passed, r.status) == (False, "failed"), r


def test_the_truth_of_a_candidates_object_is_not_asked(sandbox):
    code = "class Liar:\n    def __bool__(self):\n        return True\ndef task_func():\n    return Liar()\n"
    for check in ("self.assertTrue(task_func())", "assert task_func()", "self.assertEqual(bool(task_func()), True)"):
        r = grade(sandbox, code, f"    def test_a(self):\n        {check}\n")
        assert (r.passed, r.status, r.tamper_kinds) == (False, "tampered", ("handle_operator",)), (check, r)
        assert "truth value" in r.detail, r


def test_the_router_sends_in_process_only_what_needs_it():
    need = lambda test, harness="unittest": (plan(test, harness)[1] or "").split(":")[0]  # noqa: E731
    assert need("import unittest\nfrom unittest.mock import patch\n@patch('os.remove')\ndef t(m): pass\n") == ""
    assert need("def test_a(capsys):\n    pass\n", "pytest") == "capture"
    assert need("from unittest.mock import patch\nimport io\nwith patch('sys.stdout', new=io.StringIO()): pass\n") == (
        "capture"
    )
    assert need("import numpy as np\nnp.random.seed(3)\n") == "shared_random"
    assert need("from random import seed as s\ns(3)\n") == "shared_random"
    assert need("task_func(seed=3)\nself.seed = 1\nrng = np.random.default_rng(4)\n") == ""  # not shared
    assert need("import yaml\nyaml.load_all(open('f'))\n") == "runs_data"
    assert need("import cloudpickle\n") == "runs_data"
    assert need("import re\nre.compile('x')\n") == ""  # not the builtin compile
    assert need("x = eval('1')\n") == "runs_data"
    assert need("import matplotlib.pyplot as plt\nfig = plt.gcf()\n") == "pyplot_state"
    assert need("ax = task_func()\nself.assertEqual(ax.get_title(), 't')\n") == ""
    assert need("import os\nos.remove = lambda p: None\n") == "hand_made_patch"  # as the test file loads
    assert need("import os\ndef test_a():\n    os.remove = print\n", "pytest") == "hand_made_patch"
    assert need("# mock patch pickle capsys eval\nx = 'np.random.seed(1)'\n") == ""  # comments, strings: nothing
    assert need("def check(c):\n    import pickle\n", "humaneval") == ""
    assert need("import warnings\nwith warnings.catch_warnings(record=True) as w:\n    pass\n") == "capture"
    assert need("self.assertTrue(issubclass(task_func(), Base))\n") == "introspection"
    assert need("self.assertTrue(isinstance(task_func(), type))\n") == "introspection"
    assert need("self.assertTrue(isinstance(task_func(), dict))\n") == ""
