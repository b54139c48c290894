"""LoRA adapter on the frozen base model.

One copy of the model serves as both policy (adapter on) and reference (adapter off, via
`model.disable_adapter()`), instead of the three copies the reference notebook kept.
"""

from __future__ import annotations

from typing import Any

import torch


def add_lora(
    model: Any,
    r: int,
    alpha: int,
    dropout: float,
    target_modules: list[str],
    seed: int = 0,
    gradient_checkpointing: bool = False,
) -> Any:
    """Wrap `model` in a LoRA adapter. With `gradient_checkpointing`, training-mode forwards keep only each
    layer's input and recompute the rest in the backward pass (generation and no-grad passes are unaffected)."""
    from peft import LoraConfig, get_peft_model

    if gradient_checkpointing:
        # Non-reentrant checkpointing back-propagates into the LoRA weights even though the frozen
        # embeddings' output does not require grad (the reentrant variant would need a hook for that).
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    torch.manual_seed(seed)
    config = LoraConfig(
        r=r,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=list(target_modules),
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config)


def lora_state(model: Any) -> dict[str, torch.Tensor]:
    """A detached copy of the trainable (LoRA) parameters, for checks and checkpoints."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
