"""The built-in CodeGym set: its size and shape, and every environment verified in the sandbox (a scripted
oracle reaches get_ref_answer() through the tools alone, Done with it scores 1 and with a wrong answer 0,
10-256 calls per configuration, at least 4 tools)."""

from __future__ import annotations

import json

import pytest

from agentic_rl.envs.builtin import MODULES, builtin_records
from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.tasks import load_codegym
from agentic_rl.envs.verify import Rules, verify_records


@pytest.fixture(scope="module")
def records():
    return builtin_records()


def test_the_set_has_at_least_60_environments_and_600_configurations_in_six_workflows(records):
    assert len(records) >= 60 and sum(len(r["configs"]) for r in records) >= 600
    assert {r["env_id"].split("/")[0] for r in records} == {
        "arrays",
        "strings",
        "counting",
        "graphs",
        "dp",
        "simulation",
    }
    assert len({r["env_id"] for r in records}) == len(records)
    heldout = [r for r in records if r["split"] == "heldout"]
    assert len(heldout) == len(MODULES)  # one unseen tool set per workflow


def test_configurations_are_seeded_and_distinct(records):
    assert builtin_records() == records  # same seed, same configurations
    assert builtin_records(seed=1) != records
    for r in records:
        assert len({json.dumps(c, sort_keys=True) for c in r["configs"]}) >= len(r["configs"]) // 2, r["env_id"]


def test_splits_partition_the_tasks_and_hold_out_whole_environments():
    train, seen, unseen = (load_codegym(split=s) for s in ("train", "heldout_configs", "heldout_envs"))
    ids = [t.task_id for t in train + seen + unseen]
    assert len(ids) == len(set(ids)) == len(load_codegym(split="all"))
    train_envs = {t.metadata["env_id"] for t in train}
    assert {t.metadata["env_id"] for t in seen} <= train_envs
    assert not {t.metadata["env_id"] for t in unseen} & train_envs


def test_every_shipped_environment_passes_verification(records):
    kept, report = verify_records(records, CodeGymRunner(), Rules())
    assert report["dropped_environments"] == {} and report["dropped_configs"] == [], report["dropped_configs"][:5]
    assert report["configs_kept"] == report["configs_in"]
    for r, shipped in zip(kept, records):
        assert all(10 <= n <= 256 for n in r["oracle_calls"]), r["env_id"]
        assert r["oracle_calls"] == shipped["oracle_calls"], f"{r['env_id']}: oracle_calls.json is stale"
