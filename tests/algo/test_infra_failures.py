"""Episodes an infrastructure failure ended are left out of their group: the baseline is the other episodes', the
update sees only them, and the drops are logged by cause (`rollout/infra_failures/<cause>`)."""

from __future__ import annotations

import pytest
import torch

from agentic_rl.algo.core import ADVANTAGES
from agentic_rl.algo.grpo import GRPOConfig, StepStats, scored_episodes, update_rollout_batch
from agentic_rl.envs.toolset import build_environment
from agentic_rl.rewards import binary
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.tools import build_toolset
from agentic_rl.types import Observation, Trajectory, Turn
from tests.envs.serve_stubs import InProcessSandbox, counter_task, tools_cfg
from tests.envs.test_codegym import act


def traj(infra=None, retries=()):
    turn = Turn(generated_ids=[1], text="x", observation=Observation(tool="t", text="", ok=True, retries=retries))
    return Trajectory("t", [0, 1], [0, 1], 1, turns=[turn], infra_failure=infra)


def test_the_baseline_is_that_of_the_episodes_the_policy_is_scored_on():
    group = [traj(), traj(), traj("sandbox"), traj(retries=("server_died",))]
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0])
    kept, kept_rewards, counts = scored_episodes(group, rewards)
    assert kept == [group[0], group[1], group[3]] and kept_rewards.tolist() == [1.0, 0.0, 1.0]
    assert counts == {"rollout/infra_failures/sandbox": 1.0, "rollout/infra_retries/server_died": 1.0}
    # rewards 1, 0, 1: mean 2/3, population std sqrt(2)/3, so A = (r - 2/3) * 3/sqrt(2)
    expected = [1 / 2**0.5, -(2**0.5), 1 / 2**0.5]
    assert ADVANTAGES.get("grpo")(kept_rewards).tolist() == pytest.approx(expected, abs=1e-5)
    # scored as 0, the failure would have given the two passes +1 instead, and the policy's own failure -1
    assert ADVANTAGES.get("grpo")(rewards)[:2].tolist() == pytest.approx([1.0, -1.0], abs=1e-5)


def test_killed_calls_leave_their_episodes_out_of_the_update():
    sandbox = InProcessSandbox(fail_if="7777")  # the sandbox fails every call that adds 7777: those calls are killed
    env = build_environment(build_toolset(tools_cfg("code"), sandbox), sandbox)
    replies = {
        0: [act("Done", answer=5)],
        1: [act("Add", value=7777)],
        2: [act("Done", answer=4)],
        3: [act("Add", value=7777)],
    }
    policy = ScriptedPolicy(lambda req: replies[req.sample_index][0])
    task = counter_task()
    group = run_episodes([(task, g) for g in range(4)], policy, env, RolloutConfig(max_turns=2, tool_workers=1))
    assert [t.infra_failure for t in group] == [None, "sandbox", None, "sandbox"]
    rewards = torch.tensor([binary(t).total for t in group])
    assert rewards.tolist() == [1.0, 0.0, 0.0, 0.0]  # the reward function alone would score the killed ones 0
    seen = []

    def step(model, optimizer, grp, r, cfg, pad_id, **kwargs):
        seen.append((list(grp), r.tolist(), ADVANTAGES.get(cfg.advantage)(r).tolist()))
        return StepStats(n_tokens=0, skipped=False)

    (stats,) = update_rollout_batch(None, None, [list(group)], [rewards], GRPOConfig(), 0, temperature=1.0, step=step)
    ((grp, r, advantages),) = seen
    assert grp == [group[0], group[2]] and r == [1.0, 0.0]
    assert advantages == pytest.approx([1.0, -1.0], abs=1e-5)  # the baseline of the two scored episodes
    assert stats.metrics()["rollout/infra_failures/sandbox"] == 2.0


def test_a_group_with_fewer_than_two_scored_episodes_takes_no_step():
    from agentic_rl.algo.grpo import grpo_step

    group = [traj(), traj("server_died")]
    (stats,) = update_rollout_batch(
        None,
        None,
        [group],
        [torch.tensor([1.0, 0.0])],
        GRPOConfig(skip_zero_std_groups=False),
        0,
        temperature=1.0,
        step=grpo_step,
    )
    assert stats.skipped and stats.metrics()["rollout/infra_failures/server_died"] == 1.0
