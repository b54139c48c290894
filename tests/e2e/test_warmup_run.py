"""The warm-up stage in whole training runs (`train.run`, in process) on the tiny random model, real tools:
the warm-up alone as an arm (zero GRPO steps, evaluated before and after), a run resumed after the warm-up does
not repeat it and ends as the uninterrupted run, and the off default trains exactly as without the stage."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from safetensors.torch import load_file

import agentic_rl.train as train
from agentic_rl.config import register_configs
from agentic_rl.registry import build
from agentic_rl.reports.compare import is_cost
from agentic_rl.runtime.checkpoint import CHECKPOINT_DIR, STATE, load_latest
from tests.config.test_compose import CONF

register_configs()
TINY = [
    "model=tiny-random",
    "data=pipelines",  # reference solutions short enough for 64-token turns; no demo: each submits its reference
    "data@eval_data=pipelines-heldout",
    "tools=code",
    "logger=none",
    "data.limit=3",
    "rollout.max_turns=1",
    "rollout.max_new_tokens=64",
    "progress=false",
]
WARMUP = ["warmup=sft", "warmup.batch_size=2", "warmup.epochs=2", "warmup.lr=0.01"]
RL = [  # two GRPO steps whose reward is read off the sampled tokens, so the adapter and the RNG state matter
    "reward=binary",
    "reward._target_=tests.e2e.train_driver.sampled",
    "algo.group_size=2",
    "algo.epochs=1",
    "algo.tasks_per_epoch=2",
    "algo.tasks_per_rollout=1",
    "algo.lr=0.01",
    "eval_before=false",
    "eval_after=false",
    "checkpoint_every=1",
    "checkpoint_keep=10",
]


def compose_train(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("train", overrides=list(overrides))


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def outcomes(run_dir: Path) -> list[dict]:
    """Every logged value but the machine's costs (times, memory), which differ between any two runs."""
    return [{k: v for k, v in r.items() if not is_cost(k)} for r in records(run_dir)]


def adapter(run_dir: Path) -> dict:
    return load_file(str(run_dir / "adapter" / "adapter_model.safetensors"))


def same_adapter(a: Path, b: Path) -> bool:
    x, y = adapter(a), adapter(b)
    return x.keys() == y.keys() and all(x[k].equal(y[k]) for k in x)


def stopped_after_the_warmup(reference: Path, cfg, tmp_path: Path) -> tuple[Path, object]:
    """A copy of the finished run `reference` as it stood when stopped right after the warm-up (only the step-0
    checkpoint, no summary, no adapter), with the config Hydra records for a CLI run, and the config resuming it."""
    run_dir = tmp_path / "run"
    shutil.copytree(reference, run_dir)
    for path in sorted((run_dir / CHECKPOINT_DIR).iterdir())[1:]:
        shutil.rmtree(path)
    (run_dir / "summary.json").unlink()
    shutil.rmtree(run_dir / "adapter")
    (run_dir / ".hydra").mkdir()
    OmegaConf.save(cfg, run_dir / ".hydra" / "config.yaml")
    resumed_cfg = cfg.copy()
    resumed_cfg.resume = str(run_dir)
    return run_dir, resumed_cfg


def no_warmup(*args, **kwargs):
    raise AssertionError("the warm-up ran")


@pytest.mark.slow
def test_the_warmup_alone_is_an_arm_zero_grpo_steps_evaluated_before_and_after(tmp_path):
    run_dir = tmp_path / "run"
    evals = ["evaluator.limit=1", "evaluator.modes=[code_only]", "evaluator.n_samples=0", "checkpoint_every=0"]
    summary = train.run(compose_train(*TINY, *WARMUP, "warmup=sft-only", *evals, f"+run_dir={run_dir}"))

    warm = summary["warmup"]
    assert summary["status"] == "complete" and summary["train_steps"] == 0
    assert warm["n_demos"] >= 1 and warm["n_demos"] + warm["dropped"] == 3
    assert warm["steps"] == 2 * -(-warm["n_demos"] // 2) and warm["sft_seconds_per_demo"] > 0
    assert set(summary["eval"]) == {"before", "after"}
    assert (run_dir / "eval_before.jsonl").is_file() and (run_dir / "eval_after.jsonl").is_file()
    rows = records(run_dir)
    assert not any("train/epoch" in r for r in rows)  # no GRPO step
    k = warm["steps"]
    # evaluation before (0), the demonstrations (-(K+1)), warm-up steps -K..-1, evaluation after (0: no RL step)
    assert [r["step"] for r in rows] == [0, -(k + 1), *range(-k, 0), 0]
    assert rows[1]["warmup/n_demos"] == warm["n_demos"] and rows[1]["warmup/dropped"] == warm["dropped"]
    steps = rows[2:-1]
    assert [r["warmup/step"] for r in steps] == list(range(1, k + 1))
    assert all(0 <= r["warmup/token_accuracy"] <= 1 for r in steps)
    assert steps[-1]["warmup/loss"] < steps[0]["warmup/loss"]
    assert any(t.abs().max() > 0 for name, t in adapter(run_dir).items() if "lora_B" in name)  # off its zero init


@pytest.fixture(scope="module")
def warmed_run(tmp_path_factory) -> tuple[Path, object]:
    """A whole run: warm-up, a checkpoint after it (step 0), two GRPO steps, each checkpointed."""
    run_dir = tmp_path_factory.mktemp("uninterrupted") / "run"
    cfg = compose_train(*TINY, *WARMUP, *RL, f"+run_dir={run_dir}")
    summary = train.run(cfg)
    assert summary["train_steps"] == 2 and summary["warmup"]["steps"] >= 1
    return run_dir, cfg


@pytest.mark.slow
def test_a_run_resumed_after_the_warmup_does_not_repeat_it_and_ends_as_the_uninterrupted_one(
    warmed_run, tmp_path, monkeypatch
):
    reference, cfg = warmed_run
    run_dir, resumed_cfg = stopped_after_the_warmup(reference, cfg, tmp_path)
    checkpoint = load_latest(run_dir)
    assert (
        checkpoint.step == 0
        and checkpoint.state["warmup"] == json.loads((reference / "summary.json").read_text())["warmup"]
    )
    # the stopped process's peak, as it logged it (the same width, so the checkpoint's byte offset still holds)
    metrics = run_dir / "metrics.jsonl"
    text = metrics.read_text()
    logged = re.search(r'"memory/peak_rss_gib": ([0-9.]+)', text).group(1)
    earlier_peak = "9" * logged.index(".") + "." + "9" * (len(logged) - logged.index(".") - 1)
    metrics.write_text(text.replace(f'"memory/peak_rss_gib": {logged}', f'"memory/peak_rss_gib": {earlier_peak}', 1))

    monkeypatch.setattr(train, "run_warmup", no_warmup)
    summary = train.run(resumed_cfg)

    assert summary["warmup"] == json.loads((reference / "summary.json").read_text())["warmup"]
    assert summary["peak_rss_gib"] == pytest.approx(float(earlier_peak))  # the run's peak, not this process's
    assert sum("warmup/n_demos" in r for r in records(run_dir)) == 1  # the warm-up's records, logged once
    assert outcomes(run_dir) == outcomes(reference)  # same warm-up records, then the same GRPO steps
    assert same_adapter(run_dir, reference)


@pytest.mark.slow
def test_warmup_none_trains_exactly_as_without_the_stage(warmed_run, tmp_path, monkeypatch):
    """No `warmup` node (`~warmup`: the config as it was before the stage existed) and `warmup=none` never run the
    stage, log no warm-up metric, put nothing in the summary or the checkpoints, and train identically; the warm-up
    itself (the default's, `warmup=sft`) does change the GRPO steps."""
    monkeypatch.setattr(train, "run_warmup", no_warmup)
    runs = {}
    for name, extra in (("default", ["~warmup"]), ("none", ["warmup=none"])):
        runs[name] = tmp_path / name
        summary = train.run(compose_train(*TINY, *RL, *extra, f"+run_dir={runs[name]}"))
        assert "warmup" not in summary and summary["train_steps"] == 2
        assert not any(k.startswith("warmup/") for r in records(runs[name]) for k in r)
        assert "warmup" not in load_latest(runs[name]).state
        assert [p.name for p in sorted((runs[name] / CHECKPOINT_DIR).iterdir())] == ["step-000001", "step-000002"]
    assert outcomes(runs["default"]) == outcomes(runs["none"])
    assert same_adapter(runs["default"], runs["none"])
    warmed, _ = warmed_run
    assert not same_adapter(runs["default"], warmed)


@pytest.mark.slow
def test_rl_on_the_rest_never_draws_a_demonstrated_task(tmp_path):
    """warmup.rl_tasks=rest: the warm-up demonstrates the first warmup.tasks training tasks, GRPO draws only from
    the others (the checkpoint records the epoch's drawn order by task id)."""
    run_dir = tmp_path / "run"
    cfg = compose_train(*TINY, *WARMUP, *RL, "warmup.tasks=1", "warmup.rl_tasks=rest", f"+run_dir={run_dir}")
    data_ids = [task.task_id for task in build(cfg.data)]
    summary = train.run(cfg)

    assert (summary["n_warmup_tasks"], summary["n_train_tasks"]) == (1, 2)
    assert summary["warmup"]["n_demos"] + summary["warmup"]["dropped"] == 1
    assert summary["train_steps"] == 2
    first_step = torch.load(run_dir / CHECKPOINT_DIR / "step-000001" / STATE, weights_only=False)
    assert sorted(first_step["order_task_ids"]) == sorted(data_ids[1:])


KL_TO_WARMUP = ["algo.kl_reference=warmup", "algo.skip_zero_std_groups=false"]  # every group steps: its KL is logged


@pytest.fixture(scope="module")
def kl_warmup_run(tmp_path_factory) -> tuple[Path, object]:
    """A whole run with the KL's reference at the warm-up's policy: warm-up, step-0 checkpoint, two GRPO steps."""
    run_dir = tmp_path_factory.mktemp("kl-to-warmup") / "run"
    cfg = compose_train(*TINY, *WARMUP, *RL, *KL_TO_WARMUP, f"+run_dir={run_dir}")
    summary = train.run(cfg)
    assert summary["train_steps"] == 2
    return run_dir, cfg


def checkpoint_state(run_dir: Path, step: int) -> dict:
    return torch.load(run_dir / CHECKPOINT_DIR / f"step-{step:06d}" / STATE, weights_only=False)


@pytest.mark.slow
def test_the_kl_reference_is_the_policy_the_warmup_left(kl_warmup_run, tmp_path):
    """algo.kl_reference=warmup: the first GRPO step, on-policy right after the warm-up, has no KL (its policy is the
    reference), the second has some (the first step moved it); the checkpoints carry the warm-up's adapter weights
    unchanged as the reference. The default reference (the base model) reads a KL from the first step on."""
    run_dir, _ = kl_warmup_run
    kls = [r["train/kl"] for r in records(run_dir) if "train/kl" in r]
    assert len(kls) == 2 and kls[0] == pytest.approx(0.0, abs=1e-7) and kls[1] > 0
    at_warmup = load_file(str(run_dir / CHECKPOINT_DIR / "step-000000" / "adapter" / "adapter_model.safetensors"))
    for step in (0, 2):
        reference = {
            name.replace(".default.", "."): t for name, t in checkpoint_state(run_dir, step)["kl_reference"].items()
        }
        assert reference.keys() == at_warmup.keys() and all(reference[k].equal(at_warmup[k]) for k in at_warmup)
    base_run = tmp_path / "base"
    train.run(compose_train(*TINY, *WARMUP, *RL, "algo.skip_zero_std_groups=false", f"+run_dir={base_run}"))
    base_kls = [r["train/kl"] for r in records(base_run) if "train/kl" in r]
    assert base_kls[0] > 1e-4  # the warm-up moved the adapter away from the base model
    assert "kl_reference" not in checkpoint_state(base_run, 2)


@pytest.mark.slow
def test_a_run_with_the_kl_to_the_warmup_resumed_after_it_ends_as_the_uninterrupted_one(
    kl_warmup_run, tmp_path, monkeypatch
):
    reference, cfg = kl_warmup_run
    run_dir, resumed_cfg = stopped_after_the_warmup(reference, cfg, tmp_path)
    monkeypatch.setattr(train, "run_warmup", no_warmup)
    train.run(resumed_cfg)
    assert outcomes(run_dir) == outcomes(reference)
    assert same_adapter(run_dir, reference)
