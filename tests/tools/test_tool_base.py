"""The parts of tools/base.py every tool relies on: the observation a tool returns (its cap, its tag, its
latency), the call parser's choice among several calls, the stop check, and which tools are counted."""

from __future__ import annotations

import dataclasses
import re
import time

import pytest

from agentic_rl.tools.base import (
    TOOL_SPECS,
    TOOLS,
    Tool,
    ToolSpec,
    cap_text,
    counted_tools,
    declared_specs,
    find_call,
    has_completed_call,
    register_spec,
    spec_for,
)

BUILTIN = ("search", "execute", "submit")


@pytest.fixture
def toys():
    """Two toy tools whose calls can end at the same offset, and one called by the whole reply; removed after."""
    specs = [
        ToolSpec(name="toy_bang", result_tag="bang_result", call_pattern=re.compile(r"!(\w+);")),
        ToolSpec(name="toy_word", result_tag="word_result", call_pattern=re.compile(r"(\w+);")),
        ToolSpec(name="toy_reply", result_tag="reply_result", parse_reply=lambda text: text.strip() or None),
    ]
    for spec in specs:
        register_spec(spec)
    yield specs
    for spec in specs:
        TOOL_SPECS.pop(spec.name, None)


@pytest.fixture
def echo_tool():
    class EchoTool(Tool):
        spec = ToolSpec(name="toy_echo", result_tag="echo", call_pattern=re.compile(r"<echo>(.*?)</echo>"))

    yield EchoTool
    TOOL_SPECS.pop("toy_echo", None)


def test_a_tool_accepts_a_cap_of_one_character_and_refuses_zero(echo_tool) -> None:
    assert echo_tool(max_chars=1).max_chars == 1
    with pytest.raises(ValueError, match="max_chars"):
        echo_tool(max_chars=0)


def test_a_tool_that_sets_no_cap_keeps_800_characters(echo_tool) -> None:
    obs = echo_tool().observation("x" * 801, start=time.perf_counter())
    assert obs.text == "<echo>\n" + "x" * 800 + "\n... [truncated 1 chars]\n</echo>"


def test_an_observation_is_ok_by_default_and_reports_its_latency_in_milliseconds(echo_tool) -> None:
    obs = echo_tool(max_chars=5).observation("hello", start=time.perf_counter() - 100.0)
    assert obs.text == "<echo>\nhello\n</echo>" and obs.tool == "toy_echo"
    assert obs.ok and obs.status == "ok" and obs.passed is None
    assert 100_000.0 <= obs.latency_ms < 100_050.0


def test_cap_text_keeps_a_body_of_exactly_the_cap() -> None:
    assert cap_text("abc", 3) == "abc"
    assert cap_text("abcd", 3) == "abc\n... [truncated 1 chars]"


def test_the_call_that_closes_first_wins_and_a_tie_goes_to_the_first_active_tool(toys) -> None:
    call = find_call("x go; !bang;", specs("toy_bang", "toy_word"))
    assert (call.name, call.content, call.start, call.end) == ("toy_word", "go", 2, 5)
    tie = find_call("!bang;", specs("toy_bang", "toy_word"))  # both patterns end at the ';'
    assert (tie.name, tie.content) == ("toy_bang", "bang")
    tie = find_call("!bang;", specs("toy_word", "toy_bang"))
    assert (tie.name, tie.content) == ("toy_word", "bang")


def test_a_whole_reply_tool_answers_only_when_no_pattern_call_is_found(toys) -> None:
    assert find_call("done; here", specs("toy_reply", "toy_word")).name == "toy_word"
    call = find_call("  the reply  ", specs("toy_reply", "toy_word"))
    assert (call.name, call.content, call.start, call.end) == ("toy_reply", "the reply", 0, 13)
    assert find_call("   ", specs("toy_reply")) is None


def specs(*names: str) -> dict:
    """The specs a tool set of these tools holds (`ToolSet.specs`): what an episode reads."""
    return {name: spec_for(name) for name in names}


def test_only_a_completed_pattern_call_stops_a_turn(toys) -> None:
    assert has_completed_call("<search>q</search>", specs(*BUILTIN))
    assert not has_completed_call("<search>q", specs(*BUILTIN))
    assert not has_completed_call("any text at all", specs("toy_reply"))  # a whole-reply tool never stops a turn
    assert has_completed_call("go;", specs("toy_reply", "toy_word"))


def test_counted_tools_list_the_callable_tools_then_other_used_names(toys) -> None:
    every = tuple(declared_specs())
    assert counted_tools() == tuple(n for n in every if n != "answer")  # the final tool only where it was used
    assert counted_tools(["answer", "none", "zz_unknown"]) == (*every, "zz_unknown")


def test_declared_tools_come_first_in_registry_order_then_defined_ones_by_name(toys) -> None:
    order = list(declared_specs())
    assert order[:4] == ["search", "execute", "submit", "answer"]
    assert order.index("toy_bang") < order.index("toy_reply") < order.index("toy_word")
    assert spec_for("toy_word") is TOOL_SPECS["toy_word"]
    with pytest.raises(ValueError, match="unknown tool"):
        spec_for("no_such_tool")


def test_two_different_specs_cannot_share_a_name_but_the_same_one_registers_twice(toys) -> None:
    assert register_spec(toys[0]) is toys[0]
    with pytest.raises(ValueError, match="two different tools"):
        register_spec(ToolSpec(name="toy_bang", result_tag="other", call_pattern=re.compile(r"!(\w+);")))


def test_a_declared_spec_cannot_be_changed_in_place() -> None:
    """The registry, the parser and every tool set share one spec object: it is read-only."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec_for("search").counts_toward_cap = False


def test_a_declared_tool_whose_module_was_not_imported_is_found_through_the_registry(monkeypatch) -> None:
    from agentic_rl.tools.code import AnswerTool

    monkeypatch.delitem(TOOL_SPECS, "answer")  # as if agentic_rl.tools.code had not been imported yet
    assert spec_for("answer") is AnswerTool.spec
    monkeypatch.delitem(TOOL_SPECS, "answer")
    assert list(declared_specs())[:4] == ["search", "execute", "submit", "answer"]
    assert TOOL_SPECS["answer"] is AnswerTool.spec


class NoSpec:
    pass


class Misnamed:
    spec = ToolSpec(name="toy_other", result_tag="other", call_pattern=re.compile(r"<o>(.*?)</o>"))


@pytest.mark.parametrize("cls", [NoSpec, Misnamed])
def test_a_declaration_whose_class_has_no_spec_of_that_name_is_refused(monkeypatch, cls) -> None:
    monkeypatch.setitem(TOOLS._items, "toy_declared", cls)
    with pytest.raises(ValueError, match="has no `spec` named 'toy_declared'"):
        declared_specs()
    assert "toy_other" not in TOOL_SPECS


class ProbeTool:
    """A tool the registry never heard of (no `Tool` subclass, so its spec is in no global table): a tool set knows
    it by the spec it carries alone."""

    name, description = "probe", "probe tool"
    spec = ToolSpec(
        name="probe",
        result_tag="probe_result",
        call_pattern=re.compile(r"<probe>(.*?)</probe>"),
        grades=True,
        counts_toward_cap=False,
    )

    def __call__(self, call, task):
        from agentic_rl.types import Observation

        passed = call.content == "ok"
        return Observation(tool="probe", text="<probe_result>x</probe_result>", ok=True, passed=passed, status="failed")


def test_a_tool_set_reads_the_specs_its_own_tools_declare() -> None:
    """Guards against an episode asking the registry's table for a spec its tool set holds: `probe` is in no
    table, yet its episode parses its call, stops the turn at it, grades by it and exempts it from the cap."""
    from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
    from agentic_rl.tools.base import ToolSet
    from tests.rollout.fakes import TASK

    assert "probe" not in declared_specs()
    probe = ProbeTool()
    toolset = ToolSet(name="probe", tools={"probe": probe}, grader=probe, system_prompt="SYS")
    assert toolset.specs == {"probe": ProbeTool.spec} and toolset.result_tags == ("probe_result",)
    replies = ["<probe>no</probe> and more", "<probe>ok</probe>"]
    rollout = RolloutConfig(max_turns=3, max_tool_calls=0)  # a cap of 0: only a call its spec exempts runs
    traj = run_episodes([(TASK, 0)], ScriptedPolicy(lambda req: replies[req.turn_index]), toolset, rollout)[0]
    assert [t.text for t in traj.turns] == ["<probe>no</probe>", "<probe>ok</probe>"]  # each turn stopped at the call
    assert [t.graded for t in traj.turns] == [True, True] and traj.passed and traj.submitted_code == "ok"


def test_a_tool_without_a_spec_or_listed_under_another_name_is_refused_with_a_fix() -> None:
    from agentic_rl.tools.base import ToolSet

    class Bare:
        name, description = "probe", "no spec"

    with pytest.raises(TypeError, match="declares no `spec`: subclass agentic_rl.tools.Tool"):
        ToolSet(name="x", tools={"probe": Bare()}, grader=ProbeTool(), system_prompt="SYS")
    with pytest.raises(ValueError, match="listed as 'search' declares the spec of 'probe'"):
        ToolSet(name="x", tools={"search": ProbeTool()}, grader=ProbeTool(), system_prompt="SYS")
