"""The zygote: a process forked from the server before it reads any request, which makes each call's
processes (its init, in a new PID namespace as root, and its runner, in the call's memory cgroup) before
the call is asked for, and reports each runner's end. `Zygote` is both sides of that channel: the loop in
the zygote, and what the server (supervisor.py) reads from it. `FactoryCalls` is the zygote's loop while
the init factory (nsinit.py) makes the inits."""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from agentic_rl.sandbox.cgroups import MemoryCgroups
from agentic_rl.sandbox.isolation import BASE_ENV, SETUP_FAILED_EXIT, CallIsolation
from agentic_rl.sandbox.linux import (
    CLONE_NEWPID,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_PDEATHSIG,
    fork_pid_namespace,
    kill_by_pidfd,
    prctl,
    setns,
)
from agentic_rl.sandbox.procfs import children


def _read_nsinit() -> str | None:
    """nsinit.py's text, read when this module is imported: before the server hides the repository."""
    try:
        return (Path(__file__).resolve().parent / "nsinit.py").read_text(encoding="utf-8")
    except OSError:
        return None


NSINIT_SOURCE = _read_nsinit()


class ReadyCall:
    """A call the zygote made ready, as the server receives it: the pid whose exit ends the call (the
    runner, or the init the zygote forked), the call's init, the runner's order socket, its memory cgroup."""

    def __init__(self, pid: int, init: int, order: socket.socket, cgroup: str) -> None:
        self.pid, self.init, self.order, self.cgroup = pid, init, order, cgroup


class Zygote:
    """The zygote process (started here, in the server) and its channel."""

    def __init__(
        self,
        isolation: CallIsolation,
        cgroups: MemoryCgroups | None,
        close_fds: tuple[int, ...],
    ) -> None:
        self.isolation = isolation
        self.cgroups = cgroups
        self.runner_fds: list[int] = []  # in the zygote: fds its runners close before they wait
        self.pid, self._sock = self._start(close_fds)

    # ------------------------------------------------------------------ the server's side
    def alive(self) -> bool:
        return self.pid is not None

    def status(self, what: str) -> int:
        """The next 4-byte word from the zygote: the wait status of the runner of the call that ended."""
        try:
            self._sock.settimeout(30.0)
            data = b""
            while len(data) < 4:
                chunk = self._sock.recv(4 - len(data))
                if not chunk:
                    raise EOFError("the zygote closed its channel")
                data += chunk
        except (OSError, EOFError) as e:
            self.pid = None
            raise RuntimeError(f"the zygote failed ({what}): {e}") from None
        return struct.unpack(">i", data)[0]

    def next_call(self) -> ReadyCall:
        """The call the zygote has made ready (its init and waiting runner, already in a fresh memory cgroup).
        RuntimeError (and the zygote counted as gone) when the channel fails or no fork was possible."""
        try:
            self._sock.settimeout(30.0)
            head, got, _, _ = socket.recv_fds(self._sock, 12, 1)
            pid, init, n = struct.unpack(">iii", head) if len(head) == 12 else (-1, -1, 0)
            cgroup = self._recv_exact(n).decode() if n > 0 else ""
        except (OSError, EOFError, ValueError) as e:
            self.pid = None
            raise RuntimeError(f"the zygote failed: {e}") from None
        if pid <= 0 or len(got) != 1:  # not a ready call: the channel is out of step, or no fork was possible
            for fd in got:
                os.close(fd)
            self.pid = None
            raise RuntimeError("the zygote could not fork a runner")
        return ReadyCall(pid, init, socket.socket(fileno=got[0]), cgroup)

    def _recv_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self._sock.recv(n - len(data))
            if not chunk:
                raise EOFError("the zygote closed its channel")
            data += chunk
        return data

    # ------------------------------------------------------------------ the zygote's side
    def _start(self, close_fds: tuple[int, ...]) -> tuple[int, socket.socket]:
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

    def _zygote_loop(self, sock: socket.socket) -> None:
        """In the zygote: make a call's processes ready, hand the server the pid whose exit ends the call,
        the call's init and the runner's order socket; wait for the call to end and send the runner's wait
        status; repeat. A call's processes are made before it is asked for, and wait, holding nothing: a
        call then starts without a fork on its path, with one message from server to runner.

        As root, each call has its own PID namespace, whose init never runs candidate code: when the
        call is over the init is gone, and so is every process of the call. The init comes from the small
        factory process (nsinit.py; see `FactoryCalls.run`) while it works; otherwise it is forked here
        (`_prefork_call`), and the next call is made ready when a call is over."""
        factory = FactoryCalls.start_factory() if self.isolation.pid_namespace else None
        if factory is not None:
            # The inits the factory makes share its memory and have no parent-death signal: should it die
            # while it makes one, that init comes to us, and `_kill_orphaned_inits` ends it.
            prctl(PR_SET_CHILD_SUBREAPER, 1)
            own_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            self.runner_fds = [own_namespace]  # not the runners' (they close it)
            if not FactoryCalls(self).run(sock, factory):
                return  # the server is gone
            FactoryCalls.stop_factory(factory)
            try:  # our next child in our own namespace again (the last call's is gone with its init)
                setns(own_namespace, CLONE_NEWPID)
            except OSError:
                return  # the server sees the zygote gone, and is restarted
        while True:
            cgroup = self.new_cgroup()
            init, order, status_r = self._prefork_call(sock, cgroup.decode())
            try:
                if init > 0:
                    socket.send_fds(
                        sock,
                        [struct.pack(">iii", init, init, len(cgroup)) + cgroup],
                        [order.fileno()],
                    )
                else:
                    sock.sendall(struct.pack(">iii", init, 0, 0))
            except OSError:
                return  # the server is gone (the waiting init dies with us: its parent-death signal)
            if order is not None:
                order.close()
            if init <= 0:
                return
            self.advance_cgroup()
            _, status = os.waitpid(init, 0)
            got = os.read(status_r, 4)
            os.close(status_r)
            if len(got) == 4:  # the runner's own status, as the init saw it
                status = struct.unpack(">i", got)[0]
            try:
                sock.sendall(struct.pack(">i", status))
            except OSError:
                return

    def new_cgroup(self) -> bytes:
        """The memory cgroup for the next call (its path; see `MemoryCgroups` for the ring they come
        from), or b"" without (its memory is then polled only)."""
        if self.cgroups is None:
            return b""
        try:
            return self.cgroups.take().encode()
        except OSError:
            return b""

    def advance_cgroup(self) -> None:
        if self.cgroups is not None:
            self.cgroups.advance()

    def _prefork_call(self, zygote_sock: socket.socket, cgroup: str) -> tuple[int, socket.socket | None, int | None]:
        """Fork the next call's init, which forks its runner; the runner waits for its order. (pid, the
        runner's order socket, status pipe), or (-1, None, None) when no process can be made."""
        order, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        status_r, status_w = os.pipe()
        try:
            init = fork_pid_namespace() if self.isolation.pid_namespace else os.fork()
        except OSError:  # no PID namespace here after all (a container may refuse it even to root)
            self.isolation.pid_namespace = False
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
            if not self.isolation.pid_namespace:
                prctl(PR_SET_CHILD_SUBREAPER, 1)
            if cgroup:  # the call's memory cgroup: the runner, forked next, is born in it
                MemoryCgroups.join(cgroup)
            runner = os.fork()
            if runner == 0:
                os.close(status_w)
                self.waiting_runner(runner_channel)  # never returns
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

    def waiting_runner(self, channel: socket.socket) -> None:
        """The runner before its call: make what only its call will use (`CallIsolation.prepare`), wait for
        the order (its pipe ends), then run. EOF (the server is gone): exit. (A runner made by
        `FactoryCalls._prefork_in_namespace` also holds the write end of its `started` pipe:
        `CallIsolation.run` closes it with every other fd it does not need, once it has read its request.)"""
        try:
            self.isolation.prepare()
            msg, fds, _, _ = socket.recv_fds(channel, 4096, 8)
            if not msg:
                os._exit(0)
            channel.close()
        except BaseException as e:  # noqa: BLE001
            os.write(2, f"sandbox runner setup failed: {type(e).__name__}: {e}\n".encode())
            os._exit(SETUP_FAILED_EXIT)
        self.isolation.run(fds)  # never returns


class FactoryCalls:
    """The zygote's loop while the init factory works (see `run`)."""

    def __init__(self, zygote: Zygote) -> None:
        self.zygote = zygote

    def run(self, sock: socket.socket, factory: subprocess.Popen) -> bool:
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
                socket.send_fds(
                    sock,
                    [struct.pack(">iii", runner, init, len(cgroup)) + cgroup],
                    [order.fileno()],
                )
            except OSError:
                os.close(started)
                return False
            finally:
                order.close()
            self.zygote.advance_cgroup()
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
            self.zygote.cgroups.empty(cgroup.decode())

    def _ready_namespace_call(
        self,
        sock: socket.socket,
        factory: subprocess.Popen,
        waited: dict,
        other_fds: list[int],
        in_flight: int,
    ) -> tuple[int, int, int, socket.socket, bytes, int] | None:
        """(runner pid, init pid, init pidfd, the runner's order socket, cgroup, started: a pipe that reads
        EOF once the runner has read its request), or None when the factory failed. `in_flight`: the init of the
        call now running (0: none)."""
        cgroup = self.zygote.new_cgroup()
        try:
            runner, init, init_pidfd, order, started = self._prefork_in_namespace(
                sock, factory, cgroup.decode(), other_fds
            )
        except OSError as e:
            os.write(
                2,
                f"sandbox init factory failed ({e}); inits are forked by the zygote\n".encode(),
            )
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

    @staticmethod
    def start_factory() -> subprocess.Popen | None:
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
            os.write(
                2,
                f"sandbox init factory did not start ({e}); inits are forked by the zygote\n".encode(),
            )
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
    def stop_factory(factory: subprocess.Popen) -> None:
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

    def _prefork_in_namespace(
        self,
        zygote_sock: socket.socket,
        factory: subprocess.Popen,
        cgroup: str,
        other_fds: list[int],
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
            raise OSError(
                0,
                "the init factory is gone" if ready else "the init factory does not answer",
            )
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
                for fd in [
                    init_pidfd,
                    factory.pidfd,
                    started,
                    *other_fds,
                    *self.zygote.runner_fds,
                ]:  # type: ignore[attr-defined]
                    os.close(fd)
                if cgroup:  # the call's memory cgroup: everything the runner makes is born in it
                    MemoryCgroups.join(cgroup)
            except BaseException as e:  # noqa: BLE001
                os.write(
                    2,
                    f"sandbox runner setup failed: {type(e).__name__}: {e}\n".encode(),
                )
                os._exit(SETUP_FAILED_EXIT)
            self.zygote.waiting_runner(theirs)  # never returns (keeps started_w open until it has its request)
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
