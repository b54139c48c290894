"""Throughput of the sandbox against the naive runner, on the same workload in one process.

    python -m agentic_rl.bench.sandbox [--n-snippets 200] [--n-bcb 148] [--workers 2 12] [--split both]
                                       [--python PY]

naive:   one `python file.py` subprocess per call, sequential, as the reference notebook runs code
         (made fair: it runs in an empty network namespace, one for all its programs, and for (b) it really runs
         the tests, with `unittest.main()` appended, where the notebook's runner never did).
sandbox: `Sandbox.execute_many` / `run_tests_many` (warm fork server, `--workers` at a time; several
         counts may be given, the naive run is then measured once). Server start-up is not timed.

(a) snippets: 200 small programs of the kind a model sends to the execute tool: pure Python
    (string, list, dict, recursion work), stdlib imports (json, re, collections, itertools,
    datetime, math) and, for a fifth of them, numpy or pandas; plus some that raise.
(b) BigCodeBench-Hard: the 148 canonical solutions with their tests (complete_prompt + "\\n" +
    canonical_solution, graded by the unittest harness). Runs with .venv-bcb when it exists.
    Measured with the default splitting (a run that mostly waits after sandbox.split_after_s runs
    again one call per test method, side by side) and with one run per task, as the naive way and
    BigCodeBench's harness do.
Prints calls/s for both ways and the ratio; for (b) also where the two verdicts disagree, the tasks
whose tests alone run for long (the slowest one is a floor for one run per task), and (b') the
ratio on the remaining tasks.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentic_rl.bench.bcb import bcb_python, canonical_program, load_bcb_hard
from agentic_rl.sandbox import server as wire
from agentic_rl.sandbox.client import Sandbox, resolve_python

_SNIPPET_TEMPLATES: list[Callable[[int], str]] = [
    lambda i: f"print(sum(x * x for x in range({1000 + i})))",
    lambda i: f"s = 'abracadabra' * {i + 1}\nprint(s.count('abra'), s[::-1][:10])",
    lambda i: f"def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib({12 + i % 6}))",
    lambda i: f"xs = sorted(range({i}, {i} + 500), key=lambda v: (v % 7, -v))\nprint(xs[:5])",
    lambda i: f"d = {{k: k ** 2 for k in range({50 + i})}}\nprint(len(d), max(d.values()))",
    lambda i: f"import json\nprint(json.dumps({{'id': {i}, 'xs': list(range(5))}}))",
    lambda i: f"import re\nprint(re.findall(r'\\d+', 'a{i}b{i * 7}c{i * 13}'))",
    lambda i: f"from collections import Counter\nprint(Counter('mississippi{i}').most_common(2))",
    lambda i: f"import itertools\nprint(len(list(itertools.permutations(range({3 + i % 4})))))",
    lambda i: f"import datetime\nprint(datetime.date(2024, 1, 1) + datetime.timedelta(days={i}))",
    lambda i: f"import math\nprint(round(math.factorial({10 + i % 10}) ** 0.5, 3))",
    lambda i: f"def f(x):\n    return x / ({i % 3} - {i % 3})\nprint(f(1))",  # ZeroDivisionError
    lambda i: f"nums = [1, 2, 3]\nprint(nums[{3 + i}])",  # IndexError
    lambda i: (
        f"class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n"
        f"        self.items.append(x)\ns = Stack()\nfor k in range({i}):\n    s.push(k)\nprint(len(s.items))"
    ),
    lambda i: f"print('\\n'.join(str(k) for k in range({i % 20})))",
    lambda i: (
        f"words = 'the quick brown fox jumps over the lazy dog'.split() * {i + 1}\n"
        f"print(sorted(set(words)), len(words))"
    ),
    lambda i: f"import numpy as np\na = np.arange({100 + i}).reshape(-1, 1)\nprint(a.sum(), a.mean())",
    lambda i: f"import numpy as np\nrng = np.random.default_rng({i})\nprint(rng.normal(size=3).round(2))",
    lambda i: (
        f"import pandas as pd\ndf = pd.DataFrame({{'a': range({5 + i}), 'b': list(range({5 + i}))[::-1]}})\n"
        f"print(df.describe().loc['mean'])"
    ),
    lambda i: f"import pandas as pd\ns = pd.Series([{i}, 2, 3, None])\nprint(s.fillna(0).sum())",
]


log = logging.getLogger(__name__)


def snippets(n: int) -> list[str]:
    return [_SNIPPET_TEMPLATES[i % len(_SNIPPET_TEMPLATES)](i) for i in range(n)]


def bcb_test_program(task: dict) -> str:
    """Naive grading that does run the tests: unittest.main() exits non-zero on any failure."""
    return canonical_program(task) + "\n" + task["test"] + "\n\nimport unittest\nunittest.main(argv=['t'])\n"


class _EmptyNetwork:
    """One empty network namespace (loopback only) that every naive program enters: the sandbox's network, made once.
    A namespace of each program's own would leave the kernel tearing down hundreds of them (its cleanup runs after the
    processes are gone) while the sandbox's side is timed next: that put 93 and 138 calls/s on the same code. Without
    root there is none, as the sandbox has none."""

    def __enter__(self) -> _EmptyNetwork:
        self.fd = None
        if os.geteuid() == 0:
            own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
            try:
                wire.unshare(wire.CLONE_NEWNET)  # this thread only, for as long as it takes to open it
                wire.loopback_up()
                self.fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
            finally:
                wire.setns(own, wire.CLONE_NEWNET)
                os.close(own)
        return self

    def enter(self) -> None:
        """preexec_fn of a naive program (before subprocess closes the inherited fds)."""
        if self.fd is not None:
            wire.setns(self.fd, wire.CLONE_NEWNET)

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)


def naive_run(python: str, programs: list[str], timeout_s: float) -> tuple[list[float], list[bool]]:
    """One `python file.py` per program, sequential; per program: (seconds, exit status == 0)."""
    seconds, ok = [], []
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "HOME": tempfile.gettempdir(),
    }
    with _EmptyNetwork() as network:
        for program in programs:
            start = time.perf_counter()
            with tempfile.TemporaryDirectory() as d:
                path = Path(d) / "main.py"
                path.write_text(program)
                try:
                    proc = subprocess.run(
                        [python, str(path)],
                        cwd=d,
                        env=env,
                        capture_output=True,
                        timeout=timeout_s,
                        preexec_fn=network.enter,
                    )
                    ok.append(proc.returncode == 0)
                except subprocess.TimeoutExpired:
                    ok.append(False)
            seconds.append(time.perf_counter() - start)
    return seconds, ok


def _report(name: str, n: int, naive_s: float, sandbox_s: float, goal: float | None = None) -> None:
    log.info(
        f"({name}) {n} calls: naive {n / naive_s:7.2f} calls/s ({naive_s:6.1f} s) | "
        f"sandbox {n / sandbox_s:7.2f} calls/s ({sandbox_s:6.1f} s) | ratio {naive_s / sandbox_s:5.2f}"
        + (f" (goal >= {goal:g})" if goal else "")
    )


def _timed_sandbox(python: str, workers: int, run: Callable[[Sandbox], list], split: bool = True) -> tuple[float, list]:
    with Sandbox(workers=workers, python=python, **({} if split else {"split_after_s": None})) as sb:
        sb.start()  # the server's start-up (imports) is a one-off cost, not per call
        start = time.perf_counter()
        results = run(sb)
        return time.perf_counter() - start, results


def bench_snippets(python: str, n: int, workers: list[int]) -> None:
    progs = snippets(n)
    naive_s, naive_ok = naive_run(python, progs, timeout_s=30)
    for w in workers:
        sandbox_s, results = _timed_sandbox(python, w, lambda sb: sb.execute_many(progs, timeout_s=30))
        differ = [i for i, (a, r) in enumerate(zip(naive_ok, results)) if a != r.ok]
        if differ:
            log.info(f"    snippets where the exit status differs: {differ[:10]}")
        _report(f"a: snippets, {w} workers", n, sum(naive_s), sandbox_s, 2)


def bench_bcb(
    python: str, n: int | None, workers: list[int], splits: list[bool], timeout_s: float, slow_s: float
) -> None:
    tasks = load_bcb_hard()[:n]
    jobs = [
        {"code": canonical_program(t), "test": t["test"], "harness": "unittest", "timeout_s": timeout_s} for t in tasks
    ]
    naive_s, naive_ok = naive_run(python, [bcb_test_program(t) for t in tasks], timeout_s)
    for w in workers:
        for split in splits:
            sandbox_s, reports = _timed_sandbox(python, w, lambda sb: sb.run_tests_many(jobs), split)
            log.info(
                f"    passed: naive {sum(naive_ok)}/{len(tasks)}, sandbox {sum(r.passed for r in reports)}/{len(tasks)}"
            )
            for t, a, r in zip(tasks, naive_ok, reports):
                if a != r.passed:
                    log.info(
                        f"    verdicts differ on {t['task_id']}: naive {'pass' if a else 'fail'}, "
                        f"sandbox {r.status}: {r.detail[:200]}"
                    )
            how = "tests split" if split else "one run per task"
            _report(f"b: BigCodeBench-Hard, {w} workers, {how}", len(tasks), sum(naive_s), sandbox_s, 3)

    # A few tasks are long because their tests sleep or train (461 polls a child for 100 s in one
    # test): one run per task can go no faster than the longest task, and the longest single test
    # bounds even a split run. (b') shows the per-call cost without them.
    slow = sorted((i for i, s in enumerate(naive_s) if s > slow_s), key=lambda i: -naive_s[i])
    log.info(
        f"    tasks over {slow_s:g} s naive: "
        + ", ".join(f"{tasks[i]['task_id']} {naive_s[i]:.0f} s" for i in slow)
        + f"; ceiling of the ratio for one run per task, unlimited workers: {sum(naive_s) / max(naive_s):.2f}"
    )
    rest = [i for i in range(len(tasks)) if i not in slow]
    for w in workers:
        for split in splits:
            seconds, _ = _timed_sandbox(python, w, lambda sb: sb.run_tests_many([jobs[i] for i in rest]), split)
            how = "tests split" if split else "one run per task"
            _report(
                f"b': BigCodeBench-Hard without those, {w} workers, {how}",
                len(rest),
                sum(naive_s[i] for i in rest),
                seconds,
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-snippets", type=int, default=200, help="size of workload (a); 0 skips it")
    ap.add_argument("--n-bcb", type=int, default=148, help="size of workload (b); 0 skips it")
    ap.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[2, 12],
        help="sandbox worker counts to measure (default: 2, the config's default, and 12: many "
        "BigCodeBench tests wait on sleeps, subprocesses or sockets, not on a core)",
    )
    ap.add_argument("--python", default=None, help="interpreter for both ways (default: .venv-bcb if present)")
    ap.add_argument(
        "--split",
        choices=["on", "off", "both"],
        default="both",
        help="(b) with splitting of waiting unittest runs on (sandbox.split_after_s, the default "
        "config), off (one run per task), or both (default)",
    )
    ap.add_argument(
        "--timeout", type=float, default=240.0, help="per-task limit for (b), seconds (240, as the official harness)"
    )
    ap.add_argument(
        "--slow",
        type=float,
        default=10.0,
        help="(b') also measures the tasks whose naive run is at most this many seconds",
    )
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the report is the command's output
    python = resolve_python(bcb_python(args.python))
    log.info(f"python: {python}; sandbox workers: {args.workers}; cores: {os.cpu_count()}")
    if args.n_snippets > 0:
        bench_snippets(python, args.n_snippets, args.workers)
    if args.n_bcb > 0:
        splits = {"on": [True], "off": [False], "both": [True, False]}[args.split]
        bench_bcb(python, args.n_bcb, args.workers, splits, args.timeout, args.slow)
    return 0


if __name__ == "__main__":
    sys.exit(main())
