"""`algo.max_staleness` (agentic_rl.rollout.ahead): the next batches roll out while the trainer updates, never more
than k ahead, each trajectory's staleness counted; and across a crash and a restore from the last checkpoint every
training prompt is trained exactly once, in the data's order, whatever was rolled out ahead.

The training loop itself runs (`train.train_loop`, `train.train_on_chunk`, the real agent loop with a scripted policy
and scripted tools); only the GRPO update is a recorder and the checkpoint a copy of the loop's position.
"""

from __future__ import annotations

import contextlib
import random
import threading
from types import SimpleNamespace

import pytest

import agentic_rl.train as train_module
from agentic_rl.envs.toolset import as_environment
from agentic_rl.rewards import binary
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy
from agentic_rl.rollout.ahead import RolloutsAhead, batch_jobs, staleness_metrics
from agentic_rl.train import Position, epoch_order, train_loop
from agentic_rl.types import Task
from tests.rollout.fakes import toolset
from tests.training_fakes import fake_training

GROUP = 2


def make_task(n: int) -> Task:
    return Task(task_id=f"t/{n}", prompt=f"Task {n}: write add(a, b).", tests="", harness="pytest", entry_point="add")


class ServedScript(ScriptedPolicy):
    """A scripted policy that behaves as sampler servers do towards the loop: its weights are apart from the
    trainer's (`samples_apart`), it is sent versions (`sync_if_changed`), and it tags its episodes with the version
    that sampled them."""

    samples_apart = True

    def __init__(self) -> None:
        super().__init__(lambda req: "```submit\ndef add(a, b):\n    return a + b\n```")
        self.publisher = SimpleNamespace(version=0)
        self.episode_versions: dict[int, int] = {}
        self.sync_on_session = True
        self.rolled_at: list[int] = []  # the version at each rollout's start

    def sync_if_changed(self) -> float:
        self.publisher.version += 1
        return 0.0

    def generate(self, requests, sampling, stop):
        if requests and requests[0].turn_index == 0:
            self.rolled_at.append(self.publisher.version)
        for r in requests:
            self.episode_versions.setdefault(r.episode, self.publisher.version)
        return super().generate(requests, sampling, stop)


# ---- the pipeline on its own ------------------------------------------------------------------------------------


def test_synchronous_rolls_out_each_batch_when_asked_in_the_callers_thread():
    seen = []
    ahead = RolloutsAhead(lambda jobs: seen.append(threading.get_ident()) or list(jobs), ScriptedPolicy(str), 0)
    jobs = batch_jobs([make_task(0)], GROUP)
    result, lags = ahead.take(jobs, [batch_jobs([make_task(1)], GROUP)])
    assert result == jobs and lags == [0, 0] and seen == [threading.get_ident()]
    ahead.updated()
    assert ahead._pool is None and not ahead._ahead  # nothing rolls out ahead


def test_a_sampler_in_the_trainers_process_cannot_run_ahead():
    with pytest.raises(ValueError, match="rollout.servers=1"):
        RolloutsAhead(list, ScriptedPolicy(str), 1)


@pytest.mark.parametrize("k", [1, 2])
def test_the_next_k_batches_roll_out_during_the_update_and_their_staleness_is_at_most_k(k):
    policy = ServedScript()
    started: list[tuple[str, int]] = []
    release = threading.Event()

    def roll(jobs):
        version = policy.publisher.version  # the weights the servers hold as the batch starts
        started.append((jobs[0][0].task_id, version))
        if len(started) > 1:
            release.wait(10)  # the batches ahead are held until the trainer's update is done
        policy.episode_versions = {n: version for n in range(len(jobs))}
        return list(jobs)

    ahead = RolloutsAhead(roll, policy, k)
    assert policy.sync_on_session is False and policy.publisher.version == 1  # the warm-up's weights went out
    batches = [batch_jobs([make_task(n)], GROUP) for n in range(4)]
    lags_seen = []
    for b in range(4):
        result, lags = ahead.take(batches[b], batches[b + 1 :])
        assert result == batches[b]
        lags_seen.append(lags)
        assert len(ahead._ahead) <= k  # never more than k batches ahead
        ahead.updated()  # the update is done: its weights go out
        release.set()
    ahead.close()
    assert policy.sync_on_session is True  # the evaluation after training syncs its rollouts again
    assert [task for task, _ in started] == ["t/0", "t/1", "t/2", "t/3"]  # each batch rolled out once, in order
    assert started[1][1] == 1  # batch 1 started before batch 0's update was sent: it is one version behind
    assert all(0 <= lag <= k for lags in lags_seen for lag in lags) and max(max(lags) for lags in lags_seen) >= 1
    assert staleness_metrics([0, 1, 2, 1]) == {"rollout/staleness_mean": 1.0, "rollout/staleness_max": 2.0}


# ---- through the training loop, across a crash and a restore --------------------------------------------------


class Killed(Exception):
    """What kill -9 does to the loop: it stops in the middle of an update, nothing after it runs."""


def loop_training(n_tasks: int, max_staleness: int, epochs: int, trained: list[str], crash_at: int | None):
    updates = {"n": 0}

    def update_rollout_batch(model, optimizer, groups, rewards, cfg, pad_id, *, temperature, step, **kwargs):
        updates["n"] += 1
        if updates["n"] == crash_at:
            raise Killed
        for group in groups:
            assert len({traj.task_id for traj in group}) == 1
            trained.append(group[0].task_id)
        return [SimpleNamespace(metrics=lambda: {}, update_s=0.0) for _ in groups]

    algo = SimpleNamespace(
        group_size=GROUP, epochs=epochs, tasks_per_epoch=None, tasks_per_rollout=2, max_staleness=max_staleness
    )
    t = fake_training(
        cfg=SimpleNamespace(get=lambda key, default=None: {"checkpoint_every": 1}.get(key, default), progress=False),
        algo=algo,
        train_tasks=[make_task(n) for n in range(n_tasks)],
        policy=ServedScript(),
        env=as_environment(toolset(("submit",), [])),
        rollout_cfg=RolloutConfig(max_turns=1),
        reward_fn=binary,
        pad_id=0,
        n_steps=n_tasks * epochs,
    )
    return t, update_rollout_batch


@pytest.mark.parametrize("max_staleness", [0, 1, 2])
@pytest.mark.parametrize("crash_at", [2, 4])
def test_every_prompt_is_trained_once_in_order_across_a_crash_and_a_restore(monkeypatch, max_staleness, crash_at):
    """7 tasks, batches of 2, 2 epochs (8 batches); the run dies in its `crash_at`-th update with batches rolled out
    ahead, and resumes from its last checkpoint (one after every batch)."""
    trained: list[str] = []
    saved: list[dict] = []

    def save_training(t, pos, ctx, summary):
        saved.append(
            {"order": list(pos.order or []) or None, "index": pos.index, "epoch": pos.epoch, "step": pos.step}
            | {"rng": pos.data_rng.getstate(), "trained": len(trained)}
        )

    monkeypatch.setattr(train_module, "save_training", save_training)
    ctx = SimpleNamespace(
        interrupts=SimpleNamespace(deferred=contextlib.nullcontext, requested=False),
        tracker=SimpleNamespace(log=lambda metrics, step: None, log_trajectories=lambda *a: None),
    )
    t, update = loop_training(7, max_staleness, 2, trained, crash_at)
    monkeypatch.setattr(train_module, "update_rollout_batch", update)
    with pytest.raises(Killed):
        train_loop(t, Position(data_rng=random.Random(0)), ctx, {})
    state = saved[-1]
    del trained[state["trained"] :]  # what was trained after the checkpoint died with the run
    t, update = loop_training(7, max_staleness, 2, trained, None)  # a fresh process: nothing rolled out ahead
    monkeypatch.setattr(train_module, "update_rollout_batch", update)
    pos = Position(data_rng=random.Random(), step=state["step"], epoch=state["epoch"], index=state["index"])
    pos.order = state["order"]
    pos.data_rng.setstate(state["rng"])
    train_loop(t, pos, ctx, {})
    rng = random.Random(0)
    want = [f"t/{i}" for _ in range(2) for i in epoch_order(7, None, rng)]
    assert trained == want
