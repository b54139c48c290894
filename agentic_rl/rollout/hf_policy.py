"""`HFPolicy`: the reference rollout engine, its own decoding loop on a transformers model.

It subclasses `Policy` (agentic_rl.rollout.policy), overriding `generate_with_logprobs` and `session()`.
It runs its own loop rather than `model.generate`, because the rollout needs three things `generate` does not
give:
- **every context token is computed once per episode.** Inside a session each episode's KV cache is kept
  across turns, so a turn only prefills the observation tokens appended since the last one; the prompt
  prefix shared by the batch (system prompt, tool descriptions, worked examples) is prefilled once, and
  identical prompts (the G samples of a task) once each;
- **finished sequences leave the batch** at once (the batch is compacted by swapping rows), instead of
  being padded until the longest one ends;
- **incremental stop detection** (`StopScanner`, agentic_rl.rollout.stops): each step decodes only the newest
  token (plus the few before it that an unfinished UTF-8 sequence needs), and the full call parser runs only
  when the new text, with an overlap as long as the longest closing marker, contains the closing marker of
  some tool.
Sampling is explicit: temperature, then top-p, nothing else. The model's own `generation_config`
(repetition_penalty, top_k, ... which Qwen ships) is never read, so it cannot change sampling or greedy
evaluation behind the config's back. Each row draws its randomness from its own generator seeded from the
global torch RNG, so the tokens of an episode do not depend on which other episodes share its batch.

Cache storage (layers from agentic_rl.models.kv_cache): prefill chunks run a batch of one, no padding, on a
`DynamicCache` (`JoinedLayer`s when there is a past: they join its pieces and the new positions in one copy);
the batched decode uses `SlotLayer`, a `DynamicLayer` whose keys/values are views into a buffer allocated once
per turn, because `DynamicLayer.update` concatenates, which copies the whole batch cache at every token.
Between turns an episode keeps only its positions after the batch's shared prompt prefix, which the session
holds once: the kept caches, most of an evaluation's memory next to the decode buffers, no longer grow with
episodes x prompt. The kept caches and the buffers change hands one layer at a time (copied in, then freed;
copied out, then the buffers freed), so a turn never holds both whole.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from agentic_rl.models.kv_cache import cache_from_layers, cache_kwarg, joined_layer_class, slot_layer_class
from agentic_rl.rollout.policy import GenerationStats, Policy, SamplingParams, StopCondition, StopFn, TurnRequest
from agentic_rl.rollout.stops import StopScanner
from agentic_rl.rollout.tokenizer import HFChatTokenizer

logger = logging.getLogger(__name__)

KV_CACHE_MODES = ("episode", "turn", "none")

NUCLEUS_CANDIDATES = 1024  # top-p looks for its nucleus among this many top tokens before sorting the vocabulary


def sample_tokens(
    logits: torch.Tensor, sampling: SamplingParams, generators: Sequence[torch.Generator]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Next token and its log-probability per row of `logits` (B, V).

    Greedy (temperature 0): argmax, log-prob under log_softmax(logits). Otherwise the distribution is
    softmax(logits / T) restricted to the top-p nucleus (the smallest set of most likely tokens whose mass
    reaches top_p), sampled exactly by an exponential race: argmax_i p_i / E_i with E_i ~ Exp(1) drawn, per
    vocabulary id, from the row's own generator (so a tiny numeric difference in the logits cannot reassign
    the noise). The log-prob returned is log_softmax(logits / T) over the full vocabulary (top-p ignored),
    the quantity the GRPO loss recomputes.
    """
    logits = logits.float()
    if sampling.temperature == 0:
        logp = torch.log_softmax(logits, dim=-1)
        tokens = logp.argmax(dim=-1)
        return tokens, logp.gather(1, tokens[:, None])[:, 0]
    logp = torch.log_softmax(logits / sampling.temperature, dim=-1)
    probs = logp.exp()
    tokens = []
    for row, gen in enumerate(generators):
        p = probs[row]
        noise = torch.empty_like(p).exponential_(generator=gen)
        if sampling.top_p < 1:
            p = _nucleus(p, sampling.top_p)
        tokens.append((p / noise).argmax())
    chosen = torch.stack(tokens)
    return chosen, logp.gather(1, chosen[:, None])[:, 0]


def _nucleus(p: torch.Tensor, top_p: float) -> torch.Tensor:
    """`p` with every token outside its top-p nucleus set to 0; sorts the vocabulary only when the nucleus
    is not within the top NUCLEUS_CANDIDATES tokens (a flat distribution)."""
    k = min(NUCLEUS_CANDIDATES, p.shape[0])
    top, idx = p.topk(k)
    if float(top.sum()) < top_p and k < p.shape[0]:
        top, idx = p.sort(descending=True)
    inside = (top.cumsum(0) - top) < top_p  # the mass before a token has not yet reached top_p
    return torch.zeros_like(p).index_put_((idx[inside],), top[inside])


@dataclass
class _EpisodeCache:
    """Keys/values of `ids` (a batch of one per layer), and the logits after the last of them if known.

    `base`: the session's shared prompt prefix when `ids` continue it; `layers` then hold only the positions
    after it. The episodes of a batch share most of their prompt (system text, worked examples), so storing
    that part once instead of once per episode takes the kept caches from O(episodes x prompt) to
    O(prompt + episodes x own tokens). The values are the prefix's own, so re-joining them is exact.
    """

    ids: list[int]
    layers: list[tuple[torch.Tensor, torch.Tensor]]
    last_logits: torch.Tensor | None = None
    base: _EpisodeCache | None = None

    @property
    def start(self) -> int:
        """Position of the first entry of `layers` (the base's length)."""
        return len(self.base.ids) if self.base is not None else 0

    def pieces(self, layer: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The keys/values of one layer, in position order: the base's, then this cache's own."""
        return ([self.base.layers[layer]] if self.base is not None else []) + [self.layers[layer]]

    def full_layers(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Keys/values of every position of `ids`, per layer (a new tensor where there is a base)."""
        if self.base is None:
            return self.layers
        return [
            (torch.cat([base_k, k], dim=2), torch.cat([base_v, v], dim=2))
            for (base_k, base_v), (k, v) in zip(self.base.layers, self.layers)
        ]

    def release_layer(self, layer: int) -> None:
        """Free this cache's own keys/values of one layer (their place holds empty tensors): for a cache whose
        layers have been copied elsewhere and that is not read again."""
        k, v = self.layers[layer]
        self.layers[layer] = (k.new_empty(0), v.new_empty(0))

    def without_base(self, layers: list[tuple[torch.Tensor, torch.Tensor]]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """`layers` (every position of a continuation of this cache's base) less the base's positions, copied so
        the full tensors can be freed."""
        if self.base is None:
            return layers
        return [(k[:, :, self.start :].clone(), v[:, :, self.start :].clone()) for k, v in layers]


@dataclass
class _Session:
    stats: GenerationStats = field(default_factory=GenerationStats)
    episodes: dict[int, _EpisodeCache] = field(default_factory=dict)
    prefix: _EpisodeCache | None = None


class HFPolicy(Policy):
    """Batched sampling from a transformers model (with or without a LoRA adapter); see the module doc.

    kv_cache: "episode" keeps each episode's cache across the turns of a session and shares prompt prefixes
        (the default); "turn" prefills each episode's whole history at every turn (what `model.generate` in a
        loop does); "none" runs the full sequence through the model for every token (the uncached reference
        the tests compare against).
    min_shared_prefix: a common prefix of the batch's new prompts shorter than this is not worth a separate pass.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        max_batch_size: int = 32,
        kv_cache: str = "episode",
        min_shared_prefix: int = 16,
    ) -> None:
        if kv_cache not in KV_CACHE_MODES:
            raise ValueError(f"kv_cache must be one of {KV_CACHE_MODES}, got {kv_cache!r}")
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        self.model = model
        self.hf_tokenizer = tokenizer
        self.tokenizer = HFChatTokenizer(tokenizer)
        self.max_batch_size = max_batch_size
        self.kv_cache = kv_cache
        self.min_shared_prefix = min_shared_prefix
        self._session: _Session | None = None
        self._cache_arg = cache_kwarg(model)

    @contextlib.contextmanager
    def session(self) -> Iterator[GenerationStats]:
        """Scope of one rollout: caches live until it ends (the weights must not change inside it)."""
        outer, self._session = self._session, _Session()
        try:
            yield self._session.stats
        finally:
            self._session = outer

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def generate(
        self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopCondition | StopFn
    ) -> list[list[int]]:
        return [ids for ids, _ in self.generate_with_logprobs(requests, sampling, stop)]

    @torch.no_grad()
    def generate_with_logprobs(
        self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopCondition | StopFn
    ) -> list[tuple[list[int], list[float]]]:
        """Per request: the new ids of this turn and their log-probs (see `sample_tokens`)."""
        if self._session is None:  # a call outside a session is a session of its own
            with self.session():
                return self.generate_with_logprobs(requests, sampling, stop)
        session = self._session
        if self.kv_cache != "episode":
            session.episodes.clear()
        else:  # episodes not asked for again have finished: free their caches
            wanted = {r.episode for r in requests}
            for key in [k for k in session.episodes if k not in wanted]:
                del session.episodes[key]
        # one seed per row from the global RNG: reproducible under seed_everything, independent of batching
        seeds = torch.randint(0, 2**62, (len(requests),)).tolist()
        start = time.perf_counter()
        was_training = self.model.training
        self.model.eval()
        out: list[tuple[list[int], list[float]]] = []
        try:
            for lo in range(0, len(requests), self.max_batch_size):
                chunk = list(requests[lo : lo + self.max_batch_size])
                gens = [torch.Generator(device=self.device).manual_seed(s) for s in seeds[lo : lo + len(chunk)]]
                run = self._decode_uncached if self.kv_cache == "none" else self._decode_cached
                out.extend(run(chunk, sampling, stop, gens, session))
        finally:
            self.model.train(was_training)
            session.stats.generate_s += time.perf_counter() - start
        session.stats.generated_tokens += sum(len(ids) for ids, _ in out)
        return out

    # ---- prefill -------------------------------------------------------------------------------------

    def _forward(
        self, ids: list[int], past: _EpisodeCache | None, stats: GenerationStats
    ) -> tuple[list[tuple[torch.Tensor, torch.Tensor]], torch.Tensor]:
        """Run `ids` after `past` (batch of one): the new layers' keys/values and the last position's logits."""
        from transformers import DynamicCache

        past_len = len(past.ids) if past is not None else 0
        cache = (
            DynamicCache()
            if past is None
            else cache_from_layers([joined_layer_class()(past.pieces(layer)) for layer in range(len(past.layers))])
        )
        input_ids = torch.tensor([ids], dtype=torch.long, device=self.device)
        positions = torch.arange(past_len, past_len + len(ids), device=self.device)[None]
        out = self.model(
            input_ids=input_ids, position_ids=positions, use_cache=True, logits_to_keep=1, **{self._cache_arg: cache}
        )  # the prompt's other positions' logits are never needed
        stats.prefill_tokens += len(ids)
        layers = [(layer.keys, layer.values) for layer in cache.layers]
        return layers, out.logits[0, -1].float()

    def _extend(
        self, past: _EpisodeCache | None, history: list[int], stats: GenerationStats, shared: bool = False
    ) -> _EpisodeCache:
        """The cache of `history`, computing only what `past` (a cache of a prefix of it) lacks.

        The result keeps `past`'s base, or `past` itself as its base when `shared` (the session's prefix)."""
        if past is not None and len(past.ids) == len(history) and past.last_logits is not None:
            return past
        if past is not None and len(past.ids) >= len(history):  # nothing new to run: recompute the last token
            past = _crop(past, len(history) - 1)
        start = len(past.ids) if past is not None else 0
        layers, logits = self._forward(history[start:], past, stats)
        base = past if shared else (past.base if past is not None else None)
        cache = _EpisodeCache(list(history), [], logits, base)
        cache.layers = cache.without_base(layers)
        return cache

    def _prefill(self, requests: list[TurnRequest], session: _Session) -> list[_EpisodeCache]:
        """Bring each request's cache up to its history; new prompts share their common prefix and duplicates."""
        caches: list[_EpisodeCache | None] = [None] * len(requests)
        fresh: list[int] = []
        for i, req in enumerate(requests):
            cached = session.episodes.pop(req.episode, None) if req.episode is not None else None
            if cached is not None and req.history_ids[: len(cached.ids)] == cached.ids:
                caches[i] = self._extend(cached, req.history_ids, session.stats)
            else:
                fresh.append(i)
        if fresh and self.kv_cache == "episode":
            self._share_prefix([requests[i].history_ids for i in fresh], session)
        by_history: dict[tuple[int, ...], _EpisodeCache] = {}
        for i in fresh:
            history = requests[i].history_ids
            # identical prompts (a task's G samples) share one prefill; the other modes redo each, as generate would
            key = tuple(history) if self.kv_cache == "episode" else (i,)
            if key not in by_history:
                prefix = session.prefix
                usable = (
                    prefix is not None and len(prefix.ids) < len(history) and history[: len(prefix.ids)] == prefix.ids
                )
                by_history[key] = self._extend(prefix if usable else None, history, session.stats, shared=usable)
            caches[i] = by_history[key]
        filled = [c for c in caches if c is not None]
        assert len(filled) == len(caches), "every request is either cached or fresh"
        return filled

    def _share_prefix(self, histories: list[list[int]], session: _Session) -> None:
        """Prefill the longest prefix common to these new prompts once (if it is long enough to matter)."""
        prefix = session.prefix
        if prefix is not None and all(
            len(h) > len(prefix.ids) and h[: len(prefix.ids)] == prefix.ids for h in histories
        ):
            return
        if len({tuple(h) for h in histories}) < 2:
            return  # identical prompts share their whole cache anyway
        n = min(len(h) for h in histories) - 1  # each prompt keeps >= 1 token of its own to run
        first = histories[0]
        for h in histories[1:]:
            n = next((j for j in range(n) if h[j] != first[j]), n)
        if n >= self.min_shared_prefix:
            layers, _ = self._forward(first[:n], None, session.stats)
            session.prefix = _EpisodeCache(first[:n], layers)

    # ---- decode --------------------------------------------------------------------------------------

    def _decode_cached(
        self,
        requests: list[TurnRequest],
        sampling: SamplingParams,
        stop: StopCondition | StopFn,
        gens: list[torch.Generator],
        session: _Session,
    ) -> list[tuple[list[int], list[float]]]:
        caches = self._prefill(requests, session)
        n = len(requests)
        width = max(len(c.ids) for c in caches)
        capacity = width + sampling.max_new_tokens
        slots = _slot_buffers(caches, width, capacity)
        mask = torch.zeros((n, capacity), dtype=torch.long, device=self.device)
        for row, c in enumerate(caches):
            mask[row, width - len(c.ids) : width] = 1
        lengths = torch.tensor([len(c.ids) for c in caches], device=self.device)
        logits = torch.stack([c.last_logits for c in caches])
        bases = [c.base for c in caches]  # a stopped episode's copy keeps sharing its base
        del caches  # the buffers now hold them; per-episode copies are made again when an episode stops

        order = list(range(n))  # order[row] = index of the request in that batch row
        scanners = [StopScanner(self.tokenizer, stop) for _ in requests]
        new_ids: list[list[int]] = [[] for _ in requests]
        logps: list[list[float]] = [[] for _ in requests]
        eos = self.tokenizer.eos_token_id
        live = n
        kept: dict[int, int] = {}  # request -> its row in the buffers once finished (rows behind `live` stay put)
        out = None
        for step in range(sampling.max_new_tokens):
            tokens, token_logps = sample_tokens(logits[:live], sampling, [gens[i] for i in order[:live]])
            finished = []
            for row in range(live):
                i = order[row]
                token = int(tokens[row])
                new_ids[i].append(token)
                logps[i].append(float(token_logps[row]))
                if token == eos or scanners[i].push(token) or step == sampling.max_new_tokens - 1:
                    finished.append(row)
            for row in sorted(finished, reverse=True):  # highest first: swaps never move a finished row
                live -= 1
                if row != live:
                    _swap_rows(slots, mask, lengths, logits, order, row, live)
                i = order[live]
                if requests[i].keep_cache and requests[i].episode is not None and self.kv_cache == "episode":
                    kept[i] = live
            if live == 0:
                break
            for slot in slots:
                slot.set_rows(live)
            fed = torch.tensor([[new_ids[i][-1]] for i in order[:live]], device=self.device)
            pos = width + step
            mask[:live, pos] = 1
            out = self.model(
                input_ids=fed,
                attention_mask=mask[:live, : pos + 1],
                position_ids=lengths[:live, None],
                use_cache=True,
                **{self._cache_arg: cache_from_layers(slots)},
            )
            session.stats.prefill_tokens += live
            lengths[:live] += 1
            logits = out.logits[:, -1].float()
        del out  # its cache object holds the buffers
        for i, cache in self._kept_caches(requests, new_ids, kept, slots, mask, bases).items():
            episode = requests[i].episode
            assert episode is not None, "only named episodes are kept"
            session.episodes[episode] = cache
        return [(new_ids[i], logps[i]) for i in range(n)]

    @staticmethod
    def _kept_caches(
        requests: list[TurnRequest],
        new_ids: list[list[int]],
        kept: dict[int, int],
        slots: list[Any],
        mask: torch.Tensor,
        bases: list[_EpisodeCache | None],
    ) -> dict[int, _EpisodeCache]:
        """Copy each kept episode's real positions (mask 1) out of its buffer row, as a batch-of-one cache of its
        history (the last sampled token was never fed, so it has no keys yet); the positions of its base (the
        shared prefix, copied in unchanged) are not copied again. Layer by layer, each layer's buffers freed once
        copied: the compact copies and the whole padded buffers are never resident together."""
        length = slots[0].length
        histories = {i: requests[i].history_ids + new_ids[i][:-1] for i in kept}
        spans = {}
        for i, row in kept.items():
            positions = mask[row, :length].nonzero()[:, 0]
            assert len(positions) == len(histories[i]), "cache length and token history disagree"
            base = bases[i]
            spans[i] = positions[len(base.ids) :] if base is not None else positions
        layers: dict[int, list[tuple[torch.Tensor, torch.Tensor]]] = {i: [] for i in kept}
        for layer in range(len(slots)):
            slot, slots[layer] = slots[layer], None
            for i, row in kept.items():
                layers[i].append((slot.buf_k[row : row + 1, :, spans[i]], slot.buf_v[row : row + 1, :, spans[i]]))
            del slot
        return {i: _EpisodeCache(histories[i], layers[i], base=bases[i]) for i in kept}

    def _decode_uncached(
        self,
        requests: list[TurnRequest],
        sampling: SamplingParams,
        stop: StopCondition | StopFn,
        gens: list[torch.Generator],
        session: _Session,
    ) -> list[tuple[list[int], list[float]]]:
        """Reference path: each request alone, the whole sequence through the model for every new token."""
        out = []
        for req, gen in zip(requests, gens):
            ids, logps = list(req.history_ids), []
            new: list[int] = []
            for _ in range(sampling.max_new_tokens):
                logits = self.model(input_ids=torch.tensor([ids], device=self.device)).logits[:, -1]
                session.stats.prefill_tokens += len(ids)
                token, logp = sample_tokens(logits, sampling, [gen])
                new.append(int(token[0]))
                logps.append(float(logp[0]))
                ids.append(new[-1])
                if new[-1] == self.tokenizer.eos_token_id or stop(self.tokenizer.decode(new)):
                    break
            out.append((new, logps))
        return out


def _crop(cache: _EpisodeCache, length: int) -> _EpisodeCache:
    """The cache of the first `length` ids (still sharing the base when it is not cut into)."""
    if cache.base is not None and length >= cache.start:
        own = length - cache.start
        return _EpisodeCache(
            cache.ids[:length], [(k[:, :, :own], v[:, :, :own]) for k, v in cache.layers], base=cache.base
        )
    return _EpisodeCache(cache.ids[:length], [(k[:, :, :length], v[:, :, :length]) for k, v in cache.full_layers()])


def _slot_buffers(caches: list[_EpisodeCache], width: int, capacity: int) -> list[Any]:
    """One decoding buffer per layer (`capacity` positions per row) holding each episode's cache right-aligned at
    `width`: padded on the left (masked out), the shared prefix's keys/values first, then the episode's own. Each
    layer's cached copies are freed once it is in its buffer, so the caches and the buffers are never whole
    together."""
    n, n_layers = len(caches), len(caches[0].layers)
    unique = list({id(c): c for c in caches}.values())  # a task's G samples share one cache object
    slots = []
    for layer in range(n_layers):
        k0, v0 = caches[0].layers[layer]
        buf_k = k0.new_zeros((n, k0.shape[1], capacity, k0.shape[3]))
        buf_v = v0.new_zeros((n, v0.shape[1], capacity, v0.shape[3]))
        for row, c in enumerate(caches):
            pos = width - len(c.ids)
            for k, v in c.pieces(layer):
                buf_k[row, :, pos : pos + k.shape[2]] = k[0]
                buf_v[row, :, pos : pos + v.shape[2]] = v[0]
                pos += k.shape[2]
            assert pos == width, "cache length and token history disagree"
        slots.append(slot_layer_class()(buf_k, buf_v, width))
        for cache in unique:
            cache.release_layer(layer)
    return slots


def _swap_rows(
    slots: list[Any], mask: torch.Tensor, lengths: torch.Tensor, logits: torch.Tensor, order: list[int], a: int, b: int
) -> None:
    """Exchange batch rows a and b everywhere, so the live rows stay a contiguous block at the front."""
    idx = torch.tensor([b, a], device=mask.device)
    for slot in slots:
        slot.buf_k[[a, b]] = slot.buf_k[idx]
        slot.buf_v[[a, b]] = slot.buf_v[idx]
    mask[[a, b]] = mask[idx]
    lengths[[a, b]] = lengths[idx]
    logits[[a, b]] = logits[idx]
    order[a], order[b] = order[b], order[a]
