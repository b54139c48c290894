"""The evaluation before training, shared by runs of different seeds (`base_eval.cache`), on the tiny random model:
the second seed reads the first's base evaluation instead of generating it, a changed setting gets a base
evaluation of its own, and cache=null evaluates in the run as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentic_rl.train as train
from agentic_rl.evaluation.base_cache import BaseEvalConfig, base_eval_key, key_hash, shared_base_eval
from agentic_rl.types import Task
from tests.e2e.test_warmup_run import TINY, compose_train

NO_TRAINING = [
    "warmup=sft-only",
    "warmup.epochs=1",
    "warmup.tasks=1",
    "evaluator.limit=2",
    "evaluator.modes=[code_only]",
    "evaluator.n_samples=2",
    "eval_after=false",
    "checkpoint_every=0",
    "save_adapter=false",
    "model.seed=0",  # the tiny model's weights are drawn from its seed (the run's, by default): one base model
]


def run(run_dir: Path, *overrides: str) -> dict:
    return train.run(compose_train(*TINY, *NO_TRAINING, f"+run_dir={run_dir}", *overrides))


def before_records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "eval_before.jsonl").read_text().splitlines()]


def generated(summary: dict) -> bool:
    """Throughput is logged only for episodes generated now (a resumed or shared one has none)."""
    return "rollout/tokens_per_s" in summary["eval"]["before"]["code_only"]


@pytest.mark.slow
def test_seeds_share_one_base_evaluation_and_other_settings_get_their_own(tmp_path, own_base_eval_cache, monkeypatch):
    first = run(tmp_path / "seed-1", "seed=1")
    second = run(tmp_path / "seed-2", "seed=2")
    assert generated(first) and not generated(second)
    assert before_records(tmp_path / "seed-1") == before_records(tmp_path / "seed-2")
    assert len(before_records(tmp_path / "seed-1")) == 2 * 3  # 2 tasks x (2 samples + greedy)
    (folder,) = [p for p in own_base_eval_cache.iterdir() if p.is_dir()]
    assert json.loads((folder / "key.json").read_text())["evaluator"]["seed"] == 0

    other = run(tmp_path / "turns", "seed=1", "rollout.max_new_tokens=32")  # other episodes: not the same base
    assert generated(other) and len([p for p in own_base_eval_cache.iterdir() if p.is_dir()]) == 2

    calls = []
    monkeypatch.setattr(train, "shared_base_eval", lambda *a, **k: calls.append(a))
    alone = run(tmp_path / "alone", "seed=2", "base_eval.cache=null")
    assert generated(alone) and not calls


def test_a_folder_of_other_settings_is_refused(tmp_path):
    cfg = BaseEvalConfig(cache=str(tmp_path))
    with shared_base_eval(cfg, {"model": "a"}) as store:
        folder = store.path.parent
        assert len(store) == 0
    (folder / "key.json").write_text(json.dumps({"model": "b"}))
    with pytest.raises(ValueError, match="other settings"), shared_base_eval(cfg, {"model": "a"}):
        pass


def test_null_cache_has_no_shared_evaluation():
    with pytest.raises(ValueError, match="base_eval.cache is null"), shared_base_eval(BaseEvalConfig(), {}):
        pass


def test_where_the_sampler_runs_does_not_split_the_base_evaluation():
    tasks = [Task(task_id="t", prompt="p", tests="assert True", harness="pytest")]
    settings = {"model": {"name": "m"}, "rollout": {"temperature": 0.7, "backend": "hf"}}
    placed = {**settings, "rollout": {**settings["rollout"], "servers": ["h:1"], "server_startup_timeout_s": 9.0}}
    assert key_hash(base_eval_key(placed, tasks)) == key_hash(base_eval_key(settings, tasks))
    # what is sampled does split it
    hotter = {**settings, "rollout": {**settings["rollout"], "temperature": 1.0}}
    assert key_hash(base_eval_key(hotter, tasks)) != key_hash(base_eval_key(settings, tasks))
    vllm = {**settings, "rollout": {**settings["rollout"], "backend": "vllm"}}
    assert key_hash(base_eval_key(vllm, tasks)) != key_hash(base_eval_key(settings, tasks))
