"""The GRPO step computes the objective of `algo/core.py` exactly, checked through gradients.

With ratio 1 the loss *value* does not depend on the log-probs, so these tests compare the LoRA gradients
a step leaves behind with gradients of the objective written out independently here (full logits, one
unpadded sequence at a time, the adapter switched off by hand for the reference). Each test is built so
that the error it targets moves the gradient well beyond the tolerance (asserted, so it can fail).
"""

from __future__ import annotations

import copy
import math

import pytest
import torch

from agentic_rl.algo.grpo import GRPOConfig, LoraSchema, grpo_step, update_rollout_batch
from agentic_rl.algo.logprobs import behaviour_logprobs, padded_batch, reference_logprobs, sequence_logprobs
from agentic_rl.models import add_lora
from agentic_rl.types import Trajectory

# the model fixture, `base_and_tokenizer`, is in conftest.py (the other test files of this folder use it too)
TEMPERATURE = 0.7
NO_CLIP = 1e9  # gradient clipping off, so the step's gradients are the raw ones


def lora_model(base, *, trained: bool, dropout: float = 0.0, seed: int = 0):
    """A fresh LoRA model on a copy of `base`. `trained`: random LoRA B, so the policy differs from the base
    (at init B = 0 and policy == reference, which would make every KL gradient vanish)."""
    model = add_lora(copy.deepcopy(base), r=4, alpha=8, dropout=dropout, target_modules=["q_proj", "v_proj"])
    if trained:
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if "lora_B" in name:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    return model


def episode(tokenizer, variant: int) -> Trajectory:
    """Two turns: prompt, reply, observation, reply, observation. Only the replies are the model's."""
    enc = lambda text: tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    parts = [
        (enc("Write add(a, b)."), 0),
        (enc(f"```python\nprint(add({variant}, 2))\n```"), 1),
        (enc(f"<exec_result>{variant + 2}</exec_result>"), 0),
        (enc(f"```submit\ndef add(a, b): return a {'+-*/'[variant % 4]} b\n```"), 1),
        (enc("<test_result>FAIL: 1 of 3</test_result>"), 0),
    ]
    ids = [t for toks, _ in parts for t in toks]
    mask = [m for toks, m in parts for _ in toks]
    return Trajectory(task_id="t", token_ids=ids, loss_mask=mask, prompt_len=len(parts[0][0]))


def lora_grads(model) -> torch.Tensor:
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.requires_grad])


def step_grads(model, group, rewards, tokenizer, **cfg_overrides) -> tuple[torch.Tensor, object]:
    """Run grpo_step with lr 0 (parameters unchanged) and return the gradients it left on the LoRA weights."""
    cfg = GRPOConfig(group_size=len(group), max_grad_norm=NO_CLIP, **cfg_overrides).validate()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
    stats = grpo_step(model, opt, group, rewards, cfg, tokenizer.pad_token_id, temperature=TEMPERATURE)
    return lora_grads(model), stats


def full_logprobs(model, traj: Trajectory, temperature: float) -> torch.Tensor:
    """log softmax(logits / T) of every next token of one unpadded sequence: (L-1,)."""
    ids = torch.tensor([traj.token_ids])
    logits = model(input_ids=ids).logits[0, :-1]
    return torch.log_softmax(logits / temperature, dim=-1).gather(-1, ids[0, 1:, None])[:, 0]


def expected_grads(
    model, group, advantages, *, kl_coeff: float, temperature: float = TEMPERATURE, clipped_seqs: tuple[int, ...] = ()
) -> torch.Tensor:
    """Gradient of Σ_i Σ_t mask·(-A_i log π(y_t) + β k3_t) / N, written out by hand.

    At ratio 1, -A·ρ and -A·log π have the same gradient. Sequences in `clipped_seqs` have a ratio outside
    the clip range in the direction of their advantage: their policy term has no gradient.
    """
    model.zero_grad(set_to_none=True)
    n_tokens = sum(sum(t.loss_mask[1:]) for t in group)
    total = torch.zeros(())
    for i, (traj, adv) in enumerate(zip(group, advantages)):
        mask = torch.tensor(traj.loss_mask[1:], dtype=torch.float32)
        logp = full_logprobs(model, traj, temperature)
        with torch.no_grad(), model.disable_adapter():
            ref = full_logprobs(model, traj, temperature)
        k3 = torch.exp(ref - logp) - (ref - logp) - 1
        policy_term = torch.zeros_like(logp) if i in clipped_seqs else -float(adv) * logp
        total = total + ((policy_term + kl_coeff * k3) * mask).sum() / n_tokens
    total.backward()
    grads = lora_grads(model)
    model.zero_grad(set_to_none=True)
    return grads


def assert_close_and_discriminating(got: torch.Tensor, want: torch.Tensor, wrong: torch.Tensor) -> None:
    """`got` matches `want`, and `wrong` (the gradient of a broken objective) is far from `want`."""
    scale = want.norm()
    assert scale > 0
    assert (wrong - want).norm() > 0.05 * scale, "the test could not tell the broken objective apart"
    assert (got - want).norm() <= 1e-3 * scale, f"relative error {(got - want).norm() / scale:.2e}"


def test_step_gradient_is_the_policy_gradient(base_and_tokenizer):
    """Flipping the sign of the policy gradient, shifting the loss mask or training observation tokens
    changes the step's gradient (KL off, so only the policy term acts)."""
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(4)]
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0])
    adv = torch.tensor([1.0, -1.0, -1.0, 1.0])  # GRPO advantages of these rewards (population std 0.5)
    got, stats = step_grads(model, group, rewards, tok, kl_coeff=0.0)
    want = expected_grads(model, group, adv, kl_coeff=0.0)
    assert_close_and_discriminating(got, want, wrong=-want)
    # the mask-shifted and observation-included objectives are different, and the step is not them
    shifted = [Trajectory("t", t.token_ids, t.loss_mask[1:] + [0], t.prompt_len) for t in group]
    with_obs = [
        Trajectory("t", t.token_ids, [0] * t.prompt_len + [1] * (len(t.token_ids) - t.prompt_len), t.prompt_len)
        for t in group
    ]
    for broken in (shifted, with_obs):
        assert_close_and_discriminating(got, want, wrong=expected_grads(model, broken, adv, kl_coeff=0.0))
    assert stats.clip_frac == 0.0  # on-policy: ratio 1, nothing clipped


def test_step_gradient_includes_the_kl_to_the_base_model(base_and_tokenizer):
    """The KL term pulls towards the base model (adapter off): a flipped KL sign, or a reference computed
    with the adapter on (then ref == policy and the KL has no gradient), changes the step's gradient."""
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(2)]
    beta = 0.5
    # equal rewards with skipping off: advantages are 0, so the whole gradient is the KL's
    got, stats = step_grads(model, group, torch.tensor([0.3, 0.3]), tok, kl_coeff=beta, skip_zero_std_groups=False)
    want = expected_grads(model, group, [0.0, 0.0], kl_coeff=beta)
    assert_close_and_discriminating(got, want, wrong=-want)  # flipped KL sign
    assert_close_and_discriminating(got, want, wrong=torch.zeros_like(want))  # reference == policy
    assert stats.kl > 0
    # with a policy term as well, both add up
    got, _ = step_grads(model, group, torch.tensor([1.0, 0.0]), tok, kl_coeff=beta)
    want = expected_grads(model, group, [1.0, -1.0], kl_coeff=beta)
    assert_close_and_discriminating(got, want, wrong=expected_grads(model, group, [1.0, -1.0], kl_coeff=-beta))


def test_step_uses_the_sampling_temperature(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(2)]
    got, _ = step_grads(model, group, torch.tensor([1.0, 0.0]), tok, kl_coeff=0.1)
    want = expected_grads(model, group, [1.0, -1.0], kl_coeff=0.1, temperature=TEMPERATURE)
    at_t1 = expected_grads(model, group, [1.0, -1.0], kl_coeff=0.1, temperature=1.0)
    assert_close_and_discriminating(got, want, wrong=at_t1)


def test_micro_batches_and_checkpointing_do_not_change_the_gradient(base_and_tokenizer):
    base, tok = base_and_tokenizer
    group = [episode(tok, v) for v in range(4)]
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.0])
    model = lora_model(base, trained=True)
    whole, _ = step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=10_000)
    one_by_one, _ = step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=1)
    assert torch.allclose(whole, one_by_one, rtol=1e-4, atol=1e-7)
    checkpointed = add_lora(
        copy.deepcopy(base), r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"], gradient_checkpointing=True
    )
    checkpointed.load_state_dict(model.state_dict())
    with_ckpt, _ = step_grads(checkpointed, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=60)
    assert torch.allclose(whole, with_ckpt, rtol=1e-4, atol=1e-7)


def test_the_heap_is_trimmed_after_each_micro_batch_and_the_gradient_does_not_change(base_and_tokenizer, monkeypatch):
    from agentic_rl.algo import grpo

    base, tok = base_and_tokenizer
    group = [episode(tok, v) for v in range(4)]
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.0])
    model = lora_model(base, trained=True)
    trims = []
    monkeypatch.setattr(grpo, "trim_heap", lambda: trims.append(1) or True)
    untrimmed, _ = step_grads(
        model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=1, trim_heap_each_micro_batch=False
    )
    assert trims == []
    monkeypatch.undo()  # the real trim: pages go back, values stay
    trimmed, _ = step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=1)
    assert torch.equal(untrimmed, trimmed)
    monkeypatch.setattr(grpo, "trim_heap", lambda: trims.append(1) or True)
    step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=1)
    assert len(trims) == len(group)  # one micro-batch per episode at a 1-token budget


def test_recomputing_the_shared_prompt_keeps_the_gradient_and_holds_no_graph_under_the_micro_batches(
    base_and_tokenizer, monkeypatch
):
    """`recompute_prefix`: the prompt's first pass has no graph (nothing of it is held while the micro-batches run),
    the second has one, and the micro-batches' gradients go back through it as through the held pass."""
    from agentic_rl.algo import logprobs
    from agentic_rl.algo.logprobs import SharedPrefix, shared_prefix_len

    base, tok = base_and_tokenizer
    group = [episode(tok, v) for v in range(4)]
    assert shared_prefix_len(group) > 1  # the prompt is shared, so there is a prefix pass to recompute
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.0])
    model = lora_model(base, trained=True)
    passes = []

    def watched(model, ids):
        passes.append(torch.is_grad_enabled())
        return prefix_states(model, ids)

    prefix_states = logprobs.prefix_states  # PrefixPass runs the prompt's passes through it
    monkeypatch.setattr(logprobs, "prefix_states", watched)
    held, _ = step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=1, recompute_prefix=False)
    assert passes == [False, True]  # the reference's (no graph), the policy's (with its graph, held)
    passes.clear()
    recomputed, _ = step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=1, recompute_prefix=True)
    assert passes == [False, False, True]  # the reference's, the policy's without a graph, its recompute
    assert torch.equal(held, recomputed)  # the same kernels on the same inputs

    def second_pass_sends_nothing_back(model, ids):  # a recompute that lost the prompt's graph
        first = watched(model, ids)
        return SharedPrefix(first.length, []) if torch.is_grad_enabled() else first  # only the recompute has grad

    passes.clear()
    monkeypatch.setattr(logprobs, "prefix_states", second_pass_sends_nothing_back)
    cut, _ = step_grads(model, group, rewards, tok, kl_coeff=0.1, micro_batch_tokens=1, recompute_prefix=True)
    assert not torch.allclose(held, cut, rtol=1e-3, atol=1e-6)  # the prompt's own share of the gradient is not nil


def unrelated_episode(tokenizer) -> Trajectory:
    prompt = tokenizer.encode("Tell me a story about a cat.", add_special_tokens=False)
    reply = tokenizer.encode("Once upon a time there was a cat named Tom who liked fish.", add_special_tokens=False)
    return Trajectory("u", prompt + reply, [0] * len(prompt) + [1] * len(reply), len(prompt))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_one_step_moves_the_sequence_logprob_with_the_advantage(base_and_tokenizer, sign):
    """One step from the untrained adapter raises the log-prob of the positive-advantage episode and
    lowers that of the negative one (the episodes share little, so first-order effects dominate)."""
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=False)
    group = [episode(tok, 0), unrelated_episode(tok)]
    rewards = torch.tensor([1.0, 0.0]) if sign > 0 else torch.tensor([0.0, 1.0])  # episode 0 gets A = sign

    def seq_logprobs() -> torch.Tensor:
        with torch.no_grad():
            return torch.stack(
                [(full_logprobs(model, t, TEMPERATURE) * torch.tensor(t.loss_mask[1:])).sum() for t in group]
            )

    before = seq_logprobs()
    cfg = GRPOConfig(group_size=2, kl_coeff=0.0).validate()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
    grpo_step(model, opt, group, rewards, cfg, tok.pad_token_id, temperature=TEMPERATURE)
    change = seq_logprobs() - before
    assert sign * change[0] > 0.05 and -sign * change[1] > 0.05, change.tolist()


def test_reference_is_the_untrained_model_and_kl_grows_after_a_step(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=False)
    group = [episode(tok, v) for v in range(2)]
    cfg = GRPOConfig(group_size=2, lr=0.05, kl_coeff=0.05).validate()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    first = grpo_step(model, opt, group, torch.tensor([1.0, 0.0]), cfg, tok.pad_token_id, temperature=TEMPERATURE)
    assert first.kl == pytest.approx(0.0, abs=1e-7)  # LoRA B starts at 0: policy == reference
    second = grpo_step(model, opt, group, torch.tensor([1.0, 0.0]), cfg, tok.pad_token_id, temperature=TEMPERATURE)
    assert second.kl > 1e-6
    ids, attn, mask = padded_batch(group, tok.pad_token_id, torch.device("cpu"))
    mask = mask[:, 1:]
    with torch.no_grad():
        untrained = (
            torch.stack(
                [
                    torch.nn.functional.pad(full_logprobs(base, t, TEMPERATURE), (0, ids.shape[1] - len(t.token_ids)))
                    for t in group
                ]
            )
            * mask
        )
        policy = sequence_logprobs(model, ids, attn, mask, TEMPERATURE)
    ref = reference_logprobs(model, ids, attn, mask, TEMPERATURE)
    assert torch.allclose(ref, untrained, atol=1e-5)
    assert (policy - untrained).abs().max() > 1e-3  # the adapter did change the policy


def sampled_episode(model, tok, temperature: float) -> tuple[Trajectory, torch.Tensor]:
    """Sample 12 tokens at `temperature` (top-p 1, top-k off) and return them with the sampler's log-probs."""
    prompt = tok.encode("def add(a, b):", add_special_tokens=False)
    torch.manual_seed(0)
    model.eval()
    out = model.generate(
        input_ids=torch.tensor([prompt]),
        attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
        do_sample=True,
        temperature=temperature,
        top_p=1.0,
        top_k=None,
        max_new_tokens=12,
        min_new_tokens=12,
        output_scores=True,
        return_dict_in_generate=True,
        pad_token_id=tok.pad_token_id,
    )
    new = out.sequences[0, len(prompt) :]
    sampler = torch.stack([torch.log_softmax(s[0].float(), -1)[t] for s, t in zip(out.scores, new)])
    ids = prompt + new.tolist()
    return Trajectory("t", ids, [0] * len(prompt) + [1] * len(new), len(prompt)), sampler


def test_loss_and_behaviour_logprobs_equal_the_samplers(base_and_tokenizer):
    """Temperature consistency, and LoRA dropout: with the default LoRA settings the loss pass (train mode)
    and the behaviour scoring (eval mode) give the sampled tokens the log-probs the sampler drew them with."""
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True, dropout=LoraSchema().dropout)
    traj, sampler = sampled_episode(model, tok, TEMPERATURE)
    ids, attn, mask = padded_batch([traj], tok.pad_token_id, torch.device("cpu"))
    mask = mask[:, 1:]
    model.train()  # as in grpo_step
    with torch.no_grad():
        loss_pass = sequence_logprobs(model, ids, attn, mask, TEMPERATURE)[mask.bool()]
    assert torch.allclose(loss_pass, sampler, atol=1e-4)
    scored = behaviour_logprobs(model, [traj], tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=512)[0]
    assert torch.allclose(scored[mask[0].bool()], sampler, atol=1e-4)
    with torch.no_grad():  # and the test can tell temperatures apart
        at_t1 = sequence_logprobs(model, ids, attn, mask, 1.0)[mask.bool()]
    assert (at_t1 - sampler).abs().max() > 1e-2


def test_behaviour_scoring_ignores_lora_dropout(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True, dropout=0.5)
    traj, sampler = sampled_episode(model, tok, TEMPERATURE)
    model.train()
    scored = behaviour_logprobs(model, [traj], tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=512)[0]
    assert torch.allclose(scored[torch.tensor(traj.loss_mask[1:]).bool()], sampler, atol=1e-4)
    assert model.training  # the caller's mode is restored


def test_off_policy_group_uses_the_clipped_ratio(base_and_tokenizer):
    """With behaviour log-probs given, a sequence whose ratio left the clip range in its advantage's
    direction contributes no policy gradient; the others contribute -A∇log π."""
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(2)]
    current = behaviour_logprobs(model, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    # sequence 0 (A = +1) was much less likely under the sampler: ratio e^0.5 > 1 + 0.2, clipped
    old = [current[0] - 0.5 * torch.tensor(group[0].loss_mask[1:], dtype=torch.float32), current[1]]
    cfg = GRPOConfig(group_size=2, kl_coeff=0.1, clip_eps=0.2, max_grad_norm=NO_CLIP).validate()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
    stats = grpo_step(
        model, opt, group, torch.tensor([1.0, 0.0]), cfg, tok.pad_token_id, temperature=TEMPERATURE, old_logprobs=old
    )
    got = lora_grads(model)
    want = expected_grads(model, group, [1.0, -1.0], kl_coeff=0.1, clipped_seqs=(0,))
    assert_close_and_discriminating(got, want, wrong=expected_grads(model, group, [1.0, -1.0], kl_coeff=0.1))
    assert stats.clip_frac == pytest.approx(sum(group[0].loss_mask) / sum(sum(t.loss_mask) for t in group))


def test_later_groups_of_a_rollout_batch_are_scored_before_the_first_step(base_and_tokenizer):
    base, tok = base_and_tokenizer
    groups = [
        [episode(tok, 0), episode(tok, 1)],
        [episode(tok, 2), episode(tok, 3)],
        [episode(tok, 1), episode(tok, 2)],
    ]
    rewards = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.0]), torch.tensor([0.0, 1.0])]  # middle one skipped
    cfg = GRPOConfig(group_size=2, lr=0.05, kl_coeff=0.05).validate()

    def fresh():
        model = lora_model(base, trained=True)
        return model, torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)

    model, opt = fresh()
    stats = update_rollout_batch(model, opt, groups, rewards, cfg, tok.pad_token_id, temperature=TEMPERATURE)
    assert [s.skipped for s in stats] == [False, True, False]
    assert stats[2].clip_frac > 0  # the first step moved the policy past the clip range on some tokens
    # the same by hand: behaviour log-probs of group 2 from the policy before any step
    ref_model, ref_opt = fresh()
    old = behaviour_logprobs(ref_model, groups[2], tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    grpo_step(ref_model, ref_opt, groups[0], rewards[0], cfg, tok.pad_token_id, temperature=TEMPERATURE)
    grpo_step(
        ref_model, ref_opt, groups[2], rewards[2], cfg, tok.pad_token_id, temperature=TEMPERATURE, old_logprobs=old
    )
    on_policy_model, on_policy_opt = fresh()  # what ignoring the behaviour policy would give
    grpo_step(on_policy_model, on_policy_opt, groups[0], rewards[0], cfg, tok.pad_token_id, temperature=TEMPERATURE)
    grpo_step(on_policy_model, on_policy_opt, groups[2], rewards[2], cfg, tok.pad_token_id, temperature=TEMPERATURE)
    params = lambda m: torch.cat([p.detach().flatten() for p in m.parameters() if p.requires_grad])  # noqa: E731
    assert torch.allclose(params(model), params(ref_model), atol=1e-6)
    assert not torch.allclose(params(model), params(on_policy_model), atol=1e-4)


def test_skipped_group_has_no_loss_kl_or_grad_norm_metrics(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=False)
    cfg = GRPOConfig(group_size=2).validate()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    group = [episode(tok, 0), episode(tok, 1)]
    skipped = grpo_step(model, opt, group, torch.tensor([-0.1, -0.1]), cfg, tok.pad_token_id, temperature=TEMPERATURE)
    assert skipped.skipped
    assert not {"train/loss", "train/kl", "train/grad_norm", "train/clip_frac"} & set(skipped.metrics())
    stepped = grpo_step(model, opt, group, torch.tensor([1.0, -0.1]), cfg, tok.pad_token_id, temperature=TEMPERATURE)
    assert {"train/loss", "train/kl", "train/grad_norm", "train/clip_frac"} <= set(stepped.metrics())
    assert all(math.isfinite(v) for v in stepped.metrics().values())


def long_prompt_episode(tokenizer, variant: int) -> Trajectory:
    """A shared prompt longer than the replies (as a tool prompt is), then one reply and an observation."""
    enc = lambda text: tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    prompt = enc(
        "You can run code. Example: ```python\nprint(1)\n``` gives <exec_result>1</exec_result>. Write add(a, b)."
    )
    reply = enc(f"```submit\ndef add(a, b): return a {'+-*/'[variant % 4]} b\n```" + " # ok" * variant)
    obs = enc("<test_result>FAIL</test_result>")
    return Trajectory("t", prompt + reply + obs, [0] * len(prompt) + [1] * len(reply) + [0] * len(obs), len(prompt))


@pytest.mark.parametrize("checkpointing", [False, True])
def test_shared_prompt_pass_gives_the_separate_gradient(base_and_tokenizer, checkpointing):
    """The group's prompt runs once and its gradient is collected over micro-batches (one episode each) before
    going back through it: the step's gradient is the hand-written one of separate, full passes."""
    from agentic_rl.algo.logprobs import shared_prefix_len

    base, tok = base_and_tokenizer
    group = [long_prompt_episode(tok, v) for v in range(3)]
    assert shared_prefix_len(group) > 20  # the shared path is the one under test
    model = lora_model(base, trained=True)
    advantages = [a / math.sqrt(1 / 6) for a in (0.5, -0.5, 0.0)]  # rewards 1, 0, 0.5: mean 0.5, std sqrt(1/6)
    want = expected_grads(model, group, advantages, kl_coeff=0.1)
    wrong = expected_grads(model, group, advantages, kl_coeff=0.0)
    if checkpointing:
        checkpointed = add_lora(
            copy.deepcopy(base),
            r=4,
            alpha=8,
            dropout=0.0,
            target_modules=["q_proj", "v_proj"],
            gradient_checkpointing=True,
        )
        checkpointed.load_state_dict(model.state_dict())
        model = checkpointed
    got, _ = step_grads(model, group, torch.tensor([1.0, 0.0, 0.5]), tok, kl_coeff=0.1, micro_batch_tokens=1)
    assert_close_and_discriminating(got, want, wrong)


def test_an_objective_receives_its_own_options_from_the_config(base_and_tokenizer):
    """A new objective with a hyperparameter of its own is one registered function: `algo.objective_options` hands
    it the value (here `scale`, which multiplies the GRPO loss, so the step's gradient is `scale` times grpo_clip's),
    and an option it does not take is refused when the config is validated, naming the options it does take."""
    from agentic_rl.algo.core import POLICY_OBJECTIVES, ObjectiveTerms, grpo_clip

    def scaled_clip(logp, old_logp, advantages, mask, *, clip_eps, scale=1.0):
        terms = grpo_clip(logp, old_logp, advantages, mask, clip_eps=clip_eps)
        return ObjectiveTerms(per_token=scale * terms.per_token, clipped=terms.clipped)

    POLICY_OBJECTIVES.register("test_scaled_clip")(scaled_clip)
    try:
        base, tok = base_and_tokenizer
        group = [episode(tok, v) for v in range(4)]
        rewards = torch.tensor([1.0, 0.0, 0.0, 1.0])
        plain, _ = step_grads(lora_model(base, trained=True), group, rewards, tok, kl_coeff=0.0)
        scaled, _ = step_grads(
            lora_model(base, trained=True),
            group,
            rewards,
            tok,
            kl_coeff=0.0,
            objective="test_scaled_clip",
            objective_options={"scale": 3.0},
        )
        assert_close_and_discriminating(scaled, 3.0 * plain, wrong=plain)
        with pytest.raises(ValueError, match=r"does not take; its options: \['scale'\]"):
            GRPOConfig(objective="test_scaled_clip", objective_options={"beta": 0.1}).validate()
        with pytest.raises(ValueError, match="does not take"):
            GRPOConfig(objective_options={"scale": 2.0}).validate()  # grpo_clip takes no `scale`
    finally:
        POLICY_OBJECTIVES._items.pop("test_scaled_clip", None)
