"""`make bench-library-checks`: on an interpreter nobody changed, no comparison finds anything (a finding fails
the run), and each cost is reported beside the in-process grading it is a share of."""

from __future__ import annotations

import sys

from agentic_rl.bench import library_checks


def test_nothing_is_found_and_every_cost_is_a_share_of_a_grading(capsys):
    assert library_checks.main(["--python", sys.executable, "--modules", "json", "fractions", "--repeat", "3"]) == 0
    out = capsys.readouterr().out
    assert "imported 2/2 of the preload list" in out and "FOUND" not in out, out
    assert "baseline: one in-process grading of a three-test file" in out, out
    costs = {line.split(":")[0]: line for line in out.splitlines() if line.endswith("of a grading")}
    assert {
        "every checkpoint but before a test (names, every library)",
        "the end of the run (names and insides)",
        "a call of the tests' to self.assertEqual",
    } <= set(costs), out
    assert "the comparisons grading that file makes, added up:" in out, out
