"""`SearchTool` itself, on the docstore backend (no index to build): its defaults, its `k` check, where a doc is cut,
and that a search counts toward the rollout's tool-call cap."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import ToolSet
from agentic_rl.tools.search import SearchHit, SearchTool, format_hits
from tests.rollout.fakes import TASK, FakeTool

CONF = Path(__file__).resolve().parents[2] / "conf"


def test_the_defaults_are_the_search_configs_limits():
    """A tool built in code shows as many hits, as long, as the configured one (its backend is the docstore, which
    needs no index; the config chooses pydoc)."""
    node = OmegaConf.load(CONF / "tool" / "search.yaml")
    params = inspect.signature(SearchTool.__init__).parameters
    for key in ("k", "max_chars", "max_doc_chars"):
        assert params[key].default == node[key], key
    tool = SearchTool()
    assert (tool.k, tool.max_chars, tool.max_doc_chars) == (node.k, node.max_chars, node.max_doc_chars)
    # format_hits alone cuts where the tool does
    assert inspect.signature(format_hits).parameters["max_doc_chars"].default == node.max_doc_chars


def test_k_must_be_at_least_one():
    assert SearchTool(k=1).k == 1
    with pytest.raises(ValueError, match="tools.search.k"):
        SearchTool(k=0)


def test_a_doc_exactly_at_the_limit_is_shown_whole():
    hits = [SearchHit("m.f", "", "a" * 10, 1.0), SearchHit("m.g", "", "b" * 11, 0.5)]
    assert format_hits(hits, max_doc_chars=10) == "[m.f]\n" + "a" * 10 + "\n\n[m.g]\n" + "b" * 10 + "..."


def test_a_search_counts_toward_the_tool_call_cap():
    log: list = []
    submit = FakeTool("submit", log)
    toolset = ToolSet(
        name="multi",
        tools={"search": SearchTool(backend="docstore"), "submit": submit},
        grader=submit,
        system_prompt="S",
    )
    replies = ("<search>heap push</search>", "<search>json loads</search>", "```submit\ndef f(): pass\n```")
    policy = ScriptedPolicy(lambda req: replies[req.turn_index])
    [traj] = run_episodes([(TASK, 0)], policy, toolset, RolloutConfig(max_turns=3, max_tool_calls=1))
    assert [t.observation.status for t in traj.turns[:2]] == ["ok", "capped"]
