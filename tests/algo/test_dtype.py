"""`algo.dtype`: the trainer's forward under bf16 autocast keeps fp32 LoRA masters and an fp32 LM head, and its
gradient is the fp32 one up to bf16 rounding; `auto` picks by the machine; a bad value says how to fix it."""

from __future__ import annotations

import pytest
import torch

from agentic_rl.algo.grpo import GRPOConfig
from agentic_rl.algo.logprobs import behaviour_logprobs

from .test_objective import TEMPERATURE, episode, lora_model, step_grads


def test_bf16_step_gives_the_fp32_gradient_up_to_rounding(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(4)]
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.0])
    fp32, fp32_stats = step_grads(model, group, rewards, tok, kl_coeff=0.1)
    bf16, bf16_stats = step_grads(model, group, rewards, tok, kl_coeff=0.1, dtype="bf16")
    assert all(p.dtype == torch.float32 for p in model.parameters() if p.requires_grad)  # fp32 masters
    assert bf16.dtype == torch.float32 and torch.isfinite(bf16).all()
    assert not torch.equal(bf16, fp32)  # the autocast did act
    cosine = torch.nn.functional.cosine_similarity(bf16, fp32, dim=0)
    assert cosine > 0.98, float(cosine)
    assert bf16_stats.kl == pytest.approx(fp32_stats.kl, rel=0.2)


def test_bf16_behaviour_scoring_is_bf16_and_the_head_stays_fp32(base_and_tokenizer):
    """The trainer's log-probs in bf16 differ from fp32 by rounding only (the LM head's softmax is fp32)."""
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(2)]
    fp32 = behaviour_logprobs(model, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    bf16 = behaviour_logprobs(
        model, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096, dtype="bf16"
    )
    for a, b in zip(fp32, bf16):
        assert b.dtype == torch.float32
        assert not torch.equal(a, b) and torch.allclose(a, b, atol=0.1)


def test_dtype_config_says_how_to_fix():
    with pytest.raises(
        ValueError, match="algo.dtype=.fp16. is not a trainer dtype; set it to one of: fp32, bf16, auto"
    ):
        GRPOConfig(dtype="fp16").validate()
    assert GRPOConfig().validate().dtype == "fp32"


@pytest.mark.parametrize(
    ("flags", "cuda_bf16", "chosen", "why"),
    [
        ({"avx2", "avx512f", "avx512_bf16", "amx_bf16"}, None, "bf16", "amx_bf16: bf16 measured 0.60x"),
        ({"avx2", "avx512f", "avx512_bf16"}, None, "bf16", "avx512_bf16 and no AMX: bf16 measured 0.90x"),
        ({"avx2", "avx512f"}, None, "fp32", "no bf16 natively: bf16 measured 4.98x"),
        (set(), None, "fp32", "no bf16 natively"),
        (set(), True, "bf16", "CUDA device with bf16"),
        ({"amx_bf16"}, False, "fp32", "CUDA device without bf16"),  # the device trains, not the host CPU
    ],
)
def test_auto_dtype_is_bf16_only_where_it_measured_faster(flags, cuda_bf16, chosen, why):
    from agentic_rl.algo.logprobs import choose_trainer_dtype

    dtype, reason = choose_trainer_dtype(flags, cuda_bf16)
    assert dtype == chosen and why in reason


@pytest.mark.parametrize(("flags", "chosen"), [({"avx512_bf16", "amx_bf16"}, "bf16"), ({"avx2"}, "fp32")])
def test_auto_dtype_is_resolved_once_at_validation_and_logged(monkeypatch, caplog, flags, chosen):
    import agentic_rl.algo.logprobs as logprobs

    monkeypatch.setattr(logprobs, "cpu_flags", lambda: set(flags))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with caplog.at_level("INFO", logger="agentic_rl.algo.grpo"):
        cfg = GRPOConfig(dtype="auto").validate()
    assert cfg.dtype == chosen  # every trainer pass then sees a concrete dtype, never "auto"
    assert [r.getMessage() for r in caplog.records if "algo.dtype=auto" in r.getMessage()] == [
        f"algo.dtype=auto chose {chosen}: " + logprobs.choose_trainer_dtype(set(flags), None)[1]
    ]
