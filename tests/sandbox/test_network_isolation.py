"""Issue #47: a graded submission reaches no network at all, the trainer's loopback included.

A run starts services on 127.0.0.1 (sampler servers, environment servers); a candidate that could reach one
could read other tasks' prompts or poison a rollout. Each call runs in a network namespace of its own with
only its own `lo` (`isolation.CallIsolation.prepare`): the host's loopback listeners (TCP, UDP, IPv6 and
abstract unix sockets, which belong to a network namespace too), DNS and every outward address are out of
reach, on both grading paths (tests out of process, and forced in process).
"""

from __future__ import annotations

import os
import socket

import pytest

from .conftest import make_sandbox, needs_root

pytestmark = needs_root

# The candidate probes and returns what it got; the test expects every probe blocked. Each probe gives up
# after a second: an unreachable network answers at once, a firewall that drops would only be slower.
PROBE = """
import socket

def _try(make, address):
    s = make()
    s.settimeout(1.0)
    try:
        s.connect(address)
        if s.type == socket.SOCK_DGRAM:  # UDP "connects" anywhere: only an answer proves a route
            s.send(b"ping")
            s.recv(16)
        return "reached"
    except OSError:
        return "blocked"
    finally:
        s.close()

def probe(tcp_port, udp_port, tcp6_port, abstract_name):
    out = {}
    out["tcp loopback"] = _try(socket.socket, ("127.0.0.1", tcp_port))
    out["udp loopback"] = _try(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), ("127.0.0.1", udp_port))
    if tcp6_port:
        out["tcp6 loopback"] = _try(lambda: socket.socket(socket.AF_INET6), ("::1", tcp6_port))
    out["abstract unix"] = _try(lambda: socket.socket(socket.AF_UNIX), "\\0" + abstract_name)
    for host in ("1.1.1.1", "8.8.8.8"):
        out["outward " + host] = _try(socket.socket, (host, 53))
    try:
        socket.getaddrinfo("example.com", 80)
        out["dns"] = "reached"
    except OSError:
        out["dns"] = "blocked"
    return out
"""
TEST = """
import unittest

class TestCases(unittest.TestCase):
    def test_nothing_is_reachable(self):
        result = probe({tcp}, {udp}, {tcp6}, {name!r})
        self.assertEqual(sorted(result.values()), ["blocked"] * len(result), result)
"""


@pytest.fixture(scope="module")
def listeners():
    """The test process's own services on the host's loopback: TCP, UDP, TCP over IPv6 (where the host has
    it) and an abstract unix socket."""
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    name = f"agentic-rl-test-{os.getpid()}"
    unix.bind("\0" + name)
    unix.listen(8)
    tcp6 = None
    try:
        tcp6 = socket.socket(socket.AF_INET6)
        tcp6.bind(("::1", 0))
        tcp6.listen(8)
    except OSError:
        tcp6 = None
    for s in (tcp, udp, unix, tcp6):
        if s is not None:
            s.setblocking(False)
    yield {"tcp": tcp, "udp": udp, "unix": unix, "tcp6": tcp6, "name": name}
    for s in (tcp, udp, unix, tcp6):
        if s is not None:
            s.close()


def _test_source(listeners) -> str:
    tcp6 = listeners["tcp6"].getsockname()[1] if listeners["tcp6"] is not None else 0
    return TEST.format(
        tcp=listeners["tcp"].getsockname()[1],
        udp=listeners["udp"].getsockname()[1],
        tcp6=tcp6,
        name=listeners["name"],
    )


def _nothing_arrived(listeners) -> None:
    for key in ("tcp", "unix", "tcp6"):
        if listeners[key] is not None:
            with pytest.raises(BlockingIOError):
                listeners[key].accept()
    with pytest.raises(BlockingIOError):
        listeners["udp"].recv(16)


def test_the_probe_sees_the_test_processs_listeners_without_the_sandbox(listeners):
    """The probe itself works: run here, outside any sandbox, it reaches the loopback listeners (so a
    "blocked" in the sandbox is the namespace's doing, not a broken probe)."""
    namespace: dict = {}
    exec(PROBE, namespace)  # noqa: S102 - the test's own probe, in the test process
    tcp6 = listeners["tcp6"].getsockname()[1] if listeners["tcp6"] is not None else 0
    got = namespace["probe"](
        listeners["tcp"].getsockname()[1], listeners["udp"].getsockname()[1], tcp6, listeners["name"]
    )
    assert got["tcp loopback"] == got["abstract unix"] == "reached", got
    listeners["tcp"].accept()[0].close()
    listeners["unix"].accept()[0].close()
    if listeners["tcp6"] is not None:
        assert got["tcp6 loopback"] == "reached", got
        listeners["tcp6"].accept()[0].close()
    listeners["udp"].recv(16)  # the UDP probe's ping arrived (no answer is sent: it reports blocked)


@pytest.mark.parametrize("out_of_process", [True, False], ids=["out_of_process", "in_process"])
def test_a_graded_submission_reaches_no_network(listeners, out_of_process):
    with make_sandbox(workers=1, out_of_process=out_of_process) as sb:
        report = sb.run_tests(PROBE, _test_source(listeners), harness="unittest", timeout_s=30.0)
    assert report.passed, report
    assert report.trust == ("out_of_process" if out_of_process else "in_process"), report
    _nothing_arrived(listeners)


def test_an_executed_snippet_reaches_no_network(listeners):
    tcp6 = listeners["tcp6"].getsockname()[1] if listeners["tcp6"] is not None else 0
    code = PROBE + (
        f"print(sorted(set(probe({listeners['tcp'].getsockname()[1]}, {listeners['udp'].getsockname()[1]}, "
        f"{tcp6}, {listeners['name']!r}).values())))\n"
    )
    with make_sandbox(workers=1) as sb:
        result = sb.execute(code, timeout_s=30.0)
    assert result.stdout == "['blocked']\n", result
    _nothing_arrived(listeners)
