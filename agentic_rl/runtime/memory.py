"""The process's own memory, as a run logs it.

`memory_metrics()` gives `memory/peak_rss_gib` (the high-water mark of this process's resident set since it
started, `getrusage`'s ru_maxrss: what `/usr/bin/time -v` reports as "Maximum resident set size") and
`memory/rss_gib` (the resident set now, Linux only). Logged after every warm-up step, training step and evaluation,
the pair shows which phase sets the peak, and how much memory stays resident between phases (glibc keeps freed
heap memory for reuse rather than returning it to the system).

`memory.mmap_threshold_kib` (conf/train.yaml, conf/evaluate.yaml; `MemoryConfig`) pins glibc's mmap threshold for
the whole run, whichever backend samples: `apply_memory_config` sets it once, before the model is loaded. It acts on
glibc's malloc only: under `memory.allocator` jemalloc or tcmalloc (agentic_rl.runtime.allocator) nothing is pinned.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
import os
import resource
import sys
from dataclasses import dataclass
from typing import Any, Literal

from agentic_rl.runtime.allocator import AUTO, GLIBC, check_choice, loaded_allocator

GIB = 2**30
ENGINE_MMAP_THRESHOLD_KIB = 128  # `auto` where the sampler's engine shares the heap (glibc's initial threshold, held)
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)

logger = logging.getLogger(__name__)


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
    """`memory/peak_rss_gib` and (on Linux) `memory/rss_gib`, rounded to MiB.

    The peak is never below the resident set now: newer Linux kernels answer getrusage from per-CPU counters that
    lag the exact sum /proc/self/statm reads by up to a few hundred pages, so ru_maxrss alone can read under it.
    """
    now = rss_gib()
    peak = peak_rss_gib() if now is None else max(peak_rss_gib(), now)
    out = {"memory/peak_rss_gib": round(peak, 3)}
    if now is not None:
        out["memory/rss_gib"] = round(now, 3)
    return out


@functools.lru_cache(maxsize=1)
def _glibc() -> Any:
    """The C library where it is glibc (it has `malloc_trim` and `mallopt`), else None (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim, libc.mallopt  # noqa: B018 - musl has neither: the lookup raises AttributeError
    except (OSError, AttributeError):
        return None
    return libc


def trim_heap() -> bool:
    """Hand the heap's free pages back to the system (glibc's `malloc_trim`, no garbage collection: cheap enough to
    call between an update's micro-batches); True if trimmed, False where there is no glibc."""
    libc = _glibc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


def pin_mmap_threshold(kib: int) -> bool:
    """glibc's mmap threshold fixed at `kib` KiB for this process: a freed block at least that large goes back to
    the system at once, and glibc no longer raises the threshold (up to 32 MiB) each time such a block is freed.
    False where the C library is not glibc or refuses."""
    libc = _glibc()
    return bool(libc.mallopt(M_MMAP_THRESHOLD, kib * 1024)) if libc is not None else False


def release_free_memory() -> bool:
    """Collect garbage and hand the heap's free pages back to the system (glibc's `malloc_trim`); True if trimmed.

    Called between phases: before each evaluation, each training rollout batch and its update. Each phase frees
    up to gigabytes (decode buffers, caches, activations) in sizes the next phase does not reuse, and glibc keeps
    that memory resident, so without it the next phase's peak stacks on top. Values in memory do not change,
    only which pages stay resident. Costs about 0.1 s. Elsewhere (macOS, musl) it only collects.
    """
    gc.collect()
    return trim_heap()


@dataclass
class MemoryConfig:
    """`memory` (conf/train.yaml, conf/evaluate.yaml): how the run's process holds its heap.

    mmap_threshold_kib: glibc's mmap threshold, pinned for the whole run. `auto`: pinned at
        `ENGINE_MMAP_THRESHOLD_KIB` where the sampler's class says its engine shares this process's heap with the
        trainer (`Policy.shares_trainer_heap`: the vLLM engine on a CPU, whether named or chosen by
        rollout.backend=auto), as the update's freed activations would otherwise stay resident under it; else
        glibc's dynamic threshold. A number of KiB pins it for either backend; null never pins. Only glibc's
        malloc has this threshold: under another allocator nothing is pinned.
    allocator: the process's malloc (agentic_rl.runtime.allocator): auto (jemalloc, else tcmalloc, where the system
        has it and the heap would be pinned, else glibc), glibc, jemalloc or tcmalloc.
    """

    mmap_threshold_kib: int | Literal["auto"] | None = AUTO
    allocator: str = AUTO

    def __post_init__(self) -> None:
        check_choice(self.allocator)
        value = self.mmap_threshold_kib
        if value is not None and value != AUTO and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ValueError(
                f"memory.mmap_threshold_kib must be auto, a number of KiB >= 0 or null (glibc's dynamic threshold), "
                f"got {value!r}"
            )

    def threshold_kib(self, engine_shares_heap: bool) -> int | None:
        """The threshold to pin, or None for glibc's dynamic one."""
        if self.mmap_threshold_kib == AUTO:
            return ENGINE_MMAP_THRESHOLD_KIB if engine_shares_heap else None
        return self.mmap_threshold_kib


def apply_memory_config(memory: MemoryConfig, engine_shares_heap: bool, allocator: str | None = None) -> int | None:
    """Pin the threshold `memory` asks for (one log line says so); the KiB pinned, or None where nothing was.

    allocator: the malloc this process runs on (`loaded_allocator()` when None): only glibc's is pinned."""
    kib = memory.threshold_kib(engine_shares_heap)
    allocator = loaded_allocator() if allocator is None else allocator
    if allocator != GLIBC:
        if kib is not None and memory.mmap_threshold_kib != AUTO:
            logger.warning("memory.mmap_threshold_kib=%s: not pinned, this process runs on %s", kib, allocator)
        logger.info("malloc: %s (no mmap threshold to pin)", allocator)
        return None
    if kib is None:
        return None
    if not pin_mmap_threshold(kib):
        logger.warning("memory.mmap_threshold_kib=%s: this C library is not glibc, the threshold stays its own", kib)
        return None
    logger.info(
        "glibc's mmap threshold pinned at %d KiB (memory.mmap_threshold_kib=%s)", kib, memory.mmap_threshold_kib
    )
    return kib


def upgrade_legacy_pin(saved: Any) -> Any:
    """A run config saved before `memory` existed (resumed, or read by an evaluation of its checkpoint), with its
    `rollout.vllm.mmap_threshold_kib` moved to `memory.mmap_threshold_kib` meaning what it did then: the vLLM
    backend pinned it on a CPU and the HF backend never, which is `auto` at the default 128 KiB.

    This one reads the backend by its name on purpose: it translates what the code of that time did, which decided
    by the name, and such a config never says `auto` (`memory` came before `rollout.backend=auto`)."""
    vllm = saved.get("rollout", {}).get("vllm")
    if not vllm or "mmap_threshold_kib" not in vllm:
        return saved
    kib = vllm.pop("mmap_threshold_kib")
    if "memory" not in saved:
        same_as_auto = kib == ENGINE_MMAP_THRESHOLD_KIB or saved["rollout"].get("backend") != "vllm"
        saved["memory"] = {"mmap_threshold_kib": None if kib is None else AUTO if same_as_auto else kib}
    return saved
