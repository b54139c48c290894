"""`VLLMPolicy` against the engine's contract, on the bugs of issue #49's list (the stand-in engine of
`test_vllm_policy_logic.py` enforces what the real one does: log-probs only when asked for, raw or processed as the
engine was started, a prefix cache that outlives a reload serves stale keys/values):

- the sampler's log-probs are log_softmax(logits / T) over the whole vocabulary, never renormalised over the top-p
  nucleus, and they are requested at all;
- a later rollout draws new turn seeds (it does not replay the first rollout's);
- weights written in place behind autograd (`.data`, a fused optimizer) are synced before the next rollout;
- a merged-weight reload empties the prefix cache;
- an engine that fails to start falls back to the HF backend with one warning, instead of ending the run.
"""

from __future__ import annotations

import logging

import pytest
import torch

from agentic_rl.rollout import backends, vllm_policy
from agentic_rl.rollout.agent import RolloutConfig
from agentic_rl.rollout.backends import make_policy
from agentic_rl.rollout.hf_policy import HFPolicy
from agentic_rl.rollout.policy import SamplingParams, TurnRequest
from agentic_rl.rollout.vllm_settings import VLLMConfig
from tests.rollout import test_vllm_policy_logic as logic
from tests.rollout.fakes import TASK
from tests.rollout.test_vllm_policy_logic import GREEDY, fake_modules, reloads, turn

# the stand-in engine's fixtures (pytest finds fixtures by the module's names)
build, lora_model = logic.build, logic.lora_model

SIZES = {"max_context_tokens": 512, "max_new_tokens": 64}


def position_logits(j: int) -> torch.Tensor:
    """Logits of the reply's j-th position over 6 tokens, the chosen one first (not the most likely)."""
    return torch.tensor([1.0, 2.0 + 0.1 * j, 0.5, -1.0, 0.0, 1.5])


def test_sampler_logprobs_are_the_whole_vocabularys_at_the_temperature(build):
    """T = 0.7, top_p = 0.8: what comes back is log_softmax(logits / T) of each token; the nucleus-renormalised
    value (what the engine's processed log-probs would be) is far from it."""
    policy, llm, _ = build(VLLMConfig(dtype="float32"), **SIZES)
    llm.replies[(1,)] = [100, 101, 102]
    llm.logits = position_logits
    sampling = SamplingParams(3, temperature=0.7, top_p=0.8)
    [(ids, logps)] = policy.generate_with_logprobs([turn([1])], sampling, lambda text: False)
    want = [float(torch.log_softmax(position_logits(j) / 0.7, -1)[0]) for j in range(3)]
    assert ids == [100, 101, 102] and logps == pytest.approx(want, abs=1e-6)
    probs = torch.softmax(position_logits(0) / 0.7, -1)
    top = probs.sort(descending=True).values
    renormalised = float(torch.log(probs[0] / top[(top.cumsum(0) - top) < 0.8].sum()))
    assert abs(renormalised - want[0]) > 0.1
    # greedy: the model's own log-probs (scale 1)
    [(_, greedy)] = policy.generate_with_logprobs([turn([1])], GREEDY, lambda text: False)
    assert greedy == pytest.approx([float(torch.log_softmax(position_logits(j), -1)[0]) for j in range(3)], abs=1e-6)


def test_continuous_turns_get_the_same_log_probs(build):
    policy, llm, _ = build(VLLMConfig(dtype="float32"), **SIZES)
    llm.replies[(1,)] = [100, 101]
    llm.logits = position_logits
    with policy.session():
        policy.start_turn(TurnRequest([1], TASK, 0, 0, episode=0), SamplingParams(2, 0.7, 0.8), lambda t: False)
        [(_, ids, logps)] = policy.finished_turns()
    assert logps == pytest.approx([float(torch.log_softmax(position_logits(j) / 0.7, -1)[0]) for j in range(2)])


def test_a_later_rollout_draws_new_turn_seeds(build):
    """Two rollouts in a row, the global RNG not reseeded between them: episode 0's first turn gets a new seed."""
    policy, llm, _ = build(VLLMConfig(dtype="float32"), **SIZES)
    llm.replies[(1,)] = [7, 8]
    torch.manual_seed(0)
    for _ in range(2):
        with policy.session():
            policy.start_turn(TurnRequest([1], TASK, 0, 0, episode=0), GREEDY, lambda t: False)
            policy.finished_turns()
    first, second = (params.seed for _, _, params in llm.enqueued)
    assert first != second


@pytest.mark.parametrize("how", ["data", "fused"])
def test_weights_written_behind_autograd_are_synced(build, lora_model, how):
    """`.data` writes and a fused optimizer step leave the parameters' version counters alone; the next rollout
    still reloads the engine's weights."""
    model, _ = lora_model
    policy, llm, _ = build(VLLMConfig(dtype="float32"), **SIZES)
    with policy.session():
        pass
    assert not reloads(llm)
    trainable = [p for p in model.parameters() if p.requires_grad]
    if how == "data":
        for p in trainable:
            p.data.add_(0.01)
    else:
        for p in trainable:
            p.grad = torch.full_like(p, 0.5)
        try:
            optimizer = torch.optim.AdamW(trainable, lr=0.01, fused=True)
        except (RuntimeError, TypeError) as exc:  # a torch without the CPU fused kernel
            pytest.skip(f"no fused AdamW here: {exc}")
        optimizer.step()
        for p in trainable:
            p.grad = None
    with policy.session():
        pass
    assert len(reloads(llm)) == 1


def test_a_merged_reload_empties_the_prefix_cache(build, lora_model):
    """With the KV cache kept between rollouts (release_kv_after_rollout=false, or a GPU), the rollout after an
    update must not be served keys/values computed with the old weights (the stand-in asserts it)."""
    model, _ = lora_model
    policy, llm, _ = build(VLLMConfig(dtype="float32", release_kv_after_rollout=False), **SIZES)
    llm.replies[(1, 2)] = [5, 6]
    policy.generate([turn([1, 2])], GREEDY, lambda t: False)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_A" in name:
                p.add_(0.01)
    assert policy.generate([turn([1, 2])], GREEDY, lambda t: False) == [[5, 6]]
    assert len(reloads(llm)) == 1


def test_an_engine_that_fails_to_start_falls_back_to_hf(lora_model, monkeypatch, caplog):
    model, tok = lora_model

    def failing_engine(**kwargs):
        raise RuntimeError("Engine core initialization failed. See root cause above.")

    fake_modules(monkeypatch, vllm={"LLM": failing_engine})
    monkeypatch.setattr(vllm_policy, "export_for_engine", lambda model, tokenizer, folder, merge=True: folder)
    monkeypatch.setattr(vllm_policy, "install_cpu_top_p", lambda: None)  # vLLM's own sampler module: not faked
    monkeypatch.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    monkeypatch.setenv("OMP_NUM_THREADS", str(torch.get_num_threads()))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with caplog.at_level(logging.WARNING):
        policy = make_policy(model, tok, RolloutConfig(backend="vllm", servers=0, vllm={"dtype": "float32"}))
    assert isinstance(policy, HFPolicy)
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert "Engine core initialization failed" in line and "HF backend" in line


@pytest.mark.parametrize("backend", ["vllm", "hf"])
def test_sampler_servers_that_fail_to_start_fall_back_to_hf_in_process(lora_model, monkeypatch, caplog, backend):
    """The server's interpreter exits at once (as one whose engine cannot start does): one warning, HF here."""
    model, tok = lora_model
    monkeypatch.setattr(backends, "engine_python", lambda engine: "/bin/false")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with caplog.at_level(logging.WARNING):
        policy = make_policy(model, tok, RolloutConfig(backend=backend, servers=2, vllm={"dtype": "float32"}))
    assert isinstance(policy, HFPolicy)
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert "did not start (exited with 1" in line and "HF backend" in line
