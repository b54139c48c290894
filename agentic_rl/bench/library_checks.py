"""What the in-process comparison of the libraries costs (issue #47: sandbox/libraries.py).

    python -m agentic_rl.bench.library_checks [--repeat 30] [--modules numpy pandas ...]
    .venv-bcb/bin/python -m agentic_rl.bench.library_checks       # with BigCodeBench's libraries

Imports the sandbox's preload list (conf/sandbox/default.yaml; what this interpreter lacks is skipped, and
said), records it as the sandbox's zygote does (`Genuine.record_loaded`), then times each comparison the harness
makes: at every checkpoint (the names of every library), at the end of the run (the names and the functions'
defaults and closures), and before a library call of the tests' (one package: numpy's, pandas', unittest's).
The baseline, in the same run: one honest in-process grading of a three-test unittest file by the sandbox
(`Sandbox.run_tests`, warm server), so each cost is also a share of a grading. Nothing is changed, so every
comparison must find nothing; a finding is printed and fails the run.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
import unittest

from omegaconf import OmegaConf

from agentic_rl.paths import repo_root
from agentic_rl.runtime.cpu import cpu_flags
from agentic_rl.sandbox import Sandbox
from agentic_rl.sandbox.libraries import Genuine

PROGRAM = "import numpy as np\ndef task_func(n):\n    return np.arange(n)\n"
TESTS = (
    "import unittest\nimport numpy as np\nclass TestCases(unittest.TestCase):\n"
    "    def test_a(self):\n        np.testing.assert_array_equal(task_func(3), np.array([0, 1, 2]))\n"
    "    def test_b(self):\n        self.assertEqual(len(task_func(5)), 5)\n"
    "    def test_c(self):\n        self.assertEqual(task_func(0).tolist(), [])\n"
)


def _median_ms(action, repeat: int) -> float:
    action()  # the merged tables made once, as the harness's first call makes them
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def _grading_ms(repeat: int) -> float:
    """One honest in-process grading (the baseline): a warm sandbox, numpy preloaded, one worker."""
    with Sandbox(workers=1, preload=["numpy", "pytest"], out_of_process=False).start() as sandbox:
        report = sandbox.run_tests(PROGRAM, TESTS, harness="unittest", entry_point="task_func")
        if not report.passed:
            raise SystemExit(f"the baseline grading did not pass: {report.detail}")
        return _median_ms(
            lambda: sandbox.run_tests(PROGRAM, TESTS, harness="unittest", entry_point="task_func"), repeat
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--modules", nargs="*", help="modules to import instead of the sandbox's preload list")
    args = parser.parse_args(argv)
    lines: list[str] = []
    wanted = args.modules or list(OmegaConf.load(repo_root() / "conf" / "sandbox" / "default.yaml").preload)
    missing = []
    for name in wanted:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a library this interpreter lacks is skipped, and said
            missing.append(name)
    genuine = Genuine(
        lambda f: not f.startswith(sys.prefix) and not f.startswith(sys.base_prefix),
        lambda code: False,
        lambda note, kind: lines.append(f"FOUND ({kind}): {note}"),
    )
    start = time.perf_counter()
    genuine.record_loaded()
    record_ms = 1000 * (time.perf_counter() - start)
    flags = " ".join(sorted(cpu_flags() & {"avx2", "avx512f", "avx512_bf16", "amx_bf16"}))
    lines.append(f"python {sys.version.split()[0]} ({sys.executable}); CPU flags: {flags}")
    lines.append(
        f"imported {len(wanted) - len(missing)}/{len(wanted)} of the preload list"
        + (f" (not here: {', '.join(missing)})" if missing else "")
    )
    lines.append(f"recorded {len(sys.modules)} modules in {record_ms:.0f} ms")
    grading = _grading_ms(max(5, args.repeat // 3))
    lines.append(f"baseline: one in-process grading of a three-test file, {grading:.1f} ms (median)")
    calls = {"every checkpoint (names, every library)": {}, "the end of the run (names and insides)": {"insides": True}}
    for module, function in (
        ("numpy", "numpy.testing.assert_array_equal"),
        ("pandas", "pandas.testing.assert_frame_equal"),
    ):
        if module in sys.modules:
            owner, _, name = function.rpartition(".")
            calls[f"a call of the tests' to {function}"] = {"function": getattr(importlib.import_module(owner), name)}
    calls["a call of the tests' to self.assertEqual"] = {"function": unittest.TestCase.assertEqual}
    found = 0
    for label, kwargs in calls.items():
        found += len(genuine.rebound_internals(**kwargs))
        ms = _median_ms(lambda kwargs=kwargs: genuine.rebound_internals(**kwargs), args.repeat)
        lines.append(f"{label}: {ms:.3f} ms, {ms / grading:.4f} of a grading")
    if found:
        lines.append(f"{found} findings with nothing changed: the comparison is wrong")
    print("\n".join(lines))  # noqa: T201 (the benchmark's report)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
