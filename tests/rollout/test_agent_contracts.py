"""The agent loop's smaller promises: config bounds, the cap's count, the response prefix, cache hints, the
context limit's boundary, turn callbacks, the rollout's timings, and an episode that ends itself."""

from __future__ import annotations

import time
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from agentic_rl.envs.toolset import as_environment
from agentic_rl.rollout import ByteChatTokenizer, RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import environment_stop_condition
from agentic_rl.types import Observation, ToolCall
from tests.rollout.fakes import TASK, FakeTool, stop_condition, toolset

CONF = Path(__file__).resolve().parents[2] / "conf"
SUBMIT_OK = "```submit\ndef add(a, b):\n    return a + b\n```"
SEARCH = "<search>q</search>"


def script(*turns: str) -> ScriptedPolicy:
    return ScriptedPolicy(lambda req: turns[min(req.turn_index, len(turns) - 1)])


def roll(policy, active=("search", "execute", "submit"), env=None, jobs=((TASK, 0),), **cfg):
    log: list = []
    result = run_episodes(list(jobs), policy, env or toolset(active, log), RolloutConfig(**cfg))
    return result, log


def test_the_rollout_yaml_sets_every_schema_key_but_the_observation_format() -> None:
    """A run's rollout values come from conf/rollout/multi_turn.yaml, so the schema's numeric defaults reach no
    run; `observation_format` is the one key left to the schema ("chat")."""
    values = yaml.safe_load((CONF / "rollout" / "multi_turn.yaml").read_text())
    assert {f.name for f in fields(RolloutConfig)} - set(values) == {"observation_format"}
    assert RolloutConfig().observation_format == "chat"


@pytest.mark.parametrize(("key", "lowest"), [("max_tool_calls", 0), ("tool_workers", 1), ("max_turns", 1)])
def test_each_bound_accepts_its_lowest_value_and_refuses_the_one_below(key: str, lowest: int) -> None:
    assert getattr(RolloutConfig(**{key: lowest}), key) == lowest
    with pytest.raises(ValueError, match=key):
        RolloutConfig(**{key: lowest - 1})


def test_a_cap_of_two_runs_two_calls_and_refuses_the_third() -> None:
    turns = ("<search>a</search>", "<search>b</search>", "<search>c</search>", SUBMIT_OK)
    result, log = roll(script(*turns), max_tool_calls=2, max_turns=4)
    traj = result[0]
    assert [name for name, _ in log] == ["search", "search", "submit"]
    refused = traj.turns[2].observation
    assert refused.status == "capped" and not refused.executed and not refused.ok
    assert traj.passed


def test_a_no_tools_episode_counts_its_answer() -> None:
    reply = "```python\ndef add(a, b):\n    return a + b\n```"
    result, _ = roll(script(reply), active=())
    traj = result[0]
    assert "answer" in traj.tools and traj.calls_by_kind()["answer"] == 1


def test_the_stop_condition_knows_the_closing_markers_of_the_sets_own_tools() -> None:
    stop = stop_condition(("search", "submit", "answer"))  # answer has no pattern: it never stops a turn
    assert stop.markers == ("</search>", "```")
    assert stop("<search>x</search>") and not stop("<search>x")
    assert not stop("```python\nx\n```")  # execute is not in the set: its block does not end a turn
    assert stop_condition(("answer",)).markers == ()


def test_a_tool_whose_call_has_no_literal_end_makes_the_markers_unknown() -> None:
    import re

    from agentic_rl.tools.base import TOOL_SPECS, Tool, ToolSet, ToolSpec

    class LineTool(Tool):  # a call ends at a newline of any kind: no literal closing marker
        spec = ToolSpec(name="line_probe", result_tag="line_result", call_pattern=re.compile(r"@(\w+)\s"))

    try:
        log: list = []
        tools = {"search": FakeTool("search", log), "line_probe": LineTool()}
        env = as_environment(ToolSet(name="line", tools=tools, grader=FakeTool("submit", log), system_prompt="SYS"))
        stop = environment_stop_condition(env)
        assert stop.markers is None
        assert stop("@go ") and not stop("@go")
    finally:
        TOOL_SPECS.pop("line_probe", None)


def test_the_stop_condition_reads_the_turn_after_the_response_prefix() -> None:
    env = as_environment(toolset(("search", "submit"), []))
    stop = environment_stop_condition(env, "<search>")
    assert stop("q</search>") and not stop("q")
    assert stop.markers == tuple(env.closing_markers())
    with pytest.raises(ValueError, match="response_prefix"):
        environment_stop_condition(env, SEARCH)


def test_the_response_prefix_is_context_and_the_reply_stops_after_it_closes_a_call() -> None:
    result, log = roll(
        script("q</search> tail", "```submit\ndef add(a, b):\n    return a + b\n```"), response_prefix="<search>"
    )
    traj = result[0]
    tok = ByteChatTokenizer()
    prefix = tok.encode("<search>")
    assert log[0] == ("search", "q")
    assert tok.decode(traj.turns[0].generated_ids) == "q</search>"  # cut at the call, no EOS, no tail
    masked = [i for i, m in zip(traj.token_ids, traj.loss_mask) if m]
    assert masked == [i for t in traj.turns for i in t.generated_ids]
    start = traj.prompt_len
    assert traj.token_ids[start : start + len(prefix)] == prefix
    assert traj.loss_mask[start : start + len(prefix)] == [0] * len(prefix)


def test_each_request_keeps_its_cache_except_on_the_last_possible_turn() -> None:
    seen = []

    class Recording(ScriptedPolicy):
        def generate(self, requests, sampling, stop):
            seen.append([r.keep_cache for r in requests])
            return super().generate(requests, sampling, stop)

    roll(Recording(lambda req: SEARCH), max_turns=3)
    assert seen == [[True], [True], [False]]


def test_an_episode_ends_with_length_once_its_history_reaches_the_limit_exactly() -> None:
    first, _ = roll(script(SEARCH), max_turns=2)
    after_one_turn = len(first[0].turns[0].generated_ids) + first[0].prompt_len + len(first[0].turns[0].observation_ids)
    at_limit, _ = roll(script(SEARCH), max_turns=2, max_context_tokens=after_one_turn)
    assert at_limit[0].finish_reason == "length" and len(at_limit[0].turns) == 1
    below, _ = roll(script(SEARCH), max_turns=2, max_context_tokens=after_one_turn + 1)
    assert len(below[0].turns) == 2  # one token short of the limit: the episode takes its next turn


def test_on_turn_reports_the_active_and_finished_episodes_after_each_turn() -> None:
    calls = []
    policy = ScriptedPolicy(lambda req: SUBMIT_OK if req.sample_index == 0 else SEARCH)
    log: list = []
    run_episodes(
        [(TASK, g) for g in range(4)],
        policy,
        toolset(("search", "submit"), log),
        RolloutConfig(max_turns=2),
        on_turn=lambda active, done: calls.append((active, done)),
    )
    assert calls == [(3, 1), (3, 1)]


class SlowTool(FakeTool):
    def __call__(self, call: ToolCall, task) -> Observation:
        time.sleep(0.05)
        return super().__call__(call, task)


def test_the_rollout_times_its_tools_inside_its_wall_time() -> None:
    log: list = []
    ts = toolset(("search", "submit"), log)
    ts.tools["search"] = SlowTool("search", log)
    started = time.perf_counter()
    result, _ = roll(script(SEARCH, SUBMIT_OK), env=ts, max_turns=2)
    wall = time.perf_counter() - started
    stats = result.stats
    assert 0.05 <= stats.tools_s <= stats.rollout_s <= wall
    # a policy that reports no timings (scripted) leaves the policy's own times at zero
    assert stats.prefill_tokens is None and stats.generate_s == 0.0 and stats.sync_s == 0.0


class ObservingTokenizer(ByteChatTokenizer):
    """Shows in the observation's text whether the model had closed its turn with EOS."""

    def chat_observation_text(self, observation: str, after_eos: bool) -> str:
        return ("[after eos]" if after_eos else "[open turn]") + observation


def test_a_chat_observation_knows_whether_the_reply_ended_with_eos() -> None:
    tok = ObservingTokenizer()
    policy = ScriptedPolicy(lambda req: (SEARCH, "no call here", SUBMIT_OK)[req.turn_index], tokenizer=tok)
    result, _ = roll(policy, max_turns=3)
    texts = [tok.decode(t.observation_ids) for t in result[0].turns]
    assert texts[0].startswith("[open turn]")  # cut at the call's closing tag: the turn is still open
    assert texts[1].startswith("[after eos]")  # the reply ended with EOS: the nudge follows a closed turn


def test_an_episode_that_ends_itself_stops_with_its_own_reason() -> None:
    env = as_environment(toolset(("search", "submit"), []))
    open_episode = env.open

    def open_ending(task, sample_index):
        episode = open_episode(task, sample_index)
        step = episode.step

        def step_and_end(call):
            obs = step(call)
            episode.finish_reason = "budget"
            return obs

        episode.step = step_and_end
        return episode

    env.open = open_ending
    result, _ = roll(script(SEARCH), env=env, max_turns=3)
    assert result[0].finish_reason == "budget" and len(result[0].turns) == 1


def test_the_stats_of_several_rollouts_merge_into_their_sums() -> None:
    """An evaluation's batches are reported as one rollout: every counter and time starts from zero and adds up."""
    from agentic_rl.rollout.agent import merge_rollout_stats

    parts = [roll(script(SEARCH, SUBMIT_OK), max_turns=2)[0].stats, roll(script(SUBMIT_OK))[0].stats]
    total = merge_rollout_stats(parts)
    for name in ("context_tokens", "generated_tokens", "rollout_s", "generate_s", "tools_s", "sync_s"):
        assert getattr(total, name) == pytest.approx(sum(getattr(p, name) for p in parts)), name
    assert total.context_tokens > 0 and total.prefill_tokens is None  # the scripted policy reports no prefill
