"""Result records of the sandbox, and how a server's raw reply becomes one (the status policy).

ExecResult.status:
    "ok"            exit status 0
    "error"         non-zero exit status (an uncaught exception included)
    "timeout"       wall-clock deadline reached, or the CPU-time limit (SIGXCPU)
    "memory"        the memory limit was hit, on evidence (`_out_of_memory`): a MemoryError (or ENOMEM)
                    the program did not catch, the kernel killing or refusing the call at its cgroup's
                    limit, or the call's processes together holding more than memory_mb; never text
                    the program printed
    "output_limit"  stdout + stderr grew past output_limit_bytes; the process was killed
    "killed"        ended by a signal (segfault, SIGKILL it sent itself, file-size limit, ...)
    "sandbox_error" the sandbox itself failed; nothing can be said about the code

TestReport.status: "passed" (the harness reported every collected test ran and passed, and at least
one did), "failed" (the harness reported, some test did not pass), "tampered" (the harness refused or
detected an attempt to forge or bend the grader: README.md, "Reward hacking"), "error" (no usable
verdict: syntax error, exit or crash before the harness finished, no tests collected, a report that
makes no sense), or one of "timeout", "memory", "output_limit", "killed", "sandbox_error" as above.
`passed` is True only for "passed"; "tampered" wins over every status but "sandbox_error".

The client never raises on a reply: every report field is type-checked and capped here (the server
has already dropped unknown fields), and all text is valid UTF-8 (lone surrogates become U+FFFD)
before it reaches a tokenizer.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

from agentic_rl.sandbox.reports import tamper_kind


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
    # Where the verdict was computed: "out_of_process" (the tests in a trusted process, the candidate in
    # another: nothing the candidate does can forge it) or "in_process" (the tests share the candidate's
    # process, guarded by the tamper defences; README.md "Reward hacking").
    trust: str = "in_process"
    # What each blocked attempt was (status "tampered" only; reports.TAMPER_KINDS), in the order seen:
    # what `tools/submit/tampered/<kind>` counts. `detail` words the same for the model.
    tamper_kinds: tuple[str, ...] = ()

    @property
    def tamper_kind(self) -> str | None:
        """The first blocked attempt's kind, or None."""
        return self.tamper_kinds[0] if self.tamper_kinds else None


def resource_status(raw: dict) -> str | None:
    """The status that ends a call whatever the code did, or None when it ended on its own."""
    if raw.get("error"):
        return "sandbox_error"
    if raw.get("cancelled"):
        return "cancelled"  # a part of a split task, stopped because another part hit a limit (split.py)
    if raw.get("output_exceeded"):
        return "output_limit"
    if raw.get("timed_out") or raw.get("signal") == signal.SIGXCPU:
        return "timeout"
    if _out_of_memory(raw):
        return "memory"
    if raw.get("signal") is not None:
        return "killed"
    return None


def _out_of_memory(raw: dict) -> bool:
    """Whether the call ran out of memory, from evidence only: the server's (the kernel ended a process of
    the call at the limit, or the call's processes held more than it), the harness's record of the
    program's uncaught exception (exec: a MemoryError, as the interpreter raises it when RLIMIT_AS refuses
    an allocation, or the kernel's ENOMEM), or a call that died after the kernel refused it memory at its
    cgroup's limit. Never the program's output: printing "out of memory" is not running out of it."""
    report = raw.get("report") if isinstance(raw.get("report"), dict) else {}
    died = raw.get("signal") is not None or raw.get("exit_code") not in (0, None)
    return bool(
        raw.get("memory_exceeded")
        or (report.get("event") == "exception" and report.get("type") == "MemoryError")
        or (died and raw.get("memory_limit_hit") is True)
    )


MAX_TEXT_CHARS = 1 << 20  # any one text field of a reply (stdout/stderr are capped by the server already)


def clean_text(value: object, limit: int = MAX_TEXT_CHARS) -> str:
    """`value` as a str that encodes to UTF-8: lone surrogates (which JSON can carry) become U+FFFD."""
    if not isinstance(value, str):
        return "" if value is None else clean_text(repr(value), limit)
    value = value[:limit]
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _int_field(report: dict, key: str, low: int = 0, high: int = 1 << 31) -> int:
    value = report.get(key, 0)
    return min(max(value, low), high) if type(value) is int else 0


def _text_list(report: dict, key: str, max_items: int = 100) -> list[str]:
    value = report.get(key)
    return [clean_text(v, 2000) for v in value[:max_items] if isinstance(v, str)] if isinstance(value, list) else []


def exec_result(raw: dict, max_output_bytes: int) -> ExecResult:
    raw = raw if isinstance(raw, dict) else {"error": f"malformed reply: {type(raw).__name__}"}
    status = resource_status(raw)
    if status is None:
        status = "ok" if raw.get("exit_code") == 0 else "error"
    truncated = max(raw.get("stdout_bytes", 0), raw.get("stderr_bytes", 0)) > max_output_bytes
    return ExecResult(
        ok=status == "ok",
        status=status,
        stdout=clean_text(raw.get("stdout", "")),
        stderr=clean_text(raw.get("stderr", "") or raw.get("error", "")),
        exit_code=raw.get("exit_code"),
        signal=raw.get("signal"),
        duration_s=raw.get("duration_s", 0.0),
        truncated=truncated,
    )


def test_report(raw: dict, max_detail_chars: int) -> TestReport:
    raw = raw if isinstance(raw, dict) else {"error": f"malformed reply: {type(raw).__name__}"}
    report = raw.get("report")
    report = report if isinstance(report, dict) else {}
    done = report.get("event") == "done"
    n_tests = _int_field(report, "n_tests")
    n_passed = _int_field(report, "n_passed", high=n_tests) if done else 0
    tampered = _text_list(report, "tampered")
    error = report.get("error")
    status = resource_status(raw)
    if status != "sandbox_error" and tampered:
        status = "tampered"
    elif status is None:
        if not done:
            status = "error"
        elif error or n_tests == 0:
            status = "error"
        else:
            status = "passed" if n_passed == n_tests else "failed"
    facts = {
        "failures": _text_list(report, "failures"),
        "error": clean_text(error, 2000) if error else None,
        "tampered": tampered,
        "event": report.get("event") if isinstance(report.get("event"), str) else None,
    }
    detail = cap_detail(mask_addresses(clean_text(_detail(status, raw, facts, n_tests, n_passed))), max_detail_chars)
    return TestReport(
        passed=status == "passed",
        status=status,
        n_tests=n_tests,
        n_failed=n_tests - n_passed,
        detail=detail,
        duration_s=raw.get("duration_s", 0.0),
        stdout=clean_text(raw.get("stdout", "")),
        stderr=clean_text(raw.get("stderr", "")),
        trust="out_of_process" if raw.get("trust") == "out_of_process" else "in_process",
        tamper_kinds=_tamper_kinds(report) if status == "tampered" else (),
    )


def _tamper_kinds(report: dict) -> tuple[str, ...]:
    """The report's tamper kinds, checked again on the client (a report without them: "other")."""
    kinds = _text_list(report, "tamper_kinds")
    return tuple(dict.fromkeys(tamper_kind(k) for k in kinds)) or ("other",)


# The address in a default repr (`<function f at 0x7f90...>`, `<Foo object at 0x55d1...>`): where the process that
# made the object put it. Out of process that is the candidate's process, in process the tests'; with address
# randomisation it also differs between runs. Its digits would be tokens of the model's context that vary with
# where the verdict was computed, so a run's episodes would depend on it: the verdict's text shows it masked.
_REPR_ADDRESS = re.compile(r"(?<= at )0x[0-9a-fA-F]{4,16}\b")
MASKED_ADDRESS = "0x..."


def mask_addresses(text: str) -> str:
    """`text` with each object address of a default repr (` at 0x7f9060331da0`) replaced by `0x...`."""
    return _REPR_ADDRESS.sub(MASKED_ADDRESS, text)


def cap_detail(detail: str, max_chars: int) -> str:
    return detail if len(detail) <= max_chars else detail[: max_chars - 3] + "..."


def _detail(status: str, raw: dict, report: dict, n_tests: int, n_passed: int) -> str:
    """A short human/model-readable explanation of the verdict (`report`: the checked report facts)."""
    if status == "passed":
        return f"{n_passed}/{n_tests} tests passed"
    if status == "tampered":
        return "tampered: the grader was interfered with: " + "; ".join(report["tampered"])
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
