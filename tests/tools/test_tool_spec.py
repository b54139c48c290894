"""What a new tool gets when its spec says nothing but its name and result tag (tools/base.py's docstring):
its calls count toward the rollout's cap C, its observation is not the episode's verdict, and the episode
goes on after it. A tool that grades or ends the episode says so."""

from __future__ import annotations

import re

import pytest

from agentic_rl.tools.base import ToolSpec

CALL = re.compile(r"<lookup>(.*?)</lookup>", re.DOTALL)


def test_a_tool_that_says_nothing_is_capped_does_not_grade_and_does_not_end_the_episode():
    spec = ToolSpec(name="lookup", result_tag="lookup_result", call_pattern=CALL)
    assert (spec.counts_toward_cap, spec.grades, spec.final) == (True, False, False)


@pytest.mark.parametrize(
    "how, problem",
    [
        ({}, "exactly one of call_pattern or parse_reply"),
        ({"call_pattern": CALL, "parse_reply": str.strip}, "exactly one of call_pattern or parse_reply"),
        ({"call_pattern": re.compile("<lookup>.*</lookup>")}, "needs a group"),
    ],
)
def test_a_tool_must_say_how_its_calls_are_found(how, problem):
    with pytest.raises(ValueError, match=problem):
        ToolSpec(name="lookup", result_tag="lookup_result", **how)


@pytest.mark.parametrize("name", ["Lookup", "2lookup", "look-up", ""])
def test_a_tool_name_outside_the_pattern_is_refused_with_the_rule(name):
    with pytest.raises(ValueError, match="lowercase letters, digits and _"):
        ToolSpec(name=name, result_tag="lookup_result", call_pattern=CALL)
