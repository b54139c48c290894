"""The tool-set environment: every code task gets the same tools (search docs, execute code, submit), as
configured by `tools=none|code|multi`; tasks whose harness is "codegym" get their own CodeGym episode.

`ToolSetEnvironment` is a `ToolSet` (the evaluator and the replay policy read its `active`, `answers_once`,
`grader`) that opens episodes. A `ToolSetEpisode` is stateless: its tools, prompt, parser and stop condition
are the tool set's, and `step` runs the tool (a tool that raises becomes a failed observation, typed as the
harness's failure; envs.faults). With `served` (envs.serve), episodes open and step on environment servers.
A tool set built with no tools at all answers with the `answer` tool: the code in the whole reply, graded
once by the set's grader (the no-tools mode); that tool is added here, where the episode is built.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, fields
from typing import Any

from agentic_rl.envs.base import Environment, Episode
from agentic_rl.envs.faults import typed
from agentic_rl.tools.base import (
    ToolLike,
    ToolSet,
    counted_tools,
    declared_specs,
    find_first_call,
    has_completed_call,
    spec_for,
)
from agentic_rl.tools.code import AnswerTool
from agentic_rl.types import Observation, Task, ToolCall

logger = logging.getLogger(__name__)


def prompt_messages(toolset: ToolSet, task: Task, observation_format: str) -> list[dict[str, str]]:
    """System prompt, each worked example as earlier chat turns, then the task."""
    messages = [{"role": "system", "content": toolset.system_prompt}] if toolset.system_prompt else []
    for example_task, reply in toolset.examples:
        messages.append({"role": "user", "content": example_task})
        messages += (
            split_example_reply(reply) if observation_format == "chat" else [{"role": "assistant", "content": reply}]
        )
    return messages + [{"role": "user", "content": task.prompt}]


def split_example_reply(reply: str) -> list[dict[str, str]]:
    """An example reply written inline (calls and observations interleaved) as alternating chat turns."""
    messages, pos = [], 0
    tags = "|".join(sorted({re.escape(spec.result_tag) for spec in declared_specs().values()} | {"feedback"}))
    for m in re.finditer(rf"<({tags})>.*?</\1>", reply, re.DOTALL):
        if reply[pos : m.start()].strip():
            messages.append({"role": "assistant", "content": reply[pos : m.start()].strip()})
        messages.append({"role": "user", "content": m.group(0)})
        pos = m.end()
    if reply[pos:].strip():
        messages.append({"role": "assistant", "content": reply[pos:].strip()})
    return messages


def run_tool(tool: ToolLike, call: ToolCall, task: Task) -> Observation:
    """`tool(call, task)`, its failure typed (envs.faults); a tool that raises is a recorded failure of the harness,
    never a crashed run."""
    try:
        return typed(tool(call, task))
    except Exception as exc:
        logger.exception("tool %s failed on task %s", call.name, task.task_id)
        return typed(
            Observation(
                tool=call.name,
                text=f"<error>{call.name} failed: {type(exc).__name__}</error>",
                ok=False,
                status="tool_error",
                passed=False if spec_for(call.name).grades else None,
            )
        )


def closing_marker(pattern: re.Pattern[str]) -> str | None:
    """The literal a call pattern's match ends with (`</search>`, a closing fence), if it has one.

    Derived from the pattern's source: the text after its last group, when that text is a plain literal.
    """
    tail = pattern.pattern.rsplit(")", 1)[-1]
    return tail if tail and not re.search(r"[\\.^$*+?{}\[\]|()]", tail) else None


def with_answer_tool(toolset: ToolSet) -> dict[str, Any]:
    """The tools an episode of `toolset` runs: its own, or, for a set without tools, the no-tools `answer`."""
    return dict(toolset.tools) or {"answer": AnswerTool(grader=toolset.grader)}


class ToolSetEpisode(Episode):
    """One episode of a tool set: stateless, the same tools for every task (see the module docstring)."""

    def __init__(self, toolset: ToolSet, tools: dict[str, Any], task: Task) -> None:
        self.toolset, self.task, self._tools = toolset, task, tools
        self.active = tuple(tools)
        self.tools = counted_tools()  # every declared tool that a model chooses to call, zeros included
        self.answers_once = all(spec_for(name).final for name in self.active)

    def prompt_messages(self, observation_format: str) -> list[dict[str, str]]:
        return prompt_messages(self.toolset, self.task, observation_format)

    def parse(self, text: str) -> ToolCall | None:
        return find_first_call(text, self.active)

    def step(self, call: ToolCall) -> Observation:
        return run_tool(self._tools[call.name], call, self.task)

    def counts_toward_cap(self, name: str) -> bool:
        return spec_for(name).counts_toward_cap

    def grades(self, name: str) -> bool:
        return spec_for(name).grades

    def final(self, name: str) -> bool:
        return spec_for(name).final

    def counted_tools(self, executed: list[str]) -> tuple[str, ...]:
        return counted_tools(executed)


@dataclass
class ToolSetEnvironment(ToolSet, Environment):
    """A tool set that opens episodes; `codegym` (a `CodeGymRunner`, built on first use from `sandbox`) runs
    the tasks whose harness is "codegym". With `served` (an `envs.serve.Served`) every episode opens and steps on
    environment servers; this process keeps a copy that parses and reads its state (`resume`), never steps."""

    sandbox: Any = None
    codegym: Any = None
    served: Any = None

    @classmethod
    def of(cls, toolset: ToolSet, sandbox: Any = None, codegym: Any = None, served: Any = None) -> ToolSetEnvironment:
        if isinstance(toolset, ToolSetEnvironment) and sandbox is None and codegym is None and served is None:
            return toolset
        base = {f.name: getattr(toolset, f.name) for f in fields(ToolSet) if f.init}
        return cls(**base, sandbox=sandbox, codegym=codegym, served=served)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._episode_tools = with_answer_tool(self)
        self._stop_names = tuple(self._episode_tools)

    def open(self, task: Task, sample_index: int) -> Episode:
        if self.served is not None:
            return self.served.open(self, task, sample_index)
        if task.harness == "codegym":
            return self._codegym().open(task, sample_index)
        return ToolSetEpisode(self, self._episode_tools, task)

    def resume(self, task: Task, sample_index: int, snapshot: dict) -> Episode:
        """The episode continued from `snapshot`, in this process and without side effects (no CodeGym reset):
        a server's stand-in for an episode it takes over, and the trainer's copy of a served episode."""
        if task.harness == "codegym":
            return self._codegym().resume(task, sample_index, snapshot)
        return ToolSetEpisode(self, self._episode_tools, task)

    def _codegym(self) -> Any:
        if self.codegym is None:
            from agentic_rl.envs.codegym import CodeGymRunner

            self.codegym = CodeGymRunner(sandbox=self.sandbox)
        return self.codegym

    def stops(self, text: str) -> bool:
        if has_completed_call(text, self._stop_names):
            return True
        return self.codegym is not None and self.codegym.stops(text)

    def closing_markers(self) -> list[str] | None:
        markers = [closing_marker(p) for n in self._stop_names if (p := spec_for(n).call_pattern) is not None]
        if self.codegym is not None:
            markers += self.codegym.closing_markers() or [None]
        return None if None in markers else sorted(set(markers))


def build_environment(toolset: ToolSet, sandbox: Any, served: Any = None) -> ToolSetEnvironment:
    """The run's environment: the tool set of `tools=`, whose CodeGym tasks step in the run's `sandbox`, or, with
    `served` (`envs.serve.served`, from `envs.servers`), whose episodes all step on environment servers."""
    return ToolSetEnvironment.of(toolset, sandbox=sandbox, served=served)


def as_environment(env_or_toolset: Any) -> Environment:
    """The environment a rollout runs: an `Environment` as given, a plain `ToolSet` wrapped."""
    if isinstance(env_or_toolset, Environment):
        return env_or_toolset
    if isinstance(env_or_toolset, ToolSet):
        return ToolSetEnvironment.of(env_or_toolset)
    raise TypeError(f"a rollout needs an Environment or a ToolSet, got {type(env_or_toolset).__name__}")
