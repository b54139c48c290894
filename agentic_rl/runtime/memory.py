"""The process's own memory, as a run logs it.

`memory_metrics()` gives `memory/peak_rss_gib` (the high-water mark of this process's resident set since it
started, `getrusage`'s ru_maxrss: what `/usr/bin/time -v` reports as "Maximum resident set size") and
`memory/rss_gib` (the resident set now, Linux only). Logged after every training step and evaluation, the pair
shows which phase sets the peak, and how much memory stays resident between phases (glibc keeps freed heap
memory for reuse rather than returning it to the system).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import os
import resource
import sys
from collections.abc import Callable

GIB = 2**30


def peak_rss_gib() -> float:
    """Highest resident set size of this process so far, in GiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / GIB if sys.platform == "darwin" else peak * 1024 / GIB  # bytes on macOS, KiB elsewhere


def rss_gib() -> float | None:
    """Resident set size of this process now, in GiB; None where /proc is not available."""
    try:
        with open("/proc/self/statm") as f:
            resident_pages = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / GIB


def memory_metrics() -> dict[str, float]:
    """`memory/peak_rss_gib` and (on Linux) `memory/rss_gib`, rounded to MiB."""
    out = {"memory/peak_rss_gib": round(peak_rss_gib(), 3)}
    if (now := rss_gib()) is not None:
        out["memory/rss_gib"] = round(now, 3)
    return out


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library is not glibc (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def trim_heap() -> bool:
    """Hand the heap's free pages back to the system (glibc's `malloc_trim`, no garbage collection: cheap enough to
    call between an update's micro-batches); True if trimmed, False where there is no glibc."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def release_free_memory() -> bool:
    """Collect garbage and hand the heap's free pages back to the system (glibc's `malloc_trim`); True if trimmed.

    Called between phases: before each evaluation, each training rollout batch and its update. Each phase frees
    up to gigabytes (decode buffers, caches, activations) in sizes the next phase does not reuse, and glibc keeps
    that memory resident, so without it the next phase's peak stacks on top. Values in memory do not change,
    only which pages stay resident. Costs about 0.1 s. Elsewhere (macOS, musl) it only collects.
    """
    gc.collect()
    return trim_heap()
