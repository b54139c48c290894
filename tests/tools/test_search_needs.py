"""Hand-written needs (`agentic_rl/tools/search/needs.py`): parsing, matching, and the shipped files."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentic_rl.tools.search import needs as N
from agentic_rl.tools.search import pydoc_backend as P


def fake_entry(name: str, doc: str, kind: str = "function") -> dict:
    return {"name": name, "module": name.rsplit(".", 1)[0], "kind": kind, "signature": "(x)", "doc": doc, "extra": ""}


def write(folder, name: str, text: str):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_lines_comments_and_files_are_read_in_order(tmp_path):
    folder = write(tmp_path, "b.txt", "# header\nlib.b: phrase one;  phrase two ;\n\n")
    write(folder, "a.txt", "lib.a: only phrase\n")
    assert N.load_needs(folder) == {"lib.a": ("only phrase",), "lib.b": ("phrase one", "phrase two")}


@pytest.mark.parametrize(
    "text,message,line",
    [
        ("lib.a phrase without a colon\n", "expected 'qualified.name: phrase", 1),
        ("lib.a: x\nlib.a: y\n", "listed twice", 2),
        ("# comment\n\nlib.a: ; ;\n", "no phrase", 3),
    ],
)
def test_a_bad_line_names_its_file_and_line(tmp_path, text, message, line):
    write(tmp_path, "bad.txt", text)
    with pytest.raises(ValueError, match=message) as err:
        N.load_needs(tmp_path)
    assert f"bad.txt:{line}:" in str(err.value)  # lines counted from 1, comments and blank lines included


def test_a_need_lifts_its_api_over_a_docstring_that_shares_the_query_words():
    """The docstring of lib.to_text never says 'json' or 'serialize'; its need does."""
    entries = [
        fake_entry("lib.JsonDecoder", "Decode a JSON document; serialize is not done here."),
        fake_entry("lib.to_text", "Return the object's text form."),
    ]
    index = P.build_index(entries, {}, {})
    query = "serialize object to json string"
    assert index.search(query, 1)[0].name == "lib.JsonDecoder"
    needs = {"lib.to_text": ("serialize an object to a json string", "dict to json text"), "lib.absent": ("json",)}
    index.needs = N.NeedsMatcher(needs, index.by_name, len(index))
    assert len(index.needs) == 2  # lib.absent is not in this index: skipped
    assert index.search(query, 1)[0].name == "lib.to_text"
    index.set_ranking(replace(P.DEFAULT_RANKING, needs_weight=0.0))
    assert index.search(query, 1)[0].name == "lib.JsonDecoder"  # the weight is what turns it off


def test_an_entry_scores_its_best_phrase_not_the_sum():
    entries = [fake_entry("lib.a", "x"), fake_entry("lib.b", "y")]
    index = P.build_index(entries, {}, {})
    matcher = N.NeedsMatcher(
        {"lib.a": ("sort rows", "sort rows again", "sort rows once more"), "lib.b": ("sort rows",)},
        index.by_name,
        len(index),
    )
    scores = matcher.lexical([(["sort", "row"], 1.0)])
    assert scores[0] == pytest.approx(scores[1]) and scores[0] > 0


def test_the_shipped_needs_parse_and_name_apis():
    needs = N.load_needs()
    assert len(needs) >= 500
    assert all(len(phrases) >= 2 for phrases in needs.values())
    roots = {name.split(".")[0] for name in needs}
    assert {"builtins", "collections", "re", "json", "os", "pandas", "numpy", "matplotlib", "sklearn"} <= roots


def test_a_phrase_scores_lucene_bm25_with_k1_1_2_and_b_0_75():
    """Each phrase is a document; a query word scores idf * tf / (tf + k1 * (1 - b + b * len / avg len))."""
    import math

    from agentic_rl.tools.search import text as T

    needs = {
        "a.x": ("sort rows by key",),
        "a.y": ("count rows",),
        "a.z": ("sort the list of numbers in place quickly",),
    }
    matcher = N.NeedsMatcher(needs, {"a.x": 0, "a.y": 1, "a.z": 2}, 3)
    docs = [T.prose_tokens(phrase) for (phrase,) in needs.values()]
    query = T.prose_tokens("sort rows")
    avg = sum(map(len, docs)) / len(docs)

    def bm25(doc):
        score = 0.0
        for word in query:
            df, tf = sum(word in d for d in docs), doc.count(word)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            score += idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * len(doc) / avg))
        return score

    assert matcher.lexical([(query, 1.0)]).tolist() == pytest.approx([bm25(d) for d in docs], rel=1e-5)
    assert matcher.lexical([(query, 0.5)]).tolist() == pytest.approx([bm25(d) / 2 for d in docs], rel=1e-5)


def test_without_a_dense_model_every_entry_scores_a_cosine_of_zero():
    matcher = N.NeedsMatcher({"a.x": ("sort rows",)}, {"a.x": 0}, 2)
    assert matcher.dense is None and matcher.cosine("sort rows").tolist() == [0.0, 0.0]
