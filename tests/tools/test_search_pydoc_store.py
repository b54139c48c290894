"""`pydoc_store.py` on hand-written entries: signatures shortened for display, each entry's BM25 fields, usage
counts and depth, the docstring vocabulary that splits run-together names, BM25's constants, and an index's files
on disk. No introspection runs, so the whole file takes about a second."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

pytest.importorskip("bm25s")  # a declared dependency; the pydoc index needs it

from agentic_rl.tools.search import pydoc_store as S  # noqa: E402
from agentic_rl.tools.search import text as T  # noqa: E402
from agentic_rl.tools.search.ranking import DEFAULT_RANKING  # noqa: E402

FIELDED = replace(DEFAULT_RANKING, fielded=True)


def entry(name: str, kind: str = "function", doc: str = "", **more) -> dict:
    return {"name": name, "kind": kind, "doc": doc, **more}


# ----------------------------------------------------------------------------- signatures
def test_a_signature_up_to_160_characters_is_kept_whole():
    sig = "(" + "a" * 158 + ")"
    assert S.short_signature(sig) == sig
    assert S.short_signature(sig + "b") == sig[:154] + ", ...)"  # one more: cut


def test_a_long_signature_is_cut_after_the_last_whole_parameter_that_fits():
    # commas at 100, 153 (the last that leaves room for ", ...)") and 160 (past it)
    sig = "(" + "a" * 99 + "," + "b" * 52 + "," + "c" * 6 + "," + "d" * 50 + ")"
    assert [i for i, c in enumerate(sig) if c == ","] == [100, 153, 160]
    assert S.short_signature(sig) == sig[:153] + ", ...)"
    assert S.short_signature(sig, max_len=120) == sig[:100] + ", ...)"


def test_a_long_signature_without_a_comma_to_cut_at_is_cut_at_its_length():
    assert S.short_signature("(" + "x" * 300 + ")") == "(" + "x" * 153 + ", ...)"
    assert S.short_signature("," + "x" * 300) == ("," + "x" * 300)[:154] + ", ...)"  # a leading comma cuts nothing
    assert S.short_signature("(," + "x" * 300) == "(, ...)"


# ----------------------------------------------------------------------------- fields, usage, depth
def test_an_entrys_fields_count_its_name_once_and_three_times_in_the_single_field():
    fields = S.entry_fields(
        {
            "name": "json.dumps",
            "signature": "(obj, *, sort_keys=False)",
            "doc": "Serialize obj to a JSON formatted str. Uses a table of conversions.",
            "extra": "More text here.",
        },
        set(),
    )
    assert fields == {
        "name": ["json", "dump"],
        "params": ["obj", "sort_keys", "sort", "key"],
        "summary": ["serializ", "obj", "json", "format", "str"],
        "body": ["use", "tabl", "conversion", "more", "text", "here"],
        "all": ["json", "dump", "dump", "dump"]
        + ["obj", "sort_keys", "sort", "key"]
        + ["serializ", "obj", "json", "format", "str"]
        + ["use", "tabl", "conversion", "more", "text", "here"],
    }


def test_usage_counts_of_a_name_its_parent_pair_and_a_members_class():
    entries = [
        entry("json", "module"),
        entry("json.dumps"),
        entry("collections.Counter", "class"),
        entry("collections.Counter.most_common", "method"),
        entry("collections.Counter.total", "property"),
        entry("os.path.join"),  # a function below a module: not a member of a class
    ]
    usage = {
        "last": {"dumps": 5, "Counter": 7, "most_common": 3, "json": 9},
        "pair": {"json.dumps": 4, "collections.Counter": 6, "Counter.most_common": 2, "os.path": 8},
    }
    assert S.entry_uses(entries, usage) == {
        "last": [9, 5, 7, 3, 0, 0],
        "pair": [0, 4, 6, 2, 0, 0],
        "parent": [0, 0, 0, 6, 6, 0],
    }
    # missing tables count nothing
    assert S.entry_uses(entries, {"last": {"dumps": 5}}) == {
        "last": [0, 5, 0, 0, 0, 0],
        "pair": [0] * 6,
        "parent": [0] * 6,
    }
    assert S.entry_uses(entries, {"pair": {"json.dumps": 4}})["pair"] == [0, 4, 0, 0, 0, 0]


def test_depth_is_levels_below_the_module_an_entry_was_found_in():
    assert S.entry_depth(entry("numpy.linalg.norm", module="numpy.linalg")) == 1
    assert S.entry_depth(entry("numpy.linalg.norm", module="numpy")) == 2
    assert S.entry_depth(entry("collections.Counter.most_common", "method", module="collections")) == 2
    assert S.entry_depth(entry("numpy.linalg", "module", module="numpy")) == 0
    # older raw files have no module: the name's first part is taken
    assert S.entry_depth(entry("numpy.argsort")) == 1
    assert S.entry_depth(entry("json", "module")) == 0


# ----------------------------------------------------------------------------- vocabulary and BM25
def splits_isdtype(doc: str, extra: str = "") -> bool:
    """Whether `lib.isdtype`'s name field holds dtype, a piece of its split (is + dtype) on the docs' words."""
    index = S.build_index([entry("lib.isdtype"), entry("lib.a", doc=doc, extra=extra)], {}, {}, FIELDED)
    return T.stem("dtype") in index.vocabs["name"]


def test_run_together_names_split_on_words_the_docs_use_at_least_twice():
    assert splits_isdtype("It is, is it? A dtype, the dtype.")  # two-letter words count
    assert not splits_isdtype("It is, is it? A dtype.")  # dtype once: not a word of the docs


def test_words_of_the_extra_text_count_toward_the_vocabulary_too():
    assert splits_isdtype("It is a dtype.", extra="Is it a dtype?")


def test_a_field_scores_lucene_bm25_with_k1_1_2_and_b_0_75():
    """Only the summary field weighs here: a query word scores idf * tf / (tf + k1 * (1 - b + b * len / avg))."""
    docs = ["Zebra zebra lemur.", "Zebra.", "Lemur lemur lemur okapi."]
    entries = [entry(f"lib.f{i}", doc=d) for i, d in enumerate(docs)]
    ranking = replace(FIELDED, name_weight=0.0, params_weight=0.0, body_weight=0.0, summary_weight=1.0)
    index = S.build_index(entries, {}, {}, ranking)
    summaries = [T.prose_tokens(d) for d in docs]
    assert summaries == [["zebra", "zebra", "lemur"], ["zebra"], ["lemur", "lemur", "lemur", "okapi"]]
    avg = sum(map(len, summaries)) / len(summaries)

    def bm25(word, doc):
        df, tf = sum(word in d for d in summaries), doc.count(word)
        idf = math.log(1 + (len(summaries) - df + 0.5) / (df + 0.5))
        return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * len(doc) / avg))

    expected = [bm25("zebra", d) for d in summaries]
    assert index.bm25("zebra", [(["zebra"], 1.0)]).tolist() == pytest.approx(expected, rel=1e-5)


def test_an_index_builds_without_usage_and_with_empty_fields():
    index = S.build_index([entry("lib.f"), entry("lib.g", doc="Sort the list.")], {"built": "now"})
    assert index.uses == {"last": [0, 0], "pair": [0, 0], "parent": [0, 0]}
    assert [h.name for h in index.search("sort list", 5)] == ["lib.g"]


# ----------------------------------------------------------------------------- on disk
def built(usage: dict | None = None):
    entries = [
        entry("lib", "module", doc="A library.", module="lib"),
        entry("lib.sort_list", doc="Sort a list — in place.", signature="(items, *, key=None)", module="lib"),
        entry("lib.Box.open", "method", doc="Open the box.", signature="(self)", module="lib"),
    ]
    usage = {"last": {"sort_list": 3}, "pair": {"lib.sort_list": 2, "lib.Box": 4}} if usage is None else usage
    return entries, usage, S.build_index(entries, {"n_entries": 3, "note": "naïve"}, usage)


def test_a_saved_index_loads_back_the_same_and_keeps_its_raw_entries(tmp_path):
    entries, usage, index = built()
    path = tmp_path / "cache" / "search" / "pydoc-x"  # as ~/.cache/agentic_rl/search on a fresh machine
    S.save_index(index, path, entries, usage)
    assert index.path == path
    loaded = S.load_index(path)
    for attr in ("names", "kinds", "signatures", "docs", "depths", "uses", "meta"):
        assert getattr(loaded, attr) == getattr(index, attr), attr
    assert loaded.uses["pair"] == [0, 2, 0] and loaded.uses["parent"] == [0, 0, 4]
    assert loaded.path == path and set(loaded.retrievers) == set(index.retrievers)
    assert [h.name for h in loaded.search("sort list", 3)] == [h.name for h in index.search("sort list", 3)]
    assert S.load_raw(path) == (entries, usage)
    assert S.dir_size(path) == sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) > 0


def test_raw_entries_are_written_only_when_given_and_no_usage_reads_back_empty(tmp_path):
    entries, _, index = built(usage={})
    S.save_index(index, tmp_path / "a")
    assert not (tmp_path / "a" / "raw.json").exists()
    S.save_index(index, tmp_path / "b", entries, None)
    assert S.load_raw(tmp_path / "b") == (entries, {})


def test_saving_where_an_index_already_is_keeps_it_and_leaves_no_temporary_folder(tmp_path):
    entries, usage, index = built()
    S.save_index(index, tmp_path / "idx", entries, usage)
    S.save_index(index, tmp_path / "idx", entries, usage)  # another process got there first
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]
    assert S.load_index(tmp_path / "idx").names == index.names


def test_a_failed_save_leaves_nothing_behind(tmp_path):
    entries, usage, index = built()
    entries.append({"name": object()})  # not JSON: raw.json fails
    with pytest.raises(TypeError):
        S.save_index(index, tmp_path / "idx", entries, usage)
    assert list(tmp_path.iterdir()) == []
