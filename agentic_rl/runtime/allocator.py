"""Which malloc the run's processes use (`memory.allocator`), chosen at the process's start.

glibc keeps the update's freed activations (blocks of 0.5-2 MiB for a 512-token micro-batch) in a fragmented heap,
so a run either holds about 0.4 GiB more or pins glibc's mmap threshold and pays page faults on every such block
(the GRPO update 1.2-1.9x slower: experiments/allocator/). jemalloc and tcmalloc keep such blocks in size classes
and return idle pages on their own, so the update keeps glibc's unpinned speed at the pinned memory. They only
move where bytes live: every value the run computes is the same (a smoke run's metrics equal bit for bit:
tests/runtime/test_allocator.py).

A malloc can only be chosen before the process starts, so a train or evaluate command whose composed config asks for
another one starts itself again on it (`restart_on`, from `runtime.stages.pin_run_heap`, before the model is loaded,
into the same run dir): `LD_PRELOAD` names the library, and the processes it starts inherit it (the vLLM sampler
servers; the sandbox rebuilds its own environment and never does). `auto` does so only where glibc's mmap threshold
would otherwise be pinned (the vLLM engine on a CPU), taking jemalloc, else tcmalloc, where the system has the library
(Debian: `apt-get install libjemalloc2`); elsewhere it stays on glibc, whose unpinned heap measured faster (the
HF default's warm-up 1.06x slower on jemalloc). Naming one that is missing stays on glibc with one warning line.
Under `-m` (jobs sharing one process) nothing restarts. Nothing here is needed for a run to be correct: a process
that cannot start again keeps glibc.
"""

from __future__ import annotations

import ctypes.util
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

logger = logging.getLogger(__name__)

AUTO, GLIBC = "auto", "glibc"
# preference order of `auto`; each with the library name ld.so resolves and the files to look for
LIBRARIES = {
    "jemalloc": ("jemalloc", ("libjemalloc.so.2", "libjemalloc.so")),
    "tcmalloc": ("tcmalloc_minimal", ("libtcmalloc_minimal.so.4", "libtcmalloc.so.4")),
}
CHOICES = (AUTO, GLIBC, *LIBRARIES)
# set in the environment of the process started again, so that it never starts a third time
RESTARTED_ENV = "AGENTIC_RL_ALLOCATOR_RESTARTED"
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")


def check_choice(value: object) -> str:
    """`memory.allocator` as read, or a ValueError that lists the choices."""
    if value not in CHOICES:
        raise ValueError(f"memory.allocator must be one of {', '.join(CHOICES)}, got {value!r}")
    return str(value)


def library_path(name: str, dirs: Sequence[str] = LIBRARY_DIRS) -> str | None:
    """The shared library of allocator `name` on this system, or None."""
    link_name, files = LIBRARIES[name]
    for folder in dirs:
        for file in files:
            if os.path.isfile(os.path.join(folder, file)):
                return os.path.join(folder, file)
    found_name = ctypes.util.find_library(link_name)  # ldconfig's cache: a bare soname, which ld.so resolves
    return found_name or None


def loaded_allocator(maps: str | None = None) -> str:
    """The allocator this process runs on: a LIBRARIES name when its library is mapped, else glibc.

    maps: the text of /proc/self/maps (read when None; where there is none, glibc is assumed)."""
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            return GLIBC
    for name, (link_name, _) in LIBRARIES.items():
        if f"lib{link_name}.so" in maps:
            return name
    return GLIBC


def wanted_allocator(choice: str, find: Callable[[str], str | None] | None = None) -> tuple[str, str | None]:
    """(allocator, its library path) for `choice`: glibc has no path; `auto` takes the first of LIBRARIES found;
    a named one that is missing falls back to glibc with one warning. find: `library_path` when None."""
    find = find or library_path
    if choice == GLIBC:
        return GLIBC, None
    names = list(LIBRARIES) if choice == AUTO else [choice]
    for name in names:
        path = find(name)
        if path is not None:
            return name, path
    if choice != AUTO:
        hint = "apt-get install libjemalloc2" if choice == "jemalloc" else "apt-get install libtcmalloc-minimal4"
        logger.warning(
            "memory.allocator=%s: its library is not on this system (%s); glibc's malloc instead", choice, hint
        )
    return GLIBC, None


def allocator_for(
    choice: str, engine_shares_heap: bool, find: Callable[[str], str | None] | None = None
) -> tuple[str, str | None]:
    """(allocator, its library path) the run asks for: `auto` takes another malloc only where glibc's would be
    pinned (`engine_shares_heap`: the vLLM engine on a CPU, agentic_rl.runtime.memory), as elsewhere glibc's
    unpinned heap was the fastest (experiments/allocator/); a named one is taken as named."""
    if choice == AUTO and not engine_shares_heap:
        return GLIBC, None
    return wanted_allocator(choice, find)


def allow_restart() -> None:
    """Mark this process as a command of its own (`hydra_main.run_cli`), which may start itself again: a run
    called in process (a test, a notebook) never does."""
    global _restartable
    _restartable = True


_restartable = False


def restart_environment(environ: dict[str, str], library: str) -> dict[str, str]:
    """`environ` for the process started again: `library` first in LD_PRELOAD, and the marker set."""
    preload = [library, *(p for p in environ.get("LD_PRELOAD", "").split() if p != library)]
    return {**environ, "LD_PRELOAD": " ".join(preload), RESTARTED_ENV: "1"}


def restart_on(
    name: str,
    library: str,
    extra_args: Sequence[str] = (),
    execve: Callable[[str, list[str], dict[str, str]], object] = os.execve,
) -> bool:
    """Start this command again, with `extra_args` after its own, on the malloc in `library`. Returns False (having
    done nothing) where it may not: a run called in process, a process already started again (never a third
    time), not Linux."""
    if not _restartable or os.environ.get(RESTARTED_ENV) or not sys.platform.startswith("linux"):
        return False
    command = [*(list(getattr(sys, "orig_argv", [])) or [sys.executable, *sys.argv]), *extra_args]
    logger.info("memory.allocator: starting again on %s (LD_PRELOAD=%s)", name, library)
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    execve(sys.executable, command, restart_environment(dict(os.environ), library))
    return True
