"""The process memory observables `memory/peak_rss_gib` and `memory/rss_gib`."""
from __future__ import annotations

import sys

import pytest

from agentic_rl.runtime.memory import GIB, memory_metrics, peak_rss_gib, rss_gib

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")


@linux_only
def test_metrics_report_the_current_rss_below_the_peak():
    metrics = memory_metrics()
    assert set(metrics) == {"memory/peak_rss_gib", "memory/rss_gib"}
    # a Python interpreter with pytest loaded holds over 10 MiB, and far less than a TiB
    assert 0.01 < metrics["memory/rss_gib"] <= metrics["memory/peak_rss_gib"] + 0.001 < 1024


@linux_only
def test_peak_rises_when_the_process_touches_more_memory_than_ever_before():
    now, peak = rss_gib(), peak_rss_gib()
    grow = peak - now + 0.25  # enough to pass the old high-water mark by a quarter GiB
    block = bytearray(int(grow * GIB))  # zero-filled, so every page is touched
    try:
        assert peak_rss_gib() >= now + grow - 0.05
    finally:
        del block


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_release_free_memory_returns_freed_heap_pages_to_the_system():
    from agentic_rl.runtime.memory import release_free_memory

    # ~300 MiB in 2 KiB heap blocks (below the mmap threshold, above Python's small-object allocator), then all
    # freed but the last one, which pins the heap's top: glibc keeps the freed pages resident
    blocks = [bytes(2048) for _ in range(150_000)]
    pin = blocks[-1]
    del blocks
    before = rss_gib()
    if not release_free_memory():
        pytest.skip("not glibc: nothing to trim")
    assert before - rss_gib() > 0.15, "the freed blocks' pages should leave the resident set"
    assert pin == bytes(2048)  # live data is untouched
