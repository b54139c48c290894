"""Needs: for commonly used APIs, short phrases in the words people use when they need one but do not
know its name ("count how often each value occurs" for `pandas.Series.value_counts`).

Docstrings say what an API is ("Return a Series containing counts of unique values"); queries say what
the user wants done. The phrases, hand-written per API in `needs/*.txt` (one line per API:
`qualified.name: phrase; phrase; ...`), bridge the two. They were written from knowledge of the
libraries, without looking at any query set or evaluation data.

`NeedsMatcher` scores the entries of one index: BM25 over the phrases (each phrase its own document),
and, when the index has a dense model, the cosine between the query and each phrase. An entry scores
its best phrase. Entries the interpreter does not have are skipped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentic_rl.tools.search import text as T
from agentic_rl.tools.search.bm25 import import_bm25s

NEEDS_DIR = Path(__file__).with_name("needs")
_LINE_RE = re.compile(r"^([A-Za-z_][\w.]*):\s+(\S.*)$")


def load_needs(folder: str | Path = NEEDS_DIR) -> dict[str, tuple[str, ...]]:
    """name -> phrases, from every `*.txt` in `folder` (sorted by file name). `#` starts a comment line."""
    needs: dict[str, tuple[str, ...]] = {}
    for path in sorted(Path(folder).glob("*.txt")):
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            match = _LINE_RE.match(line)
            if not match:
                raise ValueError(f"{path}:{number}: expected 'qualified.name: phrase; phrase; ...', got {line[:80]!r}")
            name, text = match.groups()
            if name in needs:
                raise ValueError(f"{path}:{number}: {name} is listed twice; put all its phrases on one line")
            phrases = tuple(p.strip() for p in text.split(";") if p.strip())
            if not phrases:
                raise ValueError(f"{path}:{number}: {name} has no phrase after the colon")
            needs[name] = phrases
    return needs


class NeedsMatcher:
    """Per-entry scores of a query against the needs of the entries one index holds."""

    def __init__(self, needs: Mapping[str, Sequence[str]], by_name: Mapping[str, int], n_entries: int) -> None:
        import numpy as np

        self.n_entries = n_entries
        self.phrases: list[str] = []
        entry_of: list[int] = []
        docs: list[list[str]] = []
        for name, phrases in needs.items():
            index = by_name.get(name)
            if index is None:
                continue  # not installed for this interpreter
            for phrase in phrases:
                tokens = T.prose_tokens(phrase)
                if tokens:
                    self.phrases.append(phrase)
                    entry_of.append(index)
                    docs.append(tokens)
        self.entry_of = np.asarray(entry_of, dtype=np.int64)
        self.retriever = None
        self.vocab: dict[str, int] = {}
        if docs:
            self.retriever = import_bm25s().BM25(k1=1.2, b=0.75)
            self.retriever.index(docs, show_progress=False)
            self.vocab = self.retriever.vocab_dict
        self.dense: Any = None  # dense.DenseScorer over self.phrases, attached by the backend

    def __len__(self) -> int:
        return len(self.phrases)

    @property
    def fingerprint(self) -> str:
        """Names the phrase set (what a stored phrase matrix was encoded from)."""
        return hashlib.sha256("\n".join(self.phrases).encode()).hexdigest()[:16]

    def _best_per_entry(self, per_phrase: Any) -> Any:
        import numpy as np

        out = np.zeros(self.n_entries, dtype=np.float32)
        if len(per_phrase):
            np.maximum.at(out, self.entry_of, np.asarray(per_phrase, dtype=np.float32))
        return out

    def lexical(self, weighted_tokens: Sequence[tuple[Sequence[str], float]]) -> Any:
        """Each entry's best phrase BM25, summed over (tokens, weight) groups (the query's own
        words, its expansion synonyms)."""
        import numpy as np

        per_phrase = np.zeros(len(self.phrases), dtype=np.float32)
        if self.retriever is not None:
            for tokens, weight in weighted_tokens:
                ids = [self.vocab[t] for t in tokens if t in self.vocab]
                if ids and weight:
                    per_phrase += weight * self.retriever.get_scores_from_ids(ids)
        return self._best_per_entry(per_phrase)

    def cosine(self, query: str) -> Any:
        """Each entry's best phrase cosine under the dense model (zeros without one)."""
        import numpy as np

        if self.dense is None or not len(self.phrases):
            return np.zeros(self.n_entries, dtype=np.float32)
        return self._best_per_entry(self.dense.scores(query))
