"""The continuous-batching turn loop (`ContinuousPolicy`): each episode's trajectory is the one the turn-by-turn
loop makes of the same replies, whatever order the engine finishes turns in and tools answer in; a slow tool does
not hold other episodes back; an error leaves nothing queued in the engine."""

from __future__ import annotations

import contextlib
import random
import threading
from dataclasses import replace

import pytest

from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.policy import GenerationStats
from agentic_rl.tools.code import ExecuteTool
from agentic_rl.types import Observation, Task
from tests.rollout.fakes import TASK, toolset

SUBMIT_OK = "```submit\ndef add(a, b):\n    return a + b\n```"
SUBMIT_BAD = "```submit\ndef add(a, b):\n    return a - b\n```"
REPLIES = (
    "<search>add two numbers</search> tail that is cut",
    "```python\nprint(1 + 2)\n```",
    "```python\nraise ValueError\n```",
    "no call at all",
    SUBMIT_BAD,
    SUBMIT_OK,
)


class ScrambledContinuousPolicy:
    """A `ContinuousPolicy` over scripted replies whose "engine" finishes the queued turns in a random order, a
    random number per step (none in some steps), as a real engine's steps do with replies of different lengths."""

    continuous_batching = True

    def __init__(self, script, order_seed: int) -> None:
        self.inner = ScriptedPolicy(script)
        self.tokenizer = self.inner.tokenizer
        self.rng = random.Random(order_seed)
        self.queued: list = []
        self.started: list[tuple[int, int]] = []  # (episode, turn index), in the order turns were queued
        self.aborted = 0

    @contextlib.contextmanager
    def session(self):
        yield GenerationStats()

    def start_turn(self, request, sampling, stop) -> None:
        self.queued.append((request, sampling, stop))
        self.started.append((request.episode, request.turn_index))

    def finished_turns(self):
        done = self.rng.sample(self.queued, self.rng.randint(0, min(2, len(self.queued))))
        out = []
        for item in done:
            self.queued.remove(item)
            request, sampling, stop = item
            [ids] = self.inner.generate([request], sampling, stop)
            out.append((request.episode, ids, None))
        return out

    def turns_in_flight(self) -> int:
        return len(self.queued)

    def abort_turns(self) -> None:
        self.aborted += len(self.queued)
        self.queued.clear()


def episode_script(episode_seed: int):
    """Replies that depend on the episode (task, sample) and the turn, drawn from REPLIES."""

    def reply(request) -> str:
        rng = random.Random(f"{episode_seed}/{request.task.task_id}/{request.sample_index}/{request.turn_index}")
        return rng.choice(REPLIES)

    return reply


def jobs(n_tasks: int, group: int) -> list[tuple[Task, int]]:
    return [(replace(TASK, task_id=f"t/{k}"), g) for k in range(n_tasks) for g in range(group)]


def comparable(trajectory):
    return (
        trajectory.task_id,
        trajectory.sample_index,
        trajectory.token_ids,
        trajectory.loss_mask,
        trajectory.finish_reason,
        trajectory.passed,
        trajectory.submitted_code,
        [(t.text, t.observation.status if t.observation else None) for t in trajectory.turns],
    )


@pytest.mark.parametrize("order_seed", [0, 1, 2])
@pytest.mark.parametrize(
    "cfg",
    [
        RolloutConfig(max_turns=4),
        RolloutConfig(max_turns=5, max_tool_calls=1),
        RolloutConfig(max_turns=3, on_no_call="stop"),
        RolloutConfig(max_turns=6, max_context_tokens=600),
    ],
    ids=["nudge", "cap-1", "stop-on-no-call", "context-bound"],
)
def test_each_trajectory_is_the_turn_by_turn_loops_whatever_the_order(cfg, order_seed):
    script = episode_script(order_seed)
    turn_by_turn = run_episodes(jobs(3, 4), ScriptedPolicy(script), toolset(("search", "execute", "submit"), []), cfg)
    continuous_policy = ScrambledContinuousPolicy(script, order_seed)
    progress: list[tuple[int, int]] = []
    continuous = run_episodes(
        jobs(3, 4),
        continuous_policy,
        toolset(("search", "execute", "submit"), []),
        cfg,
        on_turn=lambda active, done: progress.append((active, done)),
    )
    assert [comparable(t) for t in continuous] == [comparable(t) for t in turn_by_turn]
    ends = {t.finish_reason for t in turn_by_turn}
    assert "passed" in ends and len(ends) > 1  # the scripts reach more than one end
    if cfg.on_no_call == "stop":
        assert "no_call" in ends
    if cfg.max_context_tokens < 4096:
        assert "length" in ends
    if cfg.max_tool_calls is not None:
        assert any(turn.observation and turn.observation.status == "capped" for t in turn_by_turn for turn in t.turns)
    # turns were queued out of episode order (the scramble happened) and the progress ends with every episode done
    assert continuous_policy.started != sorted(continuous_policy.started, key=lambda e: (e[1], e[0]))
    assert progress[-1] == (0, 12) and continuous_policy.aborted == 0
    assert continuous.stats.generated_tokens == turn_by_turn.stats.generated_tokens


class GatedTool:
    """An execute tool that answers `print('slow')` only once `gate` is set, and anything else at once."""

    name, description, spec = "execute", "execute tool", ExecuteTool.spec

    def __init__(self) -> None:
        self.gate = threading.Event()

    def __call__(self, call, task) -> Observation:
        if "slow" in call.content and not self.gate.wait(timeout=30):
            return Observation(tool="execute", text="<exec_result>timed out</exec_result>", ok=False, status="error")
        return Observation(tool="execute", text="<exec_result>3</exec_result>", ok=True, status="ok")


def test_a_slow_tool_does_not_hold_the_other_episodes_back():
    """Episode 0's tool answers only once another episode has ended: the turn-by-turn loop would wait for it at
    the end of turn 0 (and time out); the continuous loop runs episode 1 to its end meanwhile."""
    tools = toolset(("execute", "submit"), [])
    gated = GatedTool()
    tools.tools["execute"] = gated

    def script(request) -> str:
        if request.sample_index == 0:
            return "```python\nprint('slow')\n```" if request.turn_index == 0 else SUBMIT_OK
        return ("```python\nprint(1 + 2)\n```", "```python\nprint(1 + 2)\n```", SUBMIT_OK)[request.turn_index]

    policy = ScrambledContinuousPolicy(script, order_seed=0)

    def on_turn(active, done):
        if done:  # episode 0 cannot end while its tool waits: this is episode 1
            gated.gate.set()

    trajectories = run_episodes([(TASK, 0), (TASK, 1)], policy, tools, RolloutConfig(max_turns=3), on_turn=on_turn)
    assert [t.passed for t in trajectories] == [True, True]
    assert trajectories[0].turns[0].observation.status == "ok"  # answered, not timed out
    assert policy.started.index((1, 2)) < policy.started.index((0, 1))  # episode 1 ended before episode 0 resumed


def test_an_error_mid_rollout_leaves_nothing_queued_in_the_engine():
    def script(request) -> str:
        if request.sample_index == 0 and request.turn_index == 1:
            raise RuntimeError("the engine went away")
        return "```python\nprint(1)\n```" if request.sample_index == 0 else "thinking about it, no call yet"

    policy = ScrambledContinuousPolicy(script, order_seed=3)
    with pytest.raises(RuntimeError, match="the engine went away"):
        run_episodes(
            [(TASK, g) for g in range(4)], policy, toolset(("execute", "submit"), []), RolloutConfig(max_turns=30)
        )
    assert policy.turns_in_flight() == 0 and policy.aborted > 0
