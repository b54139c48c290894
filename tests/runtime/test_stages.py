"""`pin_run_heap`: `memory.mmap_threshold_kib=auto` follows what the run's sampler class says about the trainer's heap
(`Policy.shares_trainer_heap`, found by `rollout.backends.policy_class`), never the backend's name, so
`rollout.backend=auto` gets the pin of the backend it resolves to."""

from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf

from agentic_rl.rollout import backends
from agentic_rl.runtime import memory
from agentic_rl.runtime.stages import pin_run_heap


def pins(monkeypatch, backend: str, *, gpu: bool = False, setting: object = "auto") -> list[int]:
    """The KiB `pin_run_heap` asked glibc for, on a faked device, with the class the entry point would pass."""
    asked: list[int] = []
    monkeypatch.setattr(memory, "pin_mmap_threshold", lambda kib: asked.append(kib) or True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu)
    cfg = OmegaConf.create({"rollout": {"backend": backend}, "memory": {"mmap_threshold_kib": setting}})
    pinned = pin_run_heap(cfg, backends.policy_class(cfg.rollout))
    assert asked == ([] if pinned is None else [pinned])
    return asked


@pytest.mark.parametrize(("backend", "gpu", "pinned"), [("hf", False, []), ("vllm", False, [128]), ("vllm", True, [])])
def test_auto_pins_where_the_named_backends_engine_shares_the_heap(monkeypatch, backend, gpu, pinned):
    assert pins(monkeypatch, backend, gpu=gpu) == pinned


@pytest.mark.parametrize("chosen", ["hf", "vllm"])
def test_backend_auto_pins_as_the_backend_it_resolves_to(monkeypatch, chosen):
    monkeypatch.setattr(backends, "auto_choice", lambda: (chosen, "faked for the test"))
    assert pins(monkeypatch, "auto") == pins(monkeypatch, chosen) == ([128] if chosen == "vllm" else [])


def test_a_number_pins_and_null_never_pins_whatever_the_class_says(monkeypatch):
    assert pins(monkeypatch, "hf", setting=512) == [512]
    assert pins(monkeypatch, "vllm", setting=None) == []
