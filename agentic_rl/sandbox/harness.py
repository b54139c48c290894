"""What runs inside the sandboxed runner process: the program runner and the three test harnesses.

Standard library only (loaded by path by server.py under the sandbox interpreter; pytest is imported
only by the pytest harness). Every entry point ends the process with os._exit.

Reporting: results travel to the server as JSON lines on a dedicated pipe (RESULT_FD), each line
stamped with a per-call random nonce; stdout and stderr are separate pipes, so printing "OK" or
"3 passed" cannot change a verdict, and neither can an exit code. A harness reports
    {"event": "collected", "n_tests": N}                          once the tests are known, then
    {"event": "done", "n_tests", "n_passed", "failures", "error"} after the last test,
and the process exits right after "done" (no atexit handlers, no waiting for threads). A run that
exits, crashes or hangs before "done" has no verdict and is graded as a failure by the client.

What the harness counts as a pass, per test: unittest - addSuccess (or an expected failure) and no
failing subtest; pytest - setup, call and teardown all passed (skips and xfails do not pass);
humaneval - `check(candidate)` returned. The client passes a task only if n_tests >= 1 and all passed.

Tamper check: the candidate shares the process with the tests (it must, they call it), so it could
monkeypatch the framework. The harness snapshots the attributes of the framework classes it relies
on before the candidate is imported and reports an error if any was replaced when the run ends.
This catches the obvious patches (e.g. `unittest.TestCase.run = ...`), not a determined attacker
(see README.md, "Known weaknesses").
"""
from __future__ import annotations

import json
import os
import pkgutil  # noqa: F401  (runpy imports it lazily: import it once, in the server, not per call)
import runpy
import sys
import traceback
import types
import unittest

MAX_FAILURES_REPORTED = 20
MAX_MESSAGE_CHARS = 600


class Reporter:
    """Writes nonce-stamped JSON lines to the result pipe. Built before any untrusted code runs."""

    def __init__(self, fd: int, nonce: str) -> None:
        self._fd, self._nonce = fd, nonce
        self._write, self._dumps = os.write, json.dumps  # keep references the candidate cannot swap

    def send(self, **fields) -> None:
        data = (self._dumps({"nonce": self._nonce, **fields}) + "\n").encode()
        try:
            while data:
                data = data[self._write(self._fd, data) :]
        except OSError:
            pass  # the candidate closed the channel: no report, which grades as a failure


def main(req: dict, workdir: str, result_fd: int, nonce: str) -> None:
    reporter = Reporter(result_fd, nonce)
    del nonce
    sys.path.insert(0, workdir)
    sys.argv = [os.path.join(workdir, "main.py" if req["mode"] == "exec" else "program.py")]
    _fresh_process_state()
    if req["mode"] == "exec":
        code = run_program(os.path.join(workdir, "main.py"), req["code"], reporter)
    else:
        run_tests(req, workdir, reporter)
        code = 0
    _flush_stdio()
    os._exit(code)


def warm_up() -> None:
    """Import, in the zygote, what pytest.main would otherwise import in every forked call."""
    try:
        import _pytest.config
    except ImportError:
        return
    for name in _pytest.config.default_plugins:
        try:
            __import__(f"_pytest.{name}")
        except ImportError:
            pass


# --------------------------------------------------------------------------------------------------
# execute


def run_program(path: str, code: str, reporter: Reporter) -> int:
    """Run `code` like `python main.py` would; returns the exit status."""
    _write(path, code)
    status = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        status = _exit_status(e)
    except BaseException as e:  # noqa: BLE001 - an uncaught exception, as the interpreter reports it
        _print_exception(e, {path})
        status = 130 if isinstance(e, KeyboardInterrupt) else 1
        if isinstance(e, MemoryError):
            reporter.send(event="exception", type="MemoryError")
    # Interpreter shutdown: wait for non-daemon threads, run atexit handlers.
    for shutdown in (_join_threads, _run_atexit):
        try:
            shutdown()
        except SystemExit as e:
            status = _exit_status(e)
        except BaseException as e:  # noqa: BLE001
            _print_exception(e, {path})
    return status


def _exit_status(e: SystemExit) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    print(e.code, file=sys.stderr)
    return 1


def _join_threads() -> None:
    import threading

    threading._shutdown()


def _run_atexit() -> None:
    import atexit

    atexit._run_exitfuncs()


# --------------------------------------------------------------------------------------------------
# tests


def run_tests(req: dict, workdir: str, reporter: Reporter) -> None:
    harness = req["harness"]
    runner = {"pytest": _run_pytest, "unittest": _run_unittest, "humaneval": _run_humaneval}[harness]
    outcome = {"n_tests": 0, "n_passed": 0, "failures": [], "error": None}
    guard = _Guard(_framework_classes(harness))
    try:
        outcome.update(runner(req, workdir, reporter))
    except BaseException as e:  # noqa: BLE001 - SystemExit/KeyboardInterrupt included: no verdict
        outcome["error"] = f"the test run was aborted by {_describe(e)}"
    changed = guard.changed()
    if changed:
        outcome["error"] = "the test framework was modified during the run: " + ", ".join(changed[:5])
    reporter.send(event="done", **outcome)


def _run_unittest(req: dict, workdir: str, reporter: Reporter) -> dict:
    """BigCodeBench: the test code (defining `TestCases`) is appended to the candidate.

    Like the official harness, the program's namespace starts with `os` and `sys` already bound.
    """
    path = os.path.join(workdir, "program.py")
    module = _load_program(path, req["code"] + "\n" + req["test"], "program", preset={"os": os, "sys": sys})
    if isinstance(module, str):
        return {"error": module}
    cases = module.__dict__.get("TestCases")
    if not (isinstance(cases, type) and issubclass(cases, _TestCase)):
        return {"error": "the test code defines no unittest.TestCase subclass named TestCases"}
    suite = _TestLoader().loadTestsFromTestCase(cases)
    share = {}
    only = req.get("only")
    if only is not None:  # one part of a split run (split.py): report every name, run only these
        names = sorted(test._testMethodName for test in suite)
        suite = _TestSuite([test for test in suite if test._testMethodName in only])
        share = {"names": names, "ran": [test._testMethodName for test in suite]}
    n_tests = suite.countTestCases()
    reporter.send(event="collected", n_tests=n_tests, **share)
    result = _UnittestResult({path})
    suite.run(result)
    return {"n_tests": n_tests, "n_passed": len(result.passed - result.failed.keys()),
            "failures": _failure_list(result.failed), **share}


def _run_humaneval(req: dict, workdir: str, reporter: Reporter) -> dict:
    """HumanEval: the test code defines `check(candidate)`; the harness calls check(entry_point)."""
    path = os.path.join(workdir, "program.py")
    module = _load_program(path, req["code"] + "\n" + req["test"], "program")
    if isinstance(module, str):
        return {"error": module}
    check, entry = module.__dict__.get("check"), req["entry_point"]
    if not callable(check):
        return {"error": "the test code defines no check() function"}
    if not callable(module.__dict__.get(entry)):
        return {"error": f"the program defines no function {entry!r}"}
    reporter.send(event="collected", n_tests=1)
    try:
        check(module.__dict__[entry])
    except BaseException as e:  # noqa: BLE001 - SystemExit in the candidate fails the check too
        return {"n_tests": 1, "n_passed": 0, "failures": [f"check({entry}): {_short_error(e, {path})}"]}
    return {"n_tests": 1, "n_passed": 1, "failures": []}


def _run_pytest(req: dict, workdir: str, reporter: Reporter) -> dict:
    """KodCode: the candidate is solution.py; the test file imports from it."""
    try:
        import pytest
    except ImportError:
        return {"error": "pytest is not installed in the sandbox interpreter"}
    _write(os.path.join(workdir, "solution.py"), req["code"])
    _write(os.path.join(workdir, "test_solution.py"), req["test"])
    ini = os.path.join(workdir, "pytest.ini")
    _write(ini, "[pytest]\n")
    collector = _PytestCollector(reporter)
    args = ["-q", "--tb=short", "-p", "no:cacheprovider", "-c", ini, "--rootdir", workdir,
            "--confcutdir", workdir, os.path.join(workdir, "test_solution.py")]
    pytest.main(args, plugins=[collector])
    return collector.outcome()


class _PytestCollector:
    """pytest plugin: counts per test from the reports pytest itself produces."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter
        self.items: list[str] | None = None
        self.status: dict[str, str] = {}
        self.failed: dict[str, str] = {}
        self.collect_errors: list[str] = []
        self.plugins_at_start: set[int] = set()
        self.pluginmanager = None

    def pytest_collection(self, session) -> None:
        # Registered after the built-in plugins, this runs first: after their session start-up (which
        # registers pytest's own late plugins), before collection imports the candidate.
        self.pluginmanager = session.config.pluginmanager
        self.plugins_at_start = {id(p) for p in self.pluginmanager.get_plugins()}

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.collect_errors.append(_clip(_last_lines(report.longreprtext, 8)))

    def pytest_collection_finish(self, session) -> None:
        self.items = [item.nodeid for item in session.items]
        self.reporter.send(event="collected", n_tests=len(self.items))

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed:
            self.status[report.nodeid] = "failed"
            self.failed.setdefault(report.nodeid, _clip(f"{report.when}: {_last_lines(report.longreprtext)}"))
        elif report.skipped and self.status.get(report.nodeid) != "failed":
            self.status[report.nodeid] = "skipped"
            self.failed.setdefault(report.nodeid, "skipped")
        elif report.when == "call" and report.passed and report.nodeid not in self.status:
            self.status[report.nodeid] = "passed"

    def outcome(self) -> dict:
        items = self.items or []
        out = {"n_tests": len(items), "n_passed": sum(self.status.get(i) == "passed" for i in items),
               "failures": _failure_list(self.failed)}
        if self.collect_errors:
            out["error"] = "collection failed: " + self.collect_errors[0]
        elif self.pluginmanager is not None and {id(p) for p in self.pluginmanager.get_plugins()} - self.plugins_at_start:
            out["error"] = "a pytest plugin was registered during the run"
        return out


class _UnittestResult(unittest.TestResult):
    def __init__(self, files: set[str]) -> None:
        super().__init__()
        self.files = files
        self.passed: set[str] = set()
        self.failed: dict[str, str] = {}

    def _bad(self, test, message: str) -> None:
        self.failed.setdefault(_test_name(test), _clip(message))

    def addSuccess(self, test) -> None:
        super().addSuccess(test)
        self.passed.add(_test_name(test))

    def addExpectedFailure(self, test, err) -> None:
        super().addExpectedFailure(test, err)
        self.passed.add(_test_name(test))

    def addFailure(self, test, err) -> None:
        super().addFailure(test, err)
        self._bad(test, _short_error(err[1], self.files))

    def addError(self, test, err) -> None:
        super().addError(test, err)
        self._bad(test, _short_error(err[1], self.files))

    def addSkip(self, test, reason) -> None:
        super().addSkip(test, reason)
        self._bad(test, f"skipped: {reason}")

    def addUnexpectedSuccess(self, test) -> None:
        super().addUnexpectedSuccess(test)
        self._bad(test, "unexpected success")

    def addSubTest(self, test, subtest, err) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._bad(test, f"{subtest._subDescription()}: {_short_error(err[1], self.files)}")


# Captured at import time (before any candidate runs) so a candidate rebinding unittest.TestCase
# cannot make its own class pass the TestCases check.
_TestCase, _TestLoader, _TestSuite = unittest.TestCase, unittest.TestLoader, unittest.TestSuite


def _framework_classes(harness: str) -> list[type]:
    classes: list[type] = [Reporter]
    if harness == "unittest":
        classes += [unittest.case.TestCase, unittest.case._Outcome, unittest.suite.BaseTestSuite,
                    unittest.suite.TestSuite, unittest.result.TestResult, unittest.loader.TestLoader,
                    _UnittestResult]
    elif harness == "pytest":
        try:
            import _pytest.python, _pytest.reports, _pytest.runner, pluggy  # noqa: E401
        except ImportError:
            return classes
        classes += [_pytest.python.Function, _pytest.runner.CallInfo, _pytest.reports.TestReport,
                    _pytest.reports.CollectReport, pluggy.PluginManager, _PytestCollector]
    return classes


class _Guard:
    """Snapshot of class attributes; `changed()` names those replaced or removed since.

    Additions are allowed: pytest caches flags on its classes (`_pytest_diamond_inheritance_...`).
    """

    def __init__(self, classes: list[type]) -> None:
        self._snapshots = [(cls, dict(vars(cls))) for cls in classes]

    def changed(self) -> list[str]:
        out = []
        for cls, before in self._snapshots:
            now = vars(cls)
            for name, value in before.items():
                if now.get(name, _MISSING) is not value:
                    out.append(f"{cls.__qualname__}.{name}")
        return sorted(out)


_MISSING = object()


# --------------------------------------------------------------------------------------------------
# helpers


def _load_program(path: str, source: str, name: str, preset: dict | None = None) -> types.ModuleType | str:
    """Execute `source` as module `name` (not __main__, so `if __name__ == "__main__"` blocks stay off).

    Returns the module, or a message when executing it raised (SystemExit included).
    """
    _write(path, source)
    module = types.ModuleType(name)
    module.__dict__.update(preset or {})
    module.__file__ = path
    sys.modules[name] = module
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    except BaseException as e:  # noqa: BLE001
        return f"the program failed before any test ran: {_short_error(e, {path})}"
    return module


def _fresh_process_state() -> None:
    """Undo what a fork inherits from the zygote but a fresh interpreter would not have."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:  # output printed before a timeout or crash still reaches the caller
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # a forked child would otherwise repeat the zygote's global random stream
        numpy.random.seed()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - the candidate may have replaced or closed it
            pass


def _print_exception(e: BaseException, files: set[str]) -> None:
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename not in files:
        tb = tb.tb_next  # drop the runner's own frames, as `python main.py` shows none
    try:
        traceback.print_exception(type(e), e, tb if tb is not None else e.__traceback__, file=sys.stderr)
    except BaseException:  # noqa: BLE001
        pass


def _short_error(e: BaseException, files: set[str]) -> str:
    """`AssertionError: 3 != 4 (program.py, line 57: self.assertEqual(f(2), 4))`."""
    try:
        message = traceback.format_exception_only(type(e), e)[-1].strip()
        where = [fs for fs in traceback.extract_tb(e.__traceback__) if fs.filename in files]
        if where:
            fs = where[-1]
            message += f" ({os.path.basename(fs.filename)}, line {fs.lineno}: {(fs.line or '').strip()})"
        return _clip(message)
    except BaseException:  # noqa: BLE001 - a hostile __str__ must not break reporting
        return type(e).__name__


def _describe(e: BaseException) -> str:
    return _short_error(e, set())


def _test_name(test) -> str:
    try:
        return test.id().rsplit(".", 1)[-1] if hasattr(test, "_testMethodName") else str(test)
    except BaseException:  # noqa: BLE001
        return "?"


def _failure_list(failed: dict[str, str]) -> list[str]:
    return [f"{name}: {message}" for name, message in list(failed.items())[:MAX_FAILURES_REPORTED]]


def _last_lines(text: str, n: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def _clip(text: str) -> str:
    text = str(text)
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."
