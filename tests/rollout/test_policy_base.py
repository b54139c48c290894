"""The `Policy` base class declares every optional capability with a default, so a sampler that writes only
`generate` runs the whole loop, and the callers ask it instead of probing it (`hasattr`)."""

from __future__ import annotations

import pytest

from agentic_rl.evaluation.evaluator import EvalConfig
from agentic_rl.evaluation.policies import PolicySource, fit_to_policy
from agentic_rl.rollout import RolloutConfig
from agentic_rl.rollout.agent import run_episodes
from agentic_rl.rollout.policy import Policy, SamplingParams
from agentic_rl.rollout.tokenizer import ByteChatTokenizer
from tests.rollout.fakes import TASK, toolset


class GenerateOnly(Policy):
    """Writes one submission per request; declares nothing else."""

    def __init__(self) -> None:
        self.tokenizer = ByteChatTokenizer()

    def generate(self, requests, sampling, stop):
        return [self.tokenizer.encode("```submit\ndef add(a, b):\n    return a + b\n```") for _ in requests]


def test_a_policy_with_only_generate_has_every_capability_by_default() -> None:
    policy = GenerateOnly()
    assert not policy.continuous_batching and not policy.samples_apart
    assert policy.take_sync_bytes() is None and not GenerateOnly.shares_trainer_heap(on_gpu=False)
    assert policy.has_sample("t", 0) and policy.for_mode(None, "rollout") == (policy, "rollout")
    with policy.session() as stats:
        assert stats is None  # nothing counted
    ids, logps = policy.generate_with_logprobs([None], SamplingParams(), lambda text: False)[0]
    assert logps is None and ids == policy.generate([None], SamplingParams(), lambda text: False)[0]
    traj = run_episodes([(TASK, 0)], policy, toolset(("submit",), []), RolloutConfig(max_turns=1))[0]
    assert traj.passed and traj.sampler_logprobs() is None  # no log-probs recorded


def test_a_policy_that_writes_no_generation_method_says_which() -> None:
    class Empty(Policy):
        tokenizer = ByteChatTokenizer()

    with pytest.raises(NotImplementedError, match="Empty must implement generate"):
        Empty().generate_with_logprobs([], SamplingParams(), lambda text: False)


def test_a_policy_source_that_samples_keeps_the_evaluation_settings() -> None:
    class Sampling(PolicySource):
        pass

    class Fixed(PolicySource):
        @staticmethod
        def samples_per_task(cfg):
            return 1

    cfg = EvalConfig(n_samples=4, greedy=True, ks=[1, 4])
    from agentic_rl.evaluation import policies

    sources = {"sampling": Sampling, "fixed": Fixed}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(policies, "policy_source", lambda name: sources[name])
        assert fit_to_policy(cfg, type("C", (), {"policy": "sampling"})()) == cfg
        fixed = fit_to_policy(cfg, type("C", (), {"policy": "fixed"})())
    assert (fixed.n_samples, fixed.greedy, fixed.ks) == (1, False, [1])
