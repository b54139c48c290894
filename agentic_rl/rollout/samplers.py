"""The sampler backends by name: `rollout.backend=hf|...` -> the class that generates the policy's turns.

A backend is a class listed in the "sampler" registry (`agentic_rl.registry.BUILTINS["sampler"]`, or the entry
point `sampler.<name>` of another package) and built as `cls(model, tokenizer, **options)` with the model (LoRA
adapter attached) and its tokenizer; it implements `rollout.policy.Policy`. `hf` (`HFPolicy`, the exact
reference) is the default.
"""
from __future__ import annotations

from typing import Any

from agentic_rl.registry import Registry

SAMPLERS: Registry[type] = Registry("sampler")
DEFAULT_BACKEND = "hf"


def build_sampler(backend: str, model: Any, tokenizer: Any, **options: Any) -> Any:
    """The policy that samples from `model` with the backend named `backend` (an unknown name lists the known)."""
    try:
        cls = SAMPLERS.get(backend)
    except (KeyError, ImportError) as exc:  # an unknown name, or a backend whose package is not installed
        raise ValueError(f"rollout.backend={backend!r}: {exc.args[0]}") from None
    return cls(model, tokenizer, **options)
