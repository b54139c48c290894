"""One call, start to end: the zygote forks the call's init (a new PID namespace) and the runner; the
supervisor feeds it the request, watches deadline, output and memory, kills what is left, and replies."""

from __future__ import annotations

import errno
import fcntl
import math
import os
import resource
import secrets
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentic_rl.sandbox.cgroups import MemoryCgroups
from agentic_rl.sandbox.linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    HOST_BUDGET_SYSCALLS,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_RDONLY,
    MS_REMOUNT,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    deny_syscalls,
    fork_pid_namespace,
    fresh_keyrings,
    kill_by_pidfd,
    loopback_up,
    mount,
    open_pidfd,
    prctl,
    seccomp_program,
    setns,
    setrlimit_capped,
    unshare,
    within,
)
from agentic_rl.sandbox.procfs import busy_seconds, children, descendants, resident_bytes
from agentic_rl.sandbox.reports import parse_report, reported
from agentic_rl.sandbox.wire import read_msg, write_msg

RESULT_FD = 3  # the runner's harness report channel (stdout/stderr are fds 1 and 2)
REQUEST_FD = 4  # the runner's request pipe, until it has read the tests (the second message)
MAX_RESULT_BYTES = 4 * 1024 * 1024
SETUP_FAILED_EXIT = 125
READ_CHUNK = 1 << 16
MEMORY_POLL_S = 0.25  # how often the summed memory of a call's processes is checked
PTY_MAX = 64  # ptys one call may open (its own devpts instance; the host has ~4096 for everyone)


def _read_nsinit() -> str | None:
    """nsinit.py's text, read when this module is imported: before the server hides the repository."""
    try:
        return (Path(__file__).resolve().parent / "nsinit.py").read_text(encoding="utf-8")
    except OSError:
        return None


NSINIT_SOURCE = _read_nsinit()

# Environment variables every sandboxed program sees; nothing else of the caller's environment is passed.
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "TF_NUM_INTRAOP_THREADS": "1",
    "TF_NUM_INTEROP_THREADS": "1",
    "TF_CPP_MIN_LOG_LEVEL": "3",
}
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONIOENCODING": "utf-8",
    "MPLBACKEND": "Agg",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    # Candidate code never sees the trainer's accelerators: on a GPU machine a snippet that imports torch or
    # jax could otherwise take the GPU's memory from the training run (jax reserves 75% of it on first use).
    "CUDA_VISIBLE_DEVICES": "",
    "JAX_PLATFORMS": "cpu",
    **THREAD_ENV,
}


# --------------------------------------------------------------------------------------------------
# framing (shared with the client)


class Supervisor:
    """Runs one call: has the zygote fork the runner, watches it, kills whatever is left of the call, reports."""

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
        self.harness = harness
        self.private_tmp = private_tmp
        self.world_writable = [d for d in world_writable if d != "/tmp"]
        # Where each call's tmpfs is bound besides /tmp, each once (a second bind on the same directory
        # hides nothing more, and is one more mount to make and to tear down per call).
        self.bind_targets = list(dict.fromkeys(["/var/tmp", "/dev/shm", *self.world_writable]))
        self.cgroups = cgroups
        self.pid_namespace = pid_namespace
        self._cgroup: str | None = None  # the current call's memory cgroup
        self._oom_kills_before = 0  # its OOM kill count when the call started
        self._limit_hits_before = 0  # its count of charges refused at the limit when the call started
        self._init_pid: int | None = None  # the current call's init
        self._watched_pid: int | None = None  # what ends the call when it exits: its runner, or its init
        self._zygote_fds: list[int] = []  # in the zygote: fds its runners close before they wait
        seccomp_program(HOST_BUDGET_SYSCALLS, errno.ENOSYS)  # built here once: each call's runner installs it
        self._zygote_pid, self._zygote_sock = self._start_zygote(close_in_zygote)

    # ------------------------------------------------------------------ zygote
    def _start_zygote(self, close_fds: tuple[int, ...]) -> tuple[int, socket.socket]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                for fd in close_fds:
                    os.close(fd)
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                self._zygote_loop(theirs)
            finally:
                os._exit(0)
        theirs.close()
        return pid, ours

    def zygote_alive(self) -> bool:
        return self._zygote_pid is not None

    @property
    def zygote_pid(self) -> int | None:
        return self._zygote_pid

    def _zygote_loop(self, sock: socket.socket) -> None:
        """In the zygote: make a call's processes ready, hand the server the pid whose exit ends the call,
        the call's init and the runner's order socket; wait for the call to end and send the runner's wait
        status; repeat. A call's processes are made before it is asked for, and wait, holding nothing: a
        call then starts without a fork on its path, with one message from server to runner.

        As root, each call has its own PID namespace, whose init never runs candidate code: when the
        call is over the init is gone, and so is every process of the call. The init comes from the small
        factory process (nsinit.py; see `_namespace_loop`) while it works; otherwise it is forked here
        (`_prefork_call`), and the next call is made ready when a call is over."""
        factory = self._start_factory() if self.pid_namespace else None
        if factory is not None:
            # The inits the factory makes share its memory and have no parent-death signal: should it die
            # while it makes one, that init comes to us, and `_kill_orphaned_inits` ends it.
            prctl(PR_SET_CHILD_SUBREAPER, 1)
            own_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            self._zygote_fds = [own_namespace]  # not the runners' (they close it)
            if not self._namespace_loop(sock, factory):
                return  # the server is gone
            self._stop_factory(factory)
            try:  # our next child in our own namespace again (the last call's is gone with its init)
                setns(own_namespace, CLONE_NEWPID)
            except OSError:
                return  # the server sees the zygote gone, and is restarted
        while True:
            cgroup = self._new_cgroup()
            init, order, status_r = self._prefork_call(sock, cgroup.decode())
            try:
                if init > 0:
                    socket.send_fds(sock, [struct.pack(">iii", init, init, len(cgroup)) + cgroup], [order.fileno()])
                else:
                    sock.sendall(struct.pack(">iii", init, 0, 0))
            except OSError:
                return  # the server is gone (the waiting init dies with us: its parent-death signal)
            if order is not None:
                order.close()
            if init <= 0:
                return
            self._advance_cgroup()
            _, status = os.waitpid(init, 0)
            got = os.read(status_r, 4)
            os.close(status_r)
            if len(got) == 4:  # the runner's own status, as the init saw it
                status = struct.unpack(">i", got)[0]
            try:
                sock.sendall(struct.pack(">i", status))
            except OSError:
                return

    def _new_cgroup(self) -> bytes:
        """The memory cgroup for the next call (its path; see `MemoryCgroups` for the ring they come
        from), or b"" without (its memory is then polled only)."""
        if self.cgroups is None:
            return b""
        try:
            return self.cgroups.take().encode()
        except OSError:
            return b""

    def _advance_cgroup(self) -> None:
        if self.cgroups is not None:
            self.cgroups.advance()

    def _namespace_loop(self, sock: socket.socket, factory: subprocess.Popen) -> bool:
        """The zygote's loop while the init factory works: each call is made ready (an init from the
        factory, the runner forked from here into its namespace, in the call's memory cgroup) while the call
        before it runs, so neither the fork nor the cgroup join is on a call's path. False: the server is
        gone; True: the factory failed (the caller goes on without it)."""
        waited: dict[int, int | None] = {}  # runners made here -> wait status, once reaped
        ready = self._ready_namespace_call(sock, factory, waited, [], 0)
        while ready is not None:
            runner, init, init_pidfd, order, cgroup, started = ready
            if select.select([init_pidfd], [], [], 0)[0]:  # its init died: make it again
                self._discard(ready, factory, waited)
                ready = self._ready_namespace_call(sock, factory, waited, [], 0)
                continue
            try:
                socket.send_fds(sock, [struct.pack(">iii", runner, init, len(cgroup)) + cgroup], [order.fileno()])
            except OSError:
                os.close(started)
                return False
            finally:
                order.close()
            self._advance_cgroup()
            # The next call is made once this one has started (its runner has read its request, or is
            # gone): its fork then runs beside this call, not between the calls, where the server's reply
            # and the client's next request (and then the request's way to the runner) wait for a core.
            select.select([started], [], [])
            os.close(started)
            ready = self._ready_namespace_call(sock, factory, waited, [init_pidfd], init)
            status = self._end_namespace_call(runner, init_pidfd, factory, waited)
            try:
                sock.sendall(struct.pack(">i", status))
            except OSError:
                return False
        return True

    def _discard(self, ready: tuple, factory: subprocess.Popen, waited: dict) -> None:
        """Drop a call made ready whose namespace is gone: its runner (killed with the namespace, or ended
        by EOF on its order socket) reaped, which leaves its cgroup empty for the call made instead."""
        runner, _, init_pidfd, order, cgroup, started = ready
        order.close()
        os.close(init_pidfd)
        os.close(started)
        while waited[runner] is None:
            if not self._reap_child(0, factory, waited):
                break
        waited.pop(runner, None)
        if cgroup:
            self.cgroups.empty(cgroup.decode())

    def _ready_namespace_call(
        self, sock: socket.socket, factory: subprocess.Popen, waited: dict, other_fds: list[int], in_flight: int
    ) -> tuple[int, int, int, socket.socket, bytes, int] | None:
        """(runner pid, init pid, init pidfd, the runner's order socket, cgroup, started: a pipe that reads
        EOF once the runner has read its request), or None when the factory failed. `in_flight`: the init of the
        call now running (0: none)."""
        cgroup = self._new_cgroup()
        try:
            runner, init, init_pidfd, order, started = self._prefork_in_namespace(
                sock, factory, cgroup.decode(), other_fds
            )
        except OSError as e:
            os.write(2, f"sandbox init factory failed ({e}); inits are forked by the zygote\n".encode())
            self._kill_orphaned_inits(factory, waited, in_flight)
            return None
        waited[runner] = None
        return runner, init, init_pidfd, order, cgroup, started

    @staticmethod
    def _kill_orphaned_inits(factory: subprocess.Popen, waited: dict, in_flight: int) -> None:
        """After the factory failed: kill the inits that came to us when it died (we are their subreaper),
        but the running call's (killed when that call ends). Our other children are runners and the
        factory itself."""
        if select.select([factory.pidfd], [], [], 0)[0]:  # type: ignore[attr-defined]  # gone: its inits are ours
            for pid in children(os.getpid()):
                if pid not in waited and pid not in (factory.pid, in_flight):
                    try:
                        os.kill(pid, signal.SIGKILL)  # a child of ours, not yet reaped: its pid is its own
                    except ProcessLookupError:
                        pass

    def _start_factory(self) -> subprocess.Popen | None:
        """The init factory (nsinit.py) as a fresh small interpreter, talking over a socket; None if it
        cannot be started (no source, no exec): inits are then forked from the zygote."""
        if NSINIT_SOURCE is None:
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", NSINIT_SOURCE, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                env={"PATH": BASE_ENV["PATH"], "LANG": "C.UTF-8"},
            )
        except OSError as e:
            os.write(2, f"sandbox init factory did not start ({e}); inits are forked by the zygote\n".encode())
            ours.close()
            return None
        finally:
            theirs.close()
        proc.channel = ours  # type: ignore[attr-defined]
        # Its death is seen on this pidfd: the inits it made hold copies of its end of the socket, so the
        # socket alone may not say so.
        proc.pidfd = os.pidfd_open(proc.pid)  # type: ignore[attr-defined]
        return proc

    @staticmethod
    def _stop_factory(factory: subprocess.Popen) -> None:
        """EOF on its socket, then SIGTERM: either way it kills the inits it made before it exits."""
        factory.channel.close()  # type: ignore[attr-defined]
        try:
            factory.terminate()
            factory.wait(timeout=5)
        except subprocess.TimeoutExpired:
            factory.kill()
        except (OSError, ChildProcessError):
            pass
        os.close(factory.pidfd)  # type: ignore[attr-defined]
        return None

    def _prefork_in_namespace(
        self, zygote_sock: socket.socket, factory: subprocess.Popen, cgroup: str, other_fds: list[int]
    ) -> tuple[int, int, int, socket.socket, int]:
        """The next call, as root: an init from the factory (pid 1 of a new PID namespace), then the runner
        forked from here into that namespace (so one fork of this large process per call, as without a
        namespace), which joins the call's memory cgroup and waits for its order.
        (runner pid, init pid, init pidfd, the runner's order socket, the read end of a pipe the runner
        closes once it has read its request); OSError when the factory fails."""
        channel = factory.channel  # type: ignore[attr-defined]
        channel.settimeout(30.0)
        channel.sendall(b"n")
        ready, _, _ = select.select([channel, factory.pidfd], [], [], 30.0)  # type: ignore[attr-defined]
        if channel not in ready:
            raise OSError(0, "the init factory is gone" if ready else "the init factory does not answer")
        head, fds, _, _ = socket.recv_fds(channel, 4, 2)
        init = struct.unpack(">i", head)[0] if len(head) == 4 else -1
        if init <= 0 or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            raise OSError(-init if init < 0 else 0, "the factory made no init")
        init_pidfd, namespace = fds
        try:
            setns(namespace, CLONE_NEWPID)  # our next child is the namespace's second process
            order, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            started, started_w = os.pipe()
            runner = os.fork()
        except OSError:
            kill_by_pidfd(init_pidfd)  # an init no call will end
            os.close(init_pidfd)
            raise
        finally:
            os.close(namespace)
        if runner == 0:
            try:
                zygote_sock.close()
                channel.close()
                order.close()
                for fd in [init_pidfd, factory.pidfd, started, *other_fds, *self._zygote_fds]:  # type: ignore[attr-defined]
                    os.close(fd)
                if cgroup:  # the call's memory cgroup: everything the runner makes is born in it
                    MemoryCgroups.join(cgroup)
            except BaseException as e:  # noqa: BLE001
                os.write(2, f"sandbox runner setup failed: {type(e).__name__}: {e}\n".encode())
                os._exit(SETUP_FAILED_EXIT)
            self._waiting_runner(theirs)  # never returns (keeps started_w open until it has its request)
        theirs.close()
        os.close(started_w)
        return runner, init, init_pidfd, order, started

    def _end_namespace_call(self, runner: int, init_pidfd: int, factory: subprocess.Popen, waited: dict) -> int:
        """Wait for the runner (reaping, as they exit, the call's other children of ours: those made with
        clone(CLONE_PARENT)), then kill the call's init, which ends every process left in its namespace.
        The init's exit is reported only once they are all gone (and ours reaped). The runner's status."""
        while waited[runner] is None:
            if not self._reap_child(0, factory, waited):  # cannot happen (the runner is our child)
                waited[runner] = SETUP_FAILED_EXIT << 8
        kill_by_pidfd(init_pidfd)
        give_up = time.monotonic() + 10.0
        while not select.select([init_pidfd], [], [], 0.005)[0] and time.monotonic() < give_up:
            while self._reap_child(os.WNOHANG, factory, waited):
                pass
        while self._reap_child(os.WNOHANG, factory, waited):
            pass
        os.close(init_pidfd)
        return waited.pop(runner)

    @staticmethod
    def _reap_child(flags: int, factory: subprocess.Popen, waited: dict) -> bool:
        """Reap one exited child of the zygote (waiting for one unless os.WNOHANG); a runner's status is
        kept in `waited`. False when there was none to reap."""
        try:
            pid, status = os.waitpid(-1, flags)
        except InterruptedError:
            return True
        except ChildProcessError:
            return False
        if pid == 0:
            return False
        if pid in waited:
            waited[pid] = status
        elif pid == factory.pid:
            factory.returncode = status  # gone: its inits died with it (parent-death signal)
        return True

    def _prefork_call(self, zygote_sock: socket.socket, cgroup: str) -> tuple[int, socket.socket | None, int | None]:
        """Fork the next call's init, which forks its runner; the runner waits for its order. (pid, the
        runner's order socket, status pipe), or (-1, None, None) when no process can be made."""
        order, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        status_r, status_w = os.pipe()
        try:
            init = fork_pid_namespace() if self.pid_namespace else os.fork()
        except OSError:  # no PID namespace here after all (a container may refuse it even to root)
            self.pid_namespace = False
            try:
                init = os.fork()
            except OSError:
                init = -1
        if init == 0:
            zygote_sock.close()
            order.close()
            os.close(status_r)
            self._call_init(theirs, status_w, cgroup)  # never returns
        theirs.close()
        os.close(status_w)
        if init < 0:
            order.close()
            os.close(status_r)
            return -1, None, None
        return init, order, status_r

    def _call_init(self, runner_channel: socket.socket, status_w: int, cgroup: str = "") -> None:
        """The call's init (forked by the zygote; never returns). It forks the runner at once, reaps every
        process of the call that exits, and once the runner has exited, passes its status on and exits,
        which (as a PID namespace's init) ends every process still in the namespace.

        Orphans of the call, and children made with clone(CLONE_PARENT) by the runner, are this process's
        children, reaped at once: no zombie of a call counts against the worker uid's process limit.
        Without a PID namespace (no root) it is a child subreaper instead, and the server kills what is
        left when it exits."""
        try:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if not self.pid_namespace:
                prctl(PR_SET_CHILD_SUBREAPER, 1)
            if cgroup:  # the call's memory cgroup: the runner, forked next, is born in it
                MemoryCgroups.join(cgroup)
            runner = os.fork()
            if runner == 0:
                os.close(status_w)
                self._waiting_runner(runner_channel)  # never returns
            runner_channel.close()
            while True:
                try:
                    pid, status = os.waitpid(-1, 0)
                except ChildProcessError:
                    break
                except InterruptedError:
                    continue
                if pid == runner:
                    os.write(status_w, struct.pack(">i", status))
                    break
        except BaseException as e:  # noqa: BLE001
            os.write(2, f"sandbox call init failed: {type(e).__name__}: {e}\n".encode())
            os._exit(SETUP_FAILED_EXIT)
        os._exit(0)

    def _waiting_runner(self, channel: socket.socket) -> None:
        """The runner before its call: make what only its call will use (`_own_kernel_state`), wait for the
        order (its pipe ends), then run. EOF (the server is gone): exit. (A runner made by
        `_prefork_in_namespace` also holds the write end of its `started` pipe: `_runner` closes it with
        every other fd it does not need, once it has read its request.)"""
        try:
            self._own_kernel_state()
            msg, fds, _, _ = socket.recv_fds(channel, 4096, 8)
            if not msg:
                os._exit(0)
            channel.close()
        except BaseException as e:  # noqa: BLE001
            os.write(2, f"sandbox runner setup failed: {type(e).__name__}: {e}\n".encode())
            os._exit(SETUP_FAILED_EXIT)
        self._runner(fds)  # never returns

    def _own_kernel_state(self) -> None:
        """Kernel state of the call's own, made while the runner waits for its order (off the call's path):
        with mount namespaces, its own mount and IPC namespaces (System V and POSIX IPC objects die with
        the call) and its own ptys (`_own_ptys`); a network namespace of its own (where the server has
        one: network "none"), so the sockets a call leaves (TIME_WAIT, a listener kept in flight) never
        hold a port of the next call's; and a seccomp filter refusing the calls that take from a budget
        the kernel counts for the whole host with nothing to bound it per call
        (`linux.HOST_BUDGET_SYSCALLS`: AIO events, io_uring)."""
        if self.private_tmp:
            unshare(CLONE_NEWNS | CLONE_NEWIPC)
            _own_ptys()
        if self.config.get("network") == "none":
            try:
                unshare(CLONE_NEWNET)
                loopback_up()
            except OSError:  # not allowed here (no root): the calls share the server's (README, "Across calls")
                pass
        deny_syscalls(HOST_BUDGET_SYSCALLS)

    def _from_zygote(self, what: str) -> int:
        try:
            self._zygote_sock.settimeout(30.0)
            data = b""
            while len(data) < 4:
                chunk = self._zygote_sock.recv(4 - len(data))
                if not chunk:
                    raise EOFError("the zygote closed its channel")
                data += chunk
        except (OSError, EOFError) as e:
            self._zygote_pid = None
            raise RuntimeError(f"the zygote failed ({what}): {e}") from None
        return struct.unpack(">i", data)[0]

    def _fork_runner(self, fds: list[int], memory_limit: int | None = None) -> int:
        """Start the call the zygote has made ready (its init and waiting runner, already in a fresh memory
        cgroup): set the cgroup's limit, send the runner its pipe ends. The pid whose exit ends the call:
        the runner (its init came from the factory), or the init the zygote forked (which exits after
        the runner)."""
        try:
            self._zygote_sock.settimeout(30.0)
            head, got, _, _ = socket.recv_fds(self._zygote_sock, 12, 1)
            pid, init, n = struct.unpack(">iii", head) if len(head) == 12 else (-1, -1, 0)
            cgroup = self._recv_exact(n).decode() if n > 0 else ""
        except (OSError, EOFError, ValueError) as e:
            self._zygote_pid = None
            raise RuntimeError(f"the zygote failed: {e}") from None
        if pid <= 0 or len(got) != 1:  # not a ready call: the channel is out of step, or no fork was possible
            for fd in got:
                os.close(fd)
            self._zygote_pid = None
            raise RuntimeError("the zygote could not fork a runner")
        self._watched_pid, self._init_pid = pid, init
        order = socket.socket(fileno=got[0])
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
                self._from_zygote("ending a runner without its memory limit")
                raise RuntimeError(f"cannot set the call's memory limit: {e}") from None
        try:
            socket.send_fds(order, [b"f"], fds)
        except OSError:
            pass  # the runner is gone already: the call reports nothing, and the zygote sends its status
        finally:
            order.close()
        return pid

    def _recv_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self._zygote_sock.recv(n - len(data))
            if not chunk:
                raise EOFError("the zygote closed its channel")
            data += chunk
        return data

    def run(self, req: dict, control_fd: int | None = None) -> dict:
        uid = req.get("uid")
        # With mount namespaces, a call gets a fresh tmpfs as its /tmp (made by the runner, gone with
        # its namespace); otherwise a fresh directory under work_dir, owned by the call's uid.
        call_dir = None
        if not self.private_tmp:
            call_dir = tempfile.mkdtemp(prefix="c", dir=self.config["work_dir"])
            if uid is not None:
                os.chown(call_dir, uid, uid)
        nonce = secrets.token_hex(16)
        pipes = {name: os.pipe() for name in ("stdout", "stderr", "result", "request")}
        start = time.monotonic()
        ends = [pipes["stdout"][1], pipes["stderr"][1], pipes["result"][1], pipes["request"][0]]
        limits = req["limits"]
        try:
            # The call's memory, its tmpfs included (tmp_mb comes on top of memory_mb).
            total = limits.get("total_memory_bytes")
            pid = self._fork_runner(ends, total + (limits.get("tmp_bytes") or 0) if total else None)
            cgroup = self._cgroup
        except (RuntimeError, OSError):
            for r, w in pipes.values():
                os.close(r)
                os.close(w)
            self._empty_cgroup()
            raise
        for fd in ends:
            os.close(fd)
        # The runner waits for its request, written below, so it is still alive here: its pidfd is taken
        # before it can exit. Once it exits the zygote reaps it at once, and its pid may be gone (or another
        # process's) by the time we look; a fast program used to finish in that window.
        pidfd = open_pidfd(pid)
        out = _Streams(
            {name: pipes[name][0] for name in ("stdout", "stderr", "result")},
            {"stdout": req["max_output_bytes"], "stderr": req["max_output_bytes"], "result": MAX_RESULT_BYTES},
        )
        status, limit_hit = None, False
        try:
            try:  # the request goes to this runner alone (the zygote never sees it)
                _send_request(pipes["request"][1], req, nonce, call_dir)
            except OSError:
                pass  # the runner died at once: it reports nothing, which grades as a failure
            os.close(pipes["request"][1])
            ended = "exited"
            if pidfd is not None:
                ended = self._wait(
                    pidfd,
                    out,
                    start + req["timeout_s"],
                    req["output_limit_bytes"],
                    req.get("yield_if_idle"),
                    nonce,
                    self._call_processes,
                    self._memory_check(limits.get("total_memory_bytes")),
                    control_fd,
                )
            if ended != "exited":
                kill_by_pidfd(pidfd)
            status = self._from_zygote("waiting for the runner")  # the zygote reaps its child
            if ended == "exited" and cgroup is not None and self.cgroups.oom_kills(cgroup) > self._oom_kills_before:
                ended = "memory"  # the kernel ended a process of the call at the limit
            limit_hit = cgroup is not None and self.cgroups.limit_hits(cgroup) > self._limit_hits_before
            self._kill_all(uid)  # whatever else of the call is alive dies now ...
            out.drain(until=time.monotonic() + 2.0)  # ... so every write end is closed: read to EOF
        finally:
            if status is None and self.zygote_alive():
                # Something failed mid-call. The zygote's next message is this runner's wait status: read
                # it now, or the next call would take it for its runner's pid (and every later reply
                # would be one call late).
                kill_by_pidfd(pidfd)
                try:
                    self._from_zygote("waiting for the runner")
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

    def _empty_cgroup(self) -> None:
        """Kill whatever is left in the call's memory cgroup (normally nothing). The zygote hands the group
        to a later call: one that cannot be emptied must not be, so the server then stops (as when its
        zygote is gone), and the one started in its place makes groups of its own."""
        if self._cgroup is None:
            return
        if not self.cgroups.empty(self._cgroup):
            os.write(2, f"sandbox: {self._cgroup} still has processes after SIGKILL; restarting\n".encode())
            self._zygote_pid = None
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
        return below_zygote + descendants(os.getpid(), skip=self._zygote_pid)

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
                self._zygote_pid = None
                return False
            if pid == 0:
                break
            if pid == self._zygote_pid:
                self._zygote_pid = None
        return any(p != self._zygote_pid for p in children(os.getpid()))

    # ------------------------------------------------------------------ runner
    def _runner(self, fds: list[int]) -> None:
        """Runner side (forked by the zygote): read the request, isolate, drop privileges, run. Never returns.

        The tests come in a second message (`_send_request`). Graded out of process with mount namespaces,
        the candidate's process is forked before that message is read (`_fork_candidate`): its memory is a
        copy of a process that never held the tests, and the tests' files are mounted only in the tests'
        own mount namespace."""
        stdout_w, stderr_w, result_w, request_r = fds
        try:
            os.setsid()
            req = read_msg(request_r)
            nonce, call_dir = req.pop("nonce"), req.pop("call_dir")
            devnull = os.open(os.devnull, os.O_RDONLY)
            targets = [devnull, stdout_w, stderr_w, result_w, request_r]
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in targets]
            for target, fd in enumerate(high):
                os.dup2(fd, target)
            os.closerange(REQUEST_FD + 1, 1 << 20)  # the protocol channel included
            root = self._mount_call(req, call_dir)
            workdir = os.path.join(root, "work")
            os.mkdir(workdir, 0o700)
            if req.get("uid") is not None:
                os.chown(workdir, req["uid"], req["uid"])
            candidate = None
            if req.pop("test_follows", False):
                if req.get("trust") == "out_of_process" and self.private_tmp:
                    candidate = self._fork_candidate(req, root, workdir)
                req["test"] = read_msg(REQUEST_FD)
            os.close(REQUEST_FD)
            if req.get("trust") == "out_of_process":
                req["trusted_dir"] = trusted_files(req, self.private_tmp, call_dir)
            self._drop_privileges(req)
            _enter_workdir(root, workdir)
        except BaseException as e:  # noqa: BLE001
            os.write(2, f"sandbox setup failed: {type(e).__name__}: {e}\n".encode())
            os._exit(SETUP_FAILED_EXIT)
        self.harness.main(req, workdir, RESULT_FD, nonce, candidate)  # calls os._exit

    def _fork_candidate(self, req: dict, root: str, workdir: str) -> int:
        """Graded out of process (as root, before the tests are read): fork the candidate's process, in a
        PID namespace of its own whose /proc it mounts (it sees its own processes only, nothing of the
        tests' process or the call's init), and in a mount namespace of its own; then move the tests'
        process into another mount namespace, where its files will be mounted. The fd of the tests' end
        of the channel; never returns in the candidate's process."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = fork_pid_namespace() if self.pid_namespace else os.fork()
        if pid == 0:
            try:
                ours.close()
                os.close(REQUEST_FD)  # the tests are still in that pipe: never readable from here
                os.close(RESULT_FD)  # no report channel either
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the tests' process gone: so is the candidate
                unshare(CLONE_NEWNS)
                if self.pid_namespace:
                    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
                self._drop_privileges(req)
                _enter_workdir(root, workdir)
            except BaseException as e:  # noqa: BLE001
                os.write(2, f"sandbox setup failed: {type(e).__name__}: {e}\n".encode())
                os._exit(SETUP_FAILED_EXIT)
            self.harness.candidate(req, workdir, theirs)  # calls os._exit
        theirs.close()
        # Mounts made from here on (the tests' tmpfs) are in this namespace only: the candidate's is a copy
        # made before them, and every mount is private (the server made its namespace's mounts private).
        unshare(CLONE_NEWNS)
        return ours.detach()

    def _mount_call(self, req: dict, call_dir: str | None) -> str:
        """As root, with mount namespaces (the call's own already: `_own_kernel_state`): its tmpfs over
        every world-writable directory, and the /proc of its PID namespace. Returns the directory the
        call sees as its /tmp."""
        if not self.private_tmp:
            return call_dir
        # A private, size-capped /tmp (also seen at every world-writable directory found at start:
        # /var/tmp, /dev/shm, /run/lock...) that no other call can reach; it disappears with the
        # mount namespace when the call's last process is gone, and caps the call's disk writes.
        uid = req.get("uid")
        owner = f",uid={uid},gid={uid}" if uid is not None else ""
        mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700,size={req['limits']['tmp_bytes']}{owner}")
        for target in self.bind_targets:
            if os.path.isdir(target) and not within(target, "/tmp"):
                try:
                    mount("/tmp", target, None, MS_BIND)
                except OSError:
                    pass  # e.g. already covered through a bind above it
        if self.pid_namespace:
            # /proc of the call's own PID namespace: the call sees its own processes only (no other
            # call's /proc/<pid>/cwd, no host command lines).
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        return "/tmp"

    @staticmethod
    def _drop_privileges(req: dict) -> None:
        """Rlimits, then the call's uid, fresh keyrings, no new privileges."""
        uid = req.get("uid")
        limits = req["limits"]
        setrlimit_capped(resource.RLIMIT_CORE, 0)
        setrlimit_capped(resource.RLIMIT_AS, limits["memory_bytes"])
        setrlimit_capped(resource.RLIMIT_CPU, limits["cpu_s"], limits["cpu_s"] + 1)
        setrlimit_capped(resource.RLIMIT_NOFILE, limits["nofile"])
        setrlimit_capped(resource.RLIMIT_FSIZE, limits["fsize_bytes"])
        if uid is not None:
            setrlimit_capped(resource.RLIMIT_NPROC, limits["nproc"])
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            fresh_keyrings()
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        # If the server dies, so does the runner. Set after setresuid, which clears this setting.
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _own_ptys() -> None:
    """A devpts instance of the call's own over /dev/pts, with /dev/ptmx its multiplexer: the call opens at
    most PTY_MAX ptys (the host has kernel.pty.max, ~4096, for everyone; an instance other than the host's
    cannot take the 1024 it keeps in reserve either), and they go with the call's mount namespace."""
    try:
        options = f"newinstance,ptmxmode=0666,mode=0620,max={PTY_MAX}"
        mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, options)
        mount("/dev/pts/ptmx", "/dev/ptmx", None, MS_BIND)
    except OSError as e:  # no devpts or no /dev/ptmx here: the call uses the host's, unbounded
        os.write(2, f"sandbox: no devpts instance for the call ({e})\n".encode())


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
    """The request in two messages: everything but the tests, then the tests. The runner reads the second
    only once it no longer needs to fork the candidate's process (`Supervisor._runner`)."""
    head = {k: v for k, v in req.items() if k != "test"}
    write_msg(fd, {**head, "nonce": nonce, "call_dir": call_dir, "test_follows": "test" in req})
    if "test" in req:
        write_msg(fd, req["test"])


def _enter_workdir(root: str, workdir: str) -> None:
    """The program's working directory and environment (nothing of the server's)."""
    os.chdir(workdir)
    env = dict(BASE_ENV, HOME=workdir, TMPDIR=root, USER="sandbox", PWD=workdir)
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None
    sys.dont_write_bytecode = True
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def trusted_files(req: dict, mounted: bool, call_dir: str | None) -> str:
    """Out-of-process grading: the test files, where the tests' process reads them. As root, a read-only
    tmpfs of root's mounted in the tests' own mount namespace (`Supervisor._fork_candidate`): the
    candidate's view of the filesystem has no such mount, only an empty directory. Without mount
    namespaces, a plain directory the candidate can read (the fallback without root)."""
    path = "/tmp/trusted" if mounted else os.path.join(call_dir, "trusted")
    os.makedirs(path, mode=0o755, exist_ok=True)
    if mounted:
        mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    names = {"pytest": ["test_solution.py"], "unittest": ["test.py"], "humaneval": ["test.py"]}[req["harness"]]
    for name in names:
        with open(os.path.join(path, name), "w", encoding="utf-8") as f:
            f.write(req["test"])
    with open(os.path.join(path, "pytest.ini"), "w") as f:
        f.write("[pytest]\n")
    if mounted:
        mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_BIND)
    return path


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


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
