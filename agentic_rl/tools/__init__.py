"""Tools (search docs, execute code, submit to tests, the no-tools answer), the call parser, and tool sets.

Each tool describes itself in a `ToolSpec` (see `base.py`) and is declared in the "tool" registry
(`agentic_rl.registry`); a tool set's tools are built from their YAML (`_target_`) by `build_tool`.
"""

from __future__ import annotations

import logging
from typing import Any

from omegaconf import DictConfig

from agentic_rl.registry import build
from agentic_rl.tools.base import (
    TOOL_SPECS,
    TOOLS,
    Tool,
    ToolSet,
    ToolSpec,
    declared_specs,
    spec_for,
    spec_of,
    tool_names,
)

# re-exported for callers; which tools exist, and their order, comes from the "tool" registry, not from these imports
from agentic_rl.tools.code import AnswerTool, ExecuteTool, SubmitTool, extract_code
from agentic_rl.tools.search import SearchTool

log = logging.getLogger(__name__)


def tool_class(cfg: Any) -> type:
    """The class a `conf/tool/*.yaml` node builds (its `_target_`), imported, which registers its spec."""
    import hydra.utils

    target = cfg.get("_target_") if hasattr(cfg, "get") else None
    if not target:
        raise ValueError(f"a tool config needs a `_target_` naming its class, got {cfg}")
    return hydra.utils.get_class(target)


def build_tool(name: str, cfg: Any, sandbox: Any = None, **runtime: Any) -> Tool:
    """Build the tool `name` from its config, passing the runtime objects its spec `needs` (e.g. sandbox).

    Needs that are not runtime objects (a search `index`) are built by the tool itself."""
    runtime = {"sandbox": sandbox, **runtime}
    cls = tool_class(cfg)
    spec = getattr(cls, "spec", None)  # checked before building: a wrong `_target_` is a config error
    if spec is None or spec.name != name:
        raise ValueError(
            f"tool config for {name!r} builds {cls.__name__}, which declares "
            f"{getattr(spec, 'name', None)!r}; fix its `_target_` or the name it is listed under"
        )
    kwargs = {need: runtime[need] for need in spec.needs if need in runtime}
    return build(cfg, **kwargs)


def build_toolset(cfg: DictConfig, sandbox: Any) -> ToolSet:
    """A ToolSet from a `conf/tools/*.yaml` node: its `active` tools, the submit grader and the prompt."""
    active = list(cfg.active)
    missing = [n for n in active + ["submit"] if n not in cfg]
    if missing:
        raise ValueError(
            f"tool set {cfg.name!r} lists {missing} but has no config for it (add `/tool@{missing[0]}` to its defaults)"
        )
    tools = {n: build_tool(n, cfg[n], sandbox) for n in active}
    grader = tools.get("submit") or build_tool("submit", cfg.submit, sandbox)
    examples = (
        tuple((e.task.strip(), e.reply.strip()) for e in cfg.get("examples") or []) if cfg.get("worked_example") else ()
    )
    return ToolSet(
        name=cfg.name, tools=tools, grader=grader, system_prompt=system_prompt(cfg, tools), examples=examples
    )


def system_prompt(cfg: DictConfig, tools: dict[str, Tool]) -> str:
    """The preamble, then each callable tool's description, then the strategy. A final tool (the no-tools
    answer) is not listed: the preamble says how to answer."""
    described = [tool for name, tool in tools.items() if not spec_of(tool, name).final]
    if not described:
        return cfg.preamble.strip()
    parts = [cfg.preamble.strip().format(n_tools=len(described))]
    parts += [f"{i}. {tool.description}" for i, tool in enumerate(described, 1)]
    if cfg.get("strategy"):
        parts.append(cfg.strategy.strip())
    return "\n\n".join(parts)


__all__ = [
    "TOOLS",
    "TOOL_SPECS",
    "AnswerTool",
    "ExecuteTool",
    "SearchTool",
    "SubmitTool",
    "Tool",
    "ToolSet",
    "ToolSpec",
    "build_tool",
    "build_toolset",
    "declared_specs",
    "extract_code",
    "spec_for",
    "spec_of",
    "system_prompt",
    "tool_names",
]
