"""Failed calls are typed: the policy's own (its code raised, its action was malformed) or the infrastructure's (the
sandbox failed, the harness crashed, the environment does not start). An infrastructure failure ends the episode
unscored (`finish_reason` "infra_failure"); a policy error is an observation like any other and the episode goes on."""

from __future__ import annotations

from types import SimpleNamespace

from agentic_rl.envs.toolset import build_environment
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.tools import build_toolset
from agentic_rl.types import Task
from tests.envs.serve_stubs import InProcessSandbox, counter_task, tools_cfg
from tests.envs.test_codegym import act

CODE_TASK = Task(task_id="code/solve", prompt="Write solve().", tests="", harness="pytest", entry_point="solve")


def roll(sandbox, replies, task=CODE_TASK, tools="code"):
    env = build_environment(build_toolset(tools_cfg(tools), sandbox), sandbox)
    policy = ScriptedPolicy(lambda req: replies[min(req.turn_index, len(replies) - 1)])
    return run_episodes([(task, 0)], policy, env, RolloutConfig(max_turns=len(replies), max_new_tokens=300))[0]


def test_a_policy_error_is_the_policys_and_the_episode_goes_on():
    traj = roll(
        InProcessSandbox(), ["```python\n1/0\n```", "<action>{broken</action> ```submit\ndef solve():\n    pass\n```"]
    )
    first = traj.turns[0].observation
    assert (first.ok, first.fault, first.cause) == (False, "policy", "error")
    assert traj.passed and traj.finish_reason == "passed" and traj.infra_failure is None
    assert traj.turns[1].observation.fault is None  # a call that did not fail has no fault


def test_a_sandbox_failure_ends_the_episode_as_the_infrastructures_and_grades_nothing():
    replies = ["```python\nprint(1)\n```", "```submit\ndef solve():\n    pass\n```", "```python\nprint(2)\n```"]
    traj = roll(InProcessSandbox(fail_if="def solve"), replies)
    last = traj.turns[-1].observation
    assert (last.fault, last.cause, last.status) == ("infra", "sandbox", "sandbox_error")
    assert traj.finish_reason == "infra_failure" and traj.infra_failure == "sandbox"
    assert len(traj.turns) == 2 and traj.grade is None and not traj.passed  # stopped there; no verdict recorded


class RaisingSandbox(InProcessSandbox):
    def execute(self, code, timeout_s=10.0):
        raise ConnectionError("the sandbox's worker is gone")


def test_a_tool_that_raises_is_the_harness_crashing():
    traj = roll(RaisingSandbox(), ["```python\nprint(1)\n```", "```python\nprint(2)\n```"])
    assert traj.infra_failure == "harness" and traj.turns[0].observation.status == "tool_error"
    assert len(traj.turns) == 1


class SilentDriverSandbox(InProcessSandbox):
    """Resets work; every step exits with an error and prints no result (the driver crashed)."""

    def execute(self, code, timeout_s=10.0):
        if '\\"op\\": \\"step\\"' in code or '"op": "step"' in code:
            return SimpleNamespace(ok=False, status="error", stdout="", stderr="Segmentation fault")
        return super().execute(code, timeout_s)


def test_codegym_failures_are_typed_by_whose_they_are():
    ok = roll(InProcessSandbox(), [act("Add", value=-1), act("Teleport"), act("Done", answer=5)], counter_task())
    assert [t.observation.fault for t in ok.turns] == ["policy", "policy", None] and ok.passed
    assert [t.observation.cause for t in ok.turns[:2]] == ["error", "invalid"]
    crashed = roll(SilentDriverSandbox(), [act("Observe"), act("Done", answer=5)], counter_task())
    assert crashed.infra_failure == "harness" and len(crashed.turns) == 1
    no_sandbox = roll(InProcessSandbox(fail_if='"op": "reset"'), [act("Observe")], counter_task())
    assert no_sandbox.infra_failure == "sandbox"
    broken = counter_task()
    broken.metadata["codegym"]["code"] = "this is not python("
    assert roll(InProcessSandbox(), [act("Observe")], broken).infra_failure == "env_broken"


def test_of_several_tasks_only_the_one_whose_environment_did_not_open_ends_unscored():
    """Opening is per task: the third of three does not start (its environment's code is broken), so it alone ends
    with "infra_failure"; the first two are played out."""
    broken = counter_task()
    broken.metadata["codegym"]["code"] = "this is not python("
    sandbox = InProcessSandbox()
    env = build_environment(build_toolset(tools_cfg("code"), sandbox), sandbox)
    replies = [act("Observe"), act("Done", answer=5)]
    policy = ScriptedPolicy(lambda req: replies[min(req.turn_index, len(replies) - 1)])
    jobs = [(counter_task(), 0), (counter_task(), 1), (broken, 0)]
    trajs = run_episodes(jobs, policy, env, RolloutConfig(max_turns=2, max_new_tokens=300))
    assert [t.infra_failure for t in trajs] == [None, None, "env_broken"]
    assert [t.finish_reason for t in trajs[:2]] == ["passed", "passed"] and trajs[2].finish_reason == "infra_failure"


def test_an_episode_no_server_opened_ends_unscored_and_only_it():
    """The third of three tasks could not be opened: it ends with its cause before any turn; the two opened before
    it are played out (the episode ended is the one just opened, not another)."""
    from agentic_rl.envs.serve.served import UnopenedEpisode

    sandbox = InProcessSandbox()
    env = build_environment(build_toolset(tools_cfg("code"), sandbox), sandbox)
    opens = env.open  # a served environment's `UnopenedEpisode` for the task no server could open

    def open_or_not(task, sample_index):
        return UnopenedEpisode(task, "sandbox") if task.task_id == "code/unopened" else opens(task, sample_index)

    env.open = open_or_not
    unopened = Task(task_id="code/unopened", prompt="Write solve().", tests="", harness="pytest", entry_point="solve")
    policy = ScriptedPolicy(lambda req: "```python\nprint(1)\n```")
    jobs = [(CODE_TASK, 0), (CODE_TASK, 1), (unopened, 0)]
    trajs = run_episodes(jobs, policy, env, RolloutConfig(max_turns=2, max_new_tokens=300))
    assert [t.infra_failure for t in trajs] == [None, None, "sandbox"]
    assert [t.finish_reason for t in trajs] == ["max_turns", "max_turns", "infra_failure"]
    assert [len(t.turns) for t in trajs] == [2, 2, 0]
