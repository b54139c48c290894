"""CodeGym episodes through the real agent loop and sandbox: solving, trial-then-overwrite state, T_max, and
bad input (malformed actions, unknown tools, Done without an answer, a hanging tool, reset that raises)."""

from __future__ import annotations

import json

import pytest

from agentic_rl.envs.codegym import WORKED_EXAMPLE, CodeGymEnvironment, find_action
from agentic_rl.envs.tasks import environment_tasks
from agentic_rl.envs.toolset import ToolSetEnvironment
from agentic_rl.rewards import binary
from agentic_rl.rollout import (
    ByteChatTokenizer,
    RolloutConfig,
    ScriptedPolicy,
    run_episodes,
)
from agentic_rl.rollout.stops import StopScanner
from agentic_rl.tools.base import ToolSet
from agentic_rl.types import Observation

COUNTER_ENV = '''
import json, time
import gymnasium


class CounterEnv(gymnasium.Env):
    """Add numbers to a running total; answer the total."""

    def __init__(self):
        self.func_mapping = {"Observe": self.Observe, "Add": self.Add, "Sleep": self.Sleep,
                             "Total": self.Total, "Done": self.Done}

    def reset(self, *, seed=None, options=None):
        if options.get("explode"):
            raise RuntimeError("bad configuration")
        self.numbers, self.total = list(options["numbers"]), 0
        return self.Observe(), {}

    def Observe(self):
        """Return the numbers and the running total."""
        return json.dumps({"numbers": self.numbers, "total": self.total})

    def Add(self, value):
        """Add value to the total; a negative value is refused (raises) after touching the state."""
        self.total += value
        if value < 0:
            raise ValueError("negative values are not allowed")
        return str(self.total)

    def Sleep(self, seconds):
        """Wait."""
        time.sleep(seconds)
        return "slept"

    def Total(self):
        """Return the total."""
        return str(self.total)

    def Done(self, answer):
        """Submit the answer."""
        return answer

    def get_ref_answer(self):
        return sum(self.numbers)

    def step(self, action):
        call = json.loads(action)
        name, params = call["name"], call.get("parameters", {})
        if name == "Done":
            right = params["answer"] == self.get_ref_answer()
            return ("correct" if right else "wrong"), float(right), True, False, {}
        return self.func_mapping[name](**params), 0.0, False, False, {}
'''


def task(numbers=(2, 3), worked_example=False, calls_left=False, **options):
    record = {
        "env_id": "test/counter",
        "class_name": "CounterEnv",
        "code": COUNTER_ENV,
        "configs": [{"numbers": list(numbers), **options}],
        "description": "Sum the numbers with the tools.",
    }
    return environment_tasks(
        record, t_max=options.pop("t_max", None), worked_example=worked_example, calls_left=calls_left
    )[0]


def act(name, **parameters):
    return f"<action>{json.dumps({'name': name, 'parameters': parameters})}</action>"


def roll(task_, *replies, t_max=64, timeout_s=10.0, max_turns=None, response_prefix=""):
    policy = ScriptedPolicy(lambda req: replies[min(req.turn_index, len(replies) - 1)])
    env = CodeGymEnvironment(timeout_s=timeout_s, t_max=t_max)
    cfg = RolloutConfig(
        max_turns=max_turns or len(replies), max_new_tokens=400, on_no_call="nudge", response_prefix=response_prefix
    )
    return run_episodes([(task_, 0)], policy, env, cfg)[0]


def observations(traj):
    return [ByteChatTokenizer().decode(t.observation_ids) if t.observation_ids else "" for t in traj.turns]


def test_solving_through_the_tools_passes_and_counts_calls_under_the_tools_names():
    traj = roll(task(), act("Observe"), act("Add", value=2), act("Add", value=3), act("Total"), act("Done", answer=5))
    assert traj.passed and traj.finish_reason == "passed"
    assert binary(traj).total == 1.0
    obs = observations(traj)
    assert '"total": 0' in obs[0] and "5" in obs[3]  # the state carried over between sandbox calls
    counts = traj.calls_by_kind()
    assert counts["Add"] == 2 and counts["Observe"] == 1 and counts["Done"] == 1 and counts["Sleep"] == 0


def test_wrong_answer_scores_zero_and_ends_the_episode():
    traj = roll(task(), act("Done", answer=4), act("Observe"))
    assert not traj.passed and traj.finish_reason == "failed" and len(traj.turns) == 1
    assert binary(traj).total == 0.0


def test_a_failed_call_leaves_the_state_as_it_was():
    traj = roll(task(), act("Add", value=4), act("Add", value=-100), act("Total"), act("Done", answer=4))
    obs = observations(traj)
    assert "ERROR" in obs[1] and "negative values" in obs[1]
    assert traj.turns[1].observation.status == "error"
    assert "4" in obs[2] and "-96" not in obs[2]  # the refused call's change to the total was not committed


def test_malformed_and_unknown_actions_answer_an_error_and_the_run_goes_on():
    traj = roll(
        task(),
        "<action>{not json</action>",
        act("Teleport"),
        '<action>{"name": "Add", "parameters": 3}</action>',
        act("Done", answer=5),
    )
    obs = observations(traj)
    assert "malformed action" in obs[0] and "unknown tool 'Teleport'" in obs[1] and "must be a JSON object" in obs[2]
    assert [t.observation.status for t in traj.turns[:3]] == ["invalid"] * 3
    assert not any(t.observation.executed for t in traj.turns[:3])  # refused without running anything
    assert traj.passed


def test_done_without_an_answer_is_an_error_not_the_end():
    traj = roll(task(), act("Done"), act("Done", answer=5))
    assert "ERROR" in observations(traj)[0] and "answer" in observations(traj)[0]
    assert traj.passed and len(traj.turns) == 2


def test_a_hanging_tool_times_out_and_leaves_the_state():
    traj = roll(task(), act("Add", value=1), act("Sleep", seconds=60), act("Total"), timeout_s=3.0)
    assert traj.turns[1].observation.status == "timeout" and "timed out" in observations(traj)[1]
    assert "1" in observations(traj)[2]


def test_an_environment_that_raises_in_reset_gives_error_observations():
    traj = roll(task(explode=True), act("Observe"), act("Done", answer=5))
    assert all("failed to start" in o and "bad configuration" in o for o in observations(traj))
    assert not traj.passed and binary(traj).total == 0.0


def test_t_max_ends_the_episode_after_that_many_calls():
    traj = roll(task(), act("Observe"), "<action>oops</action>", act("Total"), act("Done", answer=5), t_max=3)
    assert traj.finish_reason == "t_max" and len(traj.turns) == 3 and not traj.passed
    assert "T_max = 3" in observations(traj)[2]


def test_a_reply_without_an_action_is_nudged_toward_the_action_format():
    traj = roll(task(), "I think the answer is 5.", act("Done", answer=5))
    assert traj.turns[0].call is None and "<action>" in observations(traj)[0]
    assert traj.passed


@pytest.mark.parametrize("code", ["this is not python(", "class Other:\n    pass\n"])
def test_broken_environment_code_is_an_error_observation(code):
    t = task()
    t.metadata["codegym"]["code"] = code
    traj = roll(t, act("Observe"))
    assert "failed to start" in observations(traj)[0]


def test_a_response_prefix_opens_each_turn_as_context_and_the_parser_reads_the_whole_action():
    # the model writes only what follows "<action>": the JSON, the closing tag, and text the stop cuts off
    replies = [
        act(name, **params).removeprefix("<action>") + " then more"
        for name, params in [("Observe", {}), ("Add", {"value": 2}), ("Add", {"value": 3}), ("Done", {"answer": 5})]
    ]
    traj = roll(task(), *replies, response_prefix="<action>")
    assert traj.passed and [t.call.name for t in traj.turns] == ["Observe", "Add", "Add", "Done"]
    assert '"total": 0' in observations(traj)[0] and "5" in observations(traj)[2]
    assert all(t.prefix == "<action>" and t.text.endswith("</action>") for t in traj.turns)  # cut at the close
    # each turn's generated ids follow the prefix's ids; the prefix is masked out (context), the reply is trained
    tok, prefix = ByteChatTokenizer(), ByteChatTokenizer().encode("<action>")
    pos = traj.prompt_len
    for turn in traj.turns:
        assert traj.token_ids[pos : pos + len(prefix)] == prefix and set(traj.loss_mask[pos : pos + len(prefix)]) == {0}
        pos += len(prefix)
        assert traj.token_ids[pos : pos + len(turn.generated_ids)] == turn.generated_ids
        assert set(traj.loss_mask[pos : pos + len(turn.generated_ids)]) == {1}
        pos += len(turn.generated_ids) + len(turn.observation_ids)
    assert pos == len(traj.token_ids)  # nothing after the last turn: the episode ended with Done
    assert sum(traj.loss_mask) == sum(len(t.generated_ids) for t in traj.turns)
    assert "<action>" not in tok.decode([i for i, m in zip(traj.token_ids, traj.loss_mask) if m])


def test_without_a_response_prefix_the_same_replies_are_not_actions():
    reply = act("Done", answer=5).removeprefix("<action>")
    traj = roll(task(), reply, reply, response_prefix="")
    assert all(t.call is None for t in traj.turns) and not traj.passed  # nudged, as the base rates measured


def test_a_response_prefix_that_already_holds_a_complete_action_is_refused():
    with pytest.raises(ValueError, match="response_prefix"):
        roll(task(), act("Observe"), response_prefix=act("Observe"))


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ('<action>{"name": "Observe", "parameters": {}}</action>', '{"name": "Observe", "parameters": {}}'),
        ('say <action> {"name": "Total"} </action> more', '{"name": "Total"}'),
        # one complete JSON object, then other text instead of the closing tag: exactly that object
        (
            '<action>{"name": "Done", "parameters": {"answer": true}}\n\nTrue\nFalse',
            '{"name": "Done", "parameters": {"answer": true}}',
        ),
        ('<action>{"name": "Total"} and then</action>', '{"name": "Total"}'),
        # closed but not a JSON object: the content as written (an invalid action)
        ("<action>{not json</action>", "{not json"),
        ('<action>{"name": "Add", "parameters": {...}</action>', '{"name": "Add", "parameters": {...}'),
        ("<action>[1, 2]</action>", "[1, 2]"),
        # no action (yet): no tag, an unfinished object, or an object whose closing tag may still be coming
        ("I would call Observe", None),
        ('<action>{"name": "Observe", "parameters": {', None),
        ('<action>{"name": "Observe"}  \n', None),
        ('<action>{"name": "Observe"}</act', None),
        ('<action>{"name": "Observe", "parameters": {...}}, <action>{"name"', None),
        ("<action>[1, 2] then", None),
        # a stray tag before a closed action: the first tag's action, never the last one's
        (
            '<action>{"name": "Observe", "parameters": {}} hmm <action>{"name": "Done", "parameters": {}}</action>',
            '{"name": "Observe", "parameters": {}}',
        ),
        (
            '<action> let me think <action>{"name": "Total", "parameters": {}}</action>',
            'let me think <action>{"name": "Total", "parameters": {}}',
        ),
    ],
)
def test_find_action_reads_the_first_action_closed_or_ended_by_its_json_object(text, content):
    found = find_action(text)
    assert (found[0] if found else None) == content
    if found:  # once there is an action, any continuation has the same one (generation stops at the first)
        assert find_action(text + "</action> x") == found


def test_an_unclosed_action_stops_the_turn_after_its_object_and_runs():
    # what the embedded model writes after the "<action>" prefix: the object, then prose instead of the tag
    traj = roll(
        task(),
        '{"name": "Observe", "parameters": {}}\n\nTrue\n\nFalse\n\nTrue',
        '{"name": "Done", "parameters": {"answer": 5}}\nThe answer is 5.',
        response_prefix="<action>",
    )
    assert [t.call.name for t in traj.turns] == ["Observe", "Done"] and traj.passed
    assert traj.turns[0].text == '{"name": "Observe", "parameters": {}}\n\nT'  # cut at the first byte after it
    assert '"total": 0' in observations(traj)[0]


def test_a_turn_with_a_stray_action_before_a_closed_one_runs_its_first_action():
    # the first tag holds a complete Observe; a closed Done follows: the turn is the Observe, and the episode goes on
    stray = '<action>{"name": "Observe", "parameters": {}} wait, <action>{"name": "Done", "parameters": {"answer": 5}}'
    traj = roll(task(), stray + "</action>", act("Done", answer=5))
    assert [t.call.name for t in traj.turns] == ["Observe", "Done"] and traj.passed
    assert '"total": 0' in observations(traj)[0]
    # a stray tag with no JSON object: the turn is that tag's (malformed) action, not the closed Done after it
    traj = roll(task(), "<action> thinking " + act("Done", answer=5), act("Total"))
    assert traj.turns[0].observation.status == "invalid" and not traj.passed and len(traj.turns) == 2


class ScanningPolicy(ScriptedPolicy):
    """Stops as the HF engine does: a `StopScanner` per turn, fed one token at a time (closing markers honoured)."""

    def generate(self, requests, sampling, stop):
        out = []
        for req in requests:
            scanner, ids = StopScanner(self.tokenizer, stop), []
            for token in self.tokenizer.encode(self.script(req))[: sampling.max_new_tokens]:
                ids.append(token)
                if scanner.push(token):
                    break
            out.append(ids)
        return out


def test_the_first_codegym_rollout_of_a_tool_set_environment_stops_each_turn_at_its_action():
    # evaluation and training step CodeGym tasks through the run's tool set, whose CodeGym runner is made by its
    # first CodeGym task: the turns of that very first rollout stop at their action too
    grader = lambda call, task: Observation(tool="submit", text="", ok=True)  # noqa: E731
    env = ToolSetEnvironment.of(ToolSet(name="none", tools={}, grader=grader, system_prompt="SYS"))
    assert not env.harnesses.built  # its harness environments (CodeGym) are built by their first task
    reply = '{"name": "Observe", "parameters": {}}\n\nTrue\n\nFalse\n\nTrue'
    cfg = RolloutConfig(max_turns=1, max_new_tokens=400, on_no_call="nudge", response_prefix="<action>")
    traj = run_episodes([(task(), 0)], ScanningPolicy(lambda req: reply), env, cfg)[0]
    assert traj.turns[0].call.name == "Observe"
    assert traj.turns[0].text == '{"name": "Observe", "parameters": {}}\n\nT'


def test_the_worked_example_is_in_the_system_prompt_only_when_asked():
    env = CodeGymEnvironment()
    with_example = env.open(task(worked_example=True), 0).prompt_messages("chat")[0]["content"]
    without = env.open(task(), 0).prompt_messages("chat")[0]["content"]
    assert with_example.endswith(WORKED_EXAMPLE) and WORKED_EXAMPLE not in without
    # the example's actions are actions of the format: Observe, then Done with a concrete answer
    actions = [json.loads(find_action(line)[0]) for line in WORKED_EXAMPLE.splitlines() if "<action>" in line]
    assert [a["name"] for a in actions] == ["Observe", "Done"] and actions[1]["parameters"]["answer"] is True


def test_with_calls_left_each_observation_counts_down_and_the_last_but_one_asks_for_done():
    traj = roll(task(calls_left=True, t_max=3), act("Observe"), act("Total"), act("Total"))
    obs = observations(traj)
    assert "(2 calls left)" in obs[0] and "(1 call left: make it Done" in obs[1]
    assert "T_max = 3" in obs[2] and "left" not in obs[2]  # the last call ends the episode instead
    assert "left" not in "".join(observations(roll(task(t_max=3), act("Observe"), act("Total"))))  # off by default
