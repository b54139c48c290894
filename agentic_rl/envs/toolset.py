"""The tool-set environment, the default of the `env` group (conf/env/toolset.yaml): every code task gets the same
tools (search docs, execute code, submit), as configured by `tools=none|code|multi`; a task whose harness has an
environment of its own (envs.base HARNESS_ENVS: CodeGym) gets that environment's episode, and the hooks
(`episode_counts`, `metrics`) are that environment's. Its `report` is the task set's (envs.reports: BigCodeBench).

`environment_from_config` builds the run's environment from the `env` node with the runtime objects its
`_target_` takes (`toolset`, `sandbox`, `served`); train.py and evaluate.py build every environment through it.

`ToolSetEnvironment` is a `ToolSet` that opens episodes: the evaluator and the replay policy read its `answers_once`
and `specs` (which `Environment` declares), the format baselines its `grader`. A `ToolSetEpisode` is stateless: its
tools, prompt, parser and stop condition are the tool set's, read from the specs of its own tools (`ToolSet.specs`),
and `step` runs the tool (a tool that raises becomes a failed observation, typed as the harness's failure;
envs.faults). With `served` (envs.serve), episodes open and step on environment servers.
A tool set built with no tools at all answers with the `answer` tool: the code in the whole reply, graded
once by the set's grader (the no-tools mode); that tool is added here, where the episode is built.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from agentic_rl.envs.base import Environment, Episode, FinalAnswer, HarnessEnvironments
from agentic_rl.envs.faults import typed
from agentic_rl.envs.reports import task_set_report
from agentic_rl.errors import ConfigError
from agentic_rl.registry import build
from agentic_rl.tools.base import (
    ToolLike,
    ToolSet,
    ToolSpec,
    counted_tools,
    find_call,
    has_completed_call,
    spec_of,
)
from agentic_rl.tools.code import AnswerTool
from agentic_rl.types import Observation, Task, ToolCall, Trajectory

logger = logging.getLogger(__name__)


def prompt_messages(toolset: ToolSet, task: Task, observation_format: str) -> list[dict[str, str]]:
    """System prompt, each worked example as earlier chat turns, then the task."""
    messages = [{"role": "system", "content": toolset.system_prompt}] if toolset.system_prompt else []
    for example_task, reply in toolset.examples:
        messages.append({"role": "user", "content": example_task})
        messages += (
            split_example_reply(reply, toolset.result_tags)
            if observation_format == "chat"
            else [{"role": "assistant", "content": reply}]
        )
    return messages + [{"role": "user", "content": task.prompt}]


def split_example_reply(reply: str, result_tags: Iterable[str]) -> list[dict[str, str]]:
    """An example reply written inline (calls and observations interleaved) as alternating chat turns, split at the
    observations: blocks of the tool set's `result_tags` (`ToolSet.result_tags`) and the loop's `<feedback>`."""
    messages, pos = [], 0
    tags = "|".join(sorted({re.escape(tag) for tag in result_tags} | {"feedback"}))
    for m in re.finditer(rf"<({tags})>.*?</\1>", reply, re.DOTALL):
        if reply[pos : m.start()].strip():
            messages.append({"role": "assistant", "content": reply[pos : m.start()].strip()})
        messages.append({"role": "user", "content": m.group(0)})
        pos = m.end()
    if reply[pos:].strip():
        messages.append({"role": "assistant", "content": reply[pos:].strip()})
    return messages


def run_tool(tool: ToolLike, call: ToolCall, task: Task, grades: bool | None = None) -> Observation:
    """`tool(call, task)`, its failure typed (envs.faults); a tool that raises is a recorded failure of the harness,
    never a crashed run (a failed verdict when the tool `grades`; None: as the tool's own spec says)."""
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
                passed=False if (spec_of(tool).grades if grades is None else grades) else None,
            )
        )


def closing_marker(pattern: re.Pattern[str]) -> str | None:
    """The literal a call pattern's match ends with (`</search>`, a closing fence), if it has one.

    Derived from the pattern's source: the text after its last group, when that text is a plain literal.
    """
    tail = pattern.pattern.rsplit(")", 1)[-1]
    return tail if tail and not re.search(r"[\\.^$*+?{}\[\]|()]", tail) else None


def with_answer_tool(toolset: ToolSet) -> tuple[dict[str, Any], dict[str, ToolSpec]]:
    """The tools an episode of `toolset` runs, and their specs: its own, or, for a set without tools, the no-tools
    `answer`."""
    if toolset.tools:
        return dict(toolset.tools), dict(toolset.specs)
    return {"answer": AnswerTool(grader=toolset.grader)}, {"answer": AnswerTool.spec}


SUBMIT_FENCE = "```submit\n"  # opens a forced final turn: the model writes the submission's code after it


class SubmitAnswer(FinalAnswer):
    """A code task's final answer is its submission: the forced turn opens with the submit fence, so what the model
    writes is the code. Only a submission is parsed, and a block the turn left open (EOS or the token limit came
    before the closing fence) is closed, so what the model wrote after the fence is submitted; an empty block
    submits nothing."""

    prefix = SUBMIT_FENCE

    def __init__(self, spec: ToolSpec) -> None:
        """`spec`: the episode's own submit tool's (its call pattern is what the forced turn is parsed with)."""
        self.specs = {spec.name: spec}
        pattern = spec.call_pattern
        self.marker = closing_marker(pattern) if pattern is not None else None
        self.closing = "\n" + (self.marker or "")

    def parse(self, text: str) -> ToolCall | None:
        call = find_call(text, self.specs) or find_call(text + self.closing, self.specs)
        return call if call is not None and call.content.strip() else None

    def stops(self, text: str) -> bool:
        return has_completed_call(text, self.specs)

    def closing_markers(self) -> list[str] | None:
        return [self.marker] if self.marker is not None else None


class ToolSetEpisode(Episode):
    """One episode of a tool set: stateless, the same tools for every task (see the module docstring). What a call
    is (its pattern, whether it counts toward the cap, grades, ends the episode) is read from the specs of the
    episode's own tools."""

    def __init__(self, toolset: ToolSet, tools: tuple[dict[str, Any], dict[str, ToolSpec]], task: Task) -> None:
        self.toolset, self.task = toolset, task
        self._tools, self.specs = tools
        self.active = tuple(self._tools)
        self.tools = counted_tools()  # every declared tool that a model chooses to call, zeros included
        self.answers_once = all(spec.final for spec in self.specs.values())

    def prompt_messages(self, observation_format: str) -> list[dict[str, str]]:
        return prompt_messages(self.toolset, self.task, observation_format)

    def parse(self, text: str) -> ToolCall | None:
        return find_call(text, self.specs)

    def step(self, call: ToolCall) -> Observation:
        return run_tool(self._tools[call.name], call, self.task, grades=self.specs[call.name].grades)

    def counts_toward_cap(self, name: str) -> bool:
        return self.specs[name].counts_toward_cap

    def grades(self, name: str) -> bool:
        return self.specs[name].grades

    def final(self, name: str) -> bool:
        return self.specs[name].final

    def counted_tools(self, executed: list[str]) -> tuple[str, ...]:
        return counted_tools(executed)

    def final_answer(self) -> FinalAnswer | None:
        """A submission, where the episode's tools have the submit tool (a set without it has no forced answer)."""
        return SubmitAnswer(self.specs["submit"]) if "submit" in self.specs else None


@dataclass
class ToolSetEnvironment(ToolSet, Environment):
    """A tool set that opens episodes; tasks whose harness has its own environment (envs.base HARNESS_ENVS: CodeGym)
    open with that one, built on first use with `sandbox`, and the hooks (metrics, counts) are its. With `served`
    (an `envs.serve.Served`) every episode opens and steps on environment servers; this process keeps a copy that
    parses and reads its state (`resume`), never steps."""

    sandbox: Any = None
    served: Any = None
    harnesses: HarnessEnvironments = field(init=False, repr=False)

    @classmethod
    def of(cls, toolset: ToolSet, sandbox: Any = None, served: Any = None) -> ToolSetEnvironment:
        if isinstance(toolset, ToolSetEnvironment) and sandbox is None and served is None:
            return toolset
        base = {f.name: getattr(toolset, f.name) for f in fields(ToolSet) if f.init}
        return cls(**base, sandbox=sandbox, served=served)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.harnesses = HarnessEnvironments(self.sandbox)
        self._episode_tools = with_answer_tool(self)  # (tools, their specs)

    def open(self, task: Task, sample_index: int) -> Episode:
        if self.served is not None:
            return self.served.open(self, task, sample_index)
        if self.harnesses.owns(task):
            return self.harnesses.of(task).open(task, sample_index)
        return ToolSetEpisode(self, self._episode_tools, task)

    def resume(self, task: Task, sample_index: int, snapshot: dict) -> Episode:
        """The episode continued from `snapshot`, in this process and without side effects (no CodeGym reset):
        a server's stand-in for an episode it takes over, and the trainer's copy of a served episode."""
        if self.harnesses.owns(task):
            return self.harnesses.of(task).resume(task, sample_index, snapshot)
        return ToolSetEpisode(self, self._episode_tools, task)

    def stops(self, text: str) -> bool:
        if has_completed_call(text, self._episode_tools[1]):
            return True
        return any(env.stops(text) for env in self.harnesses.built.values())

    def closing_markers(self) -> list[str] | None:
        specs = self._episode_tools[1].values()
        markers = [closing_marker(spec.call_pattern) for spec in specs if spec.call_pattern is not None]
        for env in self.harnesses.built.values():
            markers += env.closing_markers() or [None]
        return None if None in markers else sorted(set(markers))

    def episode_counts(self, traj: Trajectory, task: Task) -> dict[str, Any] | None:
        return self.harnesses.episode_counts(traj, task)

    def metrics(self, counts: Iterable[dict[str, Any] | None]) -> dict[str, float]:
        return self.harnesses.metrics(counts)

    def report(
        self,
        tasks: Sequence[Task],
        records: Mapping[str, Sequence[dict[str, Any]]],
        *,
        python: str | None = None,
        excluded: Sequence[str] = (),
    ) -> dict[str, Any] | None:
        """The report of the task set's own checks, when one is declared for its kind (envs.reports)."""
        return task_set_report(tasks, records, python=python, excluded=excluded)


def build_environment(toolset: ToolSet, sandbox: Any, served: Any = None) -> ToolSetEnvironment:
    """The default environment (conf/env/toolset.yaml): the tool set of `tools=`, whose harness environments
    (CodeGym) step in the run's `sandbox`, or, with `served` (`envs.serve.served`, from `envs.servers`), whose
    episodes all step on environment servers."""
    return ToolSetEnvironment.of(toolset, sandbox=sandbox, served=served)


def environment_from_config(env_cfg: Any, toolset: ToolSet, sandbox: Any, served: Any = None) -> Environment:
    """The run's environment: `env_cfg` (a conf/env/*.yaml node; None, as in a run saved before the group existed:
    the default tool-set environment) built through `registry.build`, with those of the runtime objects `toolset`
    (the tool set of `tools=`), `sandbox` and `served` that its `_target_` takes."""
    if env_cfg is None:
        return build_environment(toolset, sandbox, served)
    runtime = {"toolset": toolset, "sandbox": sandbox, "served": served}
    # partial, then called: instantiate would turn a dataclass argument (the tool set) into a config node
    env = build(env_cfg, _partial_=True)(**accepted(env_cfg, runtime))
    if not isinstance(env, Environment):
        raise ConfigError(
            f"env._target_={env_cfg.get('_target_')!r} built a {type(env).__name__}, not an Environment "
            "(agentic_rl.envs.base): point it at an Environment subclass or a function that returns one"
        )
    return env


def accepted(cfg: Any, runtime: dict[str, Any]) -> dict[str, Any]:
    """The runtime objects the callable `cfg._target_` names as parameters (all of them if it takes **kwargs)."""
    import inspect

    import hydra.utils

    target = hydra.utils.get_object(cfg["_target_"])
    params = inspect.signature(target).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return runtime
    names = {p.name for p in params}
    return {k: v for k, v in runtime.items() if k in names}


def as_environment(env_or_toolset: Any) -> Environment:
    """The environment a rollout runs: an `Environment` as given, a plain `ToolSet` wrapped."""
    if isinstance(env_or_toolset, Environment):
        return env_or_toolset
    if isinstance(env_or_toolset, ToolSet):
        return ToolSetEnvironment.of(env_or_toolset)
    raise TypeError(f"a rollout needs an Environment or a ToolSet, got {type(env_or_toolset).__name__}")
