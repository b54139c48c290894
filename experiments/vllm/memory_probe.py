"""Where the vLLM run's resident memory goes (issue 23's 4 GiB bound): `agentic_rl.train` with a memory probe.

    python experiments/vllm/memory_probe.py seed=42 rollout.backend=vllm ...   (any `agentic_rl.train` overrides)

Runs `agentic_rl.train` unchanged, except that every `memory/*` record (after each step and evaluation) also
carries the resident set split by kind (/proc/self/smaps_rollup: anonymous and file-backed pages) and glibc's
heap accounting (`mallinfo2`: bytes in use and free in the heap arenas, bytes in mmapped chunks), and one line
`memprobe <where> ...` goes to stderr before and after the sampler's construction, each rollout batch and each
batch's update. Free heap bytes that stay resident are the allocator's; what is in use is the program's.
Where vLLM is imported, the engine's scheduler is watched too: `kv_peak_blocks` (the most KV-cache blocks held by
running requests at once, of `kv_blocks`) and `preemptions` (requests preempted because the cache was full), both
since the previous `after` line, so each rollout batch and evaluation shows how much of the cache it used.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
import time

GIB = 2**30


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
        + ("keepcost",)
    ]


def _mallinfo2():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = _Mallinfo2
    return fn()


def breakdown() -> dict[str, float]:
    """Resident set by kind and the heap's use, in GiB (rounded to MiB)."""
    out: dict[str, float] = {}
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Rss", "Anonymous", "Pss_File", "Shared_Clean", "Private_Clean", "Private_Dirty"):
                    out[f"memory/smaps_{key.lower()}_gib"] = round(int(rest.split()[0]) * 1024 / GIB, 3)
    except OSError:
        pass
    info = _mallinfo2()
    if info is not None:
        # summed over all of glibc's arenas (the main one and the threads')
        out["memory/heap_arena_gib"] = round(info.arena / GIB, 3)
        out["memory/heap_in_use_gib"] = round(info.uordblks / GIB, 3)
        out["memory/heap_free_gib"] = round(info.fordblks / GIB, 3)
        out["memory/mmapped_gib"] = round(info.hblkhd / GIB, 3)
    return out


KV = {"kv_blocks": 0, "kv_peak_blocks": 0, "preemptions": 0}


def watch_scheduler() -> bool:
    """Record the KV-cache blocks in use after every schedule, and count preemptions (vLLM's v1 scheduler)."""
    try:
        from vllm.v1.core.sched.scheduler import Scheduler
    except ImportError:
        return False
    schedule, preempt = Scheduler.schedule, Scheduler._preempt_request

    def watched_schedule(self, *args, **kwargs):
        out = schedule(self, *args, **kwargs)
        pool = self.kv_cache_manager.block_pool
        KV["kv_blocks"] = pool.num_gpu_blocks - 1  # less the null block, as BlockPool.get_usage counts
        KV["kv_peak_blocks"] = max(KV["kv_peak_blocks"], KV["kv_blocks"] - pool.get_num_free_blocks())
        return out

    def watched_preempt(self, *args, **kwargs):
        KV["preemptions"] += 1
        return preempt(self, *args, **kwargs)

    Scheduler.schedule, Scheduler._preempt_request = watched_schedule, watched_preempt
    return True


def _say(where: str) -> None:
    from agentic_rl.runtime.memory import memory_metrics

    fields = {**memory_metrics(), **breakdown()}
    if KV["kv_blocks"]:
        fields.update({f"vllm/{k}": v for k, v in KV.items()})
        if where.startswith("after"):
            KV["kv_peak_blocks"] = KV["preemptions"] = 0
    text = " ".join(f"{k.split('/', 1)[1]}={v}" for k, v in fields.items())
    print(f"memprobe {time.strftime('%H:%M:%S')} {where} {text}", file=sys.stderr, flush=True)


def _probed(fn, name: str):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _say(f"before {name}")
        try:
            return fn(*args, **kwargs)
        finally:
            _say(f"after {name}")

    return wrapper


def main() -> None:
    import agentic_rl.train as train
    from agentic_rl.runtime import memory

    plain = memory.memory_metrics

    def memory_metrics() -> dict[str, float]:
        return {**plain(), **breakdown()}

    train.memory_metrics = memory_metrics
    watch_scheduler()
    train.make_policy = _probed(train.make_policy, "make_policy")
    train.run_episodes = _probed(train.run_episodes, "rollout")
    train.update_rollout_batch = _probed(train.update_rollout_batch, "update")
    train.evaluate_phase = _probed(train.evaluate_phase, "evaluate")
    train.cli()


if __name__ == "__main__":
    main()
