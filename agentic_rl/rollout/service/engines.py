"""The engines a sampler server serves (`server.Engine`): vLLM's, and the HF reference as a stand-in.

Both read the same transformers folder (the policy's merged weights and its tokenizer), sample each turn from its
token ids with its own seed, stop after the first stop string (included, as vLLM does), and report the log-prob of
each token at the sampling temperature over the whole vocabulary (`SamplingParams`'s contract: top-p shapes the
draw only). `load_weights` replaces the named tensors of a safetensors file in place and forgets every cached
key/value computed with the old ones. `load_adapter` (the `weight_sync=lora` path) serves the LoRA adapter saved in a
folder under the version's own name (`policy-v<N>`) from the next call on, over the base weights the server started
from; the previous version's adapter is dropped (a prefix cache is keyed by adapter, so nothing stale is served).

- `HFEngine`: `HFPolicy` on the folder's model, one turn at a time under `torch.manual_seed(seed)` (a turn's sample
  depends on its seed alone). Slow; it is what tests run two of and kill one.
- `VLLMEngine`: vLLM's `LLM` in this process (the server's: the trainer never imports vLLM). The temperature is the
  scale of the model's logits and the engine samples at 1 with the turn's top-p, reporting raw log-probs of the
  scaled logits (see `agentic_rl.rollout.vllm_policy`, whose worker-side helpers it uses).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentic_rl.rollout.service.protocol import GenerateTurn

logger = logging.getLogger(__name__)

Result = tuple[list[int], list[float], bool]


def read_tensors(path: str) -> tuple[dict[str, Any], int]:
    """The tensors of a safetensors file and its size in bytes."""
    from safetensors.torch import load_file

    return load_file(path), os.path.getsize(path)


def folder_bytes(path: str) -> int:
    """The bytes of the files in folder `path` (what an adapter version costs to send)."""
    return sum(f.stat().st_size for f in Path(path).iterdir() if f.is_file())


def adapter_name(version: int) -> str:
    return f"policy-v{version}"


def any_of(markers: list[str]) -> Callable[[str], bool]:
    """True once the text holds one of `markers` (what vLLM's stop strings check)."""
    return lambda text: any(m in text for m in markers)


class HFEngine:
    name = "hf"

    def __init__(self, folder: str, settings: dict[str, Any], seed: int = 0) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from agentic_rl.rollout.hf_policy import HFPolicy

        torch.manual_seed(seed)
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.policy = HFPolicy(self.model, self.tokenizer, kv_cache="turn")
        self.adapter: str | None = None  # the adapter every call is served with (load_adapter)

    def generate(self, turns: list[GenerateTurn]) -> list[Result]:
        import torch

        from agentic_rl.rollout.policy import SamplingParams, StopCondition, TurnRequest
        from agentic_rl.types import Task

        task = Task(task_id="served", prompt="", tests="", harness="pytest")  # a policy's request names a task
        out = []
        for turn in turns:
            markers = list(turn.stop or [])
            stop = StopCondition(any_of(markers), markers)
            torch.manual_seed(turn.seed)
            sampling = SamplingParams(turn.max_tokens, turn.temperature, turn.top_p)
            [(ids, logps)] = self.policy.generate_with_logprobs([TurnRequest(turn.ids, task, 0, 0)], sampling, stop)
            out.append((ids, logps, bool(markers) and stop(self.policy.tokenizer.decode(ids))))
        return out

    def load_weights(self, path: str) -> int:
        import torch

        tensors, size = read_tensors(path)
        own = dict(self.model.named_parameters())
        unknown = sorted(set(tensors) - set(own))
        if unknown:
            raise ValueError(f"{path} holds tensors this model does not have: {unknown[:3]}")
        with torch.no_grad():
            for name, value in tensors.items():
                own[name].copy_(value)
        return size  # the HF engine keeps no cache across calls: nothing stale remains

    def load_adapter(self, path: str, version: int) -> int:
        """Serve the adapter in folder `path` (peft's files) as `policy-v<version>`, unmerged over the base weights,
        as vLLM serves a LoRARequest; the previous version's adapter is deleted."""
        from peft import PeftModel

        from agentic_rl.rollout.hf_policy import HFPolicy

        name, old = adapter_name(version), self.adapter
        if old is None:
            self.model = PeftModel.from_pretrained(self.model, path, adapter_name=name)
            self.policy = HFPolicy(self.model, self.tokenizer, kv_cache="turn")
        else:
            self.model.load_adapter(path, adapter_name=name)
            self.model.set_adapter(name)
            self.model.delete_adapter(old)
        self.model.eval()
        self.adapter = name
        return folder_bytes(path)


class VLLMEngine:
    name = "vllm"

    def __init__(self, folder: str, settings: dict[str, Any], seed: int = 0) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # weights reloaded in this process
        import torch
        from vllm import LLM

        from agentic_rl.rollout.vllm_policy import engine_dtype, install_cpu_top_p

        dtype = engine_dtype(settings.get("dtype", "auto"))
        kwargs: dict[str, Any] = dict(
            model=folder,
            tokenizer=folder,
            dtype=dtype,
            seed=seed,
            enable_prefix_caching=True,
            logprobs_mode="raw_logprobs",  # of the logits the workers scaled by 1/T
            enforce_eager=settings.get("enforce_eager", True),
            generation_config="vllm",
            max_num_seqs=settings.get("max_num_seqs", 32),
        )
        for key in ("max_model_len", "block_size", "kv_cache_memory_bytes"):
            if settings.get(key) is not None:
                kwargs[key] = settings[key]
        if settings.get("weight_sync") == "lora":  # one adapter at a time: a call runs under one version
            kwargs.update(enable_lora=True, max_lora_rank=settings.get("max_lora_rank", 64), max_loras=1)
        if torch.cuda.is_available():
            kwargs["gpu_memory_utilization"] = settings.get("gpu_memory_utilization", 0.35)
        else:
            install_cpu_top_p()
        self.llm = LLM(**kwargs)
        self.max_model_len = int(self.llm.llm_engine.model_config.max_model_len)
        self._scale: float | None = 1.0
        self._lora: Any = None  # the LoRARequest every call is served with (load_adapter)

    def generate(self, turns: list[GenerateTurn]) -> list[Result]:
        from vllm.inputs import TokensPrompt

        out: list[Result | None] = [None] * len(turns)
        # the temperature lives in the model's logits scale, so each temperature is one engine call
        for temperature in sorted({t.temperature for t in turns}):
            index = [i for i, t in enumerate(turns) if t.temperature == temperature]
            self._set_temperature(temperature if temperature > 0 else 1.0)
            results = self.llm.generate(
                [TokensPrompt(prompt_token_ids=turns[i].ids) for i in index],
                [self._params(turns[i]) for i in index],
                use_tqdm=False,
                lora_request=self._lora,
            )
            for i, result in zip(index, results):
                completion = result.outputs[0]
                ids = list(completion.token_ids)
                logps = [float(d[t].logprob) for t, d in zip(ids, completion.logprobs or [])]
                if len(logps) != len(ids):
                    raise RuntimeError("the vLLM engine returned fewer log-probs than tokens")
                out[i] = (ids, logps, isinstance(completion.stop_reason, str))
        return [r for r in out if r is not None]

    def _params(self, turn: GenerateTurn) -> Any:
        from vllm import SamplingParams

        room = self.max_model_len - len(turn.ids)
        if room < 1:
            raise ValueError(
                f"a turn's history of {len(turn.ids)} tokens leaves no room in the vLLM engine's max_model_len="
                f"{self.max_model_len}: raise rollout.vllm.max_model_len or lower rollout.max_context_tokens"
            )
        sampled = turn.temperature > 0
        return SamplingParams(
            max_tokens=min(turn.max_tokens, room),  # the context's end cuts the turn, as in the in-process engine
            temperature=1.0 if sampled else 0.0,  # T itself scales the logits
            top_p=turn.top_p if sampled else 1.0,
            seed=turn.seed,
            logprobs=0,
            stop=turn.stop or None,
            include_stop_str_in_output=True,
            skip_special_tokens=False,
            spaces_between_special_tokens=False,
        )

    def _set_temperature(self, temperature: float) -> None:
        from agentic_rl.rollout.vllm_policy import scale_logits

        if temperature != self._scale:
            if not all(self.llm.collective_rpc(scale_logits, args=(temperature,))):
                raise RuntimeError("the vLLM model has no LogitsProcessor whose scale could carry the temperature")
            self._scale = temperature

    def load_weights(self, path: str) -> int:
        tensors, size = read_tensors(path)
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": list(tensors.items())})
        self.llm.reset_prefix_cache()  # keys/values cached under the old weights must never be served
        self._scale = None  # a reload may rebuild the head: set the scale again before the next call
        return size

    def load_adapter(self, path: str, version: int) -> int:
        """Serve the adapter in folder `path` as `policy-v<version>` (its id: version + 1, ids start at 1). It is
        loaded now, so a bad folder fails this call and not the next rollout; the previous version is removed."""
        from vllm.lora.request import LoRARequest

        if not self.llm.llm_engine.vllm_config.lora_config:
            raise ValueError("this vLLM server serves merged weights: start it with weight_sync=lora in --settings")
        request = LoRARequest(adapter_name(version), version + 1, path)
        self.llm.llm_engine.add_lora(request)
        if self._lora is not None:
            self.llm.llm_engine.remove_lora(self._lora.lora_int_id)
        self._lora = request
        return folder_bytes(path)


ENGINES = {"hf": HFEngine, "vllm": VLLMEngine}


def build_engine(name: str, folder: str, settings: dict[str, Any], seed: int = 0) -> Any:
    if name not in ENGINES:
        raise ValueError(f"unknown sampler engine {name!r}; available: {', '.join(ENGINES)}")
    return ENGINES[name](folder, settings, seed=seed)
