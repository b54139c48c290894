"""One call, start to end: the zygote (zygote.py) has made the call's processes ready, and the runner
isolates itself (isolation.py); the supervisor starts the call, feeds the runner the request, watches
deadline, output and memory, kills what is left, and replies."""

from __future__ import annotations

import errno
import math
import os
import secrets
import select
import shutil
import signal
import socket
import tempfile
import time

from agentic_rl.sandbox.cgroups import MemoryCgroups
from agentic_rl.sandbox.isolation import PTY_MAX, CallIsolation, modules_the_tests_import
from agentic_rl.sandbox.linux import (
    HOST_BUDGET_SYSCALLS,
    kill_by_pidfd,
    open_pidfd,
    seccomp_program,
)
from agentic_rl.sandbox.procfs import (
    busy_seconds,
    children,
    descendants,
    resident_bytes,
)
from agentic_rl.sandbox.reports import parse_report, reported
from agentic_rl.sandbox.wire import read_msg, write_msg
from agentic_rl.sandbox.zygote import Zygote

__all__ = ["PTY_MAX", "Supervisor"]

MAX_RESULT_BYTES = 4 * 1024 * 1024
READ_CHUNK = 1 << 16
MEMORY_POLL_S = 0.25  # how often the summed memory of a call's processes is checked
PIPES = ("stdout", "stderr", "result", "request")


class Supervisor:
    """Runs one call: starts the call the zygote made ready, watches it, kills whatever is left of it, reports."""

    def __init__(
        self,
        config: dict,
        harness,
        private_tmp: bool,
        world_writable: list[str],
        close_in_zygote: tuple[int, ...] = (),
        cgroups: MemoryCgroups | None = None,
        pid_namespace: bool = False,
    ) -> None:
        self.config = config
        self.private_tmp = private_tmp
        self.cgroups = cgroups
        self._cgroup: str | None = None  # the current call's memory cgroup
        self._oom_kills_before = 0  # its OOM kill count when the call started
        self._limit_hits_before = 0  # its count of charges refused at the limit when the call started
        self._init_pid: int | None = None  # the current call's init
        self._watched_pid: int | None = None  # what ends the call when it exits: its runner, or its init
        seccomp_program(HOST_BUDGET_SYSCALLS, errno.ENOSYS)  # built here once: each call's runner installs it
        self.isolation = CallIsolation(config, harness, private_tmp, world_writable, pid_namespace)
        self.zygote = Zygote(self.isolation, cgroups, close_in_zygote)

    def zygote_alive(self) -> bool:
        return self.zygote.alive()

    @property
    def zygote_pid(self) -> int | None:
        return self.zygote.pid

    def run(self, req: dict, control_fd: int | None = None) -> dict:
        uid = req.get("uid")
        call_dir = self._call_dir(uid)
        nonce = secrets.token_hex(16)
        start = time.monotonic()
        pid, pipes = self._start_call(req["limits"])
        # The runner waits for its request, written below, so it is still alive here: its pidfd is taken
        # before it can exit. Once it exits the zygote reaps it at once, and its pid may be gone (or another
        # process's) by the time we look; a fast program used to finish in that window.
        pidfd = open_pidfd(pid)
        out = _Streams(
            {name: pipes[name] for name in ("stdout", "stderr", "result")},
            {
                "stdout": req["max_output_bytes"],
                "stderr": req["max_output_bytes"],
                "result": MAX_RESULT_BYTES,
            },
        )
        status, ended, limit_hit = None, "exited", False
        try:
            try:  # the request goes to this runner alone (the zygote never sees it)
                _send_request(pipes["request"], req, nonce, call_dir)
            except OSError:
                pass  # the runner died at once: it reports nothing, which grades as a failure
            os.close(pipes["request"])
            if pidfd is not None:
                ended = self._watch(req, pidfd, out, nonce, start, control_fd)
            if ended != "exited":
                kill_by_pidfd(pidfd)
            status = self.zygote.status("waiting for the runner")  # the zygote reaps its child
            ended, limit_hit = self._kernel_evidence(ended)
            self._kill_all(uid)  # whatever else of the call is alive dies now ...
            out.drain(until=time.monotonic() + 2.0)  # ... so every write end is closed: read to EOF
        finally:
            self._end_call(status, pidfd, uid, out, call_dir)
        return _reply(req, status, ended, limit_hit, out, nonce, start)

    def _call_dir(self, uid: int | None) -> str | None:
        """With mount namespaces, a call gets a fresh tmpfs as its /tmp (made by the runner, gone with its
        namespace): None. Otherwise a fresh directory under work_dir, owned by the call's uid."""
        if self.private_tmp:
            return None
        call_dir = tempfile.mkdtemp(prefix="c", dir=self.config["work_dir"])
        if uid is not None:
            os.chown(call_dir, uid, uid)
        return call_dir

    def _start_call(self, limits: dict) -> tuple[int, dict[str, int]]:
        """Start the call the zygote made ready: its memory cgroup's limit set (the call's memory, its tmpfs
        included: tmp_mb comes on top of memory_mb), the runner sent its pipe ends. (The pid whose exit ends
        the call, our ends of the pipes: stdout, stderr, result to read, request to write.)"""
        pipes = {name: os.pipe() for name in PIPES}
        ends = [
            pipes["stdout"][1],
            pipes["stderr"][1],
            pipes["result"][1],
            pipes["request"][0],
        ]
        total = limits.get("total_memory_bytes")
        try:
            pid = self._hand_over(ends, total + (limits.get("tmp_bytes") or 0) if total else None)
        except (RuntimeError, OSError):
            for r, w in pipes.values():
                os.close(r)
                os.close(w)
            self._empty_cgroup()
            raise
        for fd in ends:
            os.close(fd)
        return pid, {name: pipes[name][1 if name == "request" else 0] for name in PIPES}

    def _hand_over(self, fds: list[int], memory_limit: int | None) -> int:
        """Take the next ready call from the zygote, bound its memory cgroup, send the runner its fds."""
        ready = self.zygote.next_call()
        self._watched_pid, self._init_pid = ready.pid, ready.init
        order, cgroup = ready.order, ready.cgroup
        if cgroup and self.cgroups is not None:
            self._cgroup = cgroup
            self._oom_kills_before = self.cgroups.oom_kills(cgroup)  # the group's count runs on across calls
            self._limit_hits_before = self.cgroups.limit_hits(cgroup)  # so does this one
            try:
                if memory_limit:
                    self.cgroups.set_limit(cgroup, memory_limit)
            except OSError as e:
                # No call without its bound. Closing the order socket ends the waiting runner; the zygote then
                # sends its status, read here so that the next call reads its own runner's pid.
                order.close()
                self.zygote.status("ending a runner without its memory limit")
                raise RuntimeError(f"cannot set the call's memory limit: {e}") from None
        try:
            socket.send_fds(order, [b"f"], fds)
        except OSError:
            pass  # the runner is gone already: the call reports nothing, and the zygote sends its status
        finally:
            order.close()
        return ready.pid

    def _watch(
        self,
        req: dict,
        pidfd: int,
        out: _Streams,
        nonce: str,
        start: float,
        control_fd: int | None,
    ) -> str:
        return self._wait(
            pidfd,
            out,
            start + req["timeout_s"],
            req["output_limit_bytes"],
            req.get("yield_if_idle"),
            nonce,
            self._call_processes,
            self._memory_check(req["limits"].get("total_memory_bytes")),
            control_fd,
        )

    def _kernel_evidence(self, ended: str) -> tuple[str, bool]:
        """(how the call ended, whether the kernel refused it memory at its cgroup's limit): a call that
        exited after the kernel ended one of its processes at the limit ended on "memory"."""
        cgroup = self._cgroup
        if cgroup is None:
            return ended, False
        if ended == "exited" and self.cgroups.oom_kills(cgroup) > self._oom_kills_before:
            ended = "memory"
        return ended, self.cgroups.limit_hits(cgroup) > self._limit_hits_before

    def _end_call(
        self,
        status: int | None,
        pidfd: int | None,
        uid: int | None,
        out: _Streams,
        call_dir,
    ) -> None:
        """Whatever happened: nothing of the call left alive, its objects in flight collected, its cgroup
        emptied, its pipes and directory gone, and the zygote's channel in step."""
        if status is None and self.zygote_alive():
            # Something failed mid-call. The zygote's next message is this runner's wait status: read
            # it now, or the next call would take it for its runner's pid (and every later reply
            # would be one call late).
            kill_by_pidfd(pidfd)
            try:
                self.zygote.status("waiting for the runner")
            except RuntimeError:
                pass  # the zygote is marked gone: the server stops after this reply and is restarted
        if pidfd is not None:
            os.close(pidfd)
        self._kill_all(uid)
        _collect_unowned_sockets()
        self._init_pid = self._watched_pid = None
        self._empty_cgroup()
        out.close()
        if call_dir is not None:
            shutil.rmtree(call_dir, ignore_errors=True)

    def _empty_cgroup(self) -> None:
        """Kill whatever is left in the call's memory cgroup (normally nothing). The zygote hands the group
        to a later call: one that cannot be emptied must not be, so the server then stops (as when its
        zygote is gone), and the one started in its place makes groups of its own."""
        if self._cgroup is None:
            return
        if not self.cgroups.empty(self._cgroup):
            os.write(
                2,
                f"sandbox: {self._cgroup} still has processes after SIGKILL; restarting\n".encode(),
            )
            self.zygote.pid = None
        self._cgroup = None

    def _call_processes(self) -> list[int]:
        """Every process of the current call: its memory cgroup's; else its init and runner and what is
        below them, and what was orphaned to us (not the zygote, nor the next call's processes the zygote
        made ready)."""
        if self._cgroup is not None:
            return self.cgroups.processes(self._cgroup)
        below_zygote = []
        for top in dict.fromkeys(p for p in (self._init_pid, self._watched_pid) if p):
            below_zygote += [top] + descendants(top)
        return below_zygote + descendants(os.getpid(), skip=self.zygote.pid)

    def _memory_check(self, limit: int | None):
        """What `_wait` polls to end a call past its memory: with a cgroup, whether the kernel already
        ended one of its processes at the limit; else the call's anonymous memory against `limit`."""
        cgroup, cgroups = self._cgroup, self.cgroups
        over_limit = (lambda: resident_bytes(self._call_processes()) > limit) if limit else (lambda: False)
        if cgroup is None:
            return over_limit if limit else None
        # The poll ends a call as soon as its processes' own memory is over (before the kernel has to
        # reclaim and kill at the group's limit, which also counts the tmpfs and kernel memory).
        before = self._oom_kills_before
        return lambda: cgroups.oom_kills(cgroup) > before or over_limit()

    @staticmethod
    def _wait(
        pidfd: int,
        out: _Streams,
        deadline: float,
        output_limit: int,
        yield_if_idle: dict | None,
        nonce: str,
        processes,
        memory_exceeded=None,
        control_fd: int | None = None,
    ) -> str:
        """Pump output until the runner exits ("exited"), the deadline ("timeout"), too much output
        ("output_limit"), too much memory across the call's processes ("memory"), or a cancel message from
        the client on `control_fd` ("cancelled": another part of the same split task hit a limit).

        yield_if_idle {"after_s", "max_cpu"}: from after_s on, once the harness has reported the collected
        tests (a program still loading, or sleeping at import, is never split), end the call ("yielded")
        if its processes wanted a core (ran, or waited in a run queue) less than max_cpu of the time so
        far, i.e. it mostly sleeps or waits on I/O (the client then splits its tests over several
        workers); otherwise let it run on.

        memory_exceeded: polled every MEMORY_POLL_S (see `_memory_check`). RLIMIT_AS binds each process;
        the call's memory cgroup (or, without one, this poll) binds them together.
        """
        start = time.monotonic()
        after = yield_if_idle["after_s"] if yield_if_idle else math.inf
        checkpoint = start + after
        next_poll = start + MEMORY_POLL_S if memory_exceeded else math.inf
        while True:
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if now >= checkpoint:
                if not reported(bytes(out.kept["result"]), nonce, "collected"):
                    checkpoint = now + after  # still loading: look again later
                elif busy_seconds(processes()) < yield_if_idle["max_cpu"] * (now - start):
                    return "yielded"
                else:
                    checkpoint = math.inf
            if now >= next_poll:
                if memory_exceeded():
                    return "memory"
                next_poll = now + MEMORY_POLL_S
            wake = min(deadline, checkpoint, next_poll)
            watch = [*out.open_fds, pidfd] + ([control_fd] if control_fd is not None else [])
            ready, _, _ = select.select(watch, [], [], max(wake - now, 0))
            if control_fd is not None and control_fd in ready:
                try:
                    msg = read_msg(control_fd, timeout_s=5.0)
                except (EOFError, TimeoutError, ValueError):
                    return "cancelled"  # the client is gone: nobody wants this call any more
                if isinstance(msg, dict) and msg.get("cancel"):
                    return "cancelled"
            for fd in ready:
                if fd != pidfd and fd != control_fd:
                    out.pump(fd)
            if out.total["stdout"] + out.total["stderr"] > output_limit:
                return "output_limit"
            if pidfd in ready:
                return "exited"

    # ------------------------------------------------------------------ cleanup
    def _kill_all(self, uid: int | None) -> None:
        """Kill and reap every process the call left behind.

        With a dedicated uid, a helper running as that uid sends kill(-1, SIGKILL): one atomic sweep of
        every process of the uid (a fork bomb cannot outrun it). Then, as we are a child subreaper, every
        remaining descendant (double-forked, setsid'd or not) is our child or grandchild: kill and reap
        until none is left.
        """
        if not self._reap():
            return
        if uid is not None:
            helper = os.fork()
            if helper == 0:
                try:
                    os.setresgid(uid, uid, uid)
                    os.setresuid(uid, uid, uid)
                    for _ in range(100):
                        try:
                            os.kill(-1, signal.SIGKILL)
                        except ProcessLookupError:
                            break
                finally:
                    os._exit(0)
            os.waitpid(helper, 0)
        give_up = time.monotonic() + 10.0
        while self._reap() and time.monotonic() < give_up:
            for p in self._call_processes():
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)

    def _reap(self) -> bool:
        """Reap the call's exited processes; True while any process of the call (a child other than the
        zygote, live or not yet reaped) remains. A reaped zygote is noted: the server then stops."""
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.zygote.pid = None
                return False
            if pid == 0:
                break
            if pid == self.zygote.pid:
                self.zygote.pid = None
        return any(p != self.zygote.pid for p in children(os.getpid()))


def _reply(
    req: dict,
    status: int | None,
    ended: str,
    limit_hit: bool,
    out: _Streams,
    nonce: str,
    start: float,
) -> dict:
    return {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": ended == "timeout",
        "yielded": ended == "yielded",
        "output_exceeded": ended == "output_limit",
        "memory_exceeded": ended == "memory",
        "memory_limit_hit": limit_hit,  # the kernel refused memory to the call at its limit
        "cancelled": ended == "cancelled",
        "stdout": out.text("stdout"),
        "stderr": out.text("stderr"),
        "stdout_bytes": out.total["stdout"],
        "stderr_bytes": out.total["stderr"],
        "report": parse_report(bytes(out.kept["result"]), nonce),
        "trust": req.get("trust") if req.get("mode") == "test" else None,
        "duration_s": time.monotonic() - start,
    }


def _collect_unowned_sockets() -> None:
    """Once the call's processes are gone: have the kernel collect the unix sockets that only messages in
    flight hold (an SCM_RIGHTS cycle: a socket queued on itself with a listener, a memfd...), which no
    process owns and no exit frees. Releasing a unix socket runs (or, since Linux 6.10, queues) the
    kernel's collector while anything is in flight; the call may not have released one after its cycle
    went in flight, so one is released here."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.close()
    b.close()


def _send_request(fd: int, req: dict, nonce: str, call_dir: str | None) -> None:
    """The request in two messages: everything but the tests (and the modules they import), then the tests. The
    runner reads the second only once it no longer needs to fork the candidate's process (`CallIsolation.run`)."""
    head = {k: v for k, v in req.items() if k != "test"}
    if "test" in req and req.get("trust") == "out_of_process":
        head["test_imports"] = modules_the_tests_import(req["test"])
    write_msg(
        fd,
        {**head, "nonce": nonce, "call_dir": call_dir, "test_follows": "test" in req},
    )
    if "test" in req:
        write_msg(fd, req["test"])


class _Streams:
    """Non-blocking reader of the runner's pipes: keeps the first `keep[name]` bytes, counts the rest."""

    def __init__(self, fds: dict[str, int], keep: dict[str, int]) -> None:
        self.open_fds = {fd: name for name, fd in fds.items()}
        self.keep = keep
        self.kept = {name: bytearray() for name in fds}
        self.total = {name: 0 for name in fds}
        self._all = list(self.open_fds)
        for fd in self._all:
            os.set_blocking(fd, False)

    def pump(self, fd: int) -> None:
        name = self.open_fds[fd]
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        if not data:
            del self.open_fds[fd]
            return
        self.total[name] += len(data)
        room = self.keep[name] - len(self.kept[name])
        if room > 0:
            self.kept[name] += data[:room]

    def drain(self, until: float) -> None:
        while self.open_fds and time.monotonic() < until:
            ready, _, _ = select.select(list(self.open_fds), [], [], 0.2)
            for fd in ready:
                self.pump(fd)

    def text(self, name: str) -> str:
        return self.kept[name].decode("utf-8", "replace")

    def close(self) -> None:
        for fd in self._all:
            os.close(fd)
