"""The trusted process parses tests one at a time (issue #47's grading threads route, split and patch concurrently,
and CPython 3.11's ast.parse raised "SystemError: AST constructor recursion depth mismatch" there, in CI, which
turned a canonical BigCodeBench solution's verdict into a harness failure)."""

from __future__ import annotations

import ast
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from agentic_rl.sandbox import patching, split, trust

TESTS = (
    "import unittest\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_a(self):\n        self.assertEqual(1, 1)\n"
    "    def test_b(self):\n        self.assertEqual(2, 2)\n"
)


def test_routing_splitting_and_patching_never_parse_at_the_same_time(monkeypatch):
    inside, most = [0], [0]
    count = threading.Lock()
    real_parse = ast.parse

    def watched(*args, **kwargs):
        with count:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.005)  # widen the window a second parse would have to enter
        try:
            return real_parse(*args, **kwargs)
        finally:
            with count:
                inside[0] -= 1

    monkeypatch.setattr(ast, "parse", watched)
    calls = [
        lambda: trust.plan(TESTS, "unittest"),
        lambda: split.plan_test_names(TESTS, "unittest"),
        lambda: patching.parse(TESTS),
    ] * 8
    with ThreadPoolExecutor(6) as pool:
        results = [f.result() for f in [pool.submit(call) for call in calls]]
    assert most[0] == 1, f"{most[0]} parses ran at once"
    assert results[0] == (trust.OUT_OF_PROCESS, None) and results[1] == ["test_a", "test_b"]


def test_tests_that_do_not_parse_stay_out_of_process_and_unsplit():
    assert trust.plan("def broken(:\n", "unittest") == (trust.OUT_OF_PROCESS, None)
    assert split.plan_test_names("class TestCases(:\n", "unittest") is None
