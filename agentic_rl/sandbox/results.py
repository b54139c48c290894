"""Result records of the sandbox, and how a server's raw reply becomes one (the status policy).

ExecResult.status:
    "ok"            exit status 0
    "error"         non-zero exit status (an uncaught exception included)
    "timeout"       wall-clock deadline reached, or the CPU-time limit (SIGXCPU)
    "memory"        the memory limit was hit (MemoryError, or a crash whose stderr says so)
    "output_limit"  stdout + stderr grew past output_limit_bytes; the process was killed
    "killed"        ended by a signal (segfault, SIGKILL it sent itself, file-size limit, ...)
    "sandbox_error" the sandbox itself failed; nothing can be said about the code

TestReport.status: "passed" (the harness reported every collected test ran and passed, and at least
one did), "failed" (the harness reported, some test did not pass), "error" (no usable verdict: syntax
error, exit or crash before the harness finished, no tests collected, tampering), or one of
"timeout", "memory", "output_limit", "killed", "sandbox_error" as above. `passed` is True only for
"passed".
"""
from __future__ import annotations

import signal
from dataclasses import dataclass

_MEMORY_HINTS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")


@dataclass(frozen=True)
class ExecResult:
    ok: bool
    status: str
    stdout: str
    stderr: str
    exit_code: int | None = None
    signal: int | None = None
    duration_s: float = 0.0
    truncated: bool = False  # stdout or stderr holds only the first max_output_bytes


@dataclass(frozen=True)
class TestReport:
    __test__ = False  # not a pytest test class

    passed: bool
    status: str
    n_tests: int
    n_failed: int
    detail: str
    duration_s: float = 0.0  # summed over the parts when split
    stdout: str = ""
    stderr: str = ""
    parts: int = 1  # calls the verdict comes from: 1, or one per test method when split (split.py)


def resource_status(raw: dict) -> str | None:
    """The status that ends a call whatever the code did, or None when it ended on its own."""
    if raw.get("error"):
        return "sandbox_error"
    if raw.get("output_exceeded"):
        return "output_limit"
    if raw.get("timed_out") or raw.get("signal") == signal.SIGXCPU:
        return "timeout"
    report = raw.get("report") or {}
    died = raw.get("signal") is not None or raw.get("exit_code") not in (0, None)
    if report.get("type") == "MemoryError" or (died and any(h in raw.get("stderr", "") for h in _MEMORY_HINTS)):
        return "memory"
    if raw.get("signal") is not None:
        return "killed"
    return None


def exec_result(raw: dict, max_output_bytes: int) -> ExecResult:
    status = resource_status(raw)
    if status is None:
        status = "ok" if raw.get("exit_code") == 0 else "error"
    truncated = max(raw.get("stdout_bytes", 0), raw.get("stderr_bytes", 0)) > max_output_bytes
    return ExecResult(
        ok=status == "ok",
        status=status,
        stdout=raw.get("stdout", ""),
        stderr=raw.get("stderr", "") or raw.get("error", ""),
        exit_code=raw.get("exit_code"),
        signal=raw.get("signal"),
        duration_s=raw.get("duration_s", 0.0),
        truncated=truncated,
    )


def test_report(raw: dict, max_detail_chars: int) -> TestReport:
    report = raw.get("report") or {}
    done = report.get("event") == "done"
    n_tests = int(report.get("n_tests", 0))
    n_passed = int(report.get("n_passed", 0)) if done else 0
    status = resource_status(raw)
    if status is None:
        if not done:
            status = "error"
        elif report.get("error") or n_tests == 0:
            status = "error"
        else:
            status = "passed" if n_passed == n_tests else "failed"
    detail = cap_detail(_detail(status, raw, report, n_tests, n_passed), max_detail_chars)
    return TestReport(
        passed=status == "passed",
        status=status,
        n_tests=n_tests,
        n_failed=n_tests - n_passed,
        detail=detail,
        duration_s=raw.get("duration_s", 0.0),
        stdout=raw.get("stdout", ""),
        stderr=raw.get("stderr", ""),
    )


def cap_detail(detail: str, max_chars: int) -> str:
    return detail if len(detail) <= max_chars else detail[: max_chars - 3] + "..."


def _detail(status: str, raw: dict, report: dict, n_tests: int, n_passed: int) -> str:
    """A short human/model-readable explanation of the verdict."""
    if status == "passed":
        return f"{n_passed}/{n_tests} tests passed"
    if status == "failed":
        return f"{n_tests - n_passed}/{n_tests} tests failed: " + "; ".join(report.get("failures", []))
    if status == "sandbox_error":
        return f"sandbox error: {raw.get('error')}"
    if status == "output_limit":
        return "killed: the program wrote too much output"
    if status == "timeout":
        return "timeout: the tests did not finish in time" + (f" ({n_tests} collected)" if n_tests else "")
    if report.get("error"):
        return report["error"]
    tail = _tail(raw.get("stderr", ""))
    if status == "memory":
        return "memory limit exceeded" + (f": {tail}" if tail else "")
    if status == "killed":
        return f"killed by signal {_signal_name(raw.get('signal'))}" + (f": {tail}" if tail else "")
    if report.get("event") == "done":
        return "no tests were collected"
    code = raw.get("exit_code")
    return f"the program exited (status {code}) before the tests finished" + (f": {tail}" if tail else "")


def _tail(text: str, n: int = 5) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def _signal_name(sig: int | None) -> str:
    try:
        return signal.Signals(sig).name
    except (ValueError, TypeError):
        return str(sig)
