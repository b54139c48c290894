"""`PydocIndex` on hand-written entries: the static prior, and how `search` adds each name boost to BM25 and the
prior (a hit's score is their sum, so each boost is checked by its amount), which entries it returns, in which
order. The weights themselves are `ranking.py`'s (pinned on real queries by `test_ranking_pins.py`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("bm25s")  # a declared dependency; the pydoc index needs it

from agentic_rl.tools.search import pydoc_store as S  # noqa: E402
from agentic_rl.tools.search import ranking as R  # noqa: E402
from agentic_rl.tools.search import text as T  # noqa: E402
from agentic_rl.tools.search.needs import NeedsMatcher  # noqa: E402


def entry(name: str, kind: str = "function", doc: str = "", module: str = "lib") -> dict:
    return {"name": name, "module": module, "kind": kind, "signature": "", "doc": doc}


ENTRIES = [
    entry("lib", "module", "A library of tools."),
    entry("lib.sort_list", doc="Sort a list in place."),
    entry("lib.Box", "class", "A box of items."),
    entry("lib.Box.sort_list", "method", "Sort the items of the box."),
    entry("lib.util.helper", doc="Help with chores."),
    entry("lib.LIMIT", "data", "Constant LIMIT = 3"),
    entry("lib.Box.size", "attribute", "How big the box is."),
    entry("other.sort_list", doc="Sort a list elsewhere.", module="other"),
]


@pytest.fixture(scope="module")
def index():
    return S.build_index(ENTRIES, {}, {})


def score(index, query: str, name: str) -> float:
    return next(h.score for h in index.search(query, len(index)) if h.name == name)


def expected(index, query: str, name: str, boost: float, mention: float = 0.0) -> float:
    i = index.by_name[name]
    return round(float(index.bm25(query)[i]) + boost + mention + float(index.prior[i]), 3)


# ----------------------------------------------------------------------------- the prior
def test_the_prior_is_the_kinds_less_half_a_point_per_level_below_a_function():
    index = S.build_index(ENTRIES, {}, {})
    prior = dict(zip(index.names, index.prior.tolist()))
    assert prior == pytest.approx(
        {
            "lib": -3.0,  # a module
            "lib.sort_list": 0.0,
            "lib.Box": 0.0,
            "lib.Box.sort_list": -0.5,  # one level down
            "lib.util.helper": -0.5,
            "lib.LIMIT": -1.5,  # data
            "lib.Box.size": -1.5,  # an attribute, one level down
            "other.sort_list": 0.0,
        }
    )


def test_usage_lifts_the_prior_by_log_counts_over_the_largest():
    usage = {"last": {"sort_list": 9, "helper": 3}, "pair": {"lib.sort_list": 4, "lib.Box": 1}}
    index = S.build_index(ENTRIES, {}, usage)
    ranking = index.ranking
    prior = dict(zip(index.names, index.prior.tolist()))
    last, pair = math.log1p(9), math.log1p(4)
    assert prior["lib.sort_list"] == pytest.approx(ranking.usage_last + ranking.usage_pair)
    assert prior["lib.util.helper"] == pytest.approx(-0.5 + ranking.usage_last * math.log1p(3) / last)
    assert prior["lib.Box"] == pytest.approx(ranking.usage_pair * math.log1p(1) / pair)
    # a member's class: the method of lib.Box gets the parent term (lib.Box used once)
    assert prior["lib.Box.sort_list"] == pytest.approx(-0.5 + ranking.usage_last + ranking.usage_parent)
    index.set_ranking(replace(ranking, usage_last=0.0, usage_pair=0.0, usage_parent=0.0))
    assert index.prior[index.by_name["lib.sort_list"]] == 0.0


def test_an_index_without_usage_tables_has_no_usage_prior():
    index = S.build_index(ENTRIES, {}, {})
    without = index.prior.tolist()  # no use counted: the kinds' and depths' prior alone
    index.uses = {}  # as an index constructed without them
    index.set_ranking(index.ranking)
    assert index.prior.tolist() == without


def test_a_summary_that_says_deprecated_costs_the_penalty():
    entries = [
        entry("lib.old", doc="Deprecated: use new instead."),
        entry("lib.older", doc="x" * 190 + " deprecated"),  # its last letter is the 201st character
        entry("lib.new", doc="Not deprecatedly named."),
    ]
    index = S.build_index(entries, {}, {})
    assert index.prior.tolist() == [-R.DEFAULT_RANKING.deprecated_penalty, 0.0, 0.0]


def test_a_ranking_needs_the_fields_the_index_was_built_with(index):
    with pytest.raises(ValueError, match="no BM25 field"):
        index.set_ranking(replace(R.DEFAULT_RANKING, fielded=True))
    assert index.ranking == R.DEFAULT_RANKING


# ----------------------------------------------------------------------------- boosts
# (query, entry, the boost it must get, its package's mention, why): each score is the entry's BM25 + boost +
# mention + prior, to the amount
BOOSTS = [
    ("lib.sort_list", "lib.sort_list", 100.0, 4.0, "an exact name: the exact boost and its package's mention"),
    ("`lib.sort_list()`", "lib.sort_list", 100.0, 4.0, "an exact name in code quotes and with a call"),
    ("lib.sort_list?", "lib.sort_list", 100.0, 4.0, "an exact name with punctuation"),
    ("lib.sort_list", "lib.Box.sort_list", 8.0, 4.0, "the same last name one level down: half the identifier boost"),
    ("lib.sort_list", "other.sort_list", 16.0, 0.0, "another package's: the identifier boost alone"),
    ("Box.sort_list", "lib.Box.sort_list", 40.0, 0.0, "a dotted suffix of the entry's name"),
    ("call util.helper or lib.sort_list", "lib.sort_list", 60.0, 4.0, "a whole name in a longer query: 1.5 x dotted"),
    ("call util.helper or lib.sort_list", "lib.util.helper", 40.0, 4.0, "a dotted suffix in a longer query"),
    ("lib sort_list", "lib.sort_list", 20.0, 4.0, "two words read as a dotted name"),
    ("Box sort_list", "lib.Box.sort_list", 20.0, 0.0, "two words read as a dotted suffix"),
    ("box", "lib.Box", 16.0, 0.0, "a single word is an identifier, divided by the depth"),
    ("size", "lib.Box.size", 8.0, 0.0, "a single word one level further down"),
    ("open the box", "lib.Box", 1.5, 0.0, "a plain word among others: the word boost"),
    ("use sort_list now", "lib.sort_list", 16.0, 0.0, "an identifier-looking word keeps the identifier boost"),
    ("sort list", "lib.sort_list", 6.0, 0.0, "run-together words boost a callable"),
    ("sort list", "lib.Box.sort_list", 3.0, 0.0, "run-together words, one level down"),
    ("helpers", "lib.util.helper", 0.75, 0.0, "an abbreviation (a prefix of four letters or more), one level down"),
]


@pytest.mark.parametrize("query, name, boost, mention, why", BOOSTS, ids=[case[-1] for case in BOOSTS])
def test_each_boost_by_its_exact_amount(index, query, name, boost, mention, why):
    assert score(index, query, name) == expected(index, query, name, boost, mention)


def test_the_looser_matches_skip_what_cannot_be_called(index):
    # properties, attributes and data: a file name is not GzipFile.filename
    callable_names = [index.names[i] for i in index.callables(range(len(index)))]
    assert callable_names == ["lib.sort_list", "lib.Box", "lib.Box.sort_list", "lib.util.helper", "other.sort_list"]


# ----------------------------------------------------------------------------- what is returned
def test_no_hits_for_an_empty_query_or_k_below_one(index):
    assert index.search("", 3) == [] and index.search("   ", 3) == []
    assert index.search("sort list", 0) == []
    assert len(index.search("sort list", 1)) == 1
    assert index.search("zzqx", 3) == []  # nothing scores


def test_at_most_k_hits_best_first_ties_to_the_shorter_then_the_first_name():
    entries = [entry("lib.bb.sort_items"), entry("lib.aa.sort_items"), entry("lib.sort_items"), entry("lib.z")]
    index = S.build_index(entries, {}, {})
    hits = index.search("sort_items", 3)
    assert [h.name for h in hits] == ["lib.sort_items", "lib.aa.sort_items", "lib.bb.sort_items"]
    assert hits[0].score > hits[1].score == hits[2].score
    assert [h.name for h in index.search("sort_items", 2)] == ["lib.sort_items", "lib.aa.sort_items"]


def test_a_member_inherited_by_sibling_classes_is_shown_once():
    entries = [
        entry("lib.A.count", "method", "Count the items."),
        entry("lib.B.count", "method", "Count the items."),
        entry("lib.C.count", "method", "Count the others."),
        entry("lib.D.count", "method", ""),
        entry("lib.E.count", "method", ""),
    ]
    index = S.build_index(entries, {}, {})
    names = [h.name for h in index.search("count", 10)]
    assert sorted(names) == ["lib.A.count", "lib.C.count", "lib.D.count", "lib.E.count"]  # no doc: nothing to repeat


def test_hits_carry_the_entrys_signature_doc_and_rounded_score(index):
    hit = index.search("lib.sort_list", 1)[0]
    i = index.by_name["lib.sort_list"]
    assert (hit.name, hit.signature, hit.doc) == ("lib.sort_list", index.signatures[i], "Sort a list in place.")
    assert hit.score == round(hit.score, 3)


def test_candidates_beyond_bm25s_are_the_boosted_ones():
    # no word of the query is in any entry's tokens, but the joined words name one
    index = S.build_index([entry("lib.isdir"), entry("lib.other", doc="Something else.")], {}, {})
    assert [h.name for h in index.search("is dir", 5)] == ["lib.isdir"]


def test_relevance_scale_caps_the_best_bm25_score(index):
    scaled = replace(R.DEFAULT_RANKING, relevance_scale=0.5)
    plain = S.build_index(ENTRIES, {}, {})
    capped = S.build_index(ENTRIES, {}, {}, scaled)
    bm25 = plain.bm25("sort items of the box")
    best = max(float(bm25[i]) for i in range(len(ENTRIES)) if bm25[i] > 0)
    assert best > 0.5
    i = plain.by_name["lib.Box"]
    want = float(bm25[i]) * 0.5 / best + 1.5  # the word boost of "box" among other words; a class's prior is 0
    assert score(capped, "sort items of the box", "lib.Box") == pytest.approx(want, abs=1e-3)
    loose = S.build_index(ENTRIES, {}, {}, replace(R.DEFAULT_RANKING, relevance_scale=1000.0))
    assert score(loose, "sort items of the box", "lib.Box") == score(plain, "sort items of the box", "lib.Box")


# ----------------------------------------------------------------------------- BM25 groups and the needs
def test_a_querys_own_words_weigh_one_and_its_synonyms_the_expansion_weight(index):
    query = "serialize an object"
    own = T.query_tokens(query)
    extra = [t for t in T.expansion_tokens(query) if t not in own]
    assert extra  # the query has synonyms
    assert index.token_groups(query) == [(own, 1.0), (extra, R.DEFAULT_RANKING.expansion_weight)]


class FixedCosines:
    """A dense scorer of the needs' phrases with given cosines."""

    def __init__(self, cosines: list[float]) -> None:
        self.cosines = np.asarray(cosines, dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        return self.cosines


def test_the_needs_add_their_bm25_and_cosine_at_their_weights():
    index = S.build_index(ENTRIES, {}, {})
    phrases = {"lib.sort_list": ("order the values",), "lib.Box": ("a container for values",)}
    index.needs = NeedsMatcher(phrases, index.by_name, len(index))
    query = "order values"
    lexical = R.DEFAULT_RANKING.needs_weight * index.needs.lexical(index.token_groups(query))
    assert lexical.any()
    assert index.needs_scores(query).tolist() == pytest.approx(lexical.tolist())  # no dense model
    index.needs.dense = FixedCosines([0.5, 0.25])  # one per phrase, in order
    want = lexical.copy()
    want[index.by_name["lib.sort_list"]] += R.DEFAULT_RANKING.needs_dense_weight * 0.5
    want[index.by_name["lib.Box"]] += R.DEFAULT_RANKING.needs_dense_weight * 0.25
    assert index.needs_scores(query, index.token_groups(query)).tolist() == pytest.approx(want.tolist())


# ----------------------------------------------------------------------------- fusion with a dense ranking
def test_fusion_adds_the_weighted_cosine_or_the_reciprocal_ranks():
    index = S.build_index(ENTRIES, {}, {})
    ranked = [(5.0, 0), (0.5, 1), (0.0, 2)]  # the lexical ranking; the third entry scores nothing lexically
    cosine = np.array([0.1, 0.9, 0.5] + [0.0] * (len(index) - 3), dtype=np.float32)

    def order(t):
        return -t[0], t[1]

    index.set_ranking(replace(R.DEFAULT_RANKING, dense_weight=2.0, dense_fusion="add"))
    added = index.fuse(ranked, cosine, order)
    assert [i for _, i in added] == [0, 1, 2]
    assert [s for s, _ in added] == pytest.approx([5.2, 2.3, 1.0])
    index.set_ranking(replace(R.DEFAULT_RANKING, dense_weight=2.0, dense_fusion="rrf", rrf_k=60.0))
    fused = index.fuse(ranked, cosine, order)
    # lexical ranks 1, 2 (none for a score of 0); cosine ranks 3, 1, 2
    want = {0: 1 / 61 + 2 / 63, 1: 1 / 62 + 2 / 61, 2: 2 / 62}
    assert [i for _, i in fused] == [1, 0, 2]
    assert [s for s, _ in fused] == pytest.approx([want[1], want[0], want[2]], rel=1e-9)


def test_a_name_of_four_letters_or_more_that_begins_a_query_word_is_boosted():
    index = S.build_index([entry("lib.norm"), entry("lib.nor"), entry("lib.other", doc="Something.")], {}, {})
    assert score(index, "normalize", "lib.norm") == expected(index, "normalize", "lib.norm", 1.5)
    assert "lib.nor" not in [h.name for h in index.search("normalize", 5)]  # three letters are too few


def test_the_best_bm25_candidates_of_a_large_index_are_kept():
    entries = [entry(f"lib.f{i}", doc="Filler text.") for i in range(250)] + [entry("lib.g", doc="Parse a zebra.")]
    index = S.build_index(entries, {}, {})
    assert [h.name for h in index.search("zebra", 3)] == ["lib.g"]


def test_the_dense_top_candidates_join_even_one():
    index = S.build_index(
        [entry("lib.dumps", doc="Serialize an object."), entry("lib.persist", doc="Keep it.")], {}, {}
    )
    index.dense = FixedCosines([0.1, 0.9])
    index.set_ranking(replace(R.DEFAULT_RANKING, dense_weight=8.0, dense_candidates=1))
    assert {h.name for h in index.search("serialize object", 5)} == {"lib.dumps", "lib.persist"}


def test_an_entry_without_a_boost_scores_bm25_and_its_prior(index):
    assert score(index, "items", "lib.Box") == expected(index, "items", "lib.Box", 0.0)


def test_top_indices_are_the_largest_values_whatever_the_partition_order():
    """The candidate cut of both the BM25 and the dense lists: the set of the n largest values, for every n. Many
    random arrays, because which indices a wrong pivot lets in depends on numpy's selection order."""
    import numpy as np

    from agentic_rl.tools.search.pydoc_index import top_indices

    rng = np.random.default_rng(1)
    for trial in range(2000):
        values = rng.permutation(int(rng.integers(2, 3000))).astype(float)  # distinct: the top n is one set
        for n in {1, 2, int(rng.integers(1, len(values))), len(values) - 1}:
            want = set(np.argsort(-values)[:n].tolist())
            assert set(top_indices(values, n).tolist()) == want, (trial, len(values), n)
        assert sorted(top_indices(values, len(values) + 3).tolist()) == list(range(len(values)))
    assert top_indices(np.array([1.0, 2.0]), 0).tolist() == []
