"""`PydocBackend` with the introspection replaced by canned results: what it asks the sandbox interpreter for, when
it builds, loads or rebuilds its cached index, what it records and warns about. The real introspection is tested in
`test_search_introspect.py` (in this process) and `test_search.py` (in a subprocess)."""

from __future__ import annotations

import logging
import sys
import time

import pytest

pytest.importorskip("bm25s")  # a declared dependency; the pydoc index needs it

from agentic_rl.tools.search import pydoc_backend as P  # noqa: E402

ENTRIES = [
    {"name": "toy", "module": "toy", "kind": "module", "signature": "", "doc": "A toy.", "extra": ""},
    {"name": "toy.sort_list", "module": "toy", "kind": "function", "signature": "(items)", "doc": "Sort a list."},
    {"name": "toy.Box.open", "module": "toy", "kind": "method", "signature": "(self)", "doc": "Open the box."},
]
USAGE = {"last": {"sort_list": 5}, "pair": {"toy.sort_list": 3, "toy.Box": 2}, "bytes": 1234}


class FakeInterpreter:
    """Stands in for `run_introspect` and `version_key`: records the build requests, answers with ENTRIES."""

    def __init__(self) -> None:
        self.builds: list[tuple[str, dict, float]] = []
        self.fingerprint = {"toy": {"version": "1.0"}}
        self.statuses = {"toy": {"status": "ok", "entries": 3}}

    def run_introspect(self, python, mode, cfg, timeout):
        assert mode == "build"
        self.builds.append((python, cfg, timeout))
        return {"entries": ENTRIES, "usage": USAGE, "modules": self.statuses, "version": "3.99.0 (toy)"}

    def version_key(self, python, modules):
        return {"python": python, "modules": list(modules), "fingerprint": self.fingerprint}


@pytest.fixture
def fake(monkeypatch) -> FakeInterpreter:
    interp = FakeInterpreter()
    monkeypatch.setattr(P, "run_introspect", interp.run_introspect)
    monkeypatch.setattr(P, "version_key", interp.version_key)
    return interp


def test_the_first_backend_builds_with_the_default_walk_and_the_next_loads(fake, tmp_path):
    start = time.perf_counter()
    first = P.PydocBackend(python=sys.executable, modules=["toy"], cache_dir=tmp_path)
    first_took = time.perf_counter() - start
    assert fake.builds == [
        (
            sys.executable,
            {
                "modules": ["toy"],
                "usage_aliases": P.USAGE_ALIASES,
                "exclude": list(P.DEFAULT_EXCLUDE),
                "max_depth": 0,
                "max_entries_per_module": 6000,
                "max_members_per_class": 500,
                "module_timeout_s": 60.0,
            },
            900.0,
        )
    ]
    assert first.built and 0 < first.build_seconds <= first_took
    assert first.load_seconds == 0.0 and first.dense_seconds == 0.0
    assert first.index.meta["build_seconds"] == round(first.build_seconds, 3)
    assert first.index.needs is not None  # the hand-written needs are on by default
    assert len(first) == 3 and first.search("sort list", 1)[0].name == "toy.sort_list"
    start = time.perf_counter()
    second = P.PydocBackend(python=sys.executable, modules=["toy"], cache_dir=tmp_path)
    second_took = time.perf_counter() - start
    assert len(fake.builds) == 1  # loaded, not built
    assert not second.built and second.build_seconds == 0.0 and 0 < second.load_seconds <= second_took
    assert second.index.path == first.index.path
    assert second.disk_bytes() == P.dir_size(first.index.path) > 0


def test_what_an_index_records_of_its_build(fake, tmp_path):
    backend = P.PydocBackend(python=sys.executable, modules=["toy"], cache_dir=tmp_path, needs=False)
    meta = backend.index.meta
    key, payload = backend.cache_key()
    assert meta["key"] == payload and meta["modules"] == fake.statuses and meta["n_entries"] == 3
    assert meta["python_version"] == "3.99.0 (toy)" and meta["usage_bytes"] == 1234
    assert backend.index.uses == P.entry_uses(ENTRIES, USAGE)  # the usage counts reach the prior
    assert P.load_raw(backend.index.path) == (ENTRIES, USAGE)
    assert backend.index.needs is None


def test_usage_without_a_byte_count_records_none(fake, tmp_path, monkeypatch):
    monkeypatch.setattr(P, "run_introspect", lambda python, mode, cfg, timeout: {"entries": ENTRIES, "modules": {}})
    backend = P.PydocBackend(modules=["toy"], cache_dir=tmp_path, needs=False)
    assert backend.index.meta["usage_bytes"] == 0 and backend.index.meta["python_version"] is None
    assert P.load_raw(backend.index.path) == (ENTRIES, {})


def test_the_needs_phrases_are_encoded_on_one_thread_by_default(fake, tmp_path, monkeypatch):
    from agentic_rl.tools.search import dense as D

    asked: list[int | None] = []

    def load_or_encode(folder, name, texts, threads=None):
        asked.append(threads)
        return object(), False  # a stored matrix: nothing encoded now

    monkeypatch.setattr(D, "load_or_encode", load_or_encode)
    backend = P.PydocBackend(modules=["toy"], cache_dir=tmp_path, dense="all-minilm-l6-v2")
    assert asked == [1] and backend.index.needs.dense is not None
    P.PydocBackend(modules=["toy"], cache_dir=tmp_path, dense="all-minilm-l6-v2", dense_threads=None)
    assert asked == [1, None]
    P.PydocBackend(modules=["toy"], cache_dir=tmp_path, dense="all-minilm-l6-v2", needs=False)  # no needs to encode
    assert asked == [1, None]


def test_module_lists_and_exclusions(fake, tmp_path):
    backend = P.PydocBackend(modules=["toy", "json", "toy"], extra_modules=["heapq", "json"], cache_dir=tmp_path)
    assert backend.modules == ["toy", "json", "heapq"]
    backend = P.PydocBackend(extra_modules=["toy"], exclude=["numpy.ma"], cache_dir=tmp_path, needs=False)
    assert backend.modules == [*P.DEFAULT_MODULES, "toy"]
    assert fake.builds[-1][1]["exclude"] == ["numpy.ma"]


def test_the_cache_key_follows_the_fingerprint_modules_options_and_code(fake, tmp_path):
    def key(**options):
        backend = P.PydocBackend(python=sys.executable, cache_dir=tmp_path, needs=False, **options)
        digest, payload = backend.cache_key()
        assert backend.index.path == tmp_path / f"pydoc-{digest}"  # the index's folder is named by its key
        return digest, payload

    base, payload = key(modules=["toy"])
    assert len(base) == 20 and all(c in "0123456789abcdef" for c in base)
    assert payload["format"] == P.INDEX_FORMAT and payload["modules"] == ["toy"] and len(payload["code"]) == 16
    assert key(modules=["toy"])[0] == base
    assert key(modules=["toy", "json"])[0] != base
    assert key(modules=["toy"], max_depth=1)[0] != base
    fake.fingerprint = {"toy": {"version": "2.0"}}  # the package was upgraded
    assert key(modules=["toy"])[0] != base


def test_rebuild_replaces_the_cached_index(fake, tmp_path):
    first = P.PydocBackend(modules=["toy"], cache_dir=tmp_path, needs=False)
    (first.index.path / "stale.txt").write_text("from an older build")
    again = P.PydocBackend(modules=["toy"], cache_dir=tmp_path, needs=False, rebuild=True)
    assert again.built and len(fake.builds) == 2
    assert not (again.index.path / "stale.txt").exists()


def test_a_damaged_cache_is_rebuilt_with_a_warning(fake, tmp_path, caplog):
    first = P.PydocBackend(modules=["toy"], cache_dir=tmp_path, needs=False)
    (first.index.path / "entries.json").write_text("{not json")
    (first.index.path / "stale.txt").write_text("from the damaged build")
    with caplog.at_level(logging.WARNING, logger="agentic_rl.tools.search.pydoc_backend"):
        again = P.PydocBackend(modules=["toy"], cache_dir=tmp_path, needs=False)
    assert again.built and len(fake.builds) == 2 and again.search("sort list", 1)[0].name == "toy.sort_list"
    assert not (again.index.path / "stale.txt").exists()
    assert any("unreadable" in r.getMessage() for r in caplog.records)


def test_missing_packages_warn_once_per_package_and_failures_once_per_module(fake, tmp_path, caplog):
    fake.statuses = {
        "toy": {"status": "ok", "entries": 3},
        "ghost": {"status": "absent"},
        "ghost.sub": {"status": "absent"},
        "broken": {"status": "error", "error": "ImportError: no"},
        "slow": {"status": "timeout", "error": "gave up"},
    }
    with caplog.at_level(logging.WARNING, logger="agentic_rl.tools.search.pydoc_backend"):
        P.PydocBackend(modules=["toy", "ghost", "ghost.sub", "broken", "slow"], cache_dir=tmp_path, needs=False)
    messages = [r.getMessage() for r in caplog.records]
    assert sum("ghost is not installed" in m for m in messages) == 1
    assert not any("ghost.sub" in m for m in messages)
    assert any("indexing broken: error ImportError: no" in m for m in messages)
    assert any("indexing slow: timeout gave up" in m for m in messages)
    assert not any("indexing toy" in m or "toy is not installed" in m for m in messages)
    assert len(messages) == 3
