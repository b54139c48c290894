"""Tool declarations, the Tool base class, the tool-call parser and the ToolSet.

A tool declares everything the framework needs to know about it in one `ToolSpec` (its class's `spec`):
  - `call_pattern`: how the model calls it (a regex matching a *completed* call, content in group 1);
    generation stops at the first completed call of the active tools;
  - `result_tag`: the tag its observation is wrapped in (`<doc_result>…</doc_result>`);
  - `counts_toward_cap`: whether its calls count toward the rollout's cap C;
  - `grades`: whether its observation is the episode's verdict (submit);
  - `final`: whether the episode ends after it, its observation not shown (a no-tools answer);
  - `runs_code`: whether its call's content is a program that it runs or grades (execute, submit, the answer): the
    code blocks the `last_block` format baseline grades (agentic_rl.evaluation.baselines);
  - `parse_reply`: for a tool called by the whole reply rather than a pattern, how the reply becomes the call;
  - `needs`: runtime objects passed to its constructor (`sandbox`) or built by it (`index`);
  - `description`: what the system prompt tells the model.
Observation limits (`max_chars`) are constructor arguments, so they live in the tool's YAML file, and
`Tool.observation` applies them and the result tag in one place.

A tool is declared once: its class, with its `spec`, named in the "tool" registry (`agentic_rl.registry`: the
built-ins listed there, and the `tool.<name>` entry points of other packages) and built from its YAML `_target_`
(conf/tool/<name>.yaml, listed by a tool set in conf/tools/). What runs with a tool set reads the specs its own tools
declare (`ToolSet.specs`, `spec_of`): the parser, the stop condition, the cap, grading, the warm-up's calls and the
format baselines. Only what is meant to span every tool reads the registry: the metric columns (`tool_names()`,
`counted_tools()`), the report columns and the figures (`declared_specs()`, which imports every declared tool, so
they know it whatever was imported before, in the registry's declared order). A `Tool` subclass defined but not
declared in the registry (a test's toy, a tool named only by its YAML `_target_`) is listed there once its class
exists, after the declared ones by name.

The built-in call forms:
  <search>query</search>            -> search docs
  ```python\\n...\\n```              -> execute code
  ```submit\\n...\\n```              -> run the task's tests
Only the tools of the active tool set are recognised: with `tools=code` a `<search>` block is plain
text, never executed (the ablation must really change the tool set).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from agentic_rl.registry import Registry
from agentic_rl.types import Observation, Task, ToolCall


@dataclass(frozen=True)
class ToolSpec:
    """What a tool is, for everything outside it (see the module docstring)."""

    name: str
    result_tag: str
    call_pattern: re.Pattern[str] | None = None
    counts_toward_cap: bool = True
    grades: bool = False
    final: bool = False
    runs_code: bool = False
    parse_reply: Callable[[str], str | None] | None = None
    needs: tuple[str, ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(
                f"tool name {self.name!r} must be lowercase letters, digits and _ "
                "(it becomes the metric name tools/<name>_rate)"
            )
        if (self.call_pattern is None) == (self.parse_reply is None):
            raise ValueError(f"tool {self.name!r} must declare exactly one of call_pattern or parse_reply")
        if self.call_pattern is not None and self.call_pattern.groups < 1:
            raise ValueError(f"tool {self.name!r}: call_pattern needs a group that captures the call's content")


# name -> spec of every Tool subclass defined so far: not a declaration but the classes' own specs, gathered so that
# `declared_specs()` (the metric columns) lists a tool whose class exists, and two classes cannot share a name
TOOL_SPECS: dict[str, ToolSpec] = {}
TOOLS: Registry[type] = Registry("tool")


def register_spec(spec: ToolSpec) -> ToolSpec:
    """Record a tool class's spec (done by defining a `Tool` subclass with a `spec`)."""
    known = TOOL_SPECS.get(spec.name)
    if known is not None and known != spec:
        raise ValueError(f"two different tools declare the name {spec.name!r}; rename one")
    TOOL_SPECS[spec.name] = spec
    return spec


def declared_specs() -> dict[str, ToolSpec]:
    """name -> spec of every tool: the declared ones in the registry's order, then other defined ones by name."""
    declared = TOOLS.names()
    for name in declared:
        if name not in TOOL_SPECS:
            cls = TOOLS.get(name)
            spec = getattr(cls, "spec", None)
            if spec is None or spec.name != name:
                raise ValueError(
                    f"the tool declared as {name!r} ({cls!r}) has no `spec` named {name!r}; fix its "
                    "declaration (agentic_rl/registry.py or its package's entry point)"
                )
            register_spec(spec)
    order = [n for n in declared if n in TOOL_SPECS] + sorted(set(TOOL_SPECS) - set(declared))
    return {name: TOOL_SPECS[name] for name in order}


def tool_names() -> tuple[str, ...]:
    """Every tool's name (`declared_specs`): what `tools/<name>_rate` and the report columns are made of."""
    return tuple(declared_specs())


def counted_tools(used: Iterable[str] = ()) -> tuple[str, ...]:
    """The tools whose calls are counted (zeros included): every declared tool that a model chooses to
    call, in declaration order, plus those in `used`. A final tool (the no-tools `answer`) is listed only
    where it was used, so a tool mode's counts do not carry a column that can only be zero there."""
    used = set(used) - {"none"}
    names = [n for n, spec in declared_specs().items() if not spec.final or n in used]
    return tuple(names + sorted(used - set(names)))


def spec_for(name: str) -> ToolSpec:
    """The registry's spec of the tool `name` (a view of `declared_specs`, never a declaration of its own).

    Kept as a public lookup (agentic_rl.tools exports it) for code that holds no tool set: tests, another package's
    script or report; the library itself does not call it. Whatever runs with a tool set reads the specs of that
    set's own tools (`ToolSet.specs`, an episode's `specs`), so a tool set and this view cannot disagree about what
    its tools are."""
    spec = TOOL_SPECS.get(name) or declared_specs().get(name)
    if spec is None:
        raise ValueError(f"unknown tool {name!r}; declared tools: {list(declared_specs())}")
    return spec


@runtime_checkable
class ToolLike(Protocol):
    """What the rollout calls: a name, a description, its `spec` (what the tool set and its episodes read: the
    call pattern, the cap, whether it grades) and `__call__`."""

    name: str
    description: str
    spec: ToolSpec

    def __call__(self, call: ToolCall, task: Task) -> Observation: ...


class Tool:
    """Base class of the tools: subclasses set `spec` (which registers them) and implement `__call__`."""

    spec: ClassVar[ToolSpec]
    name: ClassVar[str]  # copied from the spec, so the class itself answers (SearchTool.description)
    description: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "spec" in cls.__dict__:
            register_spec(cls.spec)
            cls.name, cls.description = cls.spec.name, cls.spec.description

    def __init__(self, max_chars: int = 800) -> None:
        if max_chars < 1:
            raise ValueError(f"tools.{self.spec.name}.max_chars must be >= 1, got {max_chars}")
        self.max_chars = max_chars

    def observation(
        self,
        body: str,
        *,
        start: float,
        ok: bool = True,
        status: str = "ok",
        passed: bool | None = None,
        trust: str | None = None,
        tamper_kinds: tuple[str, ...] = (),
    ) -> Observation:
        """`body` capped to `max_chars` and wrapped in the result tag; `start` is a perf_counter() value."""
        text = f"<{self.spec.result_tag}>\n{cap_text(body, self.max_chars)}\n</{self.spec.result_tag}>"
        return Observation(
            tool=self.spec.name,
            text=text,
            ok=ok,
            status=status,
            passed=passed,
            trust=trust,
            tamper_kinds=tamper_kinds,
            latency_ms=(time.perf_counter() - start) * 1e3,
        )

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        raise NotImplementedError


def find_call(text: str, specs: Mapping[str, ToolSpec]) -> ToolCall | None:
    """The earliest completed call in `text` among the tools of `specs` (name -> spec), or None.

    Earliest by end offset: the call whose closing tag comes first is the one generation stopped at.
    Tools called by the whole reply (`parse_reply`) are tried only when no pattern call is found.
    """
    best: ToolCall | None = None
    for name, spec in specs.items():
        m = spec.call_pattern.search(text) if spec.call_pattern is not None else None
        if m and (best is None or m.end() < best.end):
            best = ToolCall(name=name, content=m.group(1).strip("\n"), start=m.start(), end=m.end())
    if best is not None:
        return best
    for name, spec in specs.items():
        content = spec.parse_reply(text) if spec.parse_reply is not None else None
        if content is not None:
            return ToolCall(name=name, content=content, start=0, end=len(text))
    return None


def has_completed_call(text: str, specs: Mapping[str, ToolSpec]) -> bool:
    """True once `text` holds a completed pattern call of a tool of `specs`: where generation of a turn stops."""
    return any(spec.call_pattern is not None and spec.call_pattern.search(text) for spec in specs.values())


def cap_text(text: str, max_chars: int) -> str:
    """Truncate an observation body to `max_chars`, saying how much was cut."""
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n... [truncated {len(text) - max_chars} chars]"


def spec_of(tool: Any, listed_as: str | None = None) -> ToolSpec:
    """The spec `tool` declares (its class's `spec`), checked to be that of the name it is listed under, if any.

    Bad input, not a capability probe: every tool has a spec (`ToolLike`), and one without is a clear error."""
    spec = getattr(tool, "spec", None)
    if not isinstance(spec, ToolSpec):
        raise TypeError(
            f"tool {listed_as or ''!r} ({type(tool).__name__}) declares no `spec`: subclass agentic_rl.tools.Tool "
            "and set its ToolSpec, so that the tool set knows its call pattern, cap and grading"
        )
    if listed_as is not None and spec.name != listed_as:
        raise ValueError(
            f"the tool listed as {listed_as!r} declares the spec of {spec.name!r}; list it under its own name"
        )
    return spec


@dataclass
class ToolSet:
    """The tools the model is told about and whose calls are parsed.

    `specs` are the specs its own tools declare (`Tool.spec`), by the name each is listed under: what its episodes,
    the warm-up and the evaluation read, never the registry's table. `grader` grades submissions outside the tool
    calls. A set built with no tools at all answers with it: its episodes (agentic_rl.envs.toolset) get the `answer`
    tool, whose parser takes the code out of the reply (the no-tools mode). The set itself holds no episode state:
    `agentic_rl.envs` opens an episode per task and sample.
    """

    name: str
    tools: dict[str, Any]
    grader: Any
    system_prompt: str
    examples: tuple[tuple[str, str], ...] = ()  # worked (task, reply) exchanges shown before the task
    specs: dict[str, ToolSpec] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.specs = {name: spec_of(tool, name) for name, tool in self.tools.items()}

    @property
    def result_tags(self) -> tuple[str, ...]:
        """The tags this set's observations are wrapped in: its tools' and its grader's (a worked example's
        reply is split into turns at them)."""
        specs = [*self.specs.values(), spec_of(self.grader)]
        return tuple(sorted({spec.result_tag for spec in specs}))

    @property
    def active(self) -> tuple[str, ...]:
        return tuple(self.tools)

    @property
    def answers_once(self) -> bool:
        """Every tool ends the episode (no-tools mode, also a set without tools): one turn, no nudge, nothing
        appended."""
        return all(spec.final for spec in self.specs.values())
