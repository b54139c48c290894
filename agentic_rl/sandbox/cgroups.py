"""Memory cgroups, one per call: the kernel's bound on everything a call's processes allocate."""

from __future__ import annotations

import os
import signal
import time

from agentic_rl.sandbox.linux import within, write_text


class MemoryCgroups:
    """Memory cgroups (cgroup v1 `memory` controller) for a worker's calls, made under the server's own group.

    The kernel charges everything a call's processes allocate to the call's group, whoever maps it or not:
    anonymous memory, shared memory and memfd pages, the call's tmpfs, kernel socket buffers. Past the
    limit the kernel's OOM killer ends a process of the call (counted in `memory.oom_control`), and the
    group lists the call's processes however they were made.

    Each zygote owns a ring of `RING` groups, one per call in turn, made once and reused: making and
    removing a group per call cost a `mkdir` and an `rmdir`, each waiting on the kernel's cgroup lock
    (held through an RCU grace period by any process joining a group), on a call's path, and left a
    dying group behind in the kernel for every call. A group is handed to a call only when its last
    call is over: its processes are gone with that call's PID namespace (the zygote waits for the
    namespace's init to exit before it reports the call over), and the server has emptied it. With
    three groups, the call made ready next never gets the group of a call whose cleanup may still run
    (the call before it holds the second group, the call before that the third). What a call can
    leave charged to its group is what the kernel may reclaim at any time (page cache of the files it
    read, slab of the dentries it looked up): its processes, its tmpfs, its memfd and shared memory,
    its sockets are gone with it, so the next call of the group is never charged for them. The
    group's `oom_kill` count runs on across calls: the server compares it with its value when the
    call started.
    """

    RING = 3

    def __init__(self, base: str) -> None:
        self.base = base
        self._next = 0  # the ring's group for the next call made ready
        self._made: set[str] = set()
        self._limits: dict[str, int] = {}  # the limit last set on each group (the server's instance)

    @classmethod
    def find(cls) -> tuple[MemoryCgroups | None, str | None]:
        """The manager, or None and why not (no v1 memory controller, or no right to make groups)."""
        try:
            own = None
            with open("/proc/self/cgroup") as f:
                for line in f:
                    _, controllers, path = line.rstrip("\n").split(":", 2)
                    if "memory" in controllers.split(","):
                        own = path
            mount_root = mount_point = None
            with open("/proc/self/mountinfo") as f:
                for line in f:
                    fields = line.split()
                    fstype, opts = fields[fields.index("-") + 1], fields[-1].split(",")
                    if fstype == "cgroup" and "memory" in opts:
                        mount_root, mount_point = fields[3], fields[4]
        except (OSError, ValueError, IndexError) as e:
            return None, f"no memory cgroup ({e})"
        if own is None or mount_point is None or not within(own, mount_root):
            return None, "no cgroup v1 memory controller"
        base = os.path.join(mount_point, os.path.relpath(own, mount_root))
        probe = os.path.join(base, f"agentic_rl_sandbox-{os.getpid()}-probe")
        try:
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError as e:
            return None, f"cannot make memory cgroups under {base} ({e})"
        for name in os.listdir(base):  # groups a dead server (or its zygote) left behind, empty by now
            owner = name.split("-")[1] if name.startswith("agentic_rl_sandbox-") else ""
            if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                try:
                    os.rmdir(os.path.join(base, name))
                except OSError:
                    pass
        return cls(os.path.normpath(base)), None

    def take(self) -> str:
        """The ring's group for the next call (made on first use); the same one until `advance`. Its
        limit is still the last call's: the server sets the call's own when the call starts."""
        path = os.path.join(self.base, f"agentic_rl_sandbox-{os.getpid()}-{self._next}")
        if path not in self._made:
            try:
                os.mkdir(path)
            except FileExistsError:  # left by a dead zygote of the same pid: empty (its calls died with it)
                pass
            self._made.add(path)
        return path

    def advance(self) -> None:
        """The group `take` gave is now a call's (sent to the server): the next call gets the next one."""
        self._next = (self._next + 1) % self.RING

    @staticmethod
    def join(path: str) -> None:
        """Move the calling process into the group; it must be single-threaded (a runner just forked from
        the zygote, or the fallback's init). It writes its thread to the group's `tasks`, not the process
        to `cgroup.procs`: for a whole process the kernel write-locks the global threadgroup semaphore,
        which waits for an RCU grace period and stalls every fork and exit on the host meanwhile (one
        of ours included); for the calling thread alone it needs only the cgroup mutex. A process of
        one thread is moved whole either way."""
        write_text(os.path.join(path, "tasks"), "0")

    def set_limit(self, path: str, limit_bytes: int) -> None:
        """The call's limit. The group is reused, so the last call's limits are still set, and the kernel
        keeps memory+swap >= memory at every write: lift the first, set memory, then bound the first.
        Nothing is written when the group already has this limit (set here last time: only root can
        change it, and nothing else of ours does), as for most calls."""
        if self._limits.get(path) == limit_bytes:
            return
        self._limits.pop(path, None)  # unknown until every write below has succeeded
        memsw = os.path.join(path, "memory.memsw.limit_in_bytes")  # absent without swap accounting
        try:
            write_text(memsw, "-1")
        except OSError:
            memsw = None
        write_text(os.path.join(path, "memory.limit_in_bytes"), str(limit_bytes))
        if memsw is not None:  # no swapping either
            write_text(memsw, str(limit_bytes))
        self._limits[path] = limit_bytes

    @staticmethod
    def processes(path: str) -> list[int]:
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                return [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            return []

    @staticmethod
    def limit_hits(path: str) -> int:
        """How often a charge to the group failed at its limit (`memory.failcnt`, and memory+swap's): the
        kernel's own count, the evidence that a call ran out of memory without an OOM kill (an allocation
        refused with ENOMEM, a tmpfs or memfd write refused)."""
        total = 0
        for name in ("memory.failcnt", "memory.memsw.failcnt"):
            try:
                with open(os.path.join(path, name)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return total

    @staticmethod
    def oom_kills(path: str) -> int:
        """How often the kernel ended a process of the group for going past its limit."""
        try:
            with open(os.path.join(path, "memory.oom_control")) as f:
                for line in f:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def empty(self, path: str) -> bool:
        """Kill whatever is still in the group, until nothing is (normally nothing is: the call's processes
        ended with its PID namespace). False if something was still there after 10 s."""
        give_up = time.monotonic() + 10.0
        while True:
            pids = self.processes(path)
            if not pids:
                return True
            if time.monotonic() > give_up:
                return False
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)
