"""The starter CodeGym set (agentic_rl/envs/starter/): its shape, its answers (no constant fits), its measured files
against the sandbox, and that no held-out configuration is ever demonstrated."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.oracle_files import measure
from agentic_rl.envs.starter import DEMOS, MODULES, ORACLE_CALLS, starter_records
from agentic_rl.envs.tasks import check_record, load_codegym


@pytest.fixture(scope="module")
def records():
    return starter_records()


def test_the_set_holds_out_one_environment_per_module_and_answers_differ_within_each(records):
    assert len(records) == 10 and {r["split"] for r in records} == {"train", "heldout"}
    assert [r["env_id"] for r in records if r["split"] == "heldout"] == ["lists/SmallestEnv", "shop/PairCostEnv"]
    classes = {cls.__name__: cls for module in MODULES for cls in module.ORACLES}
    for r in records:
        answers = [json.dumps(classes[r["class_name"]].solve(c)) for c in r["configs"]]
        assert len(set(answers)) == len(answers) == 12, r["env_id"]  # a constant Done answer solves one at most
    assert starter_records() == records and starter_records(seed=1) != records


def test_oracle_calls_are_short_and_every_training_configuration_has_a_demo(records):
    calls = [n for r in records for n in r["oracle_calls"]]
    assert min(calls) == 3 and max(calls) == 8
    for r in records:
        shown = [i for i, d in enumerate(r["demos"] or []) if d is not None] if "demos" in r else []
        assert shown == (list(range(10)) if r["split"] == "train" else []), r["env_id"]
        for i in shown:  # each demo is the oracle's whole episode: its calls, Done with the answer last
            assert len(r["demos"][i]) == r["oracle_calls"][i] and r["demos"][i][-1]["name"] == "Done"


def test_no_heldout_configuration_carries_a_demonstration(records):
    heldout = load_codegym(path="starter", split="heldout")
    assert len(heldout) == 40 and not any("demo" in t.metadata for t in heldout)
    train = load_codegym(path="starter", split="train")
    assert len(train) == 80 and all("demo" in t.metadata for t in train)
    # by content too: no held-out configuration's options are among the demonstrated ones
    shown = {json.dumps(t.metadata["codegym"]["options"], sort_keys=True) for t in train}
    assert not shown & {json.dumps(t.metadata["codegym"]["options"], sort_keys=True) for t in heldout}
    # more configurations held out than the set demonstrates around: those lose their demonstration too
    wider = load_codegym(path="starter", split="heldout_configs", heldout_configs=4)
    assert len(wider) == 32 and not any("demo" in t.metadata for t in wider)
    assert Counter(t.metadata["config_index"] for t in wider) == {8: 8, 9: 8, 10: 8, 11: 8}


def test_a_demo_becomes_the_warmups_calls_with_the_actions_json_as_content(records):
    task = load_codegym(path="starter", split="train", envs=["shop/OrderCostEnv"])[0]
    record = next(r for r in records if r["env_id"] == "shop/OrderCostEnv")
    demo = record["demos"][task.metadata["config_index"]]
    assert task.metadata["demo"] == [{"tool": a["name"], "content": json.dumps(a)} for a in demo]
    assert [c["tool"] for c in task.metadata["demo"]] == ["Observe", "Price", "Multiply", "Done"]


@pytest.mark.parametrize(
    "demos",
    [[[]] * 11, [{"name": "Observe"}] * 12, [[{"parameters": {}}]] + [None] * 11, "Observe"],
)
def test_malformed_demos_are_refused_with_how_to_write_them(records, demos):
    with pytest.raises(ValueError, match="demos must list"):
        check_record({**records[0], "demos": demos}, "envs.jsonl, line 1")


def test_shipped_files_are_current_and_the_constant_answer_rule_drops_nothing():
    """The sandbox plays every oracle: 3 to 40 calls, at least 4 tools, the constant-answer rule on; the measured
    calls and the oracle's actions are the shipped oracle_calls.json and demos.json."""
    calls, demos, report = measure(CodeGymRunner())
    assert report["dropped_configs"] == [] and report["dropped_environments"] == {}
    assert report["rules"]["constant_answer"] and report["configs_kept"] == 120
    stale = "is stale: python -m agentic_rl.envs.oracle_files writes it again"
    assert calls == json.loads(ORACLE_CALLS.read_text()), f"oracle_calls.json {stale}"
    assert demos == json.loads(DEMOS.read_text()), f"demos.json {stale}"
