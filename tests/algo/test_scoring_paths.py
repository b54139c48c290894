"""Scoring paths that no test pinned (docs/mutation.md, the review of blocks 8-9): the path for a model without
a decoder/LM-head split, the default that skips a group without reward spread, and the shared prefix's first
position."""

from __future__ import annotations

import copy

import pytest
import torch

from agentic_rl.algo.grpo import GRPOConfig, grpo_step
from agentic_rl.algo.logprobs import behaviour_logprobs, prefix_states, shared_prefix_len
from agentic_rl.types import Trajectory

from .test_objective import TEMPERATURE, episode, lora_model


def test_the_shared_prefix_stops_before_a_model_token_at_position_one():
    """Hidden state 0 predicts token 1: when token 1 is the model's, no token can be shared (the prefix pass
    computes no log-prob), however long the common start."""
    ids = [5, 6, 7, 8, 9]
    group = [Trajectory("t", ids, [0, 1, 1, 1, 1], 1), Trajectory("t", ids, [0, 1, 1, 1, 1], 1)]
    assert shared_prefix_len(group) == 0
    later = [Trajectory("t", ids, [0, 0, 0, 1, 1], 3), Trajectory("t", ids, [0, 0, 0, 1, 1], 3)]
    assert shared_prefix_len(later) == 2  # states 0 and 1 predict prompt tokens; state 2 predicts a model token


class _NoSplit(torch.nn.Module):
    """A causal LM seen only through its forward: no `model` (decoder stack) or `lm_head` attribute."""

    def __init__(self, inner) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, **kwargs):
        return self.inner(**kwargs)


class _HalfSplit(_NoSplit):
    """A causal LM with only one of the two parts under the usual name: the decoder stack at `model` (its head
    named otherwise), or the head at `lm_head` (its stack named otherwise). Neither can take the split path."""

    def __init__(self, inner, part: str) -> None:
        super().__init__(inner)
        setattr(self, part, getattr(inner, part))


@pytest.mark.parametrize("wrap", ["no split", "model", "lm_head"])
def test_a_model_without_the_usual_split_scores_the_same_tokens(base_and_tokenizer, wrap):
    """The projection of every position (the fallback) gives the log-probs of the split path, shared
    prefix included; a wrong shift or temperature on that path would not. A model with a decoder stack but no
    `lm_head` (or the reverse) takes the fallback too."""
    base, tok = base_and_tokenizer
    group = [episode(tok, v) for v in range(2)]
    split = behaviour_logprobs(base, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    inner = copy.deepcopy(base)
    wrapped = _NoSplit(inner) if wrap == "no split" else _HalfSplit(inner, wrap)
    whole = behaviour_logprobs(wrapped, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    for a, b, traj in zip(split, whole, group):
        assert a.shape == b.shape == (len(traj.token_ids) - 1,)
        assert torch.count_nonzero(a) == sum(traj.loss_mask[1:]) > 0
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_by_default_a_group_without_reward_spread_takes_no_step(base_and_tokenizer):
    """`skip_zero_std_groups` is on by default: equal rewards (zero advantage) leave the weights as they were,
    although the KL term alone would move them."""
    base, tok = base_and_tokenizer
    group = [episode(tok, v) for v in range(2)]
    moved = {}
    for skip in (None, False):
        model = lora_model(base, trained=True)
        before = [p.detach().clone() for p in model.parameters() if p.requires_grad]
        overrides = {} if skip is None else {"skip_zero_std_groups": skip}
        cfg = GRPOConfig(group_size=2, kl_coeff=0.1, **overrides).validate()
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1.0)
        grpo_step(model, opt, group, torch.tensor([0.5, 0.5]), cfg, tok.pad_token_id, temperature=TEMPERATURE)
        after = [p.detach() for p in model.parameters() if p.requires_grad]
        moved[skip] = any(not torch.equal(a, b) for a, b in zip(before, after))
    assert moved == {None: False, False: True}


def test_behaviour_logprobs_give_each_trajectory_its_own_length(base_and_tokenizer):
    """One (len(token_ids) - 1,) tensor per trajectory, as the docstring says, also when a shorter one shares
    the micro-batch with a longer one (its row is padded there)."""
    base, tok = base_and_tokenizer
    long, other = episode(tok, 0), episode(tok, 1)
    short = Trajectory(other.task_id, other.token_ids[:-3], other.loss_mask[:-3], other.prompt_len)
    out = behaviour_logprobs(base, [long, short], tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
    assert [tuple(o.shape) for o in out] == [(len(long.token_ids) - 1,), (len(short.token_ids) - 1,)]


def test_the_prefix_pass_keeps_the_keys_and_values_of_a_plain_forward(base_and_tokenizer):
    """`prefix_states` runs the shared prefix at positions 0..S-1, as a plain cached forward does, so its keys and
    values are that forward's (a pass that started at another position would rotate every key)."""
    from transformers import DynamicCache

    from agentic_rl.models.kv_cache import cache_kwarg

    base, tok = base_and_tokenizer
    ids = torch.tensor([episode(tok, 0).token_ids[:12]])
    plain = DynamicCache()
    with torch.no_grad():
        prefix = prefix_states(base, ids)
        base.model(input_ids=ids, use_cache=True, **{cache_kwarg(base): plain})
    assert prefix.length == 12 and len(prefix.layers) == len(plain.layers)
    for (keys, values), layer in zip(prefix.layers, plain.layers):
        torch.testing.assert_close(keys, layer.keys, atol=1e-6, rtol=0)
        torch.testing.assert_close(values, layer.values, atol=1e-6, rtol=0)
