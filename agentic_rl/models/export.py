"""The policy's weights as an inference engine loads them: LoRA deltas merged, checkpoint names, a plain folder.

- `merged_weights(model)`: name -> tensor of the model with every active LoRA adapter's delta added to the
  weight it wraps, under the base model's checkpoint names (`model.layers.0.self_attn.q_proj.weight`, no
  `base_model.model.` or `.base_layer.`); the model is not modified (no `merge_and_unload`), so training goes on.
- `lora_touched(model)`: the checkpoint names of the weights that an adapter changes.
- `export_for_engine(model, tokenizer, folder)`: config.json (without the GGUF `quantization_config` that a
  de-quantized embedded model still carries, which an engine would try to honour), the merged weights as
  safetensors, and the tokenizer files: a folder an engine such as vLLM starts from.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

logger = logging.getLogger(__name__)


def base_model(model: Any) -> Any:
    """The transformers model under a peft wrapper (the model itself when there is none)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _lora_modules(model: Any) -> dict[str, Any]:
    """Checkpoint-name prefix -> peft LoRA layer, for layers with an active, unmerged adapter."""
    out = {}
    for name, module in base_model(model).named_modules():
        if not (hasattr(module, "base_layer") and hasattr(module, "get_delta_weight")):
            continue
        if getattr(module, "merged", False) or getattr(module, "disable_adapters", False):
            continue  # a merged adapter is already in the base weight; a disabled one changes nothing
        if any(a in getattr(module, "lora_A", {}) for a in module.active_adapters):
            out[name] = module
    return out


def lora_touched(model: Any) -> set[str]:
    """Checkpoint names of the weights an active LoRA adapter changes."""
    return {f"{name}.weight" for name in _lora_modules(model)}


def weight_names(model: Any) -> list[str]:
    """The checkpoint names `merged_weights` yields, without computing any tensor."""
    base = base_model(model)
    tied = bool(getattr(base.config, "tie_word_embeddings", False))
    names = [n.replace(".base_layer.", ".") for n, _ in base.named_parameters() if "lora_" not in n]
    return [n for n in names if not (tied and n == "lm_head.weight")]


@torch.no_grad()
def merged_weights(model: Any, only: set[str] | None = None, merge: bool = True) -> Iterator[tuple[str, torch.Tensor]]:
    """(checkpoint name, tensor) of every weight with the active LoRA deltas added, or of the names in `only`
    (`merge=False`: the base weights, adapters left out).

    Untouched tensors are yielded as they are (no copy); a merged one is a new tensor. A tied LM head is left
    out (the engine ties it to the embedding itself, and safetensors refuses shared storage).
    """
    base = base_model(model)
    lora = _lora_modules(model) if merge else {}
    tied = bool(getattr(base.config, "tie_word_embeddings", False))
    for raw_name, param in base.named_parameters():
        if "lora_" in raw_name:
            continue
        name = raw_name.replace(".base_layer.", ".")
        if (tied and name == "lm_head.weight") or (only is not None and name not in only):
            continue
        module_name, _, leaf = name.rpartition(".")
        module = lora.get(module_name)
        if module is None or leaf != "weight":
            yield name, param.detach()
            continue
        weight = param.detach().clone()
        for adapter in module.active_adapters:
            if adapter in module.lora_A:
                weight += module.get_delta_weight(adapter).to(weight.dtype)
        yield name, weight


def engine_config(model: Any) -> dict[str, Any]:
    """The base model's config as a dict, without settings an engine must not apply to merged fp weights."""
    config = base_model(model).config.to_dict()
    config.pop("quantization_config", None)  # the embedded model is de-quantized: its weights are plain floats
    return config


def export_for_engine(
    model: Any, tokenizer: Any, folder: str | Path, dtype: torch.dtype | None = None, merge: bool = True
) -> Path:
    """Write the merged model (config, safetensors, tokenizer) to `folder`; returns it (`merge=False`: the base)."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(engine_config(model), indent=2))
    tensors = {
        name: (t.to(dtype) if dtype is not None else t).contiguous() for name, t in merged_weights(model, merge=merge)
    }
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save_pretrained(str(folder))
    logger.info("merged weights for the inference engine written to %s (%d tensors)", folder, len(tensors))
    return folder
