"""Issue #47: nothing a call leaves outlives it, and no call takes a host-wide kernel budget.

* Each call has a network namespace of its own (made while the runner waits, off the call's path): a
  TIME_WAIT socket, or a listening socket kept in flight, left by a call never makes the next call's
  honest bind() of that port fail.
* Socket objects that no process owns (in flight in an SCM_RIGHTS cycle) are handed to the kernel's
  collector once the call's processes are gone, before the server replies: a memfd kept that way is no
  longer charged moments later.
* A call has a devpts instance of its own with at most `PTY_MAX` ptys (the host has ~4096 in all).
* A call cannot take the host's AIO events (io_setup) or io_uring: those calls fail with ENOSYS."""

from __future__ import annotations

import os
import time

import pytest

from agentic_rl.sandbox.isolation import PTY_MAX

from .conftest import make_sandbox, needs_root

pytestmark = needs_root

PORT = 47047
LEAVE_TIME_WAIT = f"""
import socket
srv = socket.socket()
srv.bind(("127.0.0.1", {PORT}))
srv.listen(1)
cli = socket.create_connection(("127.0.0.1", {PORT}))
conn, _ = srv.accept()
conn.close()  # the side that closes first keeps the connection in TIME_WAIT, on port {PORT}
cli.close()
srv.close()
print("left")
"""
LEAVE_LISTENER_IN_FLIGHT = f"""
import array, socket
srv = socket.socket()
srv.bind(("127.0.0.1", {PORT}))
srv.listen(1)
a, b = socket.socketpair(socket.AF_UNIX)
# a's own receive queue holds a and the listener: a cycle no process owns once the fds are closed
b.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [a.fileno(), srv.fileno()]))])
b.close(); srv.close(); a.close()  # no unix socket is released after a goes in flight
print("left")
"""
HONEST_BIND = f"""
import socket
s = socket.socket()
s.bind(("127.0.0.1", {PORT}))
s.listen(1)
print("bound")
"""
MEMFD_MB = 96
LEAVE_MEMFD_IN_FLIGHT = f"""
import array, os, socket
fd = os.memfd_create("kept")
os.write(fd, b"x" * ({MEMFD_MB} << 20))
a, b = socket.socketpair(socket.AF_UNIX)
b.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [a.fileno(), fd]))])
b.close(); os.close(fd); a.close()  # no unix socket is released after a goes in flight
print("left")
"""
TAKE_PTYS = """
import os
n = 0
try:
    while n < 400:
        os.openpty()
        n += 1
except OSError as e:
    print(n, e.errno)
else:
    print(n, 0)
"""
AIO = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ctx = ctypes.c_ulong(0)
rc = libc.syscall(206, 65536, ctypes.byref(ctx))  # io_setup(65536, &ctx): the host's whole AIO budget
print(rc, ctypes.get_errno())
params = (ctypes.c_char * 120)()
print(libc.syscall(425, 8, params), ctypes.get_errno())  # io_uring_setup
"""


@pytest.fixture(scope="module")
def one_worker():
    with make_sandbox(workers=1, memory_mb=512) as sb:  # one worker: every call in the same server
        yield sb


@pytest.mark.parametrize("leave", [LEAVE_TIME_WAIT, LEAVE_LISTENER_IN_FLIGHT], ids=["time_wait", "in_flight"])
def test_the_next_calls_bind_of_the_same_port_works(one_worker, leave):
    first = one_worker.execute(leave)
    assert first.ok and first.stdout == "left\n", first
    for _ in range(3):  # every call after it, whatever ring group it gets
        r = one_worker.execute(HONEST_BIND)
        assert r.ok and r.stdout == "bound\n", r


def _charged_bytes(sb) -> int:
    """What the sandbox's own call groups are charged: the ring of groups its zygote made under the server's group
    (`MemoryCgroups.take`). Not the server's group itself: where the server runs in the root group, that is the
    whole machine's memory, which any other job moves by more than the memfd (seen: +234 MB in 0.5 s beside a
    training run)."""
    base = sb.server_info.get("memory_cgroup")
    if not base:
        pytest.skip("no memory cgroup here")
    prefix = f"agentic_rl_sandbox-{sb.server_info['zygote_pid']}-"
    groups = [name for name in os.listdir(base) if name.startswith(prefix)]
    assert groups, f"no call group {prefix}* under {base}"
    total = 0
    for name in groups:
        with open(os.path.join(base, name, "memory.usage_in_bytes")) as f:
            total += int(f.read())
    return total


def test_objects_in_flight_are_collected_before_the_next_call(one_worker):
    one_worker.execute("print(1)")
    before = _charged_bytes(one_worker)
    r = one_worker.execute(LEAVE_MEMFD_IN_FLIGHT)
    assert r.ok and r.stdout == "left\n", r
    # The kernel's collector runs in a workqueue (Linux 6.10 on): the server queues it before it replies,
    # and nothing lets a process wait for it. Without that, the memfd stayed charged until some later
    # release of a unix socket (here, the next call's), over 0.7 s.
    deadline = time.monotonic() + 0.5
    while (after := _charged_bytes(one_worker)) - before >= (MEMFD_MB << 20) // 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert after - before < (MEMFD_MB << 20) // 2, (before, after)


def test_a_call_takes_at_most_its_own_ptys(one_worker):
    for _ in range(2):  # and the next call has as many again
        r = one_worker.execute(TAKE_PTYS)
        n, err = map(int, r.stdout.split())
        assert 1 <= n <= PTY_MAX and err != 0, r


def test_a_call_cannot_take_the_hosts_aio_budget(one_worker):
    if os.uname().machine != "x86_64":
        pytest.skip("syscall numbers above are x86_64's")
    r = one_worker.execute(AIO)
    assert r.ok, r
    (rc, err), (rc_uring, err_uring) = (map(int, line.split()) for line in r.stdout.splitlines())
    assert (rc, err) == (-1, 38) and (rc_uring, err_uring) == (-1, 38), r  # ENOSYS
