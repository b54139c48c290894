"""Memory cgroups, one per call: the kernel's bound on everything a call's processes allocate."""

from __future__ import annotations

import os
import signal
import time

from agentic_rl.sandbox.linux import within, write_text


class MemoryCgroups:
    """One memory cgroup (cgroup v1 `memory` controller) per call, made under the server's own group.

    The kernel then charges everything the call's processes allocate to it, whoever maps it or not:
    anonymous memory, shared memory and memfd pages, the call's tmpfs, kernel socket buffers. Past the
    limit the kernel's OOM killer ends a process of the call (counted in `memory.oom_control`), and the
    group lists the call's processes however they were made. A fresh group per call, removed after it,
    means nothing one call allocated is ever charged to the next.
    """

    def __init__(self, base: str) -> None:
        self.base = base
        self._n = 0
        self._stale: list[str] = []  # groups whose removal failed (a process still exiting): retried

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

    def create(self) -> str:
        """A new group, without a limit yet (the next call's processes join it while they wait)."""
        self._remove_stale()
        self._n += 1
        path = os.path.join(self.base, f"agentic_rl_sandbox-{os.getpid()}-{self._n}")
        os.mkdir(path)
        return path

    @staticmethod
    def set_limit(path: str, limit_bytes: int) -> None:
        write_text(os.path.join(path, "memory.limit_in_bytes"), str(limit_bytes))
        try:  # no swapping either, where the kernel has swap accounting
            write_text(os.path.join(path, "memory.memsw.limit_in_bytes"), str(limit_bytes))
        except OSError:
            pass

    @staticmethod
    def processes(path: str) -> list[int]:
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                return [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            return []

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

    def remove(self, path: str) -> None:
        """Kill whatever is still in the group, then remove it (later, if a process is still exiting)."""
        for _ in range(200):
            pids = self.processes(path)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.rmdir(path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)
        self._stale.append(path)

    def _remove_stale(self) -> None:
        stale, self._stale = self._stale, []
        for path in stale:
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                self._stale.append(path)
