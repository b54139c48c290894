"""The Tool interface and the tag protocol parser.

The model calls a tool by writing one of:
  <search>query</search>            -> search docs
  ```python\\n...\\n```              -> execute code
  ```submit\\n...\\n```              -> run the task's tests

Only the tools of the active tool set are recognised: with `tools=code` a `<search>` block is plain
text, never executed (the ablation must really change the tool set).
"""
from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from agentic_rl.types import Observation, Task, ToolCall

# Each pattern must match a *completed* call only; generation stops at the first one.
CALL_PATTERNS: dict[str, re.Pattern[str]] = {
    "search": re.compile(r"<search>(.*?)</search>", re.DOTALL),
    "execute": re.compile(r"```(?:python|py)[ \t]*\n(.*?)```", re.DOTALL),
    "submit": re.compile(r"```submit[ \t]*\n(.*?)```", re.DOTALL),
}


@runtime_checkable
class Tool(Protocol):
    """A tool the agent can call. Implementations hold their limits (from config) and backends."""

    name: str  # one of "search", "execute", "submit"
    description: str  # how the system prompt tells the model to call it

    def __call__(self, call: ToolCall, task: Task) -> Observation: ...


def find_first_call(text: str, active: tuple[str, ...] | list[str]) -> ToolCall | None:
    """The earliest completed call in `text` among the `active` tool names, or None.

    Earliest by end offset: the call whose closing tag comes first is the one generation stopped at.
    """
    best: ToolCall | None = None
    for name in active:
        pattern = CALL_PATTERNS.get(name)
        if pattern is None:
            continue
        m = pattern.search(text)
        if m and (best is None or m.end() < best.end):
            best = ToolCall(name=name, content=m.group(1).strip("\n"), start=m.start(), end=m.end())
    return best


def cap_text(text: str, max_chars: int) -> str:
    """Truncate an observation body to `max_chars`, saying how much was cut."""
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n... [truncated {len(text) - max_chars} chars]"
