"""Shared fixtures: one small sandbox per test module, and a check that nothing of a call survives it."""

from __future__ import annotations

import os
import time

import psutil
import pytest

from agentic_rl.sandbox import Sandbox

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="uid isolation, namespaces and hidden paths need root")


def make_sandbox(**overrides) -> Sandbox:
    """Fast to start (only pytest preloaded) and with small limits, so the hostile tests end quickly."""
    kwargs = dict(workers=2, preload=["pytest"], memory_mb=1024, timeout_s=5.0, test_timeout_s=10.0)
    kwargs.update(overrides)
    return Sandbox(**kwargs).start()


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox() as sb:
        yield sb


def stray_processes(sb: Sandbox, wait_s: float = 3.0) -> list[psutil.Process]:
    """Processes of finished calls still around: any process of a worker uid, or anything under a
    worker's server but its zygote. (Polls a little: a process killed at the end of a call may still be
    exiting.)"""
    deadline = time.monotonic() + wait_s
    servers = [psutil.Process(pid) for pid in sb.server_pids]
    zygotes = set(sb.zygote_pids)
    while True:
        waiting = {p.pid for z in zygotes for p in _next_call(z)}
        found = {
            p.pid: p
            for server in servers
            for p in server.children(recursive=True)
            if p.pid not in zygotes and p.pid not in waiting
        }
        if sb.worker_uids:
            for p in psutil.process_iter(["uids"]):
                uids = p.info["uids"]
                if uids and uids.real in sb.worker_uids:
                    found[p.pid] = p
        live = [p for p in found.values() if _alive(p)]
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.05)


def _next_call(zygote: int) -> list[psutil.Process]:
    """The next call's init and runner, forked by the zygote ahead of time (they wait for an order and
    belong to no call): exactly one child of the zygote with exactly one child, neither of a worker uid."""
    try:
        inits = psutil.Process(zygote).children()
        if len(inits) != 1:
            return []
        runners = inits[0].children()
        if len(runners) != 1 or runners[0].children() or runners[0].uids().real != inits[0].uids().real:
            return []
        return [inits[0], runners[0]]
    except psutil.Error:
        return []


def _alive(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def no_strays(sandbox):
    """Use in a test: after it, no process of any call may be left."""
    yield
    assert stray_processes(sandbox) == []
