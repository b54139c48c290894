"""The ranking's tuning values at work: queries of the labelled sets keep the results the chosen weights give.

`tools/search/ranking.py` is mostly numbers (boosts, priors, `Ranking`'s defaults). A unit test of one part sees a
+1 step of a weight only where that step reorders something, so these pins were chosen for that:
`tests/mutation/ranking_mutants.py` ran each value mutant of `ranking.py` on the standard library's index (no dense
model, as here) over the three labelled query sets, and `choose_pins` picked few queries whose result every
mutant that changes any result breaks. A "top 1" pin is a query whose labelled answer the chosen ranking puts
first; a "top 3" pin is the whole top 3 of a query no top-1 pin covered (a snapshot, of this interpreter's
standard library: docstrings differ between Python versions, so it is checked on the version it was taken on).
When the ranking is retuned on purpose, rerun the script (`--settings stdlib`) and take its new pins
(docs/mutation.md, block 28).
"""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

pytest.importorskip("bm25s")  # a declared dependency; the pydoc backend needs it

from agentic_rl.tools.search import pydoc_backend as P  # noqa: E402

SNAPSHOT_PYTHON = (3, 11)

# query -> its labelled answer, ranked first (the mutants of ranking.py each pin kills, in the comment)
TOP1 = {
    "hexadecimal string of bytes": "binascii.hexlify",  # fielded, usage_*, expansion_weight, relevance_scale, {all: 1}
    "encode a string to utf-8 bytes": "builtins.str.encode",  # WORD_BOOST, DEPTH_PENALTY
    "decode base64 text back to bytes": "base64.b64decode",  # IDENT_BOOST, KIND_PRIOR["module"]
    "join path components": "os.path.join",  # needs_weight
}
# query -> its top 3
TOP3 = {
    "issue a warning message": ["warnings.warn", "logging.warning", "warnings.WarningMessage"],  # JOINED_BOOST
    "create a unique identifier": ["enum.unique", "tempfile.mkdtemp", "uuid.uuid4"],  # KIND_PRIOR["data"]
    "json response body of an http request": [  # MENTION_BOOST
        "json.loads",
        "http.client.HTTPConnection.request",
        "http.client.HTTPConnection.getresponse",
    ],
}


# Pins of the two other settings the mutants were run in, for the values that act only there: the needs' cosine
# under the packaged dense model (`needs_dense_weight`), and a fielded index (`name_weight`, `params_weight`,
# `summary_weight`, `body_weight`), which the benchmark's ablation builds from the raw entries as below.
DENSE_TOP1 = {"save a python object to disk and load it back": "pickle.load"}  # needs_dense_weight
FIELDED_TOP1 = {
    "keep dictionary keys in insertion order and move one to the end": "collections.OrderedDict",  # name, params, body
    "heap push pop": "heapq.heappush",  # summary_weight
}


@pytest.fixture(scope="module")
def stdlib(tmp_path_factory) -> P.PydocBackend:
    return P.PydocBackend(modules=list(P.STDLIB_MODULES), cache_dir=tmp_path_factory.mktemp("pins"))


@pytest.fixture(scope="module")
def fielded(stdlib) -> P.PydocIndex:
    ranking = replace(P.DEFAULT_RANKING, fielded=True)
    entries, usage = P.load_raw(stdlib.index.path)
    index = P.build_index(entries, {}, usage, ranking)
    index.needs = stdlib.index.needs
    index.set_ranking(ranking)
    return index


@pytest.mark.parametrize("query", list(TOP1))
def test_the_labelled_answer_ranks_first(stdlib, query):
    assert stdlib.search(query, 1)[0].name == TOP1[query]


@pytest.mark.skipif(sys.version_info[:2] != SNAPSHOT_PYTHON, reason="top-3 pins of Python 3.11's standard library")
@pytest.mark.parametrize("query", list(TOP3))
def test_the_top_3_is_the_chosen_rankings(stdlib, query):
    assert [h.name for h in stdlib.search(query, 3)] == TOP3[query]


@pytest.mark.parametrize("query", list(FIELDED_TOP1))
def test_in_a_fielded_index_the_labelled_answer_ranks_first(fielded, query):
    assert fielded.search(query, 1)[0].name == FIELDED_TOP1[query]


@pytest.mark.slow  # the needs' phrases encoded once: about 20 s
@pytest.mark.parametrize("query", list(DENSE_TOP1))
def test_with_the_needs_cosine_the_labelled_answer_ranks_first(tmp_path_factory, query):
    from agentic_rl.tools.search import dense as D

    try:
        D.model_dir(D.model_spec(D.DEFAULT_MODEL))
    except D.DenseModelMissing as exc:
        pytest.skip(str(exc))
    backend = P.PydocBackend(
        modules=list(P.STDLIB_MODULES), cache_dir=tmp_path_factory.mktemp("pins_dense"), dense=D.DEFAULT_MODEL
    )
    assert backend.index.needs.dense is not None
    assert backend.search(query, 1)[0].name == DENSE_TOP1[query]
