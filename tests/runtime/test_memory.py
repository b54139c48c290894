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
