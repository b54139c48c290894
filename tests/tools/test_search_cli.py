"""`python -m agentic_rl.tools.search`: which options reach which backend, the hit count, and the output formats.

The pydoc backend is replaced by a recorder (the registry loads it by name on each call), so these run without an
index."""

from __future__ import annotations

import json

import pytest

from agentic_rl.tools.search import SearchHit, format_hits
from agentic_rl.tools.search import pydoc_backend as P
from agentic_rl.tools.search.__main__ import DEFAULT_DENSE_MODEL, main

HITS = [
    SearchHit("pkg.café", "(x)", "Naïve doc. " * 40, 2.0),  # 440 characters of doc: more than the tool shows
    SearchHit("pkg.other", "", "Short.", 1.0),
    SearchHit("pkg.third", "()", "Third.", 0.5),
    SearchHit("pkg.fourth", "()", "Fourth.", 0.25),
]


@pytest.fixture
def recorded(monkeypatch):
    """The options the CLI built the pydoc backend with, and the (query, k) of each search."""
    seen: dict = {"options": None, "searches": []}

    class Recorder:
        def __init__(self, **options):
            seen["options"] = options

        def search(self, query, k):
            seen["searches"].append((query, k))
            return HITS[:k]

    monkeypatch.setattr(P, "PydocBackend", Recorder)
    return seen


def test_pydoc_options_reach_the_backend_and_the_query_is_the_words_joined(recorded, capsys):
    argv = ["json", "loads", "--cache-dir", "C", "--modules", "a, b,", "--python", "py", "--rebuild"]
    assert main(argv) == 0
    assert recorded["options"] == {
        "python": "py",
        "cache_dir": "C",
        "modules": ["a", "b"],
        "rebuild": True,
        "dense": DEFAULT_DENSE_MODEL,
    }
    assert recorded["searches"] == [("json loads", 3)]  # three hits by default, as the tool


@pytest.mark.parametrize("dense", ["none", "None"])
def test_dense_none_leaves_the_backend_lexical(recorded, dense):
    assert main(["q", "--dense", dense]) == 0
    assert recorded["options"] == {}


def test_the_docstore_backend_takes_no_pydoc_options(capsys):
    assert main(["heap push", "--backend", "docstore", "--cache-dir", "C", "--rebuild", "--json", "--k", "1"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["name"] == "heapq.heappush"


def test_k_must_be_at_least_one(recorded, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["q", "--k", "0"])
    assert exit_.value.code == 2 and "--k must be >= 1" in capsys.readouterr().err
    assert main(["q", "--k", "1"]) == 0 and recorded["searches"] == [("q", 1)]


def test_plain_output_shows_whole_docs_and_json_keeps_unicode(recorded, capsys):
    assert main(["q", "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert out == format_hits(HITS[:2], max_doc_chars=len(HITS[0].doc)) + "\n"  # not cut at the tool's 300
    assert main(["q", "--json", "--k", "1"]) == 0
    line = capsys.readouterr().out.strip()
    assert '"name": "pkg.café"' in line and json.loads(line)["doc"] == HITS[0].doc


def test_the_observation_is_what_the_agent_sees(recorded, capsys):
    assert main(["q", "--observation", "--dense", "none"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<doc_result>\n[pkg.café(x)]\n") and "[pkg.third()]" in out and "pkg.fourth" not in out
