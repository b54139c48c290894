"""A CodeGym episode's forced final answer (`DoneAnswer`, the `forced_submit` baseline): the forced turn opens with
the Done action up to its answer, the answer is graded by the episode's own `Done` from the state the episode ended
in, and no reply of the model (a code block, prose, a broken value) raises."""

from __future__ import annotations

import json

import pytest

from agentic_rl.envs.codegym import DONE_PREFIX, INVALID, CodeGymEnvironment, DoneAnswer
from agentic_rl.envs.tasks import environment_tasks
from agentic_rl.rollout import ByteChatTokenizer, RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import run_final_submit
from agentic_rl.types import ToolCall
from tests.envs.test_codegym import COUNTER_ENV, act, task

# Done is right only when the answer is the running total *and* the total was built with Add (the counter of
# test_codegym, whose reference is its total once it is complete): a forced Done graded from a reset, not from the
# state the episode ended in, would find total 0 and fail a right answer.
LEDGER_ENV = (
    COUNTER_ENV
    + """

class LedgerEnv(CounterEnv):
    def get_ref_answer(self):
        return self.total if self.total == sum(self.numbers) else None
"""
)


def ledger_task(numbers=(2, 3)):
    record = {
        "env_id": "test/ledger",
        "class_name": "LedgerEnv",
        "code": LEDGER_ENV,
        "configs": [{"numbers": list(numbers)}],
    }
    return environment_tasks(record)[0]


def finished(task_, *replies):
    """An episode that ran `replies` and ended at the turn cap without Done."""
    policy = ScriptedPolicy(lambda req: replies[min(req.turn_index, len(replies) - 1)])
    cfg = RolloutConfig(max_turns=len(replies), max_new_tokens=400)
    return run_episodes([(task_, 0)], policy, CodeGymEnvironment(), cfg)[0], cfg


def forced(task_, before, cfg, reply):
    seen = []

    def answer(req):
        seen.append(ByteChatTokenizer().decode(req.history_ids))
        return reply

    after = run_final_submit([(task_, before)], ScriptedPolicy(answer), CodeGymEnvironment(), cfg)[0]
    return after, seen


def test_the_forced_turn_is_done_with_the_models_answer_graded_from_the_state_the_episode_ended_in():
    t = ledger_task()
    before, cfg = finished(t, act("Add", value=2), act("Add", value=3))
    assert before.submitted_code is None and before.finish_reason == "max_turns"
    assert before.env_state["state"]["total"] == 5  # the state it ended in travels with it
    after, seen = forced(t, before, cfg, "5}}</action>")
    assert len(seen) == 1 and seen[0].endswith(DONE_PREFIX)  # the turn opens with Done up to its answer
    assert after.passed and after.finish_reason == "passed"  # graded from total 5, not from a reset's 0
    assert after.turns[-1].call.name == "Done" and after.turns[-1].prefix == DONE_PREFIX
    assert after.calls_by_kind()["Done"] == 1 and len(after.turns) == len(before.turns) + 1
    assert after.token_ids[: len(before.token_ids)] == before.token_ids
    masked = [i for i, m in zip(after.token_ids, after.loss_mask) if m]
    assert masked == [i for turn in after.turns for i in turn.generated_ids]  # the prefix is context
    wrong, _ = forced(t, before, cfg, "4}}</action>")
    assert not wrong.passed and wrong.finish_reason == "failed" and wrong.grade.status == "ok"


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("true", True),  # EOS before the braces: the value alone is the answer
        ('"abc"} and then some prose', "abc"),
        ("[1, 2]}}</action> trailing", [1, 2]),
        (" 7\n", 7),
    ],
)
def test_the_answer_is_the_value_the_model_wrote_closed_or_not(reply, answer):
    call = DoneAnswer().parse(DONE_PREFIX + reply)
    assert call.name == "Done" and json.loads(call.content)["parameters"]["answer"] == answer


@pytest.mark.parametrize("reply", ["", "I think the answer is five", "```python\nprint(5)\n```"])
def test_a_reply_with_no_value_answers_nothing(reply):
    assert DoneAnswer().parse(DONE_PREFIX + reply) is None


def test_a_malformed_reply_is_a_recorded_failure_of_the_episode_never_an_exception():
    t = task()
    before, cfg = finished(t, act("Observe"))
    prose, _ = forced(t, before, cfg, "the total, I believe")
    assert not prose.passed and prose.finish_reason == "no_call" and prose.submitted_code is None
    broken, _ = forced(t, before, cfg, "}}</action>")  # a closed action whose JSON is broken: an invalid action
    assert broken.turns[-1].call.name == INVALID and broken.turns[-1].observation.status == "invalid"
    assert not broken.passed and broken.grade is None


def test_a_call_that_is_not_a_json_action_is_refused_by_the_episode_not_raised():
    # what a code task's forced submission looked like to a CodeGym episode before: json.loads raised in step
    episode = CodeGymEnvironment().open(task(), 0)
    obs = episode.step(ToolCall("submit", "def f():\n    return 5", 0, 10))
    assert obs.status == "invalid" and not obs.executed and "malformed action" in obs.text
    assert episode.final_answer() is not None and episode.final_answer().prefix == DONE_PREFIX


def test_code_and_codegym_episodes_of_one_batch_each_get_their_own_final_answer():
    from agentic_rl.envs.toolset import SUBMIT_FENCE, ToolSetEnvironment
    from tests.rollout.fakes import TASK, toolset

    log: list = []
    env = ToolSetEnvironment.of(toolset(("execute", "submit"), log))  # code tasks get the tool set, CodeGym its own
    gym = task()  # the numbers 2 and 3: Done with 5 is right
    good = "def add(a, b):\n    return a + b"

    def reply(req):
        history = ByteChatTokenizer().decode(req.history_ids)
        if history.endswith(SUBMIT_FENCE):
            return good + "\n```"
        if history.endswith(DONE_PREFIX):
            return "5}}</action>"
        return act("Observe") if req.task.harness == "codegym" else "Let me think."

    cfg = RolloutConfig(max_turns=1, max_new_tokens=400)
    before = run_episodes([(TASK, 0), (gym, 0)], ScriptedPolicy(reply), env, cfg)
    assert [t.submitted_code for t in before] == [None, None]
    after = run_final_submit([(TASK, before[0]), (gym, before[1])], ScriptedPolicy(reply), env, cfg)
    assert [t.task_id for t in after] == [TASK.task_id, gym.task_id]  # in the order given
    assert [t.turns[-1].prefix for t in after] == [SUBMIT_FENCE, DONE_PREFIX]
    assert after[0].passed and after[0].submitted_code == good and log == [("submit", good)]
    assert after[1].passed and after[1].turns[-1].call.name == "Done"
