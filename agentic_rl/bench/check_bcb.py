"""Agreement of the sandbox's unittest grader with the official BigCodeBench harness.

    python -m agentic_rl.bench.check_bcb [--python .venv-bcb/bin/python] [--workers 2] [--ids 13 1012]

Grades the 148 BigCodeBench-Hard tasks twice with the sandbox interpreter (`--python`, else
$AGENTIC_RL_SANDBOX_PYTHON, else .venv-bcb from `make setup-bcb` when present):
  * canonical solutions (complete_prompt + "\\n" + canonical_solution): the official harness passes
    143/148 on this machine, failing 101, 590, 1012 (network) and 177, 655 (NLTK data);
  * `pass` bodies (the entry point's body replaced by `pass`): every one must fail.
Prints both counts and every task whose verdict differs from the reference, with the reason, and
labels failures that come from missing network access or NLTK data. Exit status 0 when both agree.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from agentic_rl.bench.bcb import REFERENCE_FAILURES, bcb_python, canonical_program, load_bcb_hard, pass_body_program
from agentic_rl.sandbox.client import Sandbox
from agentic_rl.sandbox.results import TestReport

log = logging.getLogger(__name__)

_NETWORK_SIGNS = (
    "Network is unreachable",
    "Temporary failure in name resolution",
    "NameResolutionError",
    "Max retries exceeded",
    "URLError",
    "ConnectionError",
    "Failed to establish a new connection",
    "getaddrinfo failed",
    "Name or service not known",
)
_NLTK_SIGNS = ("nltk.download", "Resource punkt", "Resource stopwords", "Searched in:")


def failure_cause(report: TestReport) -> str:
    """'needs network' / 'needs NLTK data' when the failure text says so, else ''."""
    text = "\n".join((report.detail, report.stderr[-4000:], report.stdout[-4000:]))
    if any(s in text for s in _NLTK_SIGNS):
        return "needs NLTK data"
    if any(s in text for s in _NETWORK_SIGNS):
        return "needs network"
    return ""


def grade(sandbox: Sandbox, tasks: list[dict], build, timeout_s: float) -> list[TestReport]:
    jobs = [{"code": build(t), "test": t["test"], "harness": "unittest", "timeout_s": timeout_s} for t in tasks]
    return sandbox.run_tests_many(jobs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--python", default=None, help="sandbox interpreter (default: $AGENTIC_RL_SANDBOX_PYTHON or .venv-bcb)"
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--timeout",
        type=float,
        default=240.0,
        help="per-task limit, seconds (240, as the official harness; task 461 needs ~170 here)",
    )
    ap.add_argument("--ids", nargs="*", type=int, help="only these task numbers")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the report is the command's output

    tasks = load_bcb_hard()
    if args.ids:
        tasks = [t for t in tasks if int(t["task_id"].rsplit("/", 1)[1]) in set(args.ids)]
    start = time.perf_counter()
    with Sandbox(workers=args.workers, python=bcb_python(args.python)) as sb:
        sb.start()
        log.info(f"python: {sb.python} ({sb.server_info['python']}); {len(tasks)} tasks; {args.workers} workers")
        missing = sorted(sb.server_info.get("preload_failed", {}))
        if missing:
            log.info(f"note: not importable in the sandbox interpreter: {', '.join(missing)}")
        canonical = grade(sb, tasks, canonical_program, args.timeout)
        pass_body = grade(sb, tasks, pass_body_program, args.timeout)

    n_ref = sum(t["task_id"] not in REFERENCE_FAILURES for t in tasks)
    n_canon = sum(r.passed for r in canonical)
    n_pass = sum(r.passed for r in pass_body)
    log.info(f"canonical solutions passed: {n_canon}/{len(tasks)} (official harness: {n_ref}/{len(tasks)})")
    log.info(f"pass-body candidates passed: {n_pass}/{len(tasks)} (expected 0)")
    split = [t["task_id"].rsplit("/", 1)[1] for t, r in zip(tasks, canonical) if r.parts > 1]
    log.info(
        f"canonical solutions graded one call per test method (their tests mostly wait): {len(split)}"
        + (f" ({', '.join(split)})" if split else "")
    )

    differ = 0
    for task, report in zip(tasks, canonical):
        expected = task["task_id"] not in REFERENCE_FAILURES
        cause = failure_cause(report) if not report.passed else ""
        if report.passed != expected:
            differ += 1
            why = report.detail.replace("\n", " ")[:300]
            log.info(
                f"  DIFFERS {task['task_id']}: sandbox {report.status}, official "
                f"{'pass' if expected else 'fail (' + REFERENCE_FAILURES[task['task_id']] + ')'}"
                f"{' [' + cause + ']' if cause else ''}: {why}"
            )
        elif not expected:
            log.info(
                f"  as official, fails {task['task_id']} ({REFERENCE_FAILURES[task['task_id']]}): "
                f"sandbox {report.status}{' [' + cause + ']' if cause else ''}"
            )
    for task, report in zip(tasks, pass_body):
        if report.passed:
            differ += 1
            log.info(f"  DIFFERS {task['task_id']}: the pass-body candidate passed: {report.detail[:200]}")
    log.info(f"{differ} verdicts differ from the reference; {time.perf_counter() - start:.0f} s")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
