"""A reward function called directly (its defaults) pays what the run's config (conf/reward/*.yaml) pays."""

from __future__ import annotations

import inspect

import pytest
from omegaconf import OmegaConf

from agentic_rl import rewards
from agentic_rl.config import CONF_DIR
from tests.rewards.test_rewards import episode, make_reward_fn

OPTIONS = sorted(p.stem for p in (CONF_DIR / "reward").glob("*.yaml"))


@pytest.mark.parametrize("option", OPTIONS)
def test_function_defaults_equal_the_config_values(option: str) -> None:
    """Guards the defaults in the reward signatures (mutation testing: a changed default survived every
    config-built test): each parameter the YAML sets has that value as its default, and no parameter is
    left without one."""
    node = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "reward" / f"{option}.yaml"))
    fn = getattr(rewards, node.pop("_target_").rsplit(".", 1)[-1])
    node.pop("_partial_")
    params = dict(list(inspect.signature(fn).parameters.items())[1:])  # after the trajectory
    assert set(params) == set(node), option
    for name, value in node.items():
        assert params[name].default == value and type(params[name].default) is type(value), (option, name)


@pytest.mark.parametrize("option", OPTIONS)
def test_direct_call_pays_the_configured_reward(option: str) -> None:
    fn = getattr(rewards, option)
    configured = make_reward_fn(option)
    cases = [
        episode([("submit", True)], passed=True),
        episode([("search", True)] * 4 + [("submit", True)]),
        episode([("execute", False), ("submit", True)]),
        episode([("search", True)], submitted=False),
    ]
    for traj in cases:
        assert fn(traj) == configured(traj)
