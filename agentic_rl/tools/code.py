"""The sandbox-backed tools: execute a ```python block, submit a ```submit block to the tests, and the
no-tools answer (the code in the whole reply, graded once)."""

from __future__ import annotations

import re
import time
from typing import Any

from agentic_rl.data.toolworld.library import candidate_preamble
from agentic_rl.tools.base import Tool, ToolSpec
from agentic_rl.types import Observation, Task, ToolCall

FENCED_CODE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
OPEN_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*)", re.DOTALL)


def extract_code(text: str) -> str | None:
    """The answer code of a no-tools reply: the first fenced block, an unclosed block, or bare code."""
    m = FENCED_CODE.search(text) or OPEN_FENCE.search(text)
    if m:
        return m.group(1).strip("\n") or None
    return text.strip() if re.search(r"^\s*(def|class|import|from)\s", text, re.MULTILINE) else None


def _short_error(stderr: str, max_lines: int) -> str:
    """The last lines of a traceback: where the exception type and message are."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-max_lines:]) if lines else "(no error output)"


def _check_timeout(name: str, timeout_s: float) -> None:
    if timeout_s <= 0:
        raise ValueError(f"tools.{name}.timeout_s must be > 0, got {timeout_s}")


class ExecuteTool(Tool):
    spec = ToolSpec(
        name="execute",
        call_pattern=re.compile(r"```(?:python|py)[ \t]*\n(.*?)```", re.DOTALL),
        result_tag="exec_result",
        counts_toward_cap=True,
        runs_code=True,
        needs=("sandbox",),
        description=(
            "Execute code: run Python to try an idea and see its output.\n"
            "Format:\n```python\n# your code\nprint(result)\n```"
        ),
    )

    def __init__(self, sandbox: Any, timeout_s: float = 10.0, max_chars: int = 500, error_lines: int = 3) -> None:
        super().__init__(max_chars)
        _check_timeout(self.name, timeout_s)
        self.sandbox, self.timeout_s, self.error_lines = sandbox, timeout_s, error_lines

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        start = time.perf_counter()
        result = self.sandbox.execute(candidate_preamble(task) + call.content, timeout_s=self.timeout_s)
        if result.ok:
            body = result.stdout.strip() or "(no output)"
        else:
            detail = _short_error(result.stderr, self.error_lines) if result.stderr.strip() else result.status
            printed = result.stdout.strip() + "\n" if result.stdout.strip() else ""
            body = printed + f"ERROR ({result.status}): {detail}"
        return self.observation(body, start=start, ok=result.ok, status=result.status)


class SubmitTool(Tool):
    spec = ToolSpec(
        name="submit",
        call_pattern=re.compile(r"```submit[ \t]*\n(.*?)```", re.DOTALL),
        result_tag="test_result",
        counts_toward_cap=False,  # a submission is always allowed, whatever the cap C
        grades=True,
        runs_code=True,
        needs=("sandbox",),
        description=(
            "Run tests: submit your final solution; it is run against the hidden tests.\n"
            "Format:\n```submit\ndef your_solution(...):\n    ...\n```"
        ),
    )

    def __init__(self, sandbox: Any, timeout_s: float = 30.0, max_chars: int = 400) -> None:
        super().__init__(max_chars)
        _check_timeout(self.name, timeout_s)
        self.sandbox, self.timeout_s = sandbox, timeout_s

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        start = time.perf_counter()
        report = self.sandbox.run_tests(
            candidate_preamble(task) + call.content,
            task.tests,
            harness=task.harness,
            entry_point=task.entry_point,
            timeout_s=self.timeout_s,
        )
        body = f"PASS: {report.n_tests} tests passed" if report.passed else f"FAIL: {report.detail or report.status}"
        # a tampered verdict is a failed candidate, not a broken tool: it is not a submit error
        graded = report.status in ("passed", "failed", "tampered")
        return self.observation(
            body,
            start=start,
            ok=graded,
            status=report.status,
            passed=report.passed,
            trust=getattr(report, "trust", None),
            tamper_kinds=tuple(getattr(report, "tamper_kinds", ()) or ()),
        )


class AnswerTool(Tool):
    """The no-tools mode's only tool: the code in the reply is the answer, graded once, never shown back.

    It grades with `grader` (a submit tool; built from `sandbox` when not given)."""

    spec = ToolSpec(
        name="answer",
        parse_reply=extract_code,
        result_tag="test_result",
        counts_toward_cap=False,
        grades=True,
        final=True,
        runs_code=True,
        needs=("sandbox",),
        # not listed in the system prompt (a final tool: the tool set's preamble says how to answer)
        description="Answer: reply with the complete solution in one ```python code block; it is graded once.",
    )

    def __init__(self, sandbox: Any = None, timeout_s: float = 30.0, max_chars: int = 400, grader: Any = None) -> None:
        super().__init__(max_chars)
        if grader is None:
            if sandbox is None:
                raise ValueError("tools.answer needs a sandbox (or a grader) to grade the answer")
            grader = SubmitTool(sandbox, timeout_s=timeout_s, max_chars=max_chars)
        self.grader = grader

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        obs = self.grader(call, task)
        obs.tool = self.name
        return obs
