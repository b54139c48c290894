"""Every off-policy group of a rollout batch is scored with its own trajectories' behaviour log-probs.

`update_rollout_batch` scores all the groups that will step after the batch's first optimizer step in one pass
and hands each its slice. A slicing error (every group getting the first off-policy group's rows, say) would
still give tensors of a plausible shape; this test checks the rows each group's step receives against the
behaviour log-probs of that group's own trajectories, taken by hand before any step.
"""

from __future__ import annotations

import copy

import torch

from agentic_rl.algo.grpo import GRPOConfig, grpo_step, update_rollout_batch
from agentic_rl.algo.logprobs import behaviour_logprobs

from .test_objective import TEMPERATURE, episode, lora_model, unrelated_episode


def test_each_off_policy_group_gets_its_own_behaviour_logprobs(base_and_tokenizer):
    base, tok = base_and_tokenizer
    # four stepping groups of different episodes and lengths (the unrelated episode is shorter)
    groups = [
        [episode(tok, 0), episode(tok, 1)],
        [episode(tok, 2), unrelated_episode(tok)],
        [unrelated_episode(tok), episode(tok, 3)],
        [episode(tok, 1), episode(tok, 3)],
    ]
    rewards = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])]
    cfg = GRPOConfig(group_size=2, lr=0.05, kl_coeff=0.05).validate()
    model = lora_model(base, trained=True)
    before = copy.deepcopy(model)  # the policy that sampled the whole batch
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    received: list[object] = []

    def recording_step(*args, old_logprobs=None, **kwargs):
        received.append(old_logprobs)
        return grpo_step(*args, old_logprobs=old_logprobs, **kwargs)

    stats = update_rollout_batch(
        model, opt, groups, rewards, cfg, tok.pad_token_id, temperature=TEMPERATURE, step=recording_step
    )
    assert not any(s.skipped for s in stats)
    assert received[0] is None  # the first group is on-policy
    for group, got in zip(groups[1:], received[1:]):
        want = behaviour_logprobs(before, group, tok.pad_token_id, temperature=TEMPERATURE, micro_batch_tokens=4096)
        assert got is not None and len(got) == len(group)
        for row, (g, w) in enumerate(zip(got, want)):
            assert g.shape == w.shape, f"row {row}: {tuple(g.shape)} for a trajectory of {w.shape[0] + 1} tokens"
            assert torch.allclose(g, w, atol=1e-5)
    # and the groups' rows differ, so a mix-up could not pass unnoticed
    assert not torch.equal(received[1][0], received[3][0])
