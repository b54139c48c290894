"""Which malloc the run's processes use (`memory.allocator`), chosen at the process's start.

glibc keeps the update's freed activations (blocks of 0.5-2 MiB for a 512-token micro-batch) in a fragmented heap,
so a run either holds about 0.4 GiB more or pins glibc's mmap threshold and pays page faults on every such block
(the GRPO update 1.2-1.9x slower: experiments/allocator/). jemalloc and tcmalloc keep such blocks in size classes
and return idle pages on their own, so the update keeps glibc's unpinned speed at the pinned memory. They only
move where bytes live: every value the run computes is the same (a smoke run's metrics equal bit for bit:
tests/runtime/test_allocator.py).

A malloc can only be chosen before the process starts, so the train and evaluate commands start themselves again
under it (`reexec_under`, called first thing by their `cli()`): `LD_PRELOAD` names the library, and the processes
they start inherit it (the vLLM sampler servers; the sandbox rebuilds its own environment and never does).
The choice is read from the command line's `memory.allocator=...`, else from the entry point's own config file
(conf/train.yaml, conf/evaluate.yaml): an `experiment=` file cannot change it, as nothing is composed yet.
`auto` takes jemalloc, else tcmalloc, where the system has the library (Debian: `apt-get install libjemalloc2`),
else stays on glibc; naming one that is missing stays on glibc with one warning line. Nothing here is needed for a
run to be correct: a process that cannot start again just keeps glibc.
"""

from __future__ import annotations

import ctypes.util
import glob
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
KEY = "memory.allocator"
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
            found = glob.glob(os.path.join(folder, file))
            if found:
                return found[0]
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


def choice_from(argv: Sequence[str], config_file: Path) -> str:
    """`memory.allocator` from the command line's last override of it, else from `config_file`, else auto."""
    for arg in reversed(list(argv)):
        key, sep, value = arg.lstrip("+").partition("=")
        if sep and key == KEY:
            return check_choice(value.strip("'\""))
    try:
        from omegaconf import OmegaConf

        memory = OmegaConf.load(config_file).get("memory") or {}
        return check_choice(memory.get("allocator", AUTO))
    except (OSError, ValueError, AttributeError) as exc:
        logger.warning("%s: memory.allocator not read (%s); glibc's malloc", config_file, exc)
        return GLIBC


def restart_environment(environ: dict[str, str], library: str) -> dict[str, str]:
    """`environ` for the process started again: `library` first in LD_PRELOAD, and the marker set."""
    preload = [library, *(p for p in environ.get("LD_PRELOAD", "").split() if p != library)]
    return {**environ, "LD_PRELOAD": " ".join(preload), RESTARTED_ENV: "1"}


def reexec_under(
    config_file: Path,
    argv: Sequence[str] | None = None,
    execve: Callable[[str, list[str], dict[str, str]], object] = os.execve,
) -> None:
    """Start this command again under the allocator `memory.allocator` asks for, if that is not the one loaded;
    returns (having done nothing) where it is, where glibc is asked for or the library is missing, under a
    multirun (`-m`: its jobs share this process), and in a process already started again."""
    args = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get(RESTARTED_ENV) or "-m" in args or "--multirun" in args or not sys.platform.startswith("linux"):
        return
    try:
        choice = choice_from(args, config_file)
    except ValueError:
        return  # the config check reports a bad value with the rest of the config
    name, library = wanted_allocator(choice)
    if library is None or loaded_allocator() == name:
        return
    command = list(getattr(sys, "orig_argv", [])) or [sys.executable, *sys.argv]
    sys.stdout.flush()
    sys.stderr.flush()
    execve(sys.executable, command, restart_environment(dict(os.environ), library))
