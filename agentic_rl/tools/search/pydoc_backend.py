"""`pydoc` search backend: the public API of the libraries installed in the sandbox, ranked by BM25.

`PydocBackend` finds the index for its interpreter and module list, or builds it, and attaches the needs and
the dense model; searching is the index's (`pydoc_index.py`, weights in `ranking.py`). The index is built by
running `introspect.py` (standard library only) with the sandbox's interpreter (`python` option, else env
AGENTIC_RL_SANDBOX_PYTHON, else this interpreter; `interpreter.py`), so the model reads the docs of exactly the
versions its code will run against. It is cached on disk (`pydoc_store.py`) under `cache_dir` (option) or
`$AGENTIC_RL_CACHE_DIR/search` or `~/.cache/agentic_rl/search`, keyed by the interpreter, its version, the
versions (and install stamps) of the indexed packages, the module list and the walk options; a changed package
therefore means a rebuild, and a warm load takes well under a second.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentic_rl.paths import resolve_python
from agentic_rl.tools.search import SearchHit
from agentic_rl.tools.search import text as T
from agentic_rl.tools.search.interpreter import (
    INTROSPECT_PATH,
    default_cache_dir,
    run_introspect,
    version_key,
)
from agentic_rl.tools.search.needs import NeedsMatcher, load_needs
from agentic_rl.tools.search.pydoc_index import PydocIndex
from agentic_rl.tools.search.pydoc_modules import DEFAULT_EXCLUDE, DEFAULT_MODULES, STDLIB_MODULES
from agentic_rl.tools.search.pydoc_store import build_index, dir_size, entry_uses, load_index, load_raw, save_index
from agentic_rl.tools.search.ranking import DEFAULT_RANKING, Ranking, ranking_with

log = logging.getLogger(__name__)

INDEX_FORMAT = 7  # bump when the on-disk layout or the tokenisation changes
# Read as their name when counting dotted uses in source code (pd.read_csv is pandas.read_csv).
USAGE_ALIASES = {alias: name for alias, name in T.DOTTED_ALIASES.items()}
_DENSE_WARNED: set[str] = set()  # reasons a dense model was unavailable, each warned once per process
# The index's parts, importable from here as before (the benchmark and the tests use them).
__all__ = [
    "DEFAULT_EXCLUDE",
    "DEFAULT_MODULES",
    "DEFAULT_RANKING",
    "INTROSPECT_PATH",
    "STDLIB_MODULES",
    "PydocBackend",
    "PydocIndex",
    "Ranking",
    "build_index",
    "default_cache_dir",
    "entry_uses",
    "load_index",
    "load_raw",
    "ranking_with",
    "resolve_python",
    "version_key",
]


class PydocBackend:
    """Search the introspected API of `modules` as installed for the sandbox interpreter.

    dense: name of a packaged sentence-embedding model (`dense.MODELS`), or None (lexical only). What it
        encodes follows the ranking: the needs' phrases (needs_dense_weight > 0, the default) and the
        entries (dense_weight > 0), each once per index and model, stored in the index folder.
    dense_threads: torch threads while encoding (1: on two shared cores two threads ran up to ten
        times slower under load, and a query costs about 10 ms on one thread); None: torch's setting.
    ranking: overrides of `Ranking`'s weights, e.g. {dense_weight: 8.0}.
    """

    def __init__(
        self,
        python: str | None = None,
        modules: Sequence[str] | None = None,
        extra_modules: Sequence[str] = (),
        exclude: Sequence[str] | None = None,
        cache_dir: str | os.PathLike | None = None,
        rebuild: bool = False,
        max_depth: int = 0,
        max_entries_per_module: int = 6000,
        max_members_per_class: int = 500,
        module_timeout_s: float = 60.0,
        build_timeout_s: float = 900.0,
        dense: str | None = None,
        dense_threads: int | None = 1,
        needs: bool = True,
        ranking: dict[str, Any] | None = None,
    ) -> None:
        self.python = resolve_python(python)
        mods = list(modules if modules is not None else DEFAULT_MODULES) + list(extra_modules)
        self.modules = list(dict.fromkeys(str(m) for m in mods))
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self.walk_options = {
            "exclude": list(exclude if exclude is not None else DEFAULT_EXCLUDE),
            "max_depth": int(max_depth),
            "max_entries_per_module": int(max_entries_per_module),
            "max_members_per_class": int(max_members_per_class),
            "module_timeout_s": float(module_timeout_s),
        }
        self.build_timeout_s = float(build_timeout_s)
        self.ranking = ranking_with(ranking)
        self.built = False  # True when this instance built the index rather than loading it
        self.build_seconds = 0.0
        self.load_seconds = 0.0
        self.dense_seconds = 0.0  # time spent encoding the entries (0 when the matrix was cached)
        self.index = self._load_or_build(rebuild)
        self.index.set_ranking(self.ranking)
        if needs:
            self.index.needs = NeedsMatcher(load_needs(), self.index.by_name, len(self.index))
        if dense:
            self._attach_dense(dense, dense_threads)

    # ----------------------------------------------------------------- caching
    def cache_key(self) -> tuple[str, dict[str, Any]]:
        fingerprint = version_key(self.python, self.modules)
        source = INTROSPECT_PATH.read_bytes() + Path(T.__file__).read_bytes()
        payload = {
            "format": INDEX_FORMAT,
            "code": hashlib.sha256(source).hexdigest()[:16],
            "python": self.python,
            "fingerprint": fingerprint,
            "modules": self.modules,
            "options": self.walk_options,
        }
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:20]
        return digest, payload

    def _load_or_build(self, rebuild: bool) -> PydocIndex:
        start = time.perf_counter()
        key, payload = self.cache_key()
        path = self.cache_dir / f"pydoc-{key}"
        if not rebuild and (path / "meta.json").exists():
            try:
                index = load_index(path)
                self.load_seconds = time.perf_counter() - start
                log.debug("search: loaded %d entries from %s in %.2fs", len(index), path, self.load_seconds)
                return index
            except Exception as exc:  # a damaged cache is rebuilt, not fatal
                log.warning("search: cached index at %s is unreadable (%s); rebuilding", path, exc)
                shutil.rmtree(path, ignore_errors=True)
        elif rebuild and path.exists():
            shutil.rmtree(path, ignore_errors=True)
        index = self._build(payload)
        self.build_seconds = time.perf_counter() - start
        index.meta["build_seconds"] = round(self.build_seconds, 3)
        save_index(index, path, *self._raw)
        self.built = True
        log.info("search: built pydoc index of %d entries in %.1fs -> %s", len(index), self.build_seconds, path)
        return index

    def _build(self, payload: dict[str, Any]) -> PydocIndex:
        cfg = {"modules": self.modules, "usage_aliases": USAGE_ALIASES, **self.walk_options}
        result = run_introspect(self.python, "build", cfg, self.build_timeout_s)
        statuses = result.get("modules", {})
        warned_roots: set[str] = set()
        for name, st in statuses.items():
            if st.get("status") == "absent":
                root = name.split(".")[0]
                if root not in warned_roots:  # one line per missing package
                    warned_roots.add(root)
                    log.warning("search: %s is not installed for %s; not indexed", root, self.python)
            elif st.get("status") != "ok":
                log.warning("search: indexing %s: %s %s", name, st.get("status"), st.get("error", ""))
        meta = {
            "key": payload,
            "modules": statuses,
            "python_version": result.get("version"),
            "n_entries": len(result.get("entries", [])),
            "built_at": time.time(),
            "usage_bytes": (result.get("usage") or {}).get("bytes", 0),
        }
        self._raw = (result.get("entries", []), result.get("usage") or {})
        return build_index(*self._raw[:1], meta, self._raw[1])

    def _attach_dense(self, name: str, threads: int | None) -> None:
        """The dense model's scorers this ranking uses: the entries' (when `dense_weight` > 0; every entry
        encoded once, minutes) and the needs' phrases' (when `needs_dense_weight` > 0; seconds). Each matrix
        is stored next to the index. Without the model's package: one warning per process and reason, and
        the lexical ranking works alone."""
        from agentic_rl.tools.search import dense as D

        D.model_spec(name)  # an unknown name is a config error, not a missing package
        encoded = False
        try:
            if self.ranking.dense_weight:
                # `_load_or_build` either loads the index from its folder or saves it there
                assert self.index.path is not None, "the pydoc index has no folder to keep its dense matrix in"
                texts = [D.entry_text(n, d) for n, d in zip(self.index.names, self.index.docs)]
                start = time.perf_counter()
                self.index.dense, encoded_entries = D.load_or_encode(self.index.path, name, texts, threads=threads)
                if encoded_entries:
                    self.dense_seconds = time.perf_counter() - start
                    log.info("search: encoded %d entries with %s in %.1fs", len(texts), name, self.dense_seconds)
                encoded |= encoded_entries
            needs = self.index.needs
            if needs is not None and self.ranking.needs_dense_weight:
                folder = (self.index.path or self.cache_dir) / f"needs-{needs.fingerprint}"
                needs.dense, encoded_needs = D.load_or_encode(folder, name, needs.phrases, threads=threads)
                if encoded_needs:
                    log.info("search: encoded %d need phrases with %s", len(needs), name)
                encoded |= encoded_needs
        except (D.DenseModelMissing, ImportError) as exc:
            if str(exc) not in _DENSE_WARNED:
                _DENSE_WARNED.add(str(exc))
                log.warning("search: dense model %r unavailable (%s); ranking lexically", name, exc)
            return
        if encoded:  # the weights come back at the first search; a run that never searches does not hold them
            D.shared_encoder(name).unload()

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int) -> list[SearchHit]:
        return self.index.search(query, k)

    def __len__(self) -> int:
        return len(self.index)

    def disk_bytes(self) -> int:
        return dir_size(self.index.path) if self.index.path else 0
