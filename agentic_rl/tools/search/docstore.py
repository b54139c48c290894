"""`docstore` search backend: a small hand-written API store ranked by keyword counting.

This is the notebook-style baseline kept for the search ablation: no dependencies, no index, no
knowledge of what is installed. Scoring per query word: +3 if it occurs in the API's own name,
+2 if it occurs in its module path, +1 if it occurs in its doc; an exact (alias-expanded) name match
ranks first.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from agentic_rl.tools.search import SearchHit
from agentic_rl.tools.search.docstore_data import ENTRIES
from agentic_rl.tools.search.text import expand_alias

log = logging.getLogger(__name__)

_WORD_RE = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class _Entry:
    name: str
    signature: str
    doc: str
    short: str  # last component, lowercased
    module: str  # everything before it, lowercased
    doc_lower: str


class DocstoreBackend:
    """Keyword search over `docstore_data.ENTRIES` (or the given entries)."""

    def __init__(
        self, entries: tuple[tuple[str, str, str], ...] | list | None = None, dense: str | None = None
    ) -> None:
        # `dense` is accepted so that `tools.search.backend=docstore` works with the config's backend_options
        # (conf/tool/search.yaml turns the pydoc backend's dense model on); keyword counting has no use for it
        if dense:
            log.info("search: the docstore backend ranks by keywords; dense model %r not used", dense)
        self.entries = [
            _Entry(
                name,
                sig,
                doc,
                name.rsplit(".", 1)[-1].lower(),
                name.rsplit(".", 1)[0].lower() if "." in name else "",
                doc.lower(),
            )
            for name, sig, doc in (entries if entries is not None else ENTRIES)
        ]
        self._by_name = {e.name: i for i, e in enumerate(self.entries)}

    def __len__(self) -> int:
        return len(self.entries)

    def search(self, query: str, k: int) -> list[SearchHit]:
        query = (query or "").strip()
        if not query or k < 1:
            return []
        words = [w for w in _WORD_RE.findall(query.lower()) if len(w) >= 2][:64]
        exact = self._by_name.get(expand_alias(query.strip("`'\" ?").removesuffix("()")))
        scored = []
        for i, e in enumerate(self.entries):
            score = 0.0
            for w in words:
                if w in e.short:
                    score += 3
                if w in e.module:
                    score += 2
                if w in e.doc_lower:
                    score += 1
            if i == exact:
                score += 100
            if score > 0:
                scored.append((score, i))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [
            SearchHit(self.entries[i].name, self.entries[i].signature, self.entries[i].doc, s) for s, i in scored[:k]
        ]
