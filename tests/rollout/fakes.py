"""Scripted tools for rollout tests: no sandbox, deterministic observations, and a call log."""

from __future__ import annotations

from agentic_rl.rollout.agent import ToolSet
from agentic_rl.types import Observation, Task, ToolCall

TASK = Task(task_id="t/add", prompt="Write add(a, b).", tests="", harness="pytest", entry_point="add")


class FakeTool:
    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log
        self.description = f"{name} tool"

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        self.log.append((self.name, call.content))
        if self.name == "submit":
            ok = "return a + b" in call.content
            return Observation(
                tool="submit",
                text=f"<test_result>{'PASS' if ok else 'FAIL'}</test_result>",
                ok=True,
                status="passed" if ok else "failed",
                passed=ok,
            )
        if self.name == "execute":
            crashed = "raise" in call.content
            return Observation(
                tool="execute",
                text="<exec_result>ERR</exec_result>" if crashed else "<exec_result>3</exec_result>",
                ok=not crashed,
                status="error" if crashed else "ok",
            )
        return Observation(tool="search", text="<doc_result>doc</doc_result>", ok=True)


def toolset(active: tuple[str, ...], log: list) -> ToolSet:
    tools = {n: FakeTool(n, log) for n in active}
    grader = tools.get("submit") or FakeTool("submit", log)
    return ToolSet(name="+".join(active) or "none", tools=tools, grader=grader, system_prompt="SYS")
