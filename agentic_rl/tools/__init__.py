"""Tools (search docs, execute code, submit to tests), the call parser, and tool-set assembly."""
from __future__ import annotations

from typing import Any

from omegaconf import DictConfig

from agentic_rl.registry import build
from agentic_rl.tools.base import CALL_PATTERNS, Tool, find_first_call

SANDBOX_TOOLS = ("execute", "submit")


def build_tool(name: str, cfg: Any, sandbox: Any) -> Tool:
    return build(cfg, sandbox=sandbox) if name in SANDBOX_TOOLS else build(cfg)


def build_toolset(cfg: DictConfig, sandbox: Any):
    """A ToolSet from a `conf/tools/*.yaml` node: its `active` tools, the submit grader and the prompt."""
    from agentic_rl.rollout.agent import ToolSet

    active = list(cfg.active)
    unknown = [n for n in active if n not in CALL_PATTERNS]
    if unknown:
        raise ValueError(f"tools.active has unknown tool(s) {unknown}; available: {sorted(CALL_PATTERNS)}")
    missing = [n for n in active + ["submit"] if n not in cfg]
    if missing:
        raise ValueError(f"tool set {cfg.name!r} lists {missing} but has no config for it (add `/tool@{missing[0]}` "
                         "to its defaults)")
    tools = {n: build_tool(n, cfg[n], sandbox) for n in active}
    grader = tools.get("submit") or build_tool("submit", cfg.submit, sandbox)
    examples = tuple((e.task.strip(), e.reply.strip()) for e in cfg.get("examples") or []) \
        if cfg.get("worked_example") else ()
    return ToolSet(name=cfg.name, tools=tools, grader=grader, system_prompt=system_prompt(cfg, tools),
                   examples=examples)


def system_prompt(cfg: DictConfig, tools: dict[str, Tool]) -> str:
    """The preamble, then each active tool's description, then the strategy."""
    if not tools:
        return cfg.preamble.strip()
    parts = [cfg.preamble.strip().format(n_tools=len(tools))]
    parts += [f"{i}. {tool.description}" for i, tool in enumerate(tools.values(), 1)]
    if cfg.get("strategy"):
        parts.append(cfg.strategy.strip())
    return "\n\n".join(parts)


__all__ = ["build_tool", "build_toolset", "system_prompt", "find_first_call", "Tool"]
