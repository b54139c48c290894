"""Shared fixtures: one small sandbox per test module, and a check that nothing of a call survives it."""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import psutil
import pytest

from agentic_rl.sandbox import Sandbox

SANDBOX_DIR = Path(__file__).resolve().parents[2] / "agentic_rl" / "sandbox"


def load_sandbox_file(name: str):
    """A file of the sandbox loaded by path, as harness.py loads its siblings (they import none of the package)."""
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", SANDBOX_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


@pytest.fixture(scope="module")
def in_process():
    """Every grading forced in process (`out_of_process=False`): the route trust.py gives a test that needs it."""
    with make_sandbox(workers=2, out_of_process=False) as sb:
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
    """What the zygote keeps ready and belongs to no call, all of the zygote's uid: the next call's runner
    (a childless child of the zygote) and the init factory with the inits it made (childless), or where
    the zygote forks inits itself, the next call's init with its runner."""
    try:
        z = psutil.Process(zygote)
        owner = z.uids().real
        ready = []
        for child in z.children():
            below = child.children()
            if child.uids().real != owner or any(p.children() or p.uids().real != owner for p in below):
                continue
            ready += [child, *below]
        return ready
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
