"""What the server reads about a call's processes from /proc: their tree, CPU wait and memory."""

from __future__ import annotations

import os

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def children(pid: int) -> list[int]:
    """Direct children of `pid` (one small read per thread, no /proc walk: this is on every call's path)."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(p) for p in f.read().split()]
    except OSError:
        return [p for p in descendants(pid)]  # kernel without the children file: the slow way
    return out


def descendants(root: int, skip: int | None = None) -> list[int]:
    """Every descendant of `root` (one walk of /proc), leaving out `skip` and everything below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child != skip:
                out.append(child)
                stack.append(child)
    return out


# What a harness report line may carry (harness.py): field -> its type; anything else is dropped, so a
# malformed, deeply nested or oversized report never travels further than this function.


def busy_seconds(pids: list[int]) -> float:
    """How long these processes ran or waited to run (on a CPU or in a run queue): time they wanted a
    core, however many others compete for it. Plus the CPU time of their waited-for children."""
    ns, ticks = 0, 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            ticks += sum(int(v) for v in stat[stat.rindex(b")") + 2 :].split()[13:15])  # cutime, cstime
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    on_cpu, run_queue, _ = f.read().split()
                ns += int(on_cpu) + int(run_queue)
        except (OSError, ValueError):
            continue  # gone meanwhile
    return ns / 1e9 + ticks / os.sysconf("SC_CLK_TCK")


def resident_bytes(pids: list[int]) -> int:
    """Anonymous memory of these processes together, each page shared by n processes counted 1/n times
    (`Pss_Anon`): a fork shares its parent's pages until it writes them, so plain RSS would count the
    preloaded libraries once per process. Falls back to RSS minus file-backed pages on old kernels."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss_Anon:"):
                        total += int(line.split()[1]) * 1024
                        break
                else:
                    raise ValueError("no Pss_Anon")
        except ValueError:
            try:
                with open(f"/proc/{pid}/statm", "rb") as f:
                    fields = f.read().split()
                total += (int(fields[1]) - int(fields[2])) * PAGE_SIZE
            except (OSError, ValueError, IndexError):
                continue
        except OSError:
            continue  # gone meanwhile
    return total


def vm_size() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


# --------------------------------------------------------------------------------------------------
# supervisor
