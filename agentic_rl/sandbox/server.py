"""Warm fork server of `agentic_rl.sandbox`: its entry point, start-up and request loop.

Standard library only, and runnable by path (`python -I server.py CONFIG_JSON`), because the sandbox
interpreter may be a separate venv (`.venv-bcb`) without `agentic_rl` installed. The client side
(`agentic_rl.sandbox.client`) imports this package's `wire` for the framing.

One server per worker slot; it handles one call at a time, so everything it sees belongs to that call::

    server      root (or the caller's uid): heavy libraries pre-imported; never runs untrusted code.
     |          Own mount namespace (hidden paths) and network namespace (loopback only), made once.
     |          Per call: a memory cgroup (from a ring); have the zygote fork the call, enforce the deadline and the
     |          output cap, collect stdout/stderr/harness report, kill everything of the call, reply.
     +- zygote  forked before the first request is read, so it never holds request data (no call can
         |      read another task's tests back from the memory it was forked from); ahead of each call
         |      it has the factory make the call's init, forks the runner into the init's PID namespace,
         |      hands the server the runner's pid and order socket, and once the runner has exited and
         |      the init is killed (the namespace with it), sends the runner's wait status. The server
         |      sends the runner its pipe ends; the request goes from the server to the runner alone.
         +- factory  (nsinit.py, as root) a small fresh interpreter, started once: per call it makes an
         |   |       init in a new PID namespace with clone(CLONE_VM), sharing its memory (no fork of the
         |   |       zygote, no copy of anything); it kills the inits it made when it ends
         |   +- init  pid 1 of the call's PID namespace; runs only libc's pause, every signal blocked, and
         |            ignores SIGCHLD (the kernel reaps the call's orphans at once); killed when the runner
         |            has exited, and the kernel then kills whatever is left in the namespace
         |            (clone(CLONE_PARENT) children included)
         +- runner  pid 2 of that namespace, in the call's memory cgroup; new session, own mount and IPC
              |     namespaces with a fresh tmpfs as /tmp (also over every world-writable directory) and
              |     the namespace's own /proc, rlimits, the slot's unprivileged uid with empty keyrings,
              |     no_new_privs, scrubbed env; runs the code (harness.py); for a grading out of process
              |     it is the tests' process, and forks
              +- candidate  (isolated.py) the candidate's code, answering over a channel (remote.py)

Without root (no PID namespace), or if the factory cannot start, the zygote forks each call's init itself
(a child subreaper without root), and the init forks the runner.

Modules: `wire` (framing), `linux` (system calls), `mounts` (the server's namespaces), `cgroups` (memory
cgroups), `supervisor` (one call's lifecycle), `zygote` (the zygote: making each call's processes),
`isolation` (what a runner does to isolate its call), `nsinit` (the init factory), `procfs` (reading a
call's processes), `reports` (the harness report).

Protocol: the client writes requests to the server's stdin and reads replies from its stdout, each
message a 4-byte big-endian length and UTF-8 JSON. The first message is the server's "ready" report.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import json
import os
import signal
import sys
import threading
import traceback
import types

if __name__ == "__main__":
    # Run by path under the sandbox interpreter, where `agentic_rl` (and its dependencies) may not be
    # installed: its sibling modules are found through an empty package of this directory, without
    # running the package's __init__ (which imports the client side).
    _here = os.path.dirname(os.path.abspath(__file__))
    for _name, _path in (("agentic_rl", os.path.dirname(_here)), ("agentic_rl.sandbox", _here)):
        _package = types.ModuleType(_name)
        _package.__path__ = [_path]
        sys.modules[_name] = _package

from agentic_rl.sandbox.cgroups import MemoryCgroups  # noqa: E402
from agentic_rl.sandbox.isolation import BASE_ENV  # noqa: E402
from agentic_rl.sandbox.linux import (  # noqa: E402
    CLONE_NEWNET,
    PR_SET_CHILD_SUBREAPER,
    collapse_anonymous_memory,
    loopback_up,
    prctl,
    setns,
    unshare,
)
from agentic_rl.sandbox.mounts import enter_namespaces, world_writable_dirs  # noqa: E402
from agentic_rl.sandbox.procfs import vm_size  # noqa: E402
from agentic_rl.sandbox.supervisor import Supervisor  # noqa: E402
from agentic_rl.sandbox.wire import read_msg, write_msg  # noqa: E402

# The client and the benchmark use the framing and the network-namespace helpers through this module too.
__all__ = ["CLONE_NEWNET", "Supervisor", "loopback_up", "read_msg", "serve", "setns", "unshare", "write_msg"]


def _load_harness():
    """harness.py sits next to this file; load it by path (this file is not imported as a package)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness.py")
    spec = importlib.util.spec_from_file_location("agentic_rl_sandbox_harness", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _preload(names: list[str]) -> tuple[list[str], dict[str, str]]:
    loaded, failed = [], {}
    for name in names:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except BaseException as e:  # noqa: BLE001 - a broken optional library must not stop the server
            if isinstance(e, KeyboardInterrupt):
                raise
            failed[name] = f"{type(e).__name__}: {e}"
    return loaded, failed


def serve(config: dict) -> None:
    # The protocol channel gets private fds; fds 0/1 become /dev/null and stderr, so a library that
    # prints while importing (or later) cannot corrupt it.
    proto_in, proto_out = os.dup(0), os.dup(1)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    os.environ.clear()
    os.environ.update(BASE_ENV)
    os.environ["HOME"] = os.environ["TMPDIR"] = config["scratch_dir"]
    os.environ["MPLCONFIGDIR"] = os.path.join(config["scratch_dir"], "matplotlib")
    harness = _load_harness()
    loaded, failed = _preload(config["preload"])
    harness.warm_up()  # pytest's plugins (if any) and the tamper snapshots, shared by every call
    gc.freeze()  # forked calls then leave the preloaded objects' pages shared (fewer copy-on-write faults)
    huge_bytes = collapse_anonymous_memory()  # each fork of the zygote then copies fewer page-table entries
    private_tmp, hidden, isolation_errors = enter_namespaces(config)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    world_writable = world_writable_dirs() if private_tmp else []
    cgroups = None
    if config["privileged"]:
        cgroups, problem = MemoryCgroups.find()
        if problem:
            isolation_errors.append(f"{problem}: memory_mb binds only the call's anonymous memory, polled")
    supervisor = Supervisor(
        config,
        harness,
        private_tmp,
        world_writable,
        close_in_zygote=(proto_in, proto_out),
        cgroups=cgroups,
        pid_namespace=private_tmp,
    )
    write_msg(
        proto_out,
        {
            "ready": True,
            "pid": os.getpid(),
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "preloaded": loaded,
            "preload_failed": failed,
            "hidden": hidden,
            "isolation_errors": isolation_errors,
            "zygote_pid": supervisor.zygote_pid,
            "world_writable": world_writable,
            "memory_cgroup": cgroups.base if cgroups else None,
            "threads": threading.active_count(),
            "vm_bytes": vm_size(),
            "huge_page_bytes": huge_bytes,
        },
    )
    while True:
        try:
            req = read_msg(proto_in)
        except EOFError:
            return  # the client closed us, or died
        if isinstance(req, dict) and req.get("cancel"):
            continue  # a cancel that arrived after its call had ended
        try:
            reply = supervisor.run(req, control_fd=proto_in)
        except Exception as e:  # noqa: BLE001 - report, never leave the client waiting
            reply = {"error": f"server failed: {type(e).__name__}: {e}", "trace": traceback.format_exc()}
        write_msg(proto_out, reply)
        if not supervisor.zygote_alive():
            return  # a new zygote must not be forked from us (we hold requests): the client restarts us


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client stops us by closing our stdin
    serve(json.loads(sys.argv[1]))
