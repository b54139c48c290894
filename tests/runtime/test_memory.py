"""The process memory observables (`memory/peak_rss_gib`, `memory/rss_gib`) and handing freed heap back."""
from __future__ import annotations

import ctypes.util
import sys

import pytest

from agentic_rl.runtime.memory import GIB, memory_metrics, peak_rss_gib, release_freed_memory, rss_gib

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")


@linux_only
def test_metrics_report_the_current_rss_below_the_peak():
    metrics = memory_metrics()
    assert set(metrics) == {"memory/peak_rss_gib", "memory/rss_gib"}
    # a Python process with torch imported holds well over 10 MiB and far less than the machine's memory
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


@pytest.mark.skipif(not sys.platform.startswith("linux") or ctypes.util.find_library("c") is None
                    or "musl" in (ctypes.util.find_library("c") or ""), reason="malloc_trim is glibc's")
def test_release_hands_back_freed_heap_that_glibc_keeps_below_a_live_block():
    # 100 KiB blocks sit inside the heap (below glibc's mmap threshold); the last one stays alive, so glibc
    # cannot shrink the heap from the top and keeps the freed pages resident until malloc_trim
    blocks = [bytes(100 * 1024) for _ in range(3000)]
    pinned = blocks[-1]
    del blocks
    before = rss_gib()
    assert release_freed_memory() is True
    assert rss_gib() < before - 0.1  # about 0.29 GiB were freed
    assert len(pinned) == 100 * 1024
