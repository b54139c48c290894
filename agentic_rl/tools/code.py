"""The two sandbox-backed tools: execute a ```python block, and submit a ```submit block to the tests."""
from __future__ import annotations

import time
from typing import Any

from agentic_rl.tools.base import cap_text
from agentic_rl.types import Observation, Task, ToolCall


def _short_error(stderr: str, max_lines: int) -> str:
    """The last lines of a traceback: where the exception type and message are."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-max_lines:]) if lines else "(no error output)"


class ExecuteTool:
    name = "execute"
    description = (
        "Execute code: run Python to try an idea and see its output.\n"
        "Format:\n```python\n# your code\nprint(result)\n```"
    )

    def __init__(self, sandbox: Any, timeout_s: float = 10.0, max_chars: int = 500, error_lines: int = 3) -> None:
        if timeout_s <= 0:
            raise ValueError(f"tools.execute.timeout_s must be > 0, got {timeout_s}")
        self.sandbox, self.timeout_s, self.max_chars, self.error_lines = sandbox, timeout_s, max_chars, error_lines

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        start = time.perf_counter()
        result = self.sandbox.execute(call.content, timeout_s=self.timeout_s)
        if result.ok:
            body = result.stdout.strip() or "(no output)"
        else:
            detail = _short_error(result.stderr, self.error_lines) if result.stderr.strip() else result.status
            body = (result.stdout.strip() + "\n" if result.stdout.strip() else "") + f"ERROR ({result.status}): {detail}"
        return Observation(tool=self.name, text=f"<exec_result>\n{cap_text(body, self.max_chars)}\n</exec_result>",
                           ok=result.ok, status=result.status, latency_ms=(time.perf_counter() - start) * 1e3)


class SubmitTool:
    name = "submit"
    description = (
        "Run tests: submit your final solution; it is run against the hidden tests.\n"
        "Format:\n```submit\ndef your_solution(...):\n    ...\n```"
    )

    def __init__(self, sandbox: Any, timeout_s: float = 30.0, max_chars: int = 400) -> None:
        if timeout_s <= 0:
            raise ValueError(f"tools.submit.timeout_s must be > 0, got {timeout_s}")
        self.sandbox, self.timeout_s, self.max_chars = sandbox, timeout_s, max_chars

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        start = time.perf_counter()
        report = self.sandbox.run_tests(call.content, task.tests, harness=task.harness,
                                        entry_point=task.entry_point, timeout_s=self.timeout_s)
        if report.passed:
            body = f"PASS: {report.n_tests} tests passed"
        else:
            body = f"FAIL: {report.detail or report.status}"
        return Observation(tool=self.name, text=f"<test_result>\n{cap_text(body, self.max_chars)}\n</test_result>",
                           ok=report.status in ("passed", "failed"), status=report.status,
                           latency_ms=(time.perf_counter() - start) * 1e3, passed=report.passed)
