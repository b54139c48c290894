"""The pydoc index in memory and its search: entries, their BM25 fields, name lookups and the static prior.

`PydocIndex.search` ranks a query's candidates with the weights of `ranking.py` and returns the best `SearchHit`s
(the same method inherited by sibling classes shown once). Building and storing an index is `pydoc_store.py`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_rl.tools.search import SearchHit
from agentic_rl.tools.search import text as T
from agentic_rl.tools.search.ranking import (
    BM25_CANDIDATES,
    DEFAULT_RANKING,
    DEPTH_PENALTY,
    DOTTED_BOOST,
    EXACT_BOOST,
    IDENT_BOOST,
    JOINED_BOOST,
    KIND_PRIOR,
    MAX_QUERY_CHARS,
    MENTION_BOOST,
    SPACED_BOOST,
    WORD_BOOST,
    Ranking,
)

log = logging.getLogger(__name__)

_DEPRECATED_RE = re.compile(r"\bdeprecated\b", re.IGNORECASE)


def top_indices(values: Any, n: int) -> Any:
    """Indices of the `n` largest of a 1-D array, in no particular order (all of them when `n` reaches its
    length, none when `n` < 1): a partial sort, which is what a ranking's candidate list needs."""
    import numpy as np

    if n >= len(values):
        return np.arange(len(values))
    if n < 1:
        return np.arange(0)
    return np.argpartition(-values, n - 1)[:n]


@dataclass
class PydocIndex:
    """Entries plus one BM25 model per field and name lookup tables; what `PydocBackend` searches."""

    names: list[str]
    kinds: list[str]
    signatures: list[str]
    docs: list[str]
    depths: list[int]  # levels below the module the entry was found in (numpy.argsort: 1)
    retrievers: dict[str, Any]  # field -> bm25s.BM25 (see Ranking.field_weights)
    uses: dict[str, list[int]] = field(default_factory=dict)  # "last", "pair", "parent" counts
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    ranking: Ranking = DEFAULT_RANKING
    dense: Any = None  # dense.DenseScorer, attached by the backend when a dense model is configured
    needs: Any = None  # needs.NeedsMatcher, attached by the backend (option `needs`)

    def __post_init__(self) -> None:
        self.by_name: dict[str, int] = {}
        self.by_suffix: dict[str, list[int]] = {}
        self.by_last: dict[str, list[int]] = {}
        self.root_of: list[str] = []
        for i, name in enumerate(self.names):
            self.by_name.setdefault(name, i)
            parts = name.split(".")
            self.root_of.append(parts[0])
            self.by_last.setdefault(T.name_key(parts[-1]), []).append(i)
            for j in range(1, len(parts) - 1):  # proper suffixes with at least two parts
                self.by_suffix.setdefault(".".join(parts[j:]), []).append(i)
        self.packages = frozenset(self.root_of)
        self.set_ranking(self.ranking)

    def set_ranking(self, ranking: Ranking) -> None:
        """Recompute the static prior for `ranking` (the BM25 fields must already exist)."""
        import numpy as np

        missing = set(ranking.field_weights()) - set(self.retrievers)
        if missing:
            raise ValueError(
                f"search: this index has no BM25 field(s) {sorted(missing)}; build it with the same `fielded` setting"
            )
        self.ranking = ranking
        depth = np.asarray(self.depths, dtype=np.float32)
        kind = np.asarray([KIND_PRIOR.get(k, 0.0) for k in self.kinds], dtype=np.float32)
        prior = kind - DEPTH_PENALTY * np.maximum(depth - 1, 0)
        for key, weight in (
            ("last", ranking.usage_last),
            ("pair", ranking.usage_pair),
            ("parent", ranking.usage_parent),
        ):
            counts = np.log1p(np.asarray(self.uses.get(key) or [0] * len(self.names), dtype=np.float32))
            top = float(counts.max()) if len(counts) else 0.0
            if weight and top > 0:
                prior += weight * counts / top
        deprecated = np.asarray([bool(_DEPRECATED_RE.search(d[:200])) for d in self.docs], dtype=np.float32)
        self.prior = prior - ranking.deprecated_penalty * deprecated
        self.vocabs = {f: r.vocab_dict for f, r in self.retrievers.items()}

    def __len__(self) -> int:
        return len(self.names)

    def callables(self, idxs: Sequence[int]) -> list[int]:
        """Functions, methods and classes among `idxs`: the looser name matches (joined words,
        abbreviations) skip properties and constants ("file name" is not GzipFile.filename)."""
        return [i for i in idxs if self.kinds[i] in ("function", "method", "class")]

    def token_groups(self, query: str) -> list[tuple[list[str], float]]:
        """The query's BM25 tokens with their weights: its own words at 1, their expansion synonyms at
        `expansion_weight`."""
        own = T.query_tokens(query)
        extra = [t for t in T.expansion_tokens(query) if t not in own] if self.ranking.expansion_weight else []
        return [(own, 1.0), (extra, self.ranking.expansion_weight)]

    def needs_scores(self, query: str, groups: list[tuple[list[str], float]] | None = None) -> Any:
        """What the hand-written needs (`needs.py`) add to each entry's score: their BM25 and, with a dense
        model, their cosine, each an entry's best phrase's."""
        groups = self.token_groups(query) if groups is None else groups
        total = self.ranking.needs_weight * self.needs.lexical(groups)
        if self.ranking.needs_dense_weight and self.needs.dense is not None:
            try:
                total += self.ranking.needs_dense_weight * self.needs.cosine(query)
            except Exception as exc:  # e.g. damaged weights, read at the first search: lexical from now on
                log.warning(
                    "search: dense model failed on the needs (%s: %s); matching them lexically", type(exc).__name__, exc
                )
                self.needs.dense = None
        return total

    def bm25(self, query: str, groups: list[tuple[list[str], float]] | None = None) -> Any:
        """Weighted sum over fields of BM25 scores: the query's own tokens at full weight, its
        expansion synonyms at `expansion_weight`."""
        import numpy as np

        groups = self.token_groups(query) if groups is None else groups
        total = np.zeros(len(self.names), dtype=np.float32)
        for fname, weight in self.ranking.field_weights().items():
            vocab, retriever = self.vocabs[fname], self.retrievers[fname]
            for tokens, scale in groups:
                ids = [vocab[t] for t in tokens if t in vocab]
                if ids and weight and scale:
                    total += (weight * scale) * retriever.get_scores_from_ids(ids)
        return total

    def fuse(self, ranked: list[tuple[float, int]], cosine: Any, order: Any) -> list[tuple[float, int]]:
        """The lexical ranking `ranked` ((score, entry) best first) fused with the dense cosines."""
        w = self.ranking.dense_weight
        if self.ranking.dense_fusion == "add":
            return sorted(((score + w * float(cosine[i]), i) for score, i in ranked), key=order)
        k = self.ranking.rrf_k
        # an entry outside the lexical ranking (a dense-only candidate) gets no lexical term
        lexical = {i: r for r, (score, i) in enumerate(ranked, 1) if score > 0}
        by_cosine = sorted((i for _, i in ranked), key=lambda i: -float(cosine[i]))
        dense_rank = {i: r for r, i in enumerate(by_cosine, 1)}
        fused = [((1.0 / (k + lexical[i]) if i in lexical else 0.0) + w / (k + dense_rank[i]), i) for _, i in ranked]
        return sorted(fused, key=order)

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int) -> list[SearchHit]:
        """The best `k` entries for `query`: BM25 relevance (entries and needs) plus name boosts, the mention of a
        package and the static prior, fused with the dense model's cosine when it is on."""
        query = (query or "").strip()[:MAX_QUERY_CHARS]
        if not query or k < 1 or not self.names:
            return []
        boosts = self.name_boosts(query)
        mentioned = T.mentioned_packages(query, self.packages)

        groups = self.token_groups(query)  # tokenized once for the entries' and the needs' BM25
        scores = self.bm25(query, groups)
        if self.needs is not None:
            scores = scores + self.needs_scores(query, groups)
        if not scores.any() and not boosts:
            return []
        n = min(BM25_CANDIDATES, len(scores))
        candidates = set(int(i) for i in top_indices(scores, n) if scores[i] > 0) | set(boosts)
        scores = self.rescaled(scores, candidates)
        cosine = self.query_cosine(query)
        if cosine is not None:
            candidates |= set(int(i) for i in top_indices(cosine, min(self.ranking.dense_candidates, len(cosine))))

        def final(i: int) -> float:
            mention = MENTION_BOOST if self.root_of[i] in mentioned else 0.0
            return float(scores[i]) + boosts.get(i, 0.0) + mention + float(self.prior[i])

        def order(t: tuple[float, int]) -> tuple[float, int, str]:
            return -t[0], len(self.names[t[1]]), self.names[t[1]]

        ranked = sorted(((final(i), i) for i in candidates), key=order)
        if cosine is not None:
            ranked = self.fuse(ranked, cosine, order)
        return self.distinct_hits(ranked, k)

    def name_boosts(self, query: str) -> dict[int, float]:
        """Entry index -> the largest boost the query's names give it: the exact name, dotted and spaced names,
        identifier-like words, joined words, and names that abbreviate a word."""
        boosts: dict[int, float] = {}

        def boost(idxs: Sequence[int], amount: float, by_depth: bool = False) -> None:
            for i in idxs:
                # a bare name most likely means the module-level one: argsort -> numpy.argsort
                value = amount / max(1, self.depths[i]) if by_depth else amount
                boosts[i] = max(boosts.get(i, 0.0), value)

        exact = T.expand_alias(query.strip("`'\" ?").removesuffix("()"))
        if exact in self.by_name:
            boost([self.by_name[exact]], EXACT_BOOST)
        for dotted in T.dotted_names(query):
            if dotted in self.by_name:
                boost([self.by_name[dotted]], DOTTED_BOOST * 1.5)
            boost(self.by_suffix.get(dotted, ()), DOTTED_BOOST)
        for spaced in T.spaced_names(query):
            if spaced in self.by_name:
                boost([self.by_name[spaced]], SPACED_BOOST)
            boost(self.by_suffix.get(spaced, ()), SPACED_BOOST)
        raw_words = T.words(query)
        for word in raw_words:
            idxs = self.by_last.get(T.name_key(word))
            if idxs:
                strong = len(raw_words) == 1 or T.looks_like_identifier(word)
                boost(idxs, IDENT_BOOST if strong else WORD_BOOST, by_depth=True)
        for joined in T.joined_words(query):
            boost(self.callables(self.by_last.get(joined, ())), JOINED_BOOST, by_depth=True)
        for word in raw_words:  # names that abbreviate a query word: concat, hist, norm, corr
            key = T.name_key(word)
            for n in range(4, len(key)):
                boost(self.callables(self.by_last.get(key[:n], ())), WORD_BOOST, by_depth=True)
        return boosts

    def rescaled(self, scores: Any, candidates: set[int]) -> Any:
        """The relevance scores scaled down so the best candidate's is at most `ranking.relevance_scale` (0: as
        they are).

        BM25's scale grows with the query's length; rescaled, the prior and boosts weigh the same against
        relevance for a two-word and a ten-word query. Only ever scaled down: scaling a short query's scores up
        would turn BM25's noise between same-named entries (numpy.argsort vs numpy.generic.argsort) into a lead.
        """
        if self.ranking.relevance_scale > 0:
            best = max((float(scores[i]) for i in candidates), default=0.0)
            if best > self.ranking.relevance_scale:
                return scores * (self.ranking.relevance_scale / best)
        return scores

    def query_cosine(self, query: str) -> Any:
        """The dense model's cosine of the query to every entry, or None when the dense ranking is off. A model
        that fails (damaged weights, read at the first search) is dropped: the index ranks lexically from then on."""
        if self.dense is None or not self.ranking.dense_weight:
            return None
        try:
            return self.dense.scores(query)
        except Exception as exc:
            log.warning("search: dense model failed (%s: %s); ranking lexically", type(exc).__name__, exc)
            self.dense = None
            return None

    def distinct_hits(self, ranked: list[tuple[float, int]], k: int) -> list[SearchHit]:
        """The first `k` positive-scored entries of `ranked`; the same method inherited by sibling classes
        (Series.str.count, Index.str.count) is shown once, under its best-ranked name."""
        hits: list[SearchHit] = []
        shown: set[tuple[str, str]] = set()
        for score, i in ranked:
            if score <= 0 or len(hits) >= k:
                break
            shown_as = (self.names[i].rsplit(".", 1)[-1], self.docs[i])
            if shown_as in shown and self.docs[i]:
                continue
            shown.add(shown_as)
            hits.append(
                SearchHit(name=self.names[i], signature=self.signatures[i], doc=self.docs[i], score=round(score, 3))
            )
        return hits
