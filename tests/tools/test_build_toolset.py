"""What `build_toolset` and `build_tool` make of the YAML: the worked examples, the numbered tool list of the
system prompt, and a `_target_` that builds the wrong tool."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from agentic_rl.config import register_configs
from agentic_rl.tools import build_tool, build_toolset

CONF = Path(__file__).resolve().parents[2] / "conf"
register_configs()


def tools_cfg(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("train", overrides=["tools=code", *overrides]).tools


def test_the_worked_examples_are_the_yamls_exchanges_and_the_switch_hides_them() -> None:
    cfg = tools_cfg()
    toolset = build_toolset(cfg, sandbox=object())
    assert toolset.examples == tuple((e.task.strip(), e.reply.strip()) for e in cfg.examples)
    assert len(toolset.examples) == 2 and toolset.examples[1][0].startswith("Write a function `shout")
    assert build_toolset(tools_cfg("tools.worked_example=false"), sandbox=object()).examples == ()


def test_the_system_prompt_numbers_the_tools_from_one() -> None:
    toolset = build_toolset(tools_cfg(), sandbox=object())
    execute, submit = (toolset.tools[n].description for n in ("execute", "submit"))
    assert "you have 2 of them" in toolset.system_prompt
    assert f"\n\n1. {execute}\n\n2. {submit}\n\n" in toolset.system_prompt


def test_a_target_that_builds_another_tool_or_no_tool_is_refused() -> None:
    execute = OmegaConf.load(CONF / "tool" / "execute.yaml")
    with pytest.raises(ValueError, match="declares 'execute'"):
        build_tool("submit", execute, sandbox=object())
    with pytest.raises(ValueError, match="declares None"):
        build_tool("submit", OmegaConf.create({"_target_": "collections.OrderedDict"}), sandbox=object())
