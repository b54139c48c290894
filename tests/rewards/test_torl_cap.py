"""ToRL's execution penalty counts only code that ran: an execute call the cap C refused never ran, so it cannot
have failed to run. Episodes come from the real agent loop (scripted policy, scripted tools), rewards from the
conf/reward/torl.yaml the runs build."""

from __future__ import annotations

from omegaconf import OmegaConf

from agentic_rl.config import CONF_DIR
from agentic_rl.registry import build
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from tests.rollout.fakes import TASK, toolset

CRASH = "```python\nraise ValueError('boom')\n```"
SUBMIT_BAD = "```submit\ndef add(a, b):\n    return a - b\n```"


def torl_with_penalty():
    node = OmegaConf.merge(OmegaConf.load(CONF_DIR / "reward" / "torl.yaml"), {"use_exec_penalty": True})
    return build(node)


def episode(max_tool_calls: int):
    """Turn 0: a crashing execute call; turn 1: a failing submission."""
    policy = ScriptedPolicy(lambda req: CRASH if req.turn_index == 0 else SUBMIT_BAD)
    cfg = RolloutConfig(max_turns=2, max_tool_calls=max_tool_calls)
    return run_episodes([(TASK, 0)], policy, toolset(("execute", "submit"), []), cfg)[0]


def test_an_execute_call_the_cap_refused_is_not_penalised():
    refused = episode(max_tool_calls=0)
    obs = refused.turns[0].observation
    assert refused.turns[0].call.name == "execute" and obs.status == "capped" and not obs.executed and not obs.ok
    reward = torl_with_penalty()(refused)
    assert reward.terms == {"outcome": -1.0, "exec_penalty": 0.0} and reward.total == -1.0


def test_an_executed_call_that_failed_is_penalised():
    ran = episode(max_tool_calls=1)
    assert ran.turns[0].observation.executed and ran.turns[0].observation.status == "error"
    reward = torl_with_penalty()(ran)
    assert reward.terms == {"outcome": -1.0, "exec_penalty": -0.5} and reward.total == -1.5
