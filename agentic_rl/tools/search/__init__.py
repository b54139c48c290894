"""The documentation search tool: `<search>query</search>` -> `<doc_result>...</doc_result>`.

Backends are looked up by name in `BACKENDS` (config: `tools.search.backend`), the "search_backend" registry:
the built-ins (pydoc, docstore) are listed in `agentic_rl.registry.BUILTINS`, others come from entry points.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agentic_rl.data.toolworld.library import task_library
from agentic_rl.registry import Registry
from agentic_rl.tools.base import Tool, ToolSpec
from agentic_rl.types import Observation, Task, ToolCall


@dataclass(frozen=True)
class SearchHit:
    name: str  # fully qualified, e.g. "collections.Counter.most_common"
    signature: str  # e.g. "(self, n=None)"; "" when not callable
    doc: str  # first lines of the docstring
    score: float


class SearchBackend(Protocol):
    def search(self, query: str, k: int) -> list[SearchHit]: ...


# name -> factory(**backend_options) -> SearchBackend
BACKENDS: Registry[Callable[..., SearchBackend]] = Registry("search backend")

NO_RESULTS = "No documentation found. Try other keywords or an exact name such as collections.Counter."


def format_hits(hits: list[SearchHit], max_doc_chars: int = 300) -> str:
    """Each hit as `[qualified.name(signature)]` and the first lines of its doc (cut at max_doc_chars)."""
    if not hits:
        return NO_RESULTS
    blocks = []
    for hit in hits:
        doc = hit.doc if len(hit.doc) <= max_doc_chars else hit.doc[:max_doc_chars] + "..."
        blocks.append(f"[{hit.name}{hit.signature}]\n{doc}".rstrip())
    return "\n\n".join(blocks)


class SearchTool(Tool):
    spec = ToolSpec(
        name="search",
        call_pattern=re.compile(r"<search>(.*?)</search>", re.DOTALL),
        result_tag="doc_result",
        counts_toward_cap=True,
        needs=("index",),  # built or loaded from the cache by the backend when the tool is made
        description=(
            "Search documentation: look up an API you are unsure about.\n"
            "Format: <search>your query</search>\n"
            "Example: <search>collections Counter most_common</search>"
        ),
    )

    def __init__(
        self,
        backend: str = "docstore",
        k: int = 3,
        max_chars: int = 800,
        max_doc_chars: int = 300,
        backend_options: dict | None = None,
    ) -> None:
        super().__init__(max_chars)
        if k < 1:
            raise ValueError(f"tools.search.k must be >= 1, got {k}")
        self.k = k
        self.max_doc_chars = max_doc_chars
        self.backend_name = backend
        self._factory = BACKENDS.get(backend)  # an unknown name fails here, when the tool is built
        self._options = dict(backend_options or {})
        self._backend: SearchBackend | None = None

    @property
    def backend(self) -> SearchBackend:
        """The configured backend, built at its first use: a run whose tasks all bring their own library's
        documentation (the tool world) never builds the pydoc index (minutes on a fresh machine)."""
        if self._backend is None:
            self._backend = self._factory(**self._options)
        return self._backend

    def backend_for(self, task: Task) -> SearchBackend:
        """The task's own library's documentation where it has one, else the configured backend."""
        library = task_library(task)
        if library is None:
            return self.backend
        # imported here: the library backend imports this module's SearchHit (and the index's numpy and bm25s,
        # which a docstore search must not need)
        from agentic_rl.tools.search.library import library_backend

        return library_backend(library)

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        start = time.perf_counter()
        query = call.content.strip()
        try:
            hits = self.backend_for(task).search(query, self.k) if query else []
            body, ok, status = format_hits(hits, self.max_doc_chars), True, "ok"
        except Exception as exc:  # a backend failure is an observation, never a crashed run
            body, ok, status = f"search failed: {type(exc).__name__}: {exc}", False, "error"
        return self.observation(body, start=start, ok=ok, status=status)
