"""One unittest run split into parts that run side by side, and the parts' reports merged back.

Why: a few BigCodeBench tasks spend seconds to minutes inside single test methods (polling a child
process, training a model, serving a socket). Graded as one program, such a task holds one worker for
the sum of its tests; split into one part per test method, its tests run on whichever workers are
free, and the slowest single test, not the whole class, bounds the task's wall time.

Plan: the test method names are read from the test source with `ast` (nothing runs in the caller): the
`test*` functions defined in the body of the one top-level `class TestCases`. The plan is only a
guess. Every part runs the whole program, collects `TestCases` as an unsplit run does, reports all
the names it collected and runs only its own. The merge uses the parts only if each one collected
exactly the planned names and ran exactly its share; otherwise (an inherited, assigned or generated
test the plan missed) the caller grades the task unsplit.

Verdict: the parts give a verdict only when every part passed, or when one ended on a limit (a test
that hangs alone hangs in one run too; the first such part in test order decides). A part that
failed or errored gives none: a test may fail alone that passes after the tests before it (e.g. on
the random state they left), so the caller grades the task in one run, and every failing verdict,
count and detail is the one-run one. Counts are summed over the parts, so a timeout counts only the
hanging test as failed where a one-run, which never finishes, counts all of them.

Time: all parts share ONE budget, what is left of the task's limit after the cut first run: a part
may run only as long as the budget allows when it gets a worker, the client stops every running part
once the parts together have used it up, and stops the others as soon as one part hits a limit
(Sandbox._run_parts). So a hanging or sleeping candidate costs about one limit of worker time, not one
per part. A run is split only once its harness has reported the collected tests (server.py), so a
candidate that sleeps while loading is never split. The program's own loading, repeated in every part,
is counted every time: a run close to its limit may time out split where it would not unsplit, never
the other way round.
"""

from __future__ import annotations

import ast

from agentic_rl.sandbox.patching import parse
from agentic_rl.sandbox.results import TestReport, cap_detail, test_report

SPLIT_HARNESSES = ("unittest",)
# Statuses of a part that leave the task's verdict to a one-run grading.
_REGRADE = ("failed", "error")


def plan_test_names(test: str, harness: str) -> list[str] | None:
    """The test methods to run one per part, in the loader's (sorted) order; None: do not split."""
    if harness not in SPLIT_HARNESSES:
        return None
    # one parse at a time (patching.PARSE_LOCK); tests that do not parse are an empty module, with no TestCases: the
    # unsplit run reports the error once
    tree = parse(test)
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "TestCases"]
    if len(classes) != 1:
        return None
    names = [
        node.name
        for node in classes[0].body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
    ]
    if len(names) < 2 or len(set(names)) != len(names):
        return None
    return sorted(names)


def merge_parts(
    names: list[str],
    raws: list[dict],
    timeout_s: float,
    max_detail_chars: int,
    max_output_bytes: int,
    first_s: float = 0.0,
) -> TestReport | None:
    """The report of the whole run from the parts' raw replies (raws[i] ran names[i] alone); `first_s`:
    the duration of the cut first run, which counts towards the same limit.

    None when the parts cannot give the verdict (a part collected other tests than planned, failed or
    errored): the caller then grades the task in one run.
    """
    for name, raw in zip(names, raws, strict=True):
        report = raw.get("report") or {}
        if "names" in report and (report["names"] != names or report.get("n_tests") != 1):
            return None
        if report.get("event") == "done" and report.get("ran") != [name]:
            return None
    parts = [test_report(raw, max_detail_chars) for raw in raws]
    if any(p.status in _REGRADE for p in parts):
        return None
    # A part that tampered decides (tampering wins over every limit, as in one run); else the part that hit
    # a limit; parts stopped because of it ("cancelled") do not.
    worst = next((i for i, p in enumerate(parts) if p.status == "tampered"), None)
    if worst is None:
        worst = next((i for i, p in enumerate(parts) if p.status not in ("passed", "cancelled")), None)
    stopped = worst is None and any(p.status == "cancelled" for p in parts)
    if worst is None:
        worst = next((i for i, p in enumerate(parts) if p.status == "cancelled"), 0)
    status = parts[worst].status
    n_tests, n_failed = sum(p.n_tests for p in parts), sum(p.n_failed for p in parts)
    duration = first_s + sum(p.duration_s for p in parts)
    if stopped:  # the shared budget ran out before every part was done: the unfinished ones have no verdict
        status, n_tests, n_failed = "timeout", len(names), sum(not p.passed for p in parts)
        detail = (
            f"timeout: the {len(names)} tests, run in parallel parts, took {duration:.1f} s in all and "
            f"reached the {timeout_s:g} s limit (in {names[worst]})"
        )
    elif status == "passed" and duration > timeout_s:
        status, n_failed = "timeout", n_tests  # as an unsplit timeout: no test has a verdict
        detail = (
            f"timeout: the {len(names)} tests, run in parallel parts, took {duration:.1f} s in all, "
            f"over the {timeout_s:g} s limit"
        )
    elif status == "passed":
        detail = f"{n_tests}/{n_tests} tests passed"
    else:  # name the test whose part hit a limit, unless it did before collecting (while loading)
        detail = parts[worst].detail + (f" (in {names[worst]})" if parts[worst].n_tests else "")
    return TestReport(
        passed=status == "passed",
        status=status,
        n_tests=n_tests,
        n_failed=n_failed,
        detail=cap_detail(detail, max_detail_chars),
        duration_s=duration,
        stdout=_joined((p.stdout for p in parts), max_output_bytes),
        stderr=_joined((p.stderr for p in parts), max_output_bytes),
        parts=len(parts),
        trust="out_of_process"
        if all(p.trust == "out_of_process" for p in parts if p.status != "cancelled")
        else "in_process",
        tamper_kinds=parts[worst].tamper_kinds if status == "tampered" else (),
    )


def _joined(texts, limit: int) -> str:
    """The parts' output in test order, capped like one run's (max_output_bytes)."""
    text = "".join(texts)
    return text if len(text) <= limit else text[:limit]
