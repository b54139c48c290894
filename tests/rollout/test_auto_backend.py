"""`rollout.backend=auto`: the choice by the CPU's flags (`vllm_policy.cpu_flags`, read from /proc/cpuinfo; its own
tests are in test_backends.py) and whether vLLM can start, with faked flags and a faked interpreter (no vLLM
needed), logged in one line; the default stays hf."""

from __future__ import annotations

import logging
import sys
from types import SimpleNamespace

import pytest
import torch
from hydra import compose, initialize_config_dir

from agentic_rl.config import register_configs
from agentic_rl.paths import CONF_DIR
from agentic_rl.rollout import backends, vllm_policy
from agentic_rl.rollout.agent import RolloutConfig

AMX = "fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile"
ZEN4 = "fpu avx2 avx512f avx512_bf16"
AVX2 = "fpu sse4_2 avx avx2 fma"
VENV = "/checkout/.venv-vllm/bin/python"


@pytest.mark.parametrize(
    ("flags", "python", "gpu", "chosen", "said"),
    [
        (AMX, VENV, False, "vllm", "natively (amx_bf16+avx512_bf16): vLLM measured 1.89x"),
        (ZEN4, VENV, False, "vllm", "natively (avx512_bf16): a vLLM server measured 3.5x"),
        (AVX2, VENV, False, "hf", "no native bf16 (AVX2, no avx512_bf16 or amx_bf16): vLLM measured 0.85x"),
        (AMX, None, False, "hf", "vLLM cannot be started"),
        (AVX2, None, True, "hf", "vLLM cannot be started"),
        (AVX2, VENV, True, "vllm", "a CUDA device, and vLLM in /checkout/.venv-vllm/bin/python"),
        (ZEN4, sys.executable, False, "vllm", "vLLM in this interpreter"),
    ],
)
def test_vllm_where_it_starts_and_the_cpu_computes_bf16_natively_else_hf(flags, python, gpu, chosen, said):
    backend, why = backends.choose_backend(set(flags.split()), python, gpu)
    assert backend == chosen and said in why


class Recorder:
    """The sampler registry with every factory replaced by one that records what it was asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object, int]] = []

    def get(self, name):
        return lambda model, tokenizer, rollout_cfg=None, seed=0: self.calls.append((name, rollout_cfg, seed)) or name


@pytest.mark.parametrize(("flags", "python", "chosen"), [(ZEN4, VENV, "vllm"), (AVX2, VENV, "hf"), (AMX, None, "hf")])
def test_auto_builds_the_chosen_backend_and_says_why_in_one_line(monkeypatch, caplog, flags, python, chosen):
    registry = Recorder()
    monkeypatch.setattr(vllm_policy, "cpu_flags", lambda: set(flags.split()))  # what /proc/cpuinfo would say
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(backends, "engine_python", lambda engine: python if engine == "vllm" else sys.executable)
    monkeypatch.setattr(backends, "SAMPLERS", registry)
    cfg = RolloutConfig(backend="auto")
    with caplog.at_level(logging.INFO, logger="agentic_rl.rollout.backends"):
        policy = backends.auto_sampler("model", "tokenizer", rollout_cfg=cfg, seed=3)
    assert policy == chosen and registry.calls == [(chosen, cfg, 3)]
    lines = [r.getMessage() for r in caplog.records if "rollout.backend=auto" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith(f"rollout.backend=auto chose {chosen}: ")


def test_auto_is_a_sampler_name_and_not_the_default():
    assert "auto" in backends.SAMPLERS.names() and RolloutConfig(backend="auto").backend == "auto"
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="train")
    assert cfg.rollout.backend == "hf"


# ---- the class a backend samples with, asked before anything is built (backends.policy_class) ---------------------


@pytest.mark.parametrize(
    ("backend", "cls", "cpu", "gpu"), [("hf", "HFPolicy", False, False), ("vllm", "VLLMPolicy", True, False)]
)
def test_each_backend_names_its_policy_class_and_whether_it_shares_the_trainers_heap(backend, cls, cpu, gpu):
    found = backends.policy_class(RolloutConfig(backend=backend))
    assert found.__name__ == cls
    assert found.shares_trainer_heap(on_gpu=False) is cpu and found.shares_trainer_heap(on_gpu=True) is gpu


@pytest.mark.parametrize(("flags", "python", "chosen"), [(ZEN4, VENV, "vllm"), (AVX2, VENV, "hf"), (AMX, None, "hf")])
def test_auto_asks_the_class_of_the_backend_it_would_build(monkeypatch, flags, python, chosen):
    """The machine is faked where `auto_sampler` reads it (CPU flags, vLLM's interpreter, no GPU): `policy_class`
    resolves to the class of the backend that `auto_sampler` builds, so auto inherits what that backend needs."""
    monkeypatch.setattr(vllm_policy, "cpu_flags", lambda: set(flags.split()))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(backends, "engine_python", lambda engine: python if engine == "vllm" else sys.executable)
    found = backends.policy_class(RolloutConfig(backend="auto"))
    assert found is backends.policy_class(RolloutConfig(backend=chosen))
    assert found.shares_trainer_heap(on_gpu=False) is (chosen == "vllm")
    registry = Recorder()
    monkeypatch.setattr(backends, "SAMPLERS", registry)
    assert backends.auto_sampler("model", "tokenizer", rollout_cfg=RolloutConfig(backend="auto")) == chosen


def test_a_backend_that_declares_no_class_gets_the_policy_bases_defaults_and_an_unknown_one_is_named(monkeypatch):
    from agentic_rl.registry import Registry
    from agentic_rl.rollout.policy import Policy

    samplers = Registry("sampler")
    samplers.register("mine")(lambda model, tokenizer, rollout_cfg=None, seed=0: None)
    monkeypatch.setattr(backends, "SAMPLERS", samplers)
    assert backends.policy_class(SimpleNamespace(backend="mine")) is Policy  # (RolloutConfig checks the name)
    with pytest.raises(ValueError, match=r"rollout.backend='nope': unknown sampler 'nope'; available: mine, hf"):
        backends.policy_class(SimpleNamespace(backend="nope"))


def test_a_local_server_runs_where_its_engine_imports_else_in_the_checkouts_vllm_venv(monkeypatch, tmp_path):
    """`engine_python`: this interpreter where it can import the engine (always for hf); for vllm, else the
    checkout's `.venv-vllm` interpreter where it exists; else None (no other engine has a venv of its own)."""
    import importlib.util

    importable = set()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object() if name in importable else None)
    monkeypatch.setattr(backends, "repo_root", lambda: tmp_path)
    assert backends.engine_python("hf") == sys.executable
    assert backends.engine_python("vllm") is None and backends.engine_python("sglang") is None
    venv_python = tmp_path / backends.VLLM_VENV / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text("")
    assert backends.engine_python("vllm") == str(venv_python)
    assert backends.engine_python("sglang") is None
    importable.add("vllm")
    assert backends.engine_python("vllm") == sys.executable
