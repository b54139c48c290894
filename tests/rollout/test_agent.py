"""Scripted-policy rollouts: masks, stopping at the first call, caps, tool-set ablation, no-tools mode."""

from __future__ import annotations

from agentic_rl.rollout import ByteChatTokenizer, RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import NUDGE_TEXT
from tests.rollout.fakes import TASK, toolset

SUBMIT_OK = "```submit\ndef add(a, b):\n    return a + b\n```"
SUBMIT_BAD = "```submit\ndef add(a, b):\n    return a - b\n```"


def script(*turns: str):
    return ScriptedPolicy(lambda req: turns[min(req.turn_index, len(turns) - 1)])


def rollout(policy, active=("search", "execute", "submit"), **cfg):
    log: list = []
    trajs = run_episodes([(TASK, 0)], policy, toolset(active, log), RolloutConfig(**cfg))
    return trajs[0], log


def test_mask_covers_exactly_the_model_tokens():
    turns = ("I will search. <search>add numbers</search> ignored tail", "```python\nprint(1+2)\n```", SUBMIT_OK)
    traj, _ = rollout(script(*turns))
    tok = ByteChatTokenizer()
    model_ids = [i for t in traj.turns for i in t.generated_ids]
    masked = [i for i, m in zip(traj.token_ids, traj.loss_mask) if m]
    assert masked == model_ids
    assert len(traj.token_ids) == len(traj.loss_mask)
    assert traj.loss_mask[: traj.prompt_len] == [0] * traj.prompt_len
    # the observation ids sit, unmasked-for-loss, right after each turn's generated ids
    pos = traj.prompt_len
    for turn in traj.turns:
        pos += len(turn.generated_ids)
        assert traj.loss_mask[pos : pos + len(turn.observation_ids)] == [0] * len(turn.observation_ids)
        assert traj.token_ids[pos : pos + len(turn.observation_ids)] == turn.observation_ids
        pos += len(turn.observation_ids)
    assert pos == len(traj.token_ids)
    assert tok.decode(traj.turns[0].generated_ids).endswith("</search>")
    assert traj.passed and traj.finish_reason == "passed"
    assert traj.calls_by_kind() == {"search": 1, "execute": 1, "submit": 1, "none": 0}


def test_generation_stops_at_the_first_completed_call():
    reply = "```python\nprint(1)\n```\nand then ```submit\ndef add(a, b):\n    return a + b\n```"
    traj, log = rollout(script(reply, SUBMIT_BAD), max_turns=2)
    assert log[0] == ("execute", "print(1)")
    assert "submit" not in traj.turns[0].text
    assert not traj.passed and traj.finish_reason == "max_turns"


def test_code_tool_set_ignores_search():
    traj, log = rollout(script("<search>Counter most_common</search>", SUBMIT_OK), active=("execute", "submit"))
    assert all(name != "search" for name, _ in log)
    assert traj.turns[0].call is None
    assert traj.calls_by_kind()["none"] == 1 and traj.calls_by_kind()["search"] == 0
    assert NUDGE_TEXT in ByteChatTokenizer().decode(traj.turns[0].observation_ids)
    assert traj.passed


def test_tool_call_cap_refuses_further_search_and_execute_but_allows_submit():
    turns = ("<search>a</search>", "```python\nprint(2)\n```", "<search>b</search>", SUBMIT_OK)
    traj, log = rollout(script(*turns), max_tool_calls=1, max_turns=4)
    assert [name for name, _ in log] == ["search", "submit"]
    assert traj.turns[1].observation.status == "capped" and not traj.turns[1].observation.executed
    assert traj.calls_by_kind() == {"search": 1, "execute": 0, "submit": 1, "none": 0}
    assert traj.passed


def test_no_call_stop_mode_ends_the_episode():
    traj, log = rollout(script("def add(a, b): return a + b"), on_no_call="stop")
    assert traj.finish_reason == "no_call" and traj.submitted_code is None and not log
    assert len(traj.turns) == 1


def test_failed_submission_continues_and_records_the_code():
    traj, _ = rollout(script(SUBMIT_BAD, SUBMIT_BAD), max_turns=2)
    assert traj.submitted_code.endswith("return a - b") and not traj.passed
    assert traj.calls_by_kind()["submit"] == 2


def test_no_tools_mode_grades_the_reply_code_in_one_turn():
    reply = "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```"
    traj, log = rollout(script(reply, reply), active=())
    assert len(traj.turns) == 1 and traj.passed and traj.finish_reason == "passed"
    assert log == [("submit", "def add(a, b):\n    return a + b")]
    assert sum(traj.loss_mask) == len(traj.token_ids) - traj.prompt_len  # nothing appended after the reply


def test_group_is_generated_as_one_batch():
    seen = []

    class CountingPolicy(ScriptedPolicy):
        def generate(self, requests, sampling, stop):
            seen.append(len(requests))
            return super().generate(requests, sampling, stop)

    policy = CountingPolicy(lambda req: SUBMIT_OK if req.sample_index % 2 else SUBMIT_BAD)
    log: list = []
    trajs = run_episodes(
        [(TASK, g) for g in range(4)], policy, toolset(("execute", "submit"), log), RolloutConfig(max_turns=2)
    )
    assert seen == [4, 2]  # turn 1: the whole group; turn 2: the two that failed
    assert [t.passed for t in trajs] == [False, True, False, True]
    assert [t.sample_index for t in trajs] == [0, 1, 2, 3]


def test_context_limit_ends_with_length():
    traj, _ = rollout(script("```python\nprint(1)\n```"), max_context_tokens=50, max_turns=5)
    assert traj.finish_reason == "length" and len(traj.turns) == 1


def test_inline_and_chat_observation_formats():
    for fmt, expected in (
        ("inline", "\n<doc_result>doc</doc_result>\n"),
        ("chat", "\n</assistant>\n<user>\n<doc_result>doc</doc_result>\n</user>\n<assistant>\n"),
    ):
        traj, _ = rollout(script("<search>q</search>", SUBMIT_OK), observation_format=fmt)
        assert ByteChatTokenizer().decode(traj.turns[0].observation_ids) == expected


def test_worked_example_becomes_chat_turns():
    from agentic_rl.rollout.agent import prompt_messages, split_example_reply
    from tests.rollout.fakes import toolset as make_toolset

    reply = "<search>q</search>\n<doc_result>d</doc_result>\n```submit\nx\n```\n<test_result>PASS</test_result>"
    assert split_example_reply(reply, ("doc_result", "test_result")) == [
        {"role": "assistant", "content": "<search>q</search>"},
        {"role": "user", "content": "<doc_result>d</doc_result>"},
        {"role": "assistant", "content": "```submit\nx\n```"},
        {"role": "user", "content": "<test_result>PASS</test_result>"},
    ]
    # split at the tags of the set's own tools: a tag of a tool it lacks is the model's text, not an observation
    assert split_example_reply(reply, ("test_result",))[0]["content"].startswith("<search>q</search>\n<doc_result>")
    ts = make_toolset(("search", "submit"), [])
    assert ts.result_tags == ("doc_result", "test_result")
    ts.examples = (("Example task", reply),)
    chat = prompt_messages(ts, TASK, "chat")
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user", "assistant", "user", "user"]
    inline = prompt_messages(ts, TASK, "inline")
    assert [m["role"] for m in inline] == ["system", "user", "assistant", "user"]
    assert inline[-1]["content"] == TASK.prompt
