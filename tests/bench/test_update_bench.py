"""`python -m agentic_rl.bench.algo`: each setting runs in a process of its own, and the mmap-pinned setting pins
glibc's threshold there (the pin of a vLLM run on a CPU, whose cost on the update the benchmark measures)."""

from __future__ import annotations

import sys

import pytest

from agentic_rl.bench.algo import main

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt(M_MMAP_THRESHOLD) is glibc's")
TINY = ["--model", "tiny-random", "--episodes", "2", "--length", "64", "--model-tokens", "16", "--repeats", "1"]


def test_the_pinned_setting_reports_its_threshold_and_the_default_none():
    rows = main([*TINY, "--setting", "default", "mmap-pinned", "--mmap-threshold-kib", "256"])
    assert [r["setting"] for r in rows] == ["default", "mmap-pinned"]
    assert [r["mmap_threshold_kib"] for r in rows] == [None, 256]
    assert all(r["update_s"] > 0 and r["peak_rss_gib"] >= r["rss_after_load_gib"] for r in rows)


def test_the_pinned_setting_defaults_to_what_auto_pins_for_the_vllm_backend_on_a_cpu():
    from agentic_rl.runtime.memory import MemoryConfig

    rows = main([*TINY, "--setting", "mmap-pinned"])
    assert rows[0]["mmap_threshold_kib"] == MemoryConfig().threshold_kib(engine_shares_heap=True) is not None


def test_the_untrimmed_setting_is_the_default_without_the_micro_batch_trim():
    rows = main([*TINY, "--setting", "untrimmed", "default"])
    assert [(r["setting"], r["trim_heap_each_micro_batch"]) for r in rows] == [("untrimmed", False), ("default", True)]
    assert rows[0]["micro_batch_tokens"] == rows[1]["micro_batch_tokens"]


def test_the_prefix_held_settings_are_the_default_without_the_recompute_and_one_of_them_pinned():
    rows = main([*TINY, "--setting", "prefix-held", "prefix-held-pinned", "default"])
    assert [(r["recompute_prefix"], r["mmap_threshold_kib"]) for r in rows] == [
        (False, None),
        (False, 128),
        (True, None),
    ]
