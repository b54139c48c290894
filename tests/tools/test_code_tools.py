"""The sandbox-backed tools (tools/code.py) on a scripted sandbox: what each observation says and records."""

from __future__ import annotations

import inspect

import pytest
from omegaconf import OmegaConf

from agentic_rl.config import CONF_DIR
from agentic_rl.sandbox.results import ExecResult, TestReport
from agentic_rl.tools.code import AnswerTool, ExecuteTool, SubmitTool, extract_code
from agentic_rl.types import ToolCall
from tests.rollout.fakes import TASK


class ScriptedSandbox:
    """Answers execute / run_tests with fixed results and records the arguments."""

    def __init__(self, result: ExecResult | None = None, report: TestReport | None = None) -> None:
        self.result, self.report, self.calls = result, report, []

    def execute(self, code: str, timeout_s: float) -> ExecResult:
        self.calls.append(("execute", code, timeout_s))
        return self.result

    def run_tests(self, code: str, tests: str, **kwargs) -> TestReport:
        self.calls.append(("run_tests", code, tests, kwargs))
        return self.report


def body(text: str, tag: str) -> str:
    assert text.startswith(f"<{tag}>\n") and text.endswith(f"\n</{tag}>"), text
    return text[len(tag) + 3 : -(len(tag) + 4)]


def test_execute_shows_the_output_or_the_last_lines_of_the_error() -> None:
    ok = ScriptedSandbox(ExecResult(ok=True, status="ok", stdout="3\n", stderr=""))
    obs = ExecuteTool(ok, timeout_s=4.0)(ToolCall("execute", "print(1+2)", 0, 1), TASK)
    assert (obs.ok, obs.status, obs.passed) == (True, "ok", None) and body(obs.text, "exec_result") == "3"
    assert ok.calls == [("execute", "print(1+2)", 4.0)] and obs.latency_ms >= 0

    silent = ScriptedSandbox(ExecResult(ok=True, status="ok", stdout="  \n", stderr=""))
    assert body(ExecuteTool(silent)(ToolCall("execute", "x = 1", 0, 1), TASK).text, "exec_result") == "(no output)"

    trace = (
        'Traceback (most recent call last):\n  File "x", line 1\n  File "y", line 2\n\n    1/0\n'
        "ZeroDivisionError: division by zero\n"
    )
    crashed = ScriptedSandbox(ExecResult(ok=False, status="error", stdout="partial\n", stderr=trace))
    obs = ExecuteTool(crashed, error_lines=2)(ToolCall("execute", "1/0", 0, 1), TASK)
    assert not obs.ok and obs.status == "error"
    assert body(obs.text, "exec_result") == "partial\nERROR (error):     1/0\nZeroDivisionError: division by zero"

    killed = ScriptedSandbox(ExecResult(ok=False, status="timeout", stdout="", stderr=""))
    assert (
        body(ExecuteTool(killed)(ToolCall("execute", "while 1: pass", 0, 1), TASK).text, "exec_result")
        == "ERROR (timeout): timeout"
    )


def test_execute_output_is_capped() -> None:
    long = ScriptedSandbox(ExecResult(ok=True, status="ok", stdout="x" * 50, stderr=""))
    text = body(ExecuteTool(long, max_chars=20)(ToolCall("execute", "p", 0, 1), TASK).text, "exec_result")
    assert text == "x" * 20 + "\n... [truncated 30 chars]"


def test_submit_reports_pass_and_failure_and_passes_the_task_through() -> None:
    passing = ScriptedSandbox(report=TestReport(passed=True, status="passed", n_tests=3, n_failed=0, detail=""))
    obs = SubmitTool(passing, timeout_s=7.0)(ToolCall("submit", "def add(a, b): ...", 0, 1), TASK)
    assert (obs.ok, obs.passed, obs.status) == (True, True, "passed")
    assert body(obs.text, "test_result") == "PASS: 3 tests passed"
    assert passing.calls == [
        (
            "run_tests",
            "def add(a, b): ...",
            TASK.tests,
            {"harness": TASK.harness, "entry_point": TASK.entry_point, "timeout_s": 7.0},
        )
    ]

    failing = ScriptedSandbox(
        report=TestReport(passed=False, status="failed", n_tests=3, n_failed=1, detail="test_add: 1 != 2")
    )
    obs = SubmitTool(failing)(ToolCall("submit", "x", 0, 1), TASK)
    assert (obs.ok, obs.passed) == (True, False) and body(obs.text, "test_result") == "FAIL: test_add: 1 != 2"
    no_detail = ScriptedSandbox(report=TestReport(passed=False, status="timeout", n_tests=0, n_failed=0, detail=""))
    obs = SubmitTool(no_detail)(ToolCall("submit", "x", 0, 1), TASK)
    assert (obs.ok, obs.passed) == (False, False) and body(obs.text, "test_result") == "FAIL: timeout"


def test_answer_grades_with_the_submit_tool_under_its_own_name() -> None:
    sandbox = ScriptedSandbox(report=TestReport(passed=True, status="passed", n_tests=1, n_failed=0, detail=""))
    obs = AnswerTool(sandbox, timeout_s=5.0)(ToolCall("answer", "code", 0, 1), TASK)
    assert (obs.tool, obs.passed, obs.ok) == ("answer", True, True)
    assert sandbox.calls[0][3]["timeout_s"] == 5.0
    grader = SubmitTool(sandbox)
    assert AnswerTool(grader=grader).grader is grader
    with pytest.raises(ValueError, match="needs a sandbox"):
        AnswerTool()


@pytest.mark.parametrize(
    "make", [lambda t: ExecuteTool(object(), timeout_s=t), lambda t: SubmitTool(object(), timeout_s=t)]
)
def test_timeouts_must_be_positive(make) -> None:
    with pytest.raises(ValueError, match="timeout_s must be > 0"):
        make(0.0)
    assert make(0.01).timeout_s == 0.01


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("Here:\n```python\ndef f():\n    return 1\n```\nthen ```python\nx\n```", "def f():\n    return 1"),
        ("```py\nimport os\n```", "import os"),
        ("```\nprint(2)\n```", "print(2)"),
        ("unclosed:\n```python\ndef g():\n    pass\n", "def g():\n    pass"),
        ("def h():\n    return 3\n", "def h():\n    return 3"),
        ("  from math import pi\n", "from math import pi"),
        ("I cannot solve this.", None),
        ("```python\n```", None),
    ],
)
def test_extract_code(reply: str, code: str | None) -> None:
    assert extract_code(reply) == code


@pytest.mark.parametrize("option", ["execute", "submit", "answer"])
def test_constructor_defaults_equal_the_tool_config(option: str) -> None:
    """Guards the defaults in the tool signatures (mutation testing: a changed default survived every
    config-built test): a tool built in code behaves as the one conf/tool/<option>.yaml builds."""
    node = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "tool" / f"{option}.yaml"))
    cls = {"execute": ExecuteTool, "submit": SubmitTool, "answer": AnswerTool}[option]
    assert node.pop("_target_") == f"agentic_rl.tools.code.{cls.__name__}"
    params = inspect.signature(cls.__init__).parameters
    assert node and set(node) <= set(params)
    for name, value in node.items():
        assert params[name].default == value and type(params[name].default) is type(value), (option, name)


def test_a_cap_of_zero_tool_calls_never_refuses_the_answer() -> None:
    """Guards `counts_toward_cap=False` of the no-tools answer: with max_tool_calls=0 the reply is still graded."""
    from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
    from agentic_rl.rollout.agent import ToolSet

    sandbox = ScriptedSandbox(report=TestReport(passed=True, status="passed", n_tests=1, n_failed=0, detail=""))
    answer = AnswerTool(sandbox)
    toolset = ToolSet(name="none", tools={"answer": answer}, grader=answer, system_prompt="SYS")
    reply = "```python\ndef add(a, b):\n    return a + b\n```"
    traj = run_episodes(
        [(TASK, 0)], ScriptedPolicy(lambda req: reply), toolset, RolloutConfig(max_turns=1, max_tool_calls=0)
    )[0]
    assert traj.passed and traj.finish_reason == "passed" and traj.turns[0].observation.status == "passed"
    assert [c[0] for c in sandbox.calls] == ["run_tests"]
