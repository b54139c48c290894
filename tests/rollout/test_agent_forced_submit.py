"""`run_final_submit`: one forced turn after a finished episode, opened with the submit fence as context."""

from __future__ import annotations

from agentic_rl.rollout import ByteChatTokenizer, RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import SUBMIT_FENCE, run_final_submit
from tests.rollout.fakes import TASK, toolset

GOOD = "def add(a, b):\n    return a + b"


def finished_episode(log: list, max_tool_calls: int | None = 0):
    policy = ScriptedPolicy(lambda req: "```python\nprint(1)\n```")
    cfg = RolloutConfig(max_turns=2, max_tool_calls=max_tool_calls)
    return run_episodes([(TASK, 0)], policy, toolset(("search", "execute", "submit"), log), cfg)[0], cfg


def test_the_forced_turn_is_one_submission_and_the_episode_it_continues_is_unchanged():
    log: list = []
    before, cfg = finished_episode(log)  # C = 0: its execute calls were refused
    ids, turns = list(before.token_ids), list(before.turns)
    seen = []

    def reply(req):
        seen.append(ByteChatTokenizer().decode(req.history_ids))
        return f"{GOOD}\n```\n<search>more</search>"

    after = run_final_submit(
        [(TASK, before)], ScriptedPolicy(reply), toolset(("search", "execute", "submit"), log), cfg
    )[0]
    assert len(seen) == 1 and seen[0].endswith(SUBMIT_FENCE)  # the turn opens with the fence, as context
    assert log == [("submit", GOOD)]  # only the submission ran (the cap C does not refuse it); no search
    assert after.passed and after.finish_reason == "passed" and after.submitted_code == GOOD
    assert len(after.turns) == len(turns) + 1 and after.turns[-1].prefix == SUBMIT_FENCE
    assert after.token_ids[: len(ids)] == ids and len(after.token_ids) == len(after.loss_mask)
    assert before.token_ids == ids and before.turns == turns and not before.passed  # copies, not the original


def test_an_unclosed_block_is_submitted_and_prose_alone_too():
    before, cfg = finished_episode([], max_tool_calls=None)
    after = run_final_submit([(TASK, before)], ScriptedPolicy(lambda req: GOOD), toolset(("submit",), []), cfg)[0]
    assert after.passed and after.submitted_code == GOOD  # EOS came before the closing fence: closed for it
    empty = run_final_submit([(TASK, before)], ScriptedPolicy(lambda req: ""), toolset(("submit",), []), cfg)[0]
    assert empty.submitted_code is None and empty.finish_reason == "no_call"  # nothing written, nothing submitted
