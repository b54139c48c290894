"""The init factory: makes each call's init, the first process of a fresh PID namespace, cheaply.

Standard library only. The zygote starts it once, as a fresh interpreter without `site`
(`python -I -S -c <this file's text> FD`, a process of a few MB), and asks it for one init per call
over the socket FD. The zygote's copy of the preloaded libraries (hundreds of MB of page tables) would
otherwise be forked once more per call only to sit as the namespace's init.

For each request (one byte) the factory makes the init with `clone(CLONE_NEWPID | CLONE_VM)`: pid 1
of a new PID namespace, sharing the factory's memory instead of a copy of it (no page tables to copy
when it is made, none to free when it dies), and answers with the init's pid, a pidfd of it and an fd
of its namespace. The zygote joins that namespace for its next child (`setns(CLONE_NEWPID)`) and forks
the runner into it; the runner's children, orphans and `clone(CLONE_PARENT)` siblings are all in the
namespace. When the call is over the zygote kills the init, and the kernel kills every process left
in the namespace before the init's exit is reported.

The init runs no Python: its one function is the C library's `pause`, on a stack of its own, with every
signal blocked, so it never returns to anything the factory's memory holds; only SIGKILL ends it (in a
single-threaded process `pause` is the bare system call, so it writes nothing of the thread state it
shares either). It holds copies of the files the factory had open when it was made, which it cannot
close: the zygote watches the factory's pidfd, not only its socket, to see it die. It inherits SIGCHLD
ignored, so the kernel reaps at once every orphan of the call that is re-parented to
it (no zombie of a call counts against the worker uid's process limit). A process sharing memory
cannot be given a parent-death signal of its own, so the factory kills the inits it made and that
still live when it ends: when the zygote closes the socket, or dies (the factory's parent-death
signal is SIGTERM, handled). The factory ignores SIGCHLD too, so killed inits are reaped at once.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import socket
import struct
import sys

CLONE_VM = 0x00000100
CLONE_NEWPID = 0x20000000
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.clone.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
_libc.clone.restype = ctypes.c_int
_PAUSE = ctypes.cast(_libc.pause, ctypes.c_void_p)
# The inits' stack. One is enough for all of them: an init uses it only on its way into `pause`, and
# with every signal blocked it never leaves the kernel again (no signal frame, no return).
_STACK = ctypes.create_string_buffer(1 << 16)
_STACK_TOP = (ctypes.addressof(_STACK) + len(_STACK) - 256) & ~0xF


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def make_init() -> tuple[int, int, int]:
    """Make an init in a new PID namespace: (pid, pidfd, namespace fd). Called with every signal blocked:
    the init keeps that mask."""
    pid = _libc.clone(_PAUSE, _STACK_TOP, CLONE_VM | CLONE_NEWPID | signal.SIGCHLD, None)
    err = ctypes.get_errno()
    if pid <= 0:
        raise OSError(err, f"clone(CLONE_NEWPID): {os.strerror(err)}")
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        os.kill(pid, signal.SIGKILL)  # still ours: nothing but us ends it, and it is not reaped unseen
        raise
    try:
        namespace = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        os.close(pidfd)
        raise
    return pid, pidfd, namespace


class _Inits:
    """The inits made and not yet known dead (pidfds): the factory kills them when it ends."""

    def __init__(self) -> None:
        self.pidfds: list[int] = []

    def add(self, pidfd: int) -> None:
        if self.pidfds:  # forget those the zygote has killed since (a dead process's pidfd reads ready)
            dead = set(select.select(self.pidfds, [], [], 0)[0])
            for fd in dead:
                os.close(fd)
            self.pidfds = [fd for fd in self.pidfds if fd not in dead]
        self.pidfds.append(pidfd)

    def kill_all(self) -> None:
        # Signal before dropping each: `end` may run between any two steps of this and go on with it.
        while self.pidfds:
            try:
                signal.pidfd_send_signal(self.pidfds[-1], signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.pidfds.pop()


def serve(fd: int) -> None:
    parent = os.getppid()
    inits = _Inits()

    def end(signum, frame) -> None:
        # The zygote died (our parent-death signal). Kill and exit here, not by raising: an exception
        # could land in the `finally` below before it has killed anything, or between making an init
        # and listing it (signals are blocked there, so this runs only once it is listed).
        inits.kill_all()
        os._exit(0)

    signal.signal(signal.SIGTERM, end)
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        return  # the zygote died before the signal was set
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # inits are reaped by the kernel, as they die
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    try:
        while sock.recv(1):
            # Every signal blocked until the new init is on the list: the init's mask, and a SIGTERM
            # (the zygote's death) handled before that would leave it unknown, and alive.
            unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
            try:
                pid, pidfd, namespace = make_init()
                inits.add(pidfd)
            except OSError as e:
                sock.sendall(struct.pack(">i", -max(e.errno or 1, 1)))
                continue
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
            try:
                socket.send_fds(sock, [struct.pack(">i", pid)], [pidfd, namespace])
            finally:
                os.close(namespace)
    finally:  # EOF or an error on the socket (a SIGTERM arriving meanwhile finishes the job in `end`)
        inits.kill_all()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
