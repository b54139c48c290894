"""Search over a task's own library: the documentation of a generated library (`agentic_rl.data.toolworld`)
together with the hand-written notes on the standard library (`docstore_data.py`).

A tool-world task names its library in its metadata; `SearchTool` then searches this backend instead of its
configured one, so `tools=multi` works unchanged on the tool world and on real libraries alike. The index is the
pydoc backend's (BM25 over names, signatures and docs, plus each entry's phrases of need matched by BM25 and by
the packaged sentence-embedding model's cosine), built in memory from the entries: a few hundred entries, built
in well under a second; the embedding matrices are cached on disk under the library's digest.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from typing import Any

from agentic_rl.data.toolworld.library import Library
from agentic_rl.paths import cache_root
from agentic_rl.tools.search import SearchHit
from agentic_rl.tools.search.docstore_data import ENTRIES
from agentic_rl.tools.search.needs import NeedsMatcher
from agentic_rl.tools.search.pydoc_store import build_index

log = logging.getLogger(__name__)

DEFAULT_DENSE = "all-minilm-l6-v2"


def library_entries(library: Library, with_stdlib: bool = True) -> list[dict[str, Any]]:
    """The index's entries: the library's functions, then (optionally) the standard-library notes."""
    entries = library.doc_entries()
    if with_stdlib:
        entries += [{"name": n, "kind": "function", "signature": s, "doc": d} for n, s, d in ENTRIES]
    return entries


class LibraryBackend:
    """Search one generated library's documentation (and the standard-library notes)."""

    def __init__(self, library: Library, dense: str | None = DEFAULT_DENSE, with_stdlib: bool = True) -> None:
        entries = library_entries(library, with_stdlib)
        digest = hashlib.sha256(repr(entries).encode()).hexdigest()[:16]
        self.index = build_index(entries, {"library": library.name, "digest": digest})
        needs = {e["name"]: tuple(e["needs"]) + (e["doc"],) for e in entries if e.get("needs")}
        self.index.needs = NeedsMatcher(needs, self.index.by_name, len(self.index))
        if dense:
            self._attach_dense(dense, cache_root() / "search" / f"library-{digest}")

    def _attach_dense(self, name: str, folder: Any) -> None:
        """The needs' cosine under the packaged embedding model; without its package, lexical ranking only."""
        from agentic_rl.tools.search import dense as D

        try:
            self.index.needs.dense, _ = D.load_or_encode(folder, name, self.index.needs.phrases, threads=1)
        except (D.DenseModelMissing, ImportError) as exc:
            log.warning("search: dense model %r unavailable (%s); the library is ranked lexically", name, exc)

    def search(self, query: str, k: int) -> list[SearchHit]:
        return self.index.search(query, k)

    def __len__(self) -> int:
        return len(self.index)


@functools.lru_cache(maxsize=4)
def library_backend(library: Library) -> LibraryBackend:
    """One backend per library per process: every episode of a run shares it."""
    return LibraryBackend(library)
