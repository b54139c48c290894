"""The init factory: makes each call's init, the first process of a fresh PID namespace, cheaply.

Standard library only. The zygote starts it once, as a fresh interpreter without `site`
(`python -I -S -c <this file's text> FD`, a process of a few MB), and asks it for one init per call
over the socket FD. Forking it costs a small fraction of forking the zygote, whose copy of the preloaded
libraries (hundreds of MB of page tables to copy) would otherwise be forked once more per call only to
sit as the namespace's init.

For each request (one byte) the factory points its next child at a new PID namespace
(`setns` back to its own namespace, then `unshare(CLONE_NEWPID)`), forks the init, and answers with the
init's pid, a pidfd of it and an fd of the new namespace. The zygote joins that namespace for its next
child (`setns(CLONE_NEWPID)`) and forks the runner into it; the runner's children, orphans and
`clone(CLONE_PARENT)` siblings are all in the namespace. When the call is over the zygote kills the
init, and the kernel kills every process left in the namespace before the init's exit is reported.

The init runs nothing: it ignores SIGCHLD (so the kernel reaps at once every orphan of the call that is
re-parented to it: no zombie of a call counts against the worker uid's process limit) and sleeps until
it is killed, or until the factory dies (parent-death signal). The factory ignores SIGCHLD too, so
killed inits are reaped at once; it exits when the zygote closes the socket (or dies).
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import struct
import sys

CLONE_NEWPID = 0x20000000
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def make_init(own_namespace: int) -> tuple[int, int, int]:
    """Fork an init into a new PID namespace: (pid, pidfd, namespace fd). Never returns in the init."""
    # unshare(CLONE_NEWPID) makes a namespace for the *next* child, and only when the current one for
    # children is our own; setns to our own namespace first resets it after the previous request.
    _check(_libc.setns(own_namespace, CLONE_NEWPID), "setns to the factory's own PID namespace")
    _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
    pid = os.fork()
    if pid == 0:
        _init()
    try:
        pidfd = os.pidfd_open(pid)
        namespace = os.open("/proc/self/ns/pid_for_children", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        os.kill(pid, signal.SIGKILL)
        raise
    return pid, pidfd, namespace


def _init() -> None:
    """pid 1 of a call's namespace: hold it open, reap nothing by hand (SIGCHLD ignored), never return."""
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.closerange(3, 1 << 16)
        while True:
            signal.pause()
    finally:
        os._exit(0)


def serve(fd: int) -> None:
    parent = os.getppid()
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        return  # the zygote died before the signal was set
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # inits are reaped by the kernel, as they die
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    own_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    sock = socket.socket(fileno=fd)
    while sock.recv(1):
        try:
            pid, pidfd, namespace = make_init(own_namespace)
        except OSError as e:
            sock.sendall(struct.pack(">i", -max(e.errno or 1, 1)))
            continue
        try:
            socket.send_fds(sock, [struct.pack(">i", pid)], [pidfd, namespace])
        finally:
            os.close(pidfd)
            os.close(namespace)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
