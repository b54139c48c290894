"""The CUDA path: placement by accelerate, bfloat16, gradient checkpointing. Skipped where no GPU is visible
(CI); run on a GPU machine with `python -m pytest tests/distributed/test_gpu.py`."""

from __future__ import annotations

import pytest
import torch

from agentic_rl.algo.grpo import grpo_step
from agentic_rl.models import add_lora, load_tiny_random
from tests.distributed.cases import CFG, TOKENIZER, make_group, rewards_of

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def policy(gradient_checkpointing: bool):
    loaded = load_tiny_random(TOKENIZER, hidden_size=128, num_layers=4, dtype="auto", device="auto")
    model = add_lora(
        loaded.model,
        r=4,
        alpha=8,
        dropout=0.0,
        target_modules=["q_proj", "v_proj"],
        seed=0,
        gradient_checkpointing=gradient_checkpointing,
    )
    return model, loaded.tokenizer.pad_token_id


def lora_grads(model, pad_id) -> dict[str, torch.Tensor]:
    params = [p for p in model.parameters() if p.requires_grad]
    stats = grpo_step(
        model,
        torch.optim.SGD(params, lr=0.0),
        make_group(1),
        rewards_of([1.0, 0.0, 0.0, 0.5]),
        CFG,
        pad_id,
        temperature=1.0,
    )
    assert not stats.skipped and torch.isfinite(torch.tensor(stats.loss))
    return {n: p.grad.detach().float().clone() for n, p in model.named_parameters() if p.requires_grad}


def test_auto_places_the_base_on_the_gpu_in_bf16_and_keeps_lora_in_fp32():
    model, _ = policy(gradient_checkpointing=False)
    base = [p for n, p in model.named_parameters() if "lora_" not in n]
    lora = [p for n, p in model.named_parameters() if "lora_" in n]
    assert all(p.device.type == "cuda" for p in model.parameters())
    assert {p.dtype for p in base} == {torch.bfloat16}
    assert lora and {p.dtype for p in lora} == {torch.float32}  # peft upcasts the adapter: fp32 updates


def test_gradient_checkpointing_gives_the_same_lora_gradient():
    plain_model, pad_id = policy(gradient_checkpointing=False)
    ckpt_model, _ = policy(gradient_checkpointing=True)
    assert ckpt_model.base_model.model.is_gradient_checkpointing
    assert not plain_model.base_model.model.is_gradient_checkpointing
    plain, ckpt = lora_grads(plain_model, pad_id), lora_grads(ckpt_model, pad_id)
    assert any(g.abs().max() > 0 for g in plain.values())
    for name in plain:  # recomputation repeats the same bf16 kernels: equal up to bf16 rounding at most
        assert torch.allclose(plain[name], ckpt[name], rtol=2e-2, atol=1e-4), name
