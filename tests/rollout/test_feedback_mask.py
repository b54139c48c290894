"""Feedback the loop writes into an episode (the no-call nudge, the cap notice) is context, never trained on."""

from __future__ import annotations

from agentic_rl.rollout import ByteChatTokenizer, RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import CAP_TEXT, NUDGE_TEXT
from tests.rollout.fakes import TASK, toolset

SUBMIT_OK = "```submit\ndef add(a, b):\n    return a + b\n```"


def test_nudge_and_cap_notice_tokens_are_masked_out_of_the_loss() -> None:
    """Guards against feedback tokens (nudges, cap notices) being left trainable in the loss mask: the policy
    would be pushed to write the loop's own reminders."""
    turns = ("I am thinking, no call yet.", "<search>a</search>", "<search>b</search>", SUBMIT_OK)
    policy = ScriptedPolicy(lambda req: turns[min(req.turn_index, len(turns) - 1)])
    log: list = []
    traj = run_episodes(
        [(TASK, 0)],
        policy,
        toolset(("search", "submit"), log),
        RolloutConfig(max_turns=4, max_tool_calls=1, on_no_call="nudge"),
    )[0]
    tok = ByteChatTokenizer()
    nudge, _, capped, _ = traj.turns
    # the episode took both feedback paths: a nudge after turn 0, a refused search in turn 2
    assert nudge.call is None and NUDGE_TEXT in tok.decode(nudge.observation_ids)
    assert capped.observation.status == "capped"
    assert CAP_TEXT.format(name="search") in tok.decode(capped.observation_ids)
    assert traj.passed and [name for name, _ in log] == ["search", "submit"]

    pos = traj.prompt_len
    for turn in traj.turns:
        generated = slice(pos, pos + len(turn.generated_ids))
        assert traj.loss_mask[generated] == [1] * len(turn.generated_ids)
        pos += len(turn.generated_ids)
        appended = slice(pos, pos + len(turn.observation_ids))
        assert traj.token_ids[appended] == turn.observation_ids
        assert traj.loss_mask[appended] == [0] * len(turn.observation_ids), turn.text
        pos += len(turn.observation_ids)
    assert pos == len(traj.token_ids) == len(traj.loss_mask)
    # what is trained on is exactly the model's own tokens
    assert sum(traj.loss_mask) == sum(len(t.generated_ids) for t in traj.turns) == traj.n_model_tokens
