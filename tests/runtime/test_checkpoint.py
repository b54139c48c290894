"""Checkpoints: exact round trip of adapter, optimizer and RNGs; atomic saves; damaged ones are skipped."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from agentic_rl.models.lora import add_lora, lora_state
from agentic_rl.runtime.checkpoint import (
    CHECKPOINT_DIR,
    MANIFEST,
    STATE,
    load_latest,
    restore_adapter,
    restore_rng_states,
    rng_states,
    save_checkpoint,
    verify,
)
from agentic_rl.tracking.sinks import Tracker, truncate_metrics


def tiny_peft_model(seed: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=32,
    )
    return add_lora(LlamaForCausalLM(config), r=2, alpha=4, dropout=0.0, target_modules=["q_proj", "v_proj"], seed=seed)


def trained(model, optimizer, steps: int = 2) -> None:
    ids = torch.randint(0, 32, (2, 6))
    for _ in range(steps):
        optimizer.zero_grad()
        model(input_ids=ids, labels=ids).loss.backward()
        optimizer.step()


def make(seed: int = 0):
    model = tiny_peft_model(seed)
    return model, torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.1)


def test_round_trip_restores_adapter_optimizer_and_rngs_exactly(tmp_path):
    model, optimizer = make()
    trained(model, optimizer)
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    save_checkpoint(tmp_path, 2, model, {"rng": rng_states(), "optimizer": optimizer.state_dict()}, keep=2)
    expected_draws = (random.random(), np.random.rand(), torch.rand(3))
    trained(model, optimizer)  # what the run did after the checkpoint: continuing from it must repeat this
    expected_weights = lora_state(model)

    fresh, fresh_opt = make()
    assert not all(torch.equal(a, b) for a, b in zip(lora_state(fresh).values(), expected_weights.values()))
    checkpoint = load_latest(tmp_path)
    assert checkpoint.step == 2
    restore_adapter(fresh, checkpoint)
    fresh_opt.load_state_dict(checkpoint.state["optimizer"])
    restore_rng_states(checkpoint.state["rng"])
    draws = (random.random(), np.random.rand(), torch.rand(3))
    assert draws[0] == expected_draws[0] and draws[1] == expected_draws[1] and torch.equal(draws[2], expected_draws[2])
    trained(fresh, fresh_opt)  # the same RNG draws, weights and optimizer state as the run after its checkpoint
    for (name, a), b in zip(lora_state(fresh).items(), expected_weights.values()):
        assert torch.equal(a, b), name


def test_keeps_the_newest_k_and_removes_leftovers_of_killed_saves(tmp_path):
    model, _ = make()
    root = tmp_path / CHECKPOINT_DIR
    root.mkdir()
    (root / ".tmp-step-000001-999").mkdir()  # what a kill -9 during a save leaves
    for step in (1, 2, 3, 4):
        save_checkpoint(tmp_path, step, model, {"step": step}, keep=2)
    assert sorted(p.name for p in root.iterdir()) == ["step-000003", "step-000004"]
    manifest = json.loads((root / "step-000004" / MANIFEST).read_text())
    assert STATE in manifest["files"] and "adapter/adapter_model.safetensors" in manifest["files"]


@pytest.mark.parametrize("damage", ["flip_byte", "truncate", "no_manifest", "missing_file"])
def test_a_damaged_newest_checkpoint_is_skipped_for_the_previous_one(tmp_path, damage, caplog):
    model, _ = make()
    for step in (1, 2):
        save_checkpoint(tmp_path, step, model, {"step": step, "payload": torch.arange(1000)}, keep=3)
    newest = tmp_path / CHECKPOINT_DIR / "step-000002"
    state = newest / STATE
    if damage == "flip_byte":
        data = bytearray(state.read_bytes())
        data[len(data) // 2] ^= 0xFF
        state.write_bytes(bytes(data))
    elif damage == "truncate":
        state.write_bytes(state.read_bytes()[:100])
    elif damage == "no_manifest":  # a save killed before its last write, renamed by hand
        (newest / MANIFEST).unlink()
    else:
        (newest / "adapter" / "adapter_model.safetensors").unlink()
    assert verify(newest) is not None
    checkpoint = load_latest(tmp_path)
    assert checkpoint.step == 1 and checkpoint.state["step"] == 1
    assert "step-000002 is unusable" in caplog.text


def test_no_intact_checkpoint_gives_none(tmp_path):
    assert load_latest(tmp_path) is None
    (tmp_path / CHECKPOINT_DIR / "step-000003").mkdir(parents=True)
    assert load_latest(tmp_path) is None


def test_metrics_are_cut_back_to_the_checkpointed_length(tmp_path):
    tracker = Tracker(tmp_path)
    tracker.log({"train/loss": 1.0}, step=1)
    tracker.log({"train/loss": 2.0}, step=2)
    at_checkpoint = tracker.metrics_bytes()
    tracker.log({"train/loss": 3.0}, step=3)
    with open(tmp_path / "metrics.jsonl", "a") as f:
        f.write('{"step": 4, "train/lo')  # a kill -9 mid-write
    truncate_metrics(tmp_path, at_checkpoint)
    steps = [json.loads(line)["step"] for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2]
    with pytest.raises(ValueError, match="not the end of a record"):
        truncate_metrics(tmp_path, at_checkpoint - 3)
    with pytest.raises(ValueError, match="edited or replaced"):
        truncate_metrics(tmp_path, at_checkpoint + 100)
    truncate_metrics(tmp_path, 0)  # no checkpoint yet: the run starts over
    assert not (tmp_path / "metrics.jsonl").exists()
