"""A training step's rollout batch is cut into task groups that each hold the G samples of one task.

`train_on_chunk` rolls out every task of a chunk in one batch and then slices the trajectories into groups of
G; the advantages are normalised inside each slice. The rollout, reward and tracking run for real (a scripted
policy and scripted tools); only the GRPO update is replaced by a recorder, so no model is needed.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

import agentic_rl.train as train_module
from agentic_rl.envs.toolset import as_environment
from agentic_rl.rewards import binary
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy
from agentic_rl.train import Position, train_on_chunk
from agentic_rl.types import Task
from tests.rollout.fakes import toolset
from tests.training_fakes import fake_training

GROUP = 3


def make_task(n: int) -> Task:
    return Task(task_id=f"t/{n}", prompt=f"Task {n}: write add(a, b).", tests="", harness="pytest", entry_point="add")


def reply(req) -> str:
    """Task t/1 is solved by every sample, the others by none: each group's rewards say which task it holds."""
    body = "a + b" if req.task.task_id == "t/1" else "a - b"
    return f"```submit\ndef add(a, b):\n    return {body}\n```"


class Recorder:
    """Stands in for `update_rollout_batch`: keeps what the update would train on."""

    def __init__(self) -> None:
        self.groups: list = []
        self.rewards: list = []

    def __call__(self, model, optimizer, groups, rewards, cfg, pad_id, *, temperature, step=None, reference=None):
        self.groups, self.rewards = [list(g) for g in groups], [r.clone() for r in rewards]
        return [SimpleNamespace(metrics=lambda: {}, update_s=0.0) for _ in groups]


def test_each_group_holds_the_g_samples_of_one_task_in_chunk_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards against the rollout jobs of a batch being ordered so that a "group" mixes tasks (e.g. jobs built
    sample-major, `[(task, g) for g in range(G) for task in chunk]`, then cut into slices of G): the advantage
    would then compare samples of different tasks."""
    recorder = Recorder()
    monkeypatch.setattr(train_module, "update_rollout_batch", recorder)
    logged: list[tuple[int, list, str]] = []
    tracker = SimpleNamespace(
        log=lambda metrics, step: None,
        log_trajectories=lambda step, group, bds, prompt: logged.append((step, group, prompt)),
    )
    log: list = []
    t = fake_training(
        algo=SimpleNamespace(group_size=GROUP),
        policy=ScriptedPolicy(reply),
        env=as_environment(toolset(("submit",), log)),
        rollout_cfg=RolloutConfig(max_turns=1),
        reward_fn=binary,
        pad_id=0,
    )
    chunk = [make_task(n) for n in range(4)]
    bar = SimpleNamespace(update=lambda n: None, set_postfix=lambda **kw: None)

    train_on_chunk(t, chunk, Position(data_rng=None), SimpleNamespace(tracker=tracker), bar)

    assert len(recorder.groups) == len(chunk)
    for task, group, rewards in zip(chunk, recorder.groups, recorder.rewards):
        assert [traj.task_id for traj in group] == [task.task_id] * GROUP
        assert sorted(traj.sample_index for traj in group) == list(range(GROUP))
        expected = 1.0 if task.task_id == "t/1" else 0.0
        assert torch.equal(rewards, torch.full((GROUP,), expected, dtype=torch.float64))
    # each logged step shows one task's group with that task's prompt
    assert [step for step, _, _ in logged] == [1, 2, 3, 4]
    for task, (_, group, prompt) in zip(chunk, logged):
        assert prompt == task.prompt and {traj.task_id for traj in group} == {task.task_id}
