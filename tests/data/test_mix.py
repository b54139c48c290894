"""`data=mix` (agentic_rl/data/mix.py, issue #50): task sources mixed by their weights, the same tasks in the same
order for the same seed, each task keeping its harness so that it opens its own environment, bad mixes refused with
what to change."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from agentic_rl.config import register_configs
from agentic_rl.data.mix import SOURCE_KEY, apportion, largest_size, mix_tasks
from agentic_rl.envs.codegym import CodeGymEpisode, CodeGymRunner
from agentic_rl.envs.toolset import ToolSetEnvironment, ToolSetEpisode
from agentic_rl.registry import build
from agentic_rl.tools.base import ToolSet
from agentic_rl.types import Observation, Task

CONF = Path(__file__).resolve().parents[2] / "conf"
register_configs()


def tasks(prefix: str, n: int, harness: str = "pytest", **metadata) -> list[Task]:
    return [Task(f"{prefix}/{i}", "p", "", harness, metadata=dict(metadata)) for i in range(n)]


def sources_of(mixed: list[Task]) -> Counter:
    return Counter(t.metadata[SOURCE_KEY] for t in mixed)


def test_the_mix_takes_each_source_by_its_weight():
    sources = {"code": tasks("c", 100), "gym": tasks("g", 100, "codegym")}
    mixed = mix_tasks(sources, {"code": 3, "gym": 1}, size=40, seed=0)
    assert sources_of(mixed) == {"code": 30, "gym": 10}
    assert len({t.task_id for t in mixed}) == 40  # no task twice
    # the counts sum to the size, the remainder to the largest fractions
    assert apportion({"a": 0.5, "b": 0.3, "c": 0.2}, 7) == {"a": 4, "b": 2, "c": 1}
    assert sum(apportion({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, 10).values()) == 10
    # size null: the most the sources give at the weights, the smaller source whole
    mixed = mix_tasks({"code": tasks("c", 12), "gym": tasks("g", 100)}, {"code": 0.5, "gym": 0.5}, seed=0)
    assert sources_of(mixed) == {"code": 12, "gym": 12}
    # 21 = 5.25 + 15.75: a keeps its 5, the one left over goes to the larger fraction (b: 16)
    assert largest_size({"a": 0.25, "b": 0.75}, {"a": 5, "b": 100}) == 21


def test_the_mix_is_a_function_of_the_seed():
    sources = {"code": tasks("c", 50), "gym": tasks("g", 50)}
    ids = lambda seed: [t.task_id for t in mix_tasks(sources, {"code": 1, "gym": 1}, 20, seed)]  # noqa: E731
    assert ids(3) == ids(3)
    assert ids(3) != ids(4)
    assert Counter(i.split("/")[0] for i in ids(3)[:10]) != {"c": 10}  # ordered by the seed, not source by source
    # a source's draw is its own: another source's weight changes how many, not which, of its tasks come first
    few = {t.task_id for t in mix_tasks(sources, {"code": 1, "gym": 3}, 20, 3) if t.task_id.startswith("c/")}
    many = {t.task_id for t in mix_tasks(sources, {"code": 1, "gym": 1}, 20, 3) if t.task_id.startswith("c/")}
    assert len(few) == 5 and few < many


def test_each_task_keeps_its_harness_and_is_labelled_by_its_source():
    sources = {"code": tasks("c", 4, task_type="docs"), "gym": tasks("g", 4, "codegym", env_id="e")}
    mixed = mix_tasks(sources, {"code": 1, "gym": 1}, 8, 0)
    by_id = {t.task_id: t for t in mixed}
    assert {by_id[f"c/{i}"].harness for i in range(4)} == {"pytest"}
    assert {by_id[f"g/{i}"].harness for i in range(4)} == {"codegym"}
    assert by_id["c/0"].metadata["task_type"] == "code/docs" and by_id["g/0"].metadata["task_type"] == "gym"
    assert by_id["g/0"].metadata["env_id"] == "e"  # the rest of the metadata as it was


@pytest.mark.parametrize(
    ("weights", "size", "sources", "message"),
    [
        ({"code": -1, "gym": 1}, 4, None, "weight must be a number >= 0"),
        ({"code": 0, "gym": 0}, 4, None, "every source .* has weight 0"),
        ({"code": 1, "gym": 1}, 40, None, "gym needs 20, has 10"),
        ({"code": 1, "gym": 1}, 0, None, "data.limit must be >= 1"),
        ({"code": 1, "gym": 1}, 4, {"code": tasks("x", 10), "gym": tasks("x", 10)}, "comes from both"),
        ({"code": 1, "gym": 1}, 4, {"code": tasks("c", 10), "gym": []}, "gave no tasks"),
    ],
)
def test_a_mix_that_cannot_be_drawn_says_what_to_change(weights, size, sources, message):
    sources = sources or {"code": tasks("c", 30), "gym": tasks("g", 10)}
    with pytest.raises(ValueError, match=message):
        mix_tasks(sources, weights, size, 0)


def test_a_weight_of_zero_leaves_its_source_out():
    mixed = mix_tasks({"code": tasks("c", 10), "gym": tasks("g", 10)}, {"code": 1, "gym": 0}, 6, 0)
    assert sources_of(mixed) == {"code": 6}


def compose_data(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("train", overrides=overrides)


def test_data_mix_routes_each_task_to_its_own_environment(monkeypatch):
    weights = ["data.sources.code.weight=0.75", "data.sources.codegym.weight=0.25"]
    cfg = compose_data(["data=mix", "data.limit=12", *weights, "seed=5"])
    mixed = build(cfg.data)
    assert sources_of(mixed) == {"code": 9, "codegym": 3}
    assert [t.task_id for t in build(cfg.data)] == [t.task_id for t in mixed]  # built again: the same mix
    resets = []

    def reset(runner, payload, timeout_s=None):  # the reset an episode opens with, without the sandbox
        resets.append(payload["options"])
        return {"ok": True, "state": {}, "tools": {"Observe": "doc", "Done": "doc"}, "doc": ""}, "ok"

    monkeypatch.setattr(CodeGymRunner, "call", reset)
    grader = lambda call, task: Observation(tool="submit", text="", ok=True)  # noqa: E731
    env = ToolSetEnvironment.of(ToolSet(name="multi", tools={}, grader=grader, system_prompt="SYS"))
    for task in mixed:
        episode = env.open(task, 0)
        if task.metadata[SOURCE_KEY] == "codegym":
            assert task.harness == "codegym" and isinstance(episode, CodeGymEpisode)
            assert set(episode.tools) == {"Observe", "Done"}
        else:
            assert task.harness == "pytest" and isinstance(episode, ToolSetEpisode)
    codegym = [t.metadata["codegym"]["options"] for t in mixed if t.harness == "codegym"]
    assert resets == codegym  # each CodeGym task reset its own configuration, no code task reset anything


def test_the_held_out_mix_holds_both_sources_held_out_tasks():
    cfg = compose_data(["data@eval_data=mix-heldout"])
    mixed = build(cfg.eval_data)
    assert sources_of(mixed)["code"] == sources_of(mixed)["codegym"] > 0
    for task in mixed:  # the code tasks' held-out split; CodeGym's held-out environments and configurations
        if task.harness == "codegym":
            assert task.metadata["env_split"] == "heldout" or task.task_id.endswith(("/010", "/011"))
        else:
            assert task.task_id.startswith("builtin/eval/")
