"""What the in-process comparison of the libraries costs (issue #47: sandbox/libraries.py).

    python -m agentic_rl.bench.library_checks [--python PY] [--repeat 30] [--modules numpy pandas ...]

In the sandbox interpreter (`--python`, else .venv-bcb from `make setup-bcb` when present, else this one), in a
process of its own: imports the sandbox's preload list (conf/sandbox/default.yaml; what that interpreter lacks is
skipped, and said), records it as the sandbox's zygote does (`Genuine.record_loaded`), then times each comparison
the harness makes: at every checkpoint (the names of every library), at the end of the run (the names and the
functions' defaults and closures), and before a library call of the tests' (one package: numpy's, pandas',
unittest's). The baseline, in the same run and interpreter: one honest in-process grading of a three-test unittest
file by the sandbox (`Sandbox.run_tests`, warm server), so each cost is also a share of a grading. Nothing is
changed, so no comparison may find anything: a finding is printed and fails the run.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

# the child runs this file by path in the sandbox interpreter, which has the standard library only for sure
SANDBOX_DIR = Path(__file__).resolve().parents[1] / "sandbox"
PROGRAM = "import numpy as np\ndef task_func(n):\n    return np.arange(n)\n"
TESTS = (
    "import unittest\nimport numpy as np\nclass TestCases(unittest.TestCase):\n"
    "    def test_a(self):\n        np.testing.assert_array_equal(task_func(3), np.array([0, 1, 2]))\n"
    "    def test_b(self):\n        self.assertEqual(len(task_func(5)), 5)\n"
    "    def test_c(self):\n        self.assertEqual(task_func(0).tolist(), [])\n"
)
EVERY, END = "every checkpoint but before a test (names, every library)", "the end of the run (names and insides)"
NUMPY_CALL = "a call of the tests' to numpy.testing.assert_array_equal"
ASSERT_EQUAL = "a call of the tests' to self.assertEqual"
CALLS = {  # label -> (module that must be loaded, its module, the function called); None: every library
    EVERY: None,
    END: "insides",
    NUMPY_CALL: ("numpy", "numpy.testing", "assert_array_equal"),
    "a call of the tests' to pandas.testing.assert_frame_equal": ("pandas", "pandas.testing", "assert_frame_equal"),
    ASSERT_EQUAL: ("unittest", "unittest", "TestCase.assertEqual"),
}


def _median_ms(action, repeat: int) -> float:
    action()  # the merged tables made once, as the harness's first call makes them
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def _load(name: str):
    """A sandbox module by path, as harness.py loads its siblings."""
    spec = importlib.util.spec_from_file_location(f"{name}_measured", SANDBOX_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# every namespace walked and every default read at each comparison (an interpreter without dict version tags); only
# the namespaces whose tag moved, and the defaults only after an assignment (what the harness does)
WAYS = ("walk", "tags")


def measure(modules: list[str], repeat: int) -> dict:
    """In the sandbox interpreter: record what `modules` load, time each comparison both ways (`WAYS`, ms)."""
    libraries, tamper = _load("libraries"), _load("tamper")
    missing, findings = [], []
    importlib.import_module("unittest")  # the harness's own, loaded in every zygote
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a library this interpreter lacks is skipped, and said
            missing.append(name)
    result: dict = {"missing": missing, "modules": len(sys.modules), "costs": {}, "findings": findings}
    for way in WAYS:
        view = tamper.dict_version_view if way == "tags" else None
        result[f"record_ms_{way}"], result["costs"][way] = _measure_way(libraries, view, findings, repeat)
    return result


def _measure_way(libraries, version_view, findings: list, repeat: int) -> tuple[float, dict]:
    """Milliseconds to record the loaded libraries, and each comparison's, with `version_view` (None: walked)."""
    roots = (sys.prefix, sys.base_prefix)
    genuine = libraries.Genuine(
        lambda f: not f.startswith(roots),
        lambda code: False,
        lambda note, kind: findings.append(note),
        version_view=version_view,
    )
    start = time.perf_counter()
    genuine.record_loaded()
    genuine.settle()
    record_ms = 1000 * (time.perf_counter() - start)
    if version_view is not None:  # as the harness with its audit hook, which hears no assignment of a default here
        genuine.count_defaults()
    costs = {}
    for label, call in CALLS.items():
        kwargs: dict = {"insides": True} if call == "insides" else {}
        if isinstance(call, tuple):
            if call[0] not in sys.modules:
                continue
            owner = importlib.import_module(call[1])
            for part in call[2].split("."):
                owner = getattr(owner, part)
            kwargs = {"function": owner}
        findings += genuine.rebound_internals(**kwargs)
        costs[label] = _median_ms(lambda kwargs=kwargs: genuine.rebound_internals(**kwargs), repeat)
    return record_ms, costs


def _grading_ms(python: str, preload: list[str], repeat: int) -> float:
    """One honest in-process grading (the baseline): a warm sandbox on `python` with the same preload, one worker."""
    from agentic_rl.sandbox import Sandbox

    with Sandbox(workers=1, python=python, preload=preload, out_of_process=False).start() as sandbox:
        report = sandbox.run_tests(PROGRAM, TESTS, harness="unittest", entry_point="task_func")
        if not report.passed:
            raise SystemExit(f"the baseline grading did not pass: {report.detail}")
        return _median_ms(
            lambda: sandbox.run_tests(PROGRAM, TESTS, harness="unittest", entry_point="task_func"), repeat
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", help="the sandbox interpreter (default: .venv-bcb when present, else this one)")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--modules", nargs="*", help="modules to import instead of the sandbox's preload list")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # measure() in this process, for the parent
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(json.loads(args.child), args.repeat)))  # noqa: T201 (read by the parent)
        return 0
    from omegaconf import OmegaConf

    from agentic_rl.bench.bcb import BCB_VENV_PYTHON
    from agentic_rl.paths import repo_root
    from agentic_rl.runtime.cpu import cpu_flags

    python = args.python or (str(BCB_VENV_PYTHON) if Path(BCB_VENV_PYTHON).exists() else sys.executable)
    modules = args.modules or list(OmegaConf.load(repo_root() / "conf" / "sandbox" / "default.yaml").preload)
    child = [python, str(Path(__file__).resolve()), "--child", json.dumps(modules), "--repeat", str(args.repeat)]
    measured = json.loads(subprocess.run(child, capture_output=True, text=True, check=True).stdout.splitlines()[-1])
    preloaded = [m for m in modules if m not in measured["missing"]]
    grading = _grading_ms(python, preloaded, max(5, args.repeat // 3))
    flags = " ".join(sorted(cpu_flags() & {"avx2", "avx512f", "avx512_bf16", "amx_bf16"}))
    missing = measured["missing"]
    lines = [
        f"sandbox interpreter {python}; CPU flags: {flags}",
        f"imported {len(modules) - len(missing)}/{len(modules)} of the preload list"
        + (f" (not there: {', '.join(missing)})" if missing else ""),
        f"recorded {measured['modules']} modules in {measured['record_ms_walk']:.0f} ms "
        f"({measured['record_ms_tags']:.0f} ms with the version tags' views)",
        f"baseline: one in-process grading of a three-test file, {grading:.1f} ms (median)",
        "each comparison: every namespace walked and default read | only the namespaces whose version tag moved, the"
        " defaults only after an assignment (what the harness does)",
    ]
    walk, tags = (measured["costs"][way] for way in WAYS)
    lines += [
        f"{label}: {walk[label]:.3f} ms | {tags[label]:.3f} ms ({tags[label] / walk[label]:.2f}x), "
        f"{tags[label] / grading:.4f} of a grading"
        for label in tags
    ]
    # what grading that file compares (harness.py): after loading the program and the tests, after each of the 3
    # tests (names), at the end (names and insides); before its library calls: one numpy call, two assertEquals
    made = {
        way: 5 * c[EVERY] + c[END] + c.get(NUMPY_CALL, 0.0) + 2 * c[ASSERT_EQUAL] for way, c in zip(WAYS, (walk, tags))
    }
    lines.append(
        f"the comparisons grading that file makes, added up: {made['walk']:.1f} ms walked, {made['tags']:.1f} ms "
        f"by the tags, {made['tags'] / grading:.2f} of it"
    )
    lines += [f"FOUND with nothing changed: {note}" for note in measured["findings"]]
    print("\n".join(lines))  # noqa: T201 (the benchmark's report)
    return 1 if measured["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
