"""How the pydoc index scores an entry for a query: the `Ranking` weights and the fixed boosts and priors.

The score is BM25 (bm25s) over name tokens (last component weighted), parameter names and the first
paragraphs of the docstring, with query-expansion synonyms at half weight; a usage prior (how often the name
is used in the sources shipped with the stdlib and the indexed packages); boosts for exact names, dotted-name
suffixes (`Counter.most_common`, `pd.DataFrame.groupby`) and identifier-like words equal to an API's name; a
deprecated penalty; and the hand-written needs (`needs.py`). `pydoc_index.PydocIndex.search` applies them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

# Score adjustments on top of BM25 (typical BM25 scores here are 5..40).
EXACT_BOOST = 100.0  # the query is exactly the entry's name
DOTTED_BOOST = 40.0  # a dotted name in the query is a suffix of the entry's name
SPACED_BOOST = 20.0  # two adjacent words are a dotted suffix of the entry's name ("json loads")
IDENT_BOOST = 16.0  # an identifier-like word (most_common, argsort alone) is the entry's last name
JOINED_BOOST = 6.0  # adjacent words run together are the entry's last name ("most common")
WORD_BOOST = 1.5  # a plain word equals the entry's last name (bar, sort)
MENTION_BOOST = 4.0  # the query names the entry's package ("pandas ...", "sns ...")
DEPTH_PENALTY = 0.5  # per level below module.function (a method is one level down)
KIND_PRIOR = {"module": -3.0, "data": -1.5, "attribute": -1.0}
MAX_QUERY_CHARS = 300
BM25_CANDIDATES = 200


@dataclass(frozen=True)
class Ranking:
    """How the parts of the score are weighted. `bench --ablation` switches each part off.

    fielded: True scores one BM25 per field, weighted (*_weight: name tokens, parameter names,
        the docstring's first sentence, the rest of its description); False (chosen: it tied on
        recall@3 and won on MRR on the development set) scores one BM25 over all of them, the
        name counted three times.
    usage_*: the popularity prior, from how often a name is used in the sources of the stdlib
        and of the indexed packages (their shipped tests included): never an evaluation set.
        Each count enters as log1p(count)/log1p(max count), in [0, 1].
    expansion_weight: weight of the BM25 score of query-expansion synonyms (0: no expansion).
    deprecated_penalty: subtracted when the summary says the API is deprecated.
    dense_*: fusion with the entries' cosine under a sentence-embedding model (`dense.py`); off by
        default (dense_weight 0: every entry would be encoded, minutes per cold index; the needs' cosine,
        needs_dense_weight, gives most of its gain for seconds of encoding). When on, "add" adds
        dense_weight * cosine to the score above, "rrf" ranks by
        1/(rrf_k + lexical rank) + dense_weight/(rrf_k + dense rank). Either way the dense top
        `dense_candidates` entries are candidates too.
    relevance_scale: > 0 scales BM25 down so that a query's best candidate scores at most this; off
        (0) by default: at its best dev setting (30) it changed no ranking on either query set.

    The defaults were chosen on the development query set by a random search over these weights
    (the held-out set was never used to choose); `bench --ablation` shows what each part adds.
    """

    fielded: bool = False
    name_weight: float = 1.0
    params_weight: float = 0.3
    summary_weight: float = 2.0
    body_weight: float = 0.8
    usage_last: float = 1.0
    usage_pair: float = 4.0
    usage_parent: float = 1.0
    expansion_weight: float = 0.5
    deprecated_penalty: float = 6.0
    relevance_scale: float = 0.0  # > 0: BM25 scaled down so the query's best candidate scores at most this
    dense_weight: float = 0.0  # the entries' cosine (every entry encoded: minutes); 0: not used
    dense_fusion: str = "add"  # "add": + dense_weight * cosine; "rrf": reciprocal-rank fusion
    dense_candidates: int = 50  # the dense top-N joins the lexical candidates
    rrf_k: float = 60.0
    needs_weight: float = 1.25  # BM25 of the hand-written needs (needs.py), an entry's best phrase
    needs_dense_weight: float = 20.0  # their cosine under the dense model (its phrases encoded: seconds)

    def __post_init__(self) -> None:
        if self.dense_fusion not in ("add", "rrf"):
            raise ValueError(f"search: dense_fusion must be 'add' or 'rrf', got {self.dense_fusion!r}")

    def field_weights(self) -> dict[str, float]:
        if not self.fielded:
            return {"all": 1.0}
        return {
            "name": self.name_weight,
            "params": self.params_weight,
            "summary": self.summary_weight,
            "body": self.body_weight,
        }


DEFAULT_RANKING = Ranking()


def ranking_with(overrides: dict[str, Any] | None) -> Ranking:
    """DEFAULT_RANKING with the `ranking` backend option's values (e.g. {dense_weight: 8})."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - {f.name for f in fields(Ranking)})
    if unknown:
        raise ValueError(
            f"search: unknown ranking option(s) {unknown}; known: {sorted(f.name for f in fields(Ranking))}"
        )
    return replace(DEFAULT_RANKING, **overrides)
