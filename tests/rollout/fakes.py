"""Scripted tools for rollout tests: no sandbox, deterministic observations, and a call log."""

from __future__ import annotations

from agentic_rl.envs.toolset import as_environment
from agentic_rl.rollout.agent import ToolSet, environment_stop_condition
from agentic_rl.rollout.stops import StopCondition
from agentic_rl.tools.base import declared_specs
from agentic_rl.types import Observation, Task, ToolCall

TASK = Task(task_id="t/add", prompt="Write add(a, b).", tests="", harness="pytest", entry_point="add")


class FakeTool:
    """A stand-in for the built-in tool `name`: its spec (the call pattern the set parses, the cap, grading) is that
    tool's, its answers are scripted."""

    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log
        self.description = f"{name} tool"
        self.spec = declared_specs()[name]

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


def stop_condition(active: tuple[str, ...]) -> StopCondition:
    """The stop condition the rollout gives a policy for a tool set of the built-in tools `active`: its
    environment's (`environment_stop_condition`)."""
    return environment_stop_condition(as_environment(toolset(active, [])))
