"""Correct programs that the out-of-process channel must grade as the official harness does (issue #47):
threads that each call a test's mock (BigCodeBench/147), a library that sets a private attribute on a
function a test patched (BigCodeBench/593: matplotlib's `show.__signature__`), the truth of an installed
library's object (`self.assertTrue(ax)`), names only the tests import (1085), `np.nan` in a dict (511) and a
library's `str` subclass (1124); each without handing the candidate a way to a verdict."""

from __future__ import annotations

import pytest

from agentic_rl.sandbox.trust import plan

from .conftest import make_sandbox
from .test_patching import HEAD, grade


@pytest.fixture(scope="module")
def sandbox():
    # room for the threads' round trips on a loaded machine
    with make_sandbox(workers=1, nproc=64, test_timeout_s=60.0) as sb:
        yield sb


def grade_with_imports(sb, code: str, body: str):
    test = "from string import punctuation\nfrom math import sqrt\n" + HEAD + body
    assert plan(test, "unittest") == ("out_of_process", None)
    return sb.run_tests(code, test, harness="unittest")


def test_many_threads_that_each_call_a_mock_stay_under_the_process_limit(sandbox):
    # 150 threads over a limit of 64: each waits its turn on the channel, so without pacing their start
    # (Endpoint.pace_thread_start) all of them are alive at once and `start()` fails
    code = (
        "import os, threading\ndef task_func(n):\n    seen = []\n"
        "    def work(i):\n        os.remove(str(i))\n        seen.append(i)\n"
        "    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]\n"
        "    for t in threads:\n        t.start()\n    for t in threads:\n        t.join()\n    return len(seen)\n"
    )
    body = (
        "    @patch('os.remove')\n    def test_a(self, m):\n"
        "        self.assertEqual(task_func(150), 150)\n        self.assertEqual(m.call_count, 150)\n"
    )
    r = grade(sandbox, code, body)
    assert (r.passed, r.trust) == (True, "out_of_process"), r


def test_private_attributes_set_on_a_tests_mock_stay_on_the_candidates_side(sandbox):
    # as matplotlib's backend switch sets `show.__signature__`: it works, and nothing of it reaches the mock,
    # so the same move cannot rewrite what the mock recorded
    code = (
        "import os, inspect\ndef task_func(p):\n    os.remove(p)\n"
        "    os.remove.__signature__ = inspect.Signature()\n    os.remove._mock_call_args_list = []\n"
        "    os.remove._mock_called = False\n"
        "    return str(inspect.signature(os.remove)), os.remove._mock_called\n"
    )
    body = (
        "    @patch('os.remove')\n    def test_a(self, m):\n"
        "        self.assertEqual(task_func('/tmp/x'), ('()', False))\n        m.assert_called_once_with('/tmp/x')\n"
    )
    r = grade(sandbox, code, body)
    assert (r.passed, r.trust) == (True, "out_of_process"), r


def test_a_library_object_with_no_truth_of_its_own_is_true(sandbox):
    code = "import logging\ndef task_func():\n    return logging.getLogger('x')\n"
    for check in ("self.assertTrue(task_func())", "assert task_func()", "self.assertFalse(not task_func())"):
        r = grade(sandbox, code, f"    def test_a(self):\n        {check}\n")
        assert (r.passed, r.status, r.tamper_kinds) == (True, "passed", ()), (check, r)


def test_a_claimed_library_class_gets_that_class_truth_and_no_more(sandbox):
    # a class of the candidate's claiming logging.Logger is true (as every Logger is), never false: its own
    # __bool__ is not asked; assertFalse fails
    code = (
        "class Fake:\n    __module__ = 'logging'\n    __qualname__ = 'Logger'\n"
        "    def __bool__(self):\n        return False\n"
        "def task_func():\n    return Fake()\n"
    )
    r = grade(sandbox, code, "    def test_a(self):\n        self.assertFalse(task_func())\n")
    assert (r.passed, r.status) == (False, "failed"), r


def test_the_candidates_own_class_with_no_truth_of_its_own_is_true(sandbox):
    # KodCode's linked-list and tree tasks walk the candidate's nodes in the tests (`while node:`): a class that
    # defines neither __bool__ nor __len__ is true without asking it, as in process
    code = (
        "class ListNode:\n    def __init__(self, val, next=None):\n        self.val, self.next = val, next\n"
        "def build(values):\n    head = None\n    for v in reversed(values):\n        head = ListNode(v, head)\n"
        "    return head\n"
    )
    body = (
        "    def test_a(self):\n        node, seen = build([1, 2, 3]), []\n"
        "        while node:\n            seen.append(node.val)\n            node = node.next\n"
        "        self.assertEqual(seen, [1, 2, 3])\n        self.assertTrue(build([4]))\n"
    )
    r = grade(sandbox, code, body)
    assert (r.passed, r.status, r.trust) == (True, "passed", "out_of_process"), r


def test_the_candidates_word_that_its_class_has_no_truth_buys_true_and_nothing_else(sandbox):
    # a class with its own __bool__ is not answered by it; sending the handle as "no truth of its own" anyway
    # (the encoder patched in the candidate's process) makes it true, never false: assertFalse still fails
    code = (
        "import sys\n"
        "class Falsy:\n    def __bool__(self):\n        return False\n"
        "def task_func():\n"
        "    sys._getframe(1).f_globals['constant_truth'] = lambda cls: True  # the channel's module, serving it\n"
        "    return Falsy()\n"
    )
    r = grade(sandbox, code, "    def test_a(self):\n        self.assertFalse(task_func())\n")
    assert (r.passed, r.status) == (False, "failed"), r
    r = grade(sandbox, code, "    def test_a(self):\n        self.assertTrue(task_func())\n")
    assert (r.passed, r.status) == (True, "passed"), r  # the word was taken: what any plain object gets
    r = grade(
        sandbox,
        code.replace("sys._getframe(1).f_globals['constant_truth'] = lambda cls: True", "pass"),
        "    def test_a(self):\n        self.assertFalse(task_func())\n",
    )
    assert (r.passed, r.status, r.tamper_kinds) == (False, "tampered", ("handle_operator",)), r


def test_a_library_object_whose_truth_depends_on_it_is_not_asked(sandbox):
    # UserList defines __len__: its truth is the object's to say, and the candidate's process would say it
    code = "import collections\ndef task_func():\n    return collections.UserList([])\n"
    r = grade(sandbox, code, "    def test_a(self):\n        self.assertTrue(task_func())\n")
    assert (r.passed, r.status, r.tamper_kinds) == (False, "tampered", ("handle_operator",)), r
    assert "truth value" in r.detail, r


def test_names_only_the_tests_import_are_the_programs_too(sandbox):
    # the tests are appended to the program in BigCodeBench: a program may use what only they import (1085)
    code = "def task_func(text):\n    return ''.join(c for c in text if c not in punctuation), sqrt(4.0)\n"
    body = "    def test_a(self):\n        self.assertEqual(task_func('a,b!'), ('ab', 2.0))\n"
    r = grade_with_imports(sandbox, code, body)
    assert (r.passed, r.trust) == (True, "out_of_process"), r


def test_a_named_nan_stays_that_nan(sandbox):
    # a dict holding math.nan equals one holding the same object (identity before equality), as in process
    code = "import math\ndef task_func():\n    return {'mean': math.nan}\n"
    body = "    def test_a(self):\n        import math\n        self.assertEqual(task_func(), {'mean': math.nan})\n"
    r = grade(sandbox, code, body)
    assert (r.passed, r.trust) == (True, "out_of_process"), r
    fresh = "def task_func():\n    return {'mean': float('nan')}\n"  # another nan: unequal in process too
    assert not grade(sandbox, fresh, body).passed


def test_a_library_string_crosses_as_its_characters(sandbox):
    # a str subclass (bs4's NavigableString) equals its text, whatever its class says about equality
    code = (
        "class Text(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n"
        "def task_func(s):\n    return Text(s.upper())\n"
    )
    r = grade(sandbox, code, "    def test_a(self):\n        self.assertEqual(task_func('go'), 'GO')\n")
    assert (r.passed, r.trust) == (True, "out_of_process"), r
    r = grade(sandbox, code, "    def test_a(self):\n        self.assertEqual(task_func('go'), 'no')\n")
    assert (r.passed, r.status) == (False, "failed"), r
