"""The sampler/trainer mismatch correction (`algo.rollout_correction`) on hand-computed tensors, then through
`grpo_step`'s gradients.

Off-mask positions (prompt, observation) carry wild log ratios in every hand-computed case: were they read,
the weights and the gap metrics below would change.
"""

from __future__ import annotations

import math

import pytest
import torch

from agentic_rl.algo.grpo import GRPOConfig, grpo_step
from agentic_rl.algo.logprobs import behaviour_logprobs, sampler_logprobs_of
from agentic_rl.algo.rollout_correction import gap_metrics, gap_sums, rollout_weights
from agentic_rl.types import Trajectory

from .test_objective import (
    NO_CLIP,
    TEMPERATURE,
    assert_close_and_discriminating,
    episode,
    full_logprobs,
    lora_grads,
    lora_model,
)

LN = math.log
MASK = torch.tensor([[0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0]])
# log(pi_trainer_old / pi_sampler) per position; the first and (row 0) last positions are off the mask
LOG_RATIO = torch.tensor([[LN(50.0), LN(0.5), LN(3.0), LN(1e-3)], [LN(1e-4), LN(1.5), LN(2.5), LN(0.8)]])
SAMPLER = torch.full((2, 4), -1.0)
OLD = SAMPLER + LOG_RATIO


def weights(mode: str, level: str, cap: float = 2.0):
    return rollout_weights(OLD, SAMPLER, MASK, mode=mode, level=level, cap=cap)


def test_token_level_tis_truncates_and_mis_masks_at_the_cap():
    tis = weights("tis", "token")
    # r = 0.5, 3, 1.5, 2.5, 0.8 on the mask: min(r, 2)
    assert torch.allclose(tis.weights, torch.tensor([[0.0, 0.5, 2.0, 0.0], [0.0, 1.5, 2.0, 0.8]]), atol=1e-6)
    assert tis.capped.tolist() == [[False, False, True, False], [False, False, True, False]]
    mis = weights("mis", "token")
    assert torch.allclose(mis.weights, torch.tensor([[0.0, 0.5, 0.0, 0.0], [0.0, 1.5, 0.0, 0.8]]), atol=1e-6)
    assert mis.capped.tolist() == tis.capped.tolist()
    none = weights("none", "token")
    assert torch.equal(none.weights, MASK) and not none.capped.any()


def test_sequence_level_uses_the_product_of_the_token_ratios():
    # row 0: 0.5 * 3 = 1.5 (under the cap); row 1: 1.5 * 2.5 * 0.8 = 3 (over it)
    tis = weights("tis", "sequence")
    assert torch.allclose(tis.weights, torch.tensor([[0.0, 1.5, 1.5, 0.0], [0.0, 2.0, 2.0, 2.0]]), atol=1e-6)
    assert tis.capped.tolist() == [[False, False, False, False], [False, True, True, True]]
    mis = weights("mis", "sequence")  # the whole of row 1 is masked
    assert torch.allclose(mis.weights, torch.tensor([[0.0, 1.5, 1.5, 0.0], [0.0, 0.0, 0.0, 0.0]]), atol=1e-6)
    # a larger cap lets row 1 through with its full weight
    assert torch.allclose(weights("mis", "sequence", cap=4.0).weights[1], torch.tensor([0.0, 3.0, 3.0, 3.0]))


def test_sequence_product_of_a_long_episode_does_not_overflow():
    old = torch.full((1, 2000), 0.0)
    sampler = torch.full((1, 2000), -1.0)  # r = e per token, e^2000 for the episode
    mask = torch.ones(1, 2000)
    got = rollout_weights(old, sampler, mask, mode="tis", level="sequence", cap=2.0)
    assert torch.allclose(got.weights, torch.full((1, 2000), 2.0))
    sums = gap_sums(old, sampler, mask, "sequence", got.capped)
    assert math.isfinite(sums.weight_max) and sums.weight_max == pytest.approx(math.exp(80.0), rel=1e-4)


def test_equal_log_probs_give_weight_one_exactly():
    logp = torch.randn(3, 7)
    mask = (torch.rand(3, 7) > 0.3).float()
    for mode in ("tis", "mis", "none"):
        for level in ("token", "sequence"):
            got = rollout_weights(logp, logp.clone(), mask, mode=mode, level=level, cap=2.0)
            assert torch.equal(got.weights, mask) and not got.capped.any()


def test_float_noise_reads_as_weight_one_and_a_real_gap_does_not():
    logp = torch.randn(2, 6)
    mask = torch.ones(2, 6)
    noise = (torch.rand(2, 6) - 0.5) * 1e-5  # two fp32 passes over the same weights
    for level in ("token", "sequence"):
        assert torch.equal(rollout_weights(logp, logp + noise, mask, mode="tis", level=level, cap=2.0).weights, mask)
    gap = rollout_weights(logp, logp - 1e-3, mask, mode="tis", level="token", cap=2.0).weights
    assert torch.allclose(gap, torch.full((2, 6), math.exp(1e-3))) and not torch.equal(gap, mask)
    # the gap metrics keep the noise
    assert gap_sums(logp, logp + noise, mask, "token", torch.zeros_like(mask, dtype=torch.bool)).abs_diff > 0


def test_a_trajectory_method_of_sampler_logprobs_is_read_and_hand_built_ones_have_none():
    class WithTurns(Trajectory):
        def sampler_logprobs(self):  # as a rollout that keeps them per turn exposes them
            return [0.0, -0.1, -0.2, 0.0, -0.3]

    traj = WithTurns("t", [5, 6, 7, 8, 9], [0, 1, 1, 0, 1], prompt_len=1, turns=[object()])
    assert sampler_logprobs_of(traj).tolist() == pytest.approx([-0.1, -0.2, 0.0, -0.3])
    assert sampler_logprobs_of(WithTurns("t", [5, 6, 7], [0, 1, 1], prompt_len=1)) is None  # no turns


def test_gap_metrics_are_means_over_model_tokens_only():
    capped = weights("tis", "token").capped
    metrics = gap_metrics(gap_sums(OLD, SAMPLER, MASK, "token", capped), "tis")
    on_mask = [0.5, 3.0, 1.5, 2.5, 0.8]  # r at the five model tokens
    assert metrics["rollout_correction/logp_abs_diff"] == pytest.approx(sum(abs(LN(r)) for r in on_mask) / 5, rel=1e-5)
    # k3 of KL(sampler || trainer) from the sampler's draws: r - 1 - log r
    assert metrics["rollout_correction/kl_k3"] == pytest.approx(sum(r - 1 - LN(r) for r in on_mask) / 5, rel=1e-5)
    assert metrics["rollout_correction/weight_mean"] == pytest.approx(sum(on_mask) / 5, rel=1e-5)  # raw weights
    assert metrics["rollout_correction/weight_max"] == pytest.approx(3.0, rel=1e-5)  # not the masked 50
    assert metrics["rollout_correction/clipped_frac"] == pytest.approx(2 / 5)
    assert "rollout_correction/masked_frac" not in metrics
    mis = gap_metrics(gap_sums(OLD, SAMPLER, MASK, "sequence", weights("mis", "sequence").capped), "mis")
    assert mis["rollout_correction/masked_frac"] == pytest.approx(3 / 5)  # row 1's three tokens
    # at the sequence level each token carries its episode's raw weight: 1.5 twice and 3 three times
    assert mis["rollout_correction/weight_mean"] == pytest.approx((2 * 1.5 + 3 * 3.0) / 5, rel=1e-5)
    assert mis["rollout_correction/weight_max"] == pytest.approx(3.0, rel=1e-5)
    assert not {"rollout_correction/clipped_frac", "rollout_correction/masked_frac"} & set(
        gap_metrics(gap_sums(OLD, SAMPLER, MASK, "token", capped), "none")
    )


def test_unknown_modes_and_levels_list_the_available_ones():
    with pytest.raises(KeyError, match="available: none, tis, mis"):
        rollout_weights(OLD, SAMPLER, MASK, mode="clip", level="token", cap=2.0)
    with pytest.raises(KeyError, match="available: token, sequence"):
        rollout_weights(OLD, SAMPLER, MASK, mode="tis", level="geo", cap=2.0)


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"mode": "clip"}, "algo.rollout_correction.mode='clip'.*none, tis, mis"),
        ({"level": "geo"}, "algo.rollout_correction.level='geo'.*token, sequence"),
        ({"cap": 0.5}, "algo.rollout_correction.cap must be >= 1"),
    ],
)
def test_config_says_how_to_fix_a_bad_value(bad, message):
    with pytest.raises(ValueError, match=message):
        GRPOConfig(rollout_correction=bad).validate()


def test_defaults_are_tis_per_token_with_cap_two():
    correction = GRPOConfig().validate().rollout_correction
    assert (correction.mode, correction.level, correction.cap) == ("tis", "token", 2.0)


def test_sampler_logprobs_of_a_trajectory_align_with_the_scoring():
    traj = Trajectory("t", [5, 6, 7, 8, 9], [0, 1, 1, 0, 1], prompt_len=1)
    assert sampler_logprobs_of(traj) is None
    traj.sampler_logprobs = [9.0, -0.1, -0.2, 9.0, -0.3]  # one per token id: off-mask values ignored
    assert sampler_logprobs_of(traj).tolist() == pytest.approx([-0.1, -0.2, 0.0, -0.3])
    traj.sampler_logprobs = [-0.1, -0.2, -0.3]  # one per model token
    assert sampler_logprobs_of(traj).tolist() == pytest.approx([-0.1, -0.2, 0.0, -0.3])
    traj.sampler_logprobs = [-0.1, -0.2]
    with pytest.raises(ValueError, match="one per token id or one per model token"):
        sampler_logprobs_of(traj)


# ------------------------------------------------------------------------------------- through grpo_step


def step(model, group, rewards, tok, sampler=None, **cfg_overrides):
    cfg = GRPOConfig(group_size=len(group), max_grad_norm=NO_CLIP, kl_coeff=0.1, **cfg_overrides).validate()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
    stats = grpo_step(
        model, opt, group, rewards, cfg, tok.pad_token_id, temperature=TEMPERATURE, sampler_logprobs=sampler
    )
    return lora_grads(model), stats


def weighted_grads(model, group, advantages, weights, *, kl_coeff: float) -> torch.Tensor:
    """Gradient of Σ_i Σ_t mask·(-w_t A_i log π(y_t) + β k3_t) / N written out by hand (on-policy, ratio 1):
    the weight scales the policy term only."""
    model.zero_grad(set_to_none=True)
    n_tokens = sum(sum(t.loss_mask[1:]) for t in group)
    total = torch.zeros(())
    for traj, adv, w in zip(group, advantages, weights):
        mask = torch.tensor(traj.loss_mask[1:], dtype=torch.float32)
        logp = full_logprobs(model, traj, TEMPERATURE)
        with torch.no_grad(), model.disable_adapter():
            ref = full_logprobs(model, traj, TEMPERATURE)
        k3 = torch.exp(ref - logp) - (ref - logp) - 1
        total = total + ((-float(adv) * w * logp + kl_coeff * k3) * mask).sum() / n_tokens
    total.backward()
    grads = lora_grads(model)
    model.zero_grad(set_to_none=True)
    return grads


@pytest.fixture()
def setup(base_and_tokenizer):
    base, tok = base_and_tokenizer
    model = lora_model(base, trained=True)
    group = [episode(tok, v) for v in range(2)]
    trainer = behaviour_logprobs(model, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=2048)
    return model, tok, group, trainer


def test_sampler_equal_to_the_trainer_leaves_the_step_exactly_unchanged(setup):
    model, tok, group, trainer = setup
    rewards = torch.tensor([1.0, 0.0])
    plain, plain_stats = step(model, group, rewards, tok)
    assert plain_stats.rollout_gap == {}  # no sampler log-probs: no gap metrics
    for mode in ("tis", "mis"):
        got, stats = step(model, group, rewards, tok, sampler=trainer, rollout_correction={"mode": mode})
        assert torch.equal(got, plain) and stats.loss == plain_stats.loss
        assert stats.rollout_gap["rollout_correction/logp_abs_diff"] == 0.0
        assert stats.rollout_gap["rollout_correction/weight_max"] == 1.0
    # mode none ignores any sampler log-probs, bit for bit
    skewed = [t - 1.0 for t in trainer]
    got, _ = step(model, group, rewards, tok, sampler=skewed, rollout_correction={"mode": "none"})
    assert torch.equal(got, plain)


@pytest.mark.parametrize("mode", ["tis", "mis"])
def test_token_level_weights_scale_the_policy_gradient(setup, mode):
    """Sequence 0's tokens alternate r = 4 (over the cap) and r = 1.5; sequence 1's have r = 0.5."""
    model, tok, group, trainer = setup
    masks = [torch.tensor(t.loss_mask[1:], dtype=torch.float32) for t in group]
    r0 = torch.tensor([4.0 if k % 2 == 0 else 1.5 for k in range(len(masks[0]))])
    sampler = [trainer[0] - torch.log(r0) * masks[0], trainer[1] - LN(0.5) * masks[1]]
    w0 = torch.where(r0 > 2.0, torch.tensor(2.0 if mode == "tis" else 0.0), r0)
    weights = [w0, torch.full_like(masks[1], 0.5)]
    got, stats = step(model, group, torch.tensor([1.0, 0.0]), tok, sampler=sampler, rollout_correction={"mode": mode})
    want = weighted_grads(model, group, [1.0, -1.0], weights, kl_coeff=0.1)
    unweighted = weighted_grads(model, group, [1.0, -1.0], [torch.ones_like(m) for m in masks], kl_coeff=0.1)
    assert_close_and_discriminating(got, want, wrong=unweighted)
    over = float(((r0 > 2.0).float() * masks[0]).sum())
    n = float(sum(m.sum() for m in masks))
    key = "rollout_correction/clipped_frac" if mode == "tis" else "rollout_correction/masked_frac"
    assert stats.rollout_gap[key] == pytest.approx(over / n)
    assert stats.rollout_gap["rollout_correction/weight_max"] == pytest.approx(4.0, rel=1e-5)


@pytest.mark.parametrize("mode", ["tis", "mis"])
def test_sequence_level_weights_one_per_episode(setup, mode):
    """Sequence 0: every token r = 1.1, the episode's product 1.1^n > 2; sequence 1 has no sampler log-probs
    (weight 1, and it is left out of the gap metrics)."""
    model, tok, group, trainer = setup
    masks = [torch.tensor(t.loss_mask[1:], dtype=torch.float32) for t in group]
    n0 = float(masks[0].sum())
    assert 1.1**n0 > 2.0
    sampler = [trainer[0] - LN(1.1) * masks[0], None]
    w0 = 2.0 if mode == "tis" else 0.0
    weights = [torch.full_like(masks[0], w0), torch.ones_like(masks[1])]
    got, stats = step(
        model,
        group,
        torch.tensor([1.0, 0.0]),
        tok,
        sampler=sampler,
        rollout_correction={"mode": mode, "level": "sequence"},
    )
    want = weighted_grads(model, group, [1.0, -1.0], weights, kl_coeff=0.1)
    token_level = weighted_grads(model, group, [1.0, -1.0], [torch.full_like(masks[0], 1.1), weights[1]], kl_coeff=0.1)
    assert_close_and_discriminating(got, want, wrong=token_level)
    key = "rollout_correction/clipped_frac" if mode == "tis" else "rollout_correction/masked_frac"
    assert stats.rollout_gap[key] == pytest.approx(1.0)  # every token with sampler log-probs is in sequence 0
    assert stats.rollout_gap["rollout_correction/logp_abs_diff"] == pytest.approx(LN(1.1), rel=1e-4)
    assert stats.rollout_gap["rollout_correction/weight_mean"] == pytest.approx(1.1**n0, rel=1e-3)
