"""The docstore baseline's keyword count, as its module docstring states it: per query word, +3 in the API's
own name, +2 in its module path, +1 in its doc; an exact (alias-expanded) name ranks first; ties by store order."""

from __future__ import annotations

import pytest

from agentic_rl.tools.search.docstore import DocstoreBackend

ENTRIES = (
    ("collections.Counter", "(iterable)", "Dict subclass for counting hashable objects."),
    ("collections.Counter.most_common", "(self, n=None)", "List the n most common elements."),
    ("json.loads", "(s)", "Deserialize a JSON document."),
    ("os.path.join", "(a, *p)", "Join path components."),
    ("len", "(obj)", "Return the number of items."),
)


@pytest.fixture
def store() -> DocstoreBackend:
    return DocstoreBackend(ENTRIES)


def hits(store: DocstoreBackend, query: str, k: int = 10) -> list[tuple[str, float]]:
    return [(h.name, h.score) for h in store.search(query, k)]


def test_a_word_scores_three_in_the_name_and_two_in_the_module_path(store) -> None:
    assert hits(store, "counter") == [("collections.Counter", 3), ("collections.Counter.most_common", 2)]
    assert hits(store, "js") == [("json.loads", 2 + 1)]  # two letters are a word (a substring of "json")


def test_a_word_in_the_doc_scores_one_and_the_words_add_up(store) -> None:
    assert hits(store, "deserialize") == [("json.loads", 1)]
    assert hits(store, "join path") == [("os.path.join", (3 + 1) + (2 + 1))]


def test_an_exact_name_ranks_first_with_a_hundred_more(store) -> None:
    assert hits(store, "len") == [("len", 103)]  # a name without a module: no module path to match
    assert hits(store, "`json.loads()`")[0] == ("json.loads", 100 + (2 + 1) + 3)


def test_ties_keep_the_store_order_and_k_caps_the_hits(store) -> None:
    assert [n for n, _ in hits(store, "collections")] == ["collections.Counter", "collections.Counter.most_common"]
    assert hits(store, "collections", k=1) == [("collections.Counter", 2)]


@pytest.mark.parametrize(
    "query, k", [("counter", 0), ("counter", -1), ("", 5), ("   ", 5), (None, 5), ("n", 5), ("zzz", 5)]
)
def test_no_hits_for_an_empty_query_no_room_one_letter_or_no_match(store, query, k) -> None:
    assert store.search(query, k) == []


def test_a_query_is_read_for_its_first_64_words(store) -> None:
    assert hits(store, "zz " * 63 + "counter")[0] == ("collections.Counter", 3)
    assert hits(store, "zz " * 64 + "counter") == []


def test_without_entries_the_shipped_store_is_used() -> None:
    from agentic_rl.tools.search.docstore_data import ENTRIES as SHIPPED

    assert len(DocstoreBackend()) == len(SHIPPED) and len(DocstoreBackend(ENTRIES)) == len(ENTRIES)


def test_the_entries_every_search_reads_cannot_be_changed_in_place(store) -> None:
    """One list of entries, built once, serves every search of the backend (and every episode that shares it): an
    entry changed by a caller would change the ranking of all later searches."""
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        store.entries[0].short = "anything"
    assert hits(store, "counter")[0] == ("collections.Counter", 3)
