"""Reward functions on hand-made episodes, each built from its conf/reward file as a run builds it."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from agentic_rl.config import CONF_DIR
from agentic_rl.registry import build
from agentic_rl.types import Observation, ToolCall, Trajectory, Turn


def make_reward_fn(option: str, **params):
    node = OmegaConf.merge(OmegaConf.load(CONF_DIR / "reward" / f"{option}.yaml"), params)
    return build(node)


def episode(calls: list[tuple[str, bool]], passed: bool = False, submitted: bool = True) -> Trajectory:
    turns = [
        Turn(
            generated_ids=[1],
            text="",
            call=ToolCall(name, "x", 0, 1),
            observation=Observation(tool=name, text="", ok=ok),
        )
        for name, ok in calls
    ]
    return Trajectory(
        task_id="t",
        token_ids=[0, 1],
        loss_mask=[0, 1],
        prompt_len=1,
        turns=turns,
        submitted_code="code" if submitted else None,
        passed=passed,
    )


def test_shaped_pass_search_bonus_and_no_submission():
    shaped = make_reward_fn("shaped")
    assert shaped(episode([("submit", True)], passed=True)).total == 1.0
    two = shaped(episode([("search", True), ("search", True), ("submit", True)]))
    assert two.total == pytest.approx(0.1) and two.terms["search_bonus"] == pytest.approx(0.1)
    five = shaped(episode([("search", True)] * 5 + [("submit", True)]))
    assert five.total == pytest.approx(0.15)  # capped at 3 searches
    nothing = shaped(episode([("search", True)], submitted=False))
    assert nothing.total == pytest.approx(-0.1) and nothing.terms["search_bonus"] == 0.0
    assert set(nothing.terms) == {"passed", "search_bonus", "no_submission"}


def test_shaped_pass_ignores_search_bonus():
    r = make_reward_fn("shaped")(episode([("search", True), ("submit", True)], passed=True))
    assert r.total == 1.0


def test_binary():
    assert make_reward_fn("binary")(episode([], passed=True)).total == 1.0
    assert make_reward_fn("binary")(episode([], submitted=False)).total == 0.0


def test_torl_exec_penalty_on_and_off():
    crashed = episode([("execute", False), ("submit", True)])
    assert make_reward_fn("torl")(crashed).total == -1.0
    on = make_reward_fn("torl", use_exec_penalty=True)(crashed)
    assert on.total == pytest.approx(-1.5) and on.terms == {"outcome": -1.0, "exec_penalty": -0.5}
    clean = episode([("execute", True), ("submit", True)], passed=True)
    assert make_reward_fn("torl", use_exec_penalty=True)(clean).total == 1.0


def test_every_reward_option_builds_a_function_of_the_episode():
    options = sorted(p.stem for p in (CONF_DIR / "reward").glob("*.yaml"))
    assert options == ["binary", "shaped", "torl"]
    for option in options:
        r = make_reward_fn(option)(episode([("submit", True)], passed=True))
        assert r.total == pytest.approx(sum(r.terms.values())) and r.total == 1.0
