"""Thin wrappers of the Linux calls the server needs that Python 3.11's standard library lacks (mount,
unshare, prctl, clone into a new PID namespace, keyrings, pidfds), and their ABI constants.

Standard library only (ctypes); loaded under the sandbox interpreter.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import os
import resource
import signal
import socket
import struct

# Linux ABI constants (not exposed by the Python 3.11 stdlib).
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
# keyctl(2): the syscall number per architecture (glibc has no wrapper), and its operations.
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_PROCESS_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -2, -4, -5
# clone(2), called directly for a child in a new PID namespace (see fork_pid_namespace)
SYS_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)
MS_NOEXEC = 8

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.unshare.argtypes = [ctypes.c_int]
libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def check_rc(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    check_rc(libc.unshare(flags), "unshare")


def setns(fd: int, nstype: int) -> None:
    check_rc(libc.setns(fd, nstype), "setns")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    check_rc(libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def prctl(option: int, arg: int = 0) -> None:
    check_rc(libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


_pyapi = ctypes.pythonapi
_libc_gil = ctypes.PyDLL(None, use_errno=True)  # called with the GIL held, as os.fork calls fork()
_libc_gil.syscall.restype = ctypes.c_long


def fork_pid_namespace() -> int:
    """os.fork(), but the child is the first process (pid 1) of a new PID namespace.

    A namespace's init is special in the ways a call needs: every process created inside it, by fork or
    by clone(CLONE_PARENT), stays inside it, orphans are re-parented to it, and when it exits the kernel
    kills every process left in the namespace before the init's own exit is reported. unshare(CLONE_NEWPID)
    can be done only once per process (the zygote forks many), so the child is made with clone(2)
    directly, between the interpreter's own before/after-fork hooks (what os.fork does around fork()).
    """
    if SYS_CLONE is None:
        raise OSError(f"clone(CLONE_NEWPID) is not wired for {os.uname().machine}")
    _pyapi.PyOS_BeforeFork()
    pid = _libc_gil.syscall(
        ctypes.c_long(SYS_CLONE),
        ctypes.c_long(CLONE_NEWPID | signal.SIGCHLD),
        ctypes.c_long(0),
        ctypes.c_long(0),
        ctypes.c_long(0),
        ctypes.c_long(0),
    )
    if pid == 0:
        _pyapi.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    _pyapi.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone(CLONE_NEWPID): {os.strerror(err)}")
    return pid


MADV_COLLAPSE = 25
HUGE_PAGE = 2 << 20
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def collapse_anonymous_memory() -> int:
    """Back the private anonymous memory of this process (the heap of the preloaded libraries) by huge
    pages where whole aligned 2 MiB ranges allow (madvise MADV_COLLAPSE, Linux 6.1+; refused by kernels
    without it or with THP off: then nothing changes). The bytes collapsed.

    The server does it once, before it forks the zygote: each fork of the zygote then shares a huge page
    through one page-table entry instead of copying 512, and a runner's exit has that many fewer to take
    down. A runner that writes to such a page gets a 4 KiB copy, as before (the kernel splits the shared
    huge page's mapping in the writer, never copies 2 MiB), and no new fault gets a huge page (the
    ranges are not marked MADV_HUGEPAGE), so no call's memory grows by it."""
    done = 0
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return 0
    for line in lines:
        fields = line.split()
        if len(fields) < 5 or fields[1] != "rw-p" or (len(fields) > 5 and fields[5] != "[heap]"):
            continue  # private anonymous memory only (no file, no stack, no vDSO)
        start, end = (int(x, 16) for x in fields[0].split("-"))
        start, end = (start + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), end & ~(HUGE_PAGE - 1)
        if end - start >= HUGE_PAGE and libc.madvise(start, end - start, MADV_COLLAPSE) == 0:
            done += end - start
    return done


def loopback_up() -> None:
    """A fresh network namespace has only `lo`, and it is down; bring it up so local servers work."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, ifr))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


# seccomp(2) through prctl: a classic BPF program over `struct seccomp_data` (nr at offset 0, arch at 4).
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}.get(os.uname().machine)
# Calls that take from a budget the kernel counts for the whole host, with no namespace, rlimit or cgroup
# to bound it per call: io_setup (AIO events, fs.aio-max-nr, 65,536 for everyone) and io_uring_setup.
HOST_BUDGET_SYSCALLS = {"x86_64": (206, 425), "aarch64": (0, 425)}.get(os.uname().machine, ())


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def deny_syscalls(numbers: tuple[int, ...], errno_value: int = errno.ENOSYS) -> None:
    """A seccomp filter (inherited by every child, never removable) under which each syscall in `numbers`
    fails with `errno_value` (ENOSYS: as on a kernel without it) and every other is allowed. Needs
    no_new_privs or root. On another architecture's ABI (x86's 32-bit calls) nothing is denied."""
    if not numbers or AUDIT_ARCH is None:
        return
    prog = seccomp_program(numbers, errno_value)
    check_rc(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0), "seccomp")


@functools.lru_cache(maxsize=4)
def seccomp_program(numbers: tuple[int, ...], errno_value: int) -> _SockFprog:
    """The BPF program, built once (in the server, before the zygote forks: a call only installs it)."""
    n = len(numbers)
    program = [_SockFilter(BPF_LD_W_ABS, 0, 0, 4), _SockFilter(BPF_JEQ_K, 0, n + 1, AUDIT_ARCH)]
    program.append(_SockFilter(BPF_LD_W_ABS, 0, 0, 0))
    # the i-th test jumps, when equal, over the tests after it and the "allow" to the "deny"
    program += [_SockFilter(BPF_JEQ_K, n - i, 0, nr) for i, nr in enumerate(numbers)]
    program.append(_SockFilter(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    program.append(_SockFilter(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno_value))
    filters = (_SockFilter * len(program))(*program)
    prog = _SockFprog(len(program), filters)
    prog._keep = filters  # the array lives as long as the program that points to it
    return prog


def fresh_keyrings() -> None:
    """As the worker uid: join a new session keyring and empty the keyrings that outlive processes (the
    persistent keyring lasts days; the user keyrings last while any process of the uid does)."""
    if SYS_KEYCTL is None:
        return
    libc.syscall.restype = ctypes.c_long
    libc.syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None)
    persistent = libc.syscall(
        SYS_KEYCTL, KEYCTL_GET_PERSISTENT, ctypes.c_long(-1), ctypes.c_long(KEY_SPEC_PROCESS_KEYRING)
    )
    for keyring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING, *([persistent] if persistent > 0 else [])):
        libc.syscall(SYS_KEYCTL, KEYCTL_CLEAR, ctypes.c_long(keyring))


def setrlimit_capped(which: int, soft: int | None, hard: int | None = None) -> None:
    if soft is None:
        return
    hard = soft if hard is None else hard
    _, cur_hard = resource.getrlimit(which)
    if cur_hard != resource.RLIM_INFINITY:  # cannot raise a hard limit we do not hold
        soft, hard = min(soft, cur_hard), min(hard, cur_hard)
    resource.setrlimit(which, (soft, hard))


def open_pidfd(pid: int) -> int | None:
    """A pidfd for `pid`; None if it is already gone."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


def kill_by_pidfd(pidfd: int | None) -> None:
    """SIGKILL the process `pidfd` holds (never a later process that reused its pid); a no-op once it is gone."""
    if pidfd is None:
        return
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass


def write_text(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# --------------------------------------------------------------------------------------------------
# zygote
