"""The process's own memory: what a run logs about it, and handing freed memory back to the system.

`memory_metrics()` gives `memory/peak_rss_gib` (the high-water mark of this process's resident set since it
started, `getrusage`'s ru_maxrss: what `/usr/bin/time -v` reports as "Maximum resident set size") and
`memory/rss_gib` (the resident set now, Linux only). Logged after every training step and evaluation, the pair
shows which phase sets the peak and whether memory freed by one phase is handed back before the next.

`release_freed_memory()`: glibc keeps memory that Python and PyTorch have freed in its heaps instead of
returning it to the system, as long as a later allocation still sits above it; a rollout frees thousands of
megabyte-sized KV-cache tensors at once, so the next phase would otherwise start from the old high-water mark.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
import resource
import sys

logger = logging.getLogger(__name__)

GIB = 2 ** 30


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


@functools.lru_cache(maxsize=None)
def _malloc_trim() -> "ctypes._NamedFuncPointer | None":
    """glibc's malloc_trim, or None on another C library (musl, macOS), which has no such call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_freed_memory() -> bool:
    """Return the free pages of glibc's heaps to the system (malloc_trim(0)); False where that is unavailable.

    Costs a few milliseconds; call it after a phase that freed a lot (a rollout, an update), not per token.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
