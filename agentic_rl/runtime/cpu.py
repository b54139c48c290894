"""What this machine's CPU computes natively, as Linux reports it: the flags that decide the fast path.

Several choices depend on the CPU rather than on the run: whether bf16 arithmetic is native (`avx512_bf16`,
`amx_bf16`) or emulated in fp32, and so whether vLLM's CPU engine or the trainer's bf16 autocast pays. The
machines this project runs on differ (AVX2-only EPYC; AVX-512 with `avx512_bf16`; AVX-512 with AMX), so the
choices read the flags here instead of assuming one machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

# CPU flags of native bf16 arithmetic; without them bf16 is emulated in fp32 and runs slower than fp32 itself
# (vLLM's kernels 3x, the trainer's update 4.98x on an AVX2-only EPYC: experiments/vllm/block-dtype/,
# experiments/update-dtype/)
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_flags() -> set[str]:
    """This CPU's feature flags as Linux reports them (`/proc/cpuinfo`); empty where unknown (another platform)."""
    info = Path("/proc/cpuinfo")
    if not sys.platform.startswith("linux") or not info.exists():
        return set()
    for line in info.read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return set()
