"""Warm fork server of `agentic_rl.sandbox`: the only code that runs under the sandbox interpreter.

Standard library only, and runnable by path (`python -I server.py CONFIG_JSON`), because the sandbox
interpreter may be a separate venv (`.venv-bcb`) without `agentic_rl` installed. The client side
(`agentic_rl.sandbox.sandbox`) imports this module only for the framing helpers and constants.

One server per worker slot; it handles one call at a time, so everything it sees belongs to that call::

    server      root (or the caller's uid): heavy libraries pre-imported; never runs untrusted code.
     |          Own mount namespace (hidden paths) and network namespace (loopback only), made once.
     |          A child subreaper: orphans of the call (setsid daemons too) become its children.
     |          Per call: have the zygote fork the runner, enforce the deadline and the output cap,
     |          collect stdout/stderr/harness report, kill everything of the call, reply.
     +- zygote  forked before the first request is read, so it never holds request data (no call can
     |   |      read another task's tests back from the memory it was forked from); per call it forks
     |   |      the runner with the pipes the server hands it, reports its pid and, later, its wait
     |   |      status. The request itself goes from the server to the runner alone, over a pipe.
         +- runner  new session, own mount and IPC namespaces with a fresh tmpfs as /tmp (also over
              |     every world-writable directory), rlimits, the slot's unprivileged uid with empty
              |     keyrings, no_new_privs, scrubbed env; runs the code (harness.py) and exits
              +- whatever the code starts: all killed when the call ends (orphans are re-parented
                 to the server, a child subreaper)

Protocol: the client writes requests to the server's stdin and reads replies from its stdout, each
message a 4-byte big-endian length and UTF-8 JSON. The first message is the server's "ready" report.
"""
from __future__ import annotations

import ctypes
import fcntl
import gc
import importlib
import importlib.util
import json
import math
import os
import resource
import secrets
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import traceback

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
RESULT_FD = 3  # the runner's harness report channel (stdout/stderr are fds 1 and 2)
MAX_RESULT_BYTES = 4 * 1024 * 1024
SETUP_FAILED_EXIT = 125
READ_CHUNK = 1 << 16
MEMORY_POLL_S = 0.25  # how often the summed memory of a call's processes is checked

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
SYS_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)
MS_NOEXEC = 8
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_PROCESS_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -2, -4, -5
# Where world-writable directories are looked for at server start (a bounded walk; see _world_writable_dirs).
WORLD_WRITABLE_SKIP = ("/proc", "/sys", "/dev")
WORLD_WRITABLE_DEPTH = 4

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


def write_msg(fd: int, obj: object) -> None:
    data = json.dumps(obj).encode("utf-8")
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_msg(fd: int, timeout_s: float | None = None) -> object:
    """Read one message; EOFError when the other side closed, TimeoutError past `timeout_s`."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    (n,) = struct.unpack(">I", _read_exact(fd, 4, deadline))
    if n > MAX_MESSAGE_BYTES:
        raise ValueError(f"message of {n} bytes is too large")
    return json.loads(_read_exact(fd, n, deadline).decode("utf-8"))


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError("no reply from the sandbox server")
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("the sandbox server closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# --------------------------------------------------------------------------------------------------
# thin libc wrappers

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


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
    pid = _libc_gil.syscall(ctypes.c_long(SYS_CLONE), ctypes.c_long(CLONE_NEWPID | signal.SIGCHLD),
                            ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
    if pid == 0:
        _pyapi.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    _pyapi.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone(CLONE_NEWPID): {os.strerror(err)}")
    return pid


def loopback_up() -> None:
    """A fresh network namespace has only `lo`, and it is down; bring it up so local servers work."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, ifr))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


class MemoryCgroups:
    """One memory cgroup (cgroup v1 `memory` controller) per call, made under the server's own group.

    The kernel then charges everything the call's processes allocate to it, whoever maps it or not:
    anonymous memory, shared memory and memfd pages, the call's tmpfs, kernel socket buffers. Past the
    limit the kernel's OOM killer ends a process of the call (counted in `memory.oom_control`), and the
    group lists the call's processes however they were made. A fresh group per call, removed after it,
    means nothing one call allocated is ever charged to the next.
    """

    def __init__(self, base: str) -> None:
        self.base = base
        self._n = 0
        self._stale: list[str] = []  # groups whose removal failed (a process still exiting): retried

    @classmethod
    def find(cls) -> "tuple[MemoryCgroups | None, str | None]":
        """The manager, or None and why not (no v1 memory controller, or no right to make groups)."""
        try:
            own = None
            with open("/proc/self/cgroup") as f:
                for line in f:
                    _, controllers, path = line.rstrip("\n").split(":", 2)
                    if "memory" in controllers.split(","):
                        own = path
            mount_root = mount_point = None
            with open("/proc/self/mountinfo") as f:
                for line in f:
                    fields = line.split()
                    fstype, opts = fields[fields.index("-") + 1], fields[-1].split(",")
                    if fstype == "cgroup" and "memory" in opts:
                        mount_root, mount_point = fields[3], fields[4]
        except (OSError, ValueError, IndexError) as e:
            return None, f"no memory cgroup ({e})"
        if own is None or mount_point is None or not _within(own, mount_root):
            return None, "no cgroup v1 memory controller"
        base = os.path.join(mount_point, os.path.relpath(own, mount_root))
        probe = os.path.join(base, f"agentic_rl_sandbox-{os.getpid()}-probe")
        try:
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError as e:
            return None, f"cannot make memory cgroups under {base} ({e})"
        return cls(os.path.normpath(base)), None

    def create(self, limit_bytes: int) -> str:
        self._remove_stale()
        self._n += 1
        path = os.path.join(self.base, f"agentic_rl_sandbox-{os.getpid()}-{self._n}")
        os.mkdir(path)
        try:
            _write_text(os.path.join(path, "memory.limit_in_bytes"), str(limit_bytes))
            try:  # no swapping either, where the kernel has swap accounting
                _write_text(os.path.join(path, "memory.memsw.limit_in_bytes"), str(limit_bytes))
            except OSError:
                pass
        except OSError:
            self.remove(path)
            raise
        return path

    @staticmethod
    def processes(path: str) -> list[int]:
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                return [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            return []

    @staticmethod
    def oom_kills(path: str) -> int:
        """How often the kernel ended a process of the group for going past its limit."""
        try:
            with open(os.path.join(path, "memory.oom_control")) as f:
                for line in f:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def remove(self, path: str) -> None:
        """Kill whatever is still in the group, then remove it (later, if a process is still exiting)."""
        for _ in range(200):
            pids = self.processes(path)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.rmdir(path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)
        self._stale.append(path)

    def _remove_stale(self) -> None:
        stale, self._stale = self._stale, []
        for path in stale:
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                self._stale.append(path)


def _write_text(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# --------------------------------------------------------------------------------------------------
# zygote


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


def _keep_paths() -> list[str]:
    """Directories the interpreter needs after start-up (lazy imports); they stay visible when hidden.

    Only the installation itself: other sys.path entries (an editable checkout of the project, say)
    are hidden with their parent.
    """
    import site

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable),
             os.path.dirname(os.path.realpath(sys.executable)), *site.getsitepackages()}
    real = sorted({os.path.realpath(p) for p in paths})
    # keep only outermost directories
    return [p for p in real if not any(q != p and _within(p, q) for q in real)]


def _hide_paths(hide: list[str], stage_dir: str, own_dir: str) -> list[str]:
    """In our private mount namespace, cover each directory in `hide` with an empty read-only tmpfs.

    Interpreter directories inside a hidden one are bind-mounted back at the same path (staged first,
    because the tmpfs covers the source). Every runner forked later inherits this view.
    """
    keep = _keep_paths()
    hidden = []
    for i, target in enumerate(sorted({os.path.realpath(p) for p in hide if os.path.isdir(p)})):
        if any(_within(target, k) for k in keep) or _within(own_dir, target):
            continue  # hiding part of the interpreter, or the server's own directory, would break us
        staged = []
        for j, k in enumerate(k for k in keep if _within(k, target)):
            stage = os.path.join(stage_dir, f"{i}-{j}")
            os.makedirs(stage, exist_ok=True)
            mount(k, stage, None, MS_BIND | MS_REC)
            staged.append((stage, k))
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        for stage, k in staged:
            os.makedirs(k, exist_ok=True)
            mount(stage, k, None, MS_BIND | MS_REC)
            _check(_libc.umount2(stage.encode(), MNT_DETACH), f"umount {stage}")
        mount(None, target, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        hidden.append(target)
    return hidden


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
    private_tmp, hidden, isolation_errors = _enter_namespaces(config)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    world_writable = _world_writable_dirs() if private_tmp else []
    cgroups = None
    if config["privileged"]:
        cgroups, problem = MemoryCgroups.find()
        if problem:
            isolation_errors.append(f"{problem}: memory_mb binds only the call's anonymous memory, polled")
    supervisor = Supervisor(config, harness, private_tmp, world_writable, close_in_zygote=(proto_in, proto_out),
                            cgroups=cgroups, pid_namespace=private_tmp)
    write_msg(proto_out, {
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
        "vm_bytes": _vm_size(),
    })
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


def _enter_namespaces(config: dict) -> tuple[bool, list[str], list[str]]:
    """Once per server: as root, a private mount namespace (where `hide_paths` get covered); and, for
    network "none", a network namespace with only loopback (without root: inside an unprivileged user
    namespace, where the kernel allows one). Each step that fails is reported, not fatal (a container
    may deny namespaces even to root). Returns (mount namespace made, hidden paths, problems)."""
    problems: list[str] = []
    mounts = False
    if config["privileged"]:
        try:
            unshare(CLONE_NEWNS)
            mount(None, "/", None, MS_REC | MS_PRIVATE)
            mounts = True
        except OSError as e:
            problems.append(f"no mount namespace ({e}): calls share the host's /tmp, no path is hidden")
    if config["network"] == "none":
        try:
            unshare(CLONE_NEWNET if config["privileged"] else CLONE_NEWUSER | CLONE_NEWNET)
        except OSError as e:
            problems.append(f"no network namespace ({e}): sandboxed code has the caller's network")
        else:
            try:
                loopback_up()
            except OSError as e:
                problems.append(f"loopback stays down: {e}")
    hidden: list[str] = []
    if mounts and config["hide_paths"]:
        scratch = config["scratch_dir"]
        try:
            hidden = _hide_paths(config["hide_paths"], os.path.join(scratch, "stage"), os.path.dirname(scratch))
        except OSError as e:
            problems.append(f"could not hide paths: {e}")
    return mounts, hidden, problems


def _world_writable_dirs() -> list[str]:
    """Directories every user may write to (/tmp, /var/tmp, /run/lock, /dev/shm...), found once at start.

    Each call gets its own tmpfs over all of them (the same one as its /tmp), so nothing written there
    outlives the call or counts outside the call's `tmp_mb`. The walk is bounded (depth 4, no /proc,
    /sys; of /dev only /dev/shm): a deeper world-writable directory would stay shared (README.md).
    """
    found = []
    for top in ["/", "/dev/shm"]:
        base_depth = top.rstrip("/").count("/")
        for root, dirs, _ in os.walk(top):
            depth = root.rstrip("/").count("/") - base_depth
            dirs[:] = [d for d in dirs if not (top == "/" and root == "/" and f"/{d}" in WORLD_WRITABLE_SKIP)
                       and depth < WORLD_WRITABLE_DEPTH]
            try:
                st = os.lstat(root)
            except OSError:
                continue
            if stat_is_world_writable_dir(st):
                found.append(root)
                dirs[:] = []  # what is below belongs to that tmpfs anyway
    return sorted(set(found))


def stat_is_world_writable_dir(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISDIR(st.st_mode) and bool(st.st_mode & stat.S_IWOTH)


def _vm_size() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


# --------------------------------------------------------------------------------------------------
# supervisor


class Supervisor:
    """Runs one call: has the zygote fork the runner, watches it, kills whatever is left of the call, reports."""

    def __init__(self, config: dict, harness, private_tmp: bool, world_writable: list[str],
                 close_in_zygote: tuple[int, ...] = (), cgroups: MemoryCgroups | None = None,
                 pid_namespace: bool = False) -> None:
        self.config = config
        self.harness = harness
        self.private_tmp = private_tmp
        self.world_writable = [d for d in world_writable if d != "/tmp"]
        self.cgroups = cgroups
        self.pid_namespace = pid_namespace
        self._cgroup: str | None = None  # the current call's memory cgroup
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
        """In the zygote: for each fork order (the runner's pipe ends, and the call's memory cgroup), fork
        the call's init (see `_call_init`), send its pid, wait for it and send the runner's wait status.

        The init is what the server watches and kills: as root, the first process of a new PID namespace,
        so when it exits nothing of the call is left. It never runs candidate code."""
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(sock, 4096, 8)
            except OSError:
                return
            if not msg:
                return  # the server is gone
            cgroup = msg[1:].decode() or None
            status_r, status_w = os.pipe()
            try:
                init = fork_pid_namespace() if self.pid_namespace else os.fork()
            except OSError:
                init = -1
            if init == 0:
                sock.close()
                os.close(status_r)
                self._call_init(fds, cgroup, status_w)  # never returns
            for fd in (*fds, status_w):
                os.close(fd)
            sock.sendall(struct.pack(">i", init))
            status = None
            if init > 0:
                _, status = os.waitpid(init, 0)
                got = os.read(status_r, 4)
                if len(got) == 4:  # the runner's own status, as the init saw it
                    status = struct.unpack(">i", got)[0]
            os.close(status_r)
            if status is not None:
                sock.sendall(struct.pack(">i", status))

    def _call_init(self, fds: list[int], cgroup: str | None, status_w: int) -> None:
        """The call's init (forked by the zygote; never returns): join the call's memory cgroup, fork the
        runner, reap every process of the call that exits, and once the runner has exited, pass its status
        on and exit, which (as a PID namespace's init) ends every process still in the namespace.

        Orphans of the call, and children made with clone(CLONE_PARENT) by the runner, are this process's
        children, reaped at once: no zombie of a call counts against the worker uid's process limit.
        Without a PID namespace (no root) it is a child subreaper instead, and the server kills what is
        left when it exits."""
        try:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if cgroup is not None:
                _write_text(os.path.join(cgroup, "cgroup.procs"), "0")
            if not self.pid_namespace:
                prctl(PR_SET_CHILD_SUBREAPER, 1)
            runner = os.fork()
            if runner == 0:
                os.close(status_w)
                self._runner(fds)  # never returns
            for fd in fds:
                os.close(fd)
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

    def _fork_runner(self, fds: list[int], cgroup: str | None = None) -> int:
        """Ask the zygote for a call (its init, which forks the runner) with these pipe ends; the init's pid."""
        try:
            socket.send_fds(self._zygote_sock, [b"f" + (cgroup or "").encode()], fds)
        except OSError as e:
            self._zygote_pid = None
            raise RuntimeError(f"the zygote failed: {e}") from None
        pid = self._from_zygote("forking a runner")
        if pid <= 0:  # not a pid: the channel is out of step, so the zygote can no longer be trusted
            self._zygote_pid = None
            raise RuntimeError("the zygote could not fork a runner")
        return pid

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
            cgroup = None
            if self.cgroups is not None and limits.get("total_memory_bytes"):
                # The call's memory, its tmpfs included (tmp_mb comes on top of memory_mb).
                cgroup = self.cgroups.create(limits["total_memory_bytes"] + (limits.get("tmp_bytes") or 0))
            self._cgroup = cgroup
            pid = self._fork_runner(ends, cgroup)
        except (RuntimeError, OSError):
            for r, w in pipes.values():
                os.close(r)
                os.close(w)
            if self._cgroup is not None:
                self.cgroups.remove(self._cgroup)
                self._cgroup = None
            raise
        for fd in ends:
            os.close(fd)
        # The runner waits for its request, written below, so it is still alive here: its pidfd is taken
        # before it can exit. Once it exits the zygote reaps it at once, and its pid may be gone (or another
        # process's) by the time we look; a fast program used to finish in that window.
        pidfd = _open_pidfd(pid)
        out = _Streams({name: pipes[name][0] for name in ("stdout", "stderr", "result")},
                       {"stdout": req["max_output_bytes"], "stderr": req["max_output_bytes"], "result": MAX_RESULT_BYTES})
        status = None
        try:
            try:  # the request goes to this runner alone (the zygote never sees it)
                write_msg(pipes["request"][1], {**req, "nonce": nonce, "call_dir": call_dir})
            except OSError:
                pass  # the runner died at once: it reports nothing, which grades as a failure
            os.close(pipes["request"][1])
            ended = "exited"
            if pidfd is not None:
                ended = self._wait(pidfd, out, start + req["timeout_s"], req["output_limit_bytes"],
                                   req.get("yield_if_idle"), nonce, self._call_processes,
                                   self._memory_check(limits.get("total_memory_bytes")), control_fd)
            if ended != "exited":
                _kill_by_pidfd(pidfd)
            status = self._from_zygote("waiting for the runner")  # the zygote reaps its child
            if ended == "exited" and cgroup is not None and self.cgroups.oom_kills(cgroup):
                ended = "memory"  # the kernel ended a process of the call at the limit
            self._kill_all(uid)  # whatever else of the call is alive dies now ...
            out.drain(until=time.monotonic() + 2.0)  # ... so every write end is closed: read to EOF
        finally:
            if status is None and self.zygote_alive():
                # Something failed mid-call. The zygote's next message is this runner's wait status: read
                # it now, or the next call would take it for its runner's pid (and every later reply
                # would be one call late).
                _kill_by_pidfd(pidfd)
                try:
                    self._from_zygote("waiting for the runner")
                except RuntimeError:
                    pass  # the zygote is marked gone: the server stops after this reply and is restarted
            if pidfd is not None:
                os.close(pidfd)
            self._kill_all(uid)
            if self._cgroup is not None:
                self.cgroups.remove(self._cgroup)
                self._cgroup = None
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
            "cancelled": ended == "cancelled",
            "stdout": out.text("stdout"),
            "stderr": out.text("stderr"),
            "stdout_bytes": out.total["stdout"],
            "stderr_bytes": out.total["stderr"],
            "report": _parse_report(bytes(out.kept["result"]), nonce),
            "trust": req.get("trust") if req.get("mode") == "test" else None,
            "duration_s": time.monotonic() - start,
        }

    def _call_processes(self) -> list[int]:
        """Every process of the current call: its memory cgroup's, else our descendants but the zygote."""
        if self._cgroup is not None:
            return self.cgroups.processes(self._cgroup)
        return [p for p in _descendants(os.getpid()) if p != self._zygote_pid]

    def _memory_check(self, limit: int | None):
        """What `_wait` polls to end a call past its memory: with a cgroup, whether the kernel already
        ended one of its processes at the limit; else the call's anonymous memory against `limit`."""
        cgroup, cgroups = self._cgroup, self.cgroups
        over_limit = (lambda: _resident_bytes(self._call_processes()) > limit) if limit else (lambda: False)
        if cgroup is None:
            return over_limit if limit else None
        # The poll ends a call as soon as its processes' own memory is over (before the kernel has to
        # reclaim and kill at the group's limit, which also counts the tmpfs and kernel memory).
        return lambda: cgroups.oom_kills(cgroup) > 0 or over_limit()

    @staticmethod
    def _wait(pidfd: int, out: "_Streams", deadline: float, output_limit: int, yield_if_idle: dict | None,
              nonce: str, processes, memory_exceeded=None, control_fd: int | None = None) -> str:
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
                if not _reported(bytes(out.kept["result"]), nonce, "collected"):
                    checkpoint = now + after  # still loading: look again later
                elif _busy_seconds(processes()) < yield_if_idle["max_cpu"] * (now - start):
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
        return any(p != self._zygote_pid for p in _children(os.getpid()))

    # ------------------------------------------------------------------ runner
    def _runner(self, fds: list[int]) -> None:
        """Runner side (forked by the zygote): read the request, isolate, drop privileges, run. Never returns."""
        stdout_w, stderr_w, result_w, request_r = fds
        try:
            os.setsid()
            req = read_msg(request_r)
            os.close(request_r)
            nonce, call_dir = req.pop("nonce"), req.pop("call_dir")
            devnull = os.open(os.devnull, os.O_RDONLY)
            targets = [devnull, stdout_w, stderr_w, result_w]
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in targets]
            for target, fd in enumerate(high):
                os.dup2(fd, target)
            os.closerange(RESULT_FD + 1, 1 << 20)  # the protocol channel included
            root = self._isolate(req, call_dir)
            workdir = os.path.join(root, "work")
            os.mkdir(workdir, 0o700)
            os.chdir(workdir)
            env = dict(BASE_ENV, HOME=workdir, TMPDIR=root, USER="sandbox", PWD=workdir)
            os.environ.clear()
            os.environ.update(env)
            tempfile.tempdir = None
            sys.dont_write_bytecode = True
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        except BaseException as e:  # noqa: BLE001
            os.write(2, f"sandbox setup failed: {type(e).__name__}: {e}\n".encode())
            os._exit(SETUP_FAILED_EXIT)
        self.harness.main(req, workdir, RESULT_FD, nonce)  # calls os._exit

    def _isolate(self, req: dict, call_dir: str | None) -> str:
        """Namespaces, rlimits, privilege drop. Returns the directory the call sees as its /tmp."""
        uid = req.get("uid")
        limits = req["limits"]
        if self.private_tmp:
            # Own IPC namespace: System V and POSIX IPC objects die with the call.
            unshare(CLONE_NEWNS | CLONE_NEWIPC)
            # A private, size-capped /tmp (also seen at every world-writable directory found at start:
            # /var/tmp, /dev/shm, /run/lock...) that no other call can reach; it disappears with the
            # mount namespace when the call's last process is gone, and caps the call's disk writes.
            owner = f",uid={uid},gid={uid}" if uid is not None else ""
            mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700,size={limits['tmp_bytes']}{owner}")
            for target in ["/var/tmp", "/dev/shm", *self.world_writable]:
                if os.path.isdir(target) and not _within(target, "/tmp"):
                    try:
                        mount("/tmp", target, None, MS_BIND)
                    except OSError:
                        pass  # e.g. already covered through a bind above it
            if req.get("trust") == "out_of_process":
                req["trusted_dir"] = _trusted_files(req, "/tmp/trusted", mounted=True)
            if self.pid_namespace:
                # /proc of the call's own PID namespace: the call sees its own processes only (no other
                # call's /proc/<pid>/cwd, no host command lines).
                mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            call_dir = "/tmp"
        elif req.get("trust") == "out_of_process":
            req["trusted_dir"] = _trusted_files(req, os.path.join(call_dir, "trusted"), mounted=False)
        _setrlimit(resource.RLIMIT_CORE, 0)
        _setrlimit(resource.RLIMIT_AS, limits["memory_bytes"])
        _setrlimit(resource.RLIMIT_CPU, limits["cpu_s"], limits["cpu_s"] + 1)
        _setrlimit(resource.RLIMIT_NOFILE, limits["nofile"])
        _setrlimit(resource.RLIMIT_FSIZE, limits["fsize_bytes"])
        if uid is not None:
            _setrlimit(resource.RLIMIT_NPROC, limits["nproc"])
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            _fresh_keyrings()
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        # If the server dies, so does the runner. Set after setresuid, which clears this setting.
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        return call_dir


def _trusted_files(req: dict, path: str, mounted: bool) -> str:
    """Out-of-process grading: the test files, where the tests' process reads them and the candidate
    (same uid) cannot change them: a read-only tmpfs of root's (as root; its mount point cannot be
    renamed away either), else a plain directory (weaker: the fallback without root)."""
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


def _setrlimit(which: int, soft: int | None, hard: int | None = None) -> None:
    if soft is None:
        return
    hard = soft if hard is None else hard
    _, cur_hard = resource.getrlimit(which)
    if cur_hard != resource.RLIM_INFINITY:  # cannot raise a hard limit we do not hold
        soft, hard = min(soft, cur_hard), min(hard, cur_hard)
    resource.setrlimit(which, (soft, hard))


def _children(pid: int) -> list[int]:
    """Direct children of `pid` (one small read per thread, no /proc walk: this is on every call's path)."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(p) for p in f.read().split()]
    except OSError:
        return [p for p in _descendants(pid)]  # kernel without the children file: the slow way
    return out


def _fresh_keyrings() -> None:
    """As the worker uid: join a new session keyring and empty the keyrings that outlive processes (the
    persistent keyring lasts days; the user keyrings last while any process of the uid does)."""
    if SYS_KEYCTL is None:
        return
    _libc.syscall.restype = ctypes.c_long
    _libc.syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None)
    persistent = _libc.syscall(SYS_KEYCTL, KEYCTL_GET_PERSISTENT, ctypes.c_long(-1),
                               ctypes.c_long(KEY_SPEC_PROCESS_KEYRING))
    for keyring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING, *([persistent] if persistent > 0 else [])):
        _libc.syscall(SYS_KEYCTL, KEYCTL_CLEAR, ctypes.c_long(keyring))


def _busy_seconds(pids: list[int]) -> float:
    """How long these processes ran or waited to run (on a CPU or in a run queue): time they wanted a
    core, however many others compete for it. Plus the CPU time of their waited-for children."""
    ns, ticks = 0, 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            ticks += sum(int(v) for v in stat[stat.rindex(b")") + 2 :].split()[13:15])  # cutime, cstime
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    on_cpu, run_queue, _ = f.read().split()
                ns += int(on_cpu) + int(run_queue)
        except (OSError, ValueError):
            continue  # gone meanwhile
    return ns / 1e9 + ticks / os.sysconf("SC_CLK_TCK")


def _resident_bytes(pids: list[int]) -> int:
    """Anonymous memory of these processes together, each page shared by n processes counted 1/n times
    (`Pss_Anon`): a fork shares its parent's pages until it writes them, so plain RSS would count the
    preloaded libraries once per process. Falls back to RSS minus file-backed pages on old kernels."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss_Anon:"):
                        total += int(line.split()[1]) * 1024
                        break
                else:
                    raise ValueError("no Pss_Anon")
        except ValueError:
            try:
                with open(f"/proc/{pid}/statm", "rb") as f:
                    fields = f.read().split()
                total += (int(fields[1]) - int(fields[2])) * PAGE_SIZE
            except (OSError, ValueError, IndexError):
                continue
        except OSError:
            continue  # gone meanwhile
    return total


PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _reported(raw: bytes, nonce: str, event: str) -> bool:
    """Whether the harness has sent `event` yet (on the result pipe, with the call's nonce)."""
    report = _parse_report(raw, nonce) or {}
    return report.get("event") == event or (event == "collected" and "n_tests" in report)


def _open_pidfd(pid: int) -> int | None:
    """A pidfd for `pid`; None if it is already gone."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


def _kill_by_pidfd(pidfd: int | None) -> None:
    """SIGKILL the process `pidfd` holds (never a later process that reused its pid); a no-op once it is gone."""
    if pidfd is None:
        return
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


# What a harness report line may carry (harness.py): field -> its type; anything else is dropped, so a
# malformed, deeply nested or oversized report never travels further than this function.
REPORT_FIELDS = {"event": str, "n_tests": int, "n_passed": int, "failures": list, "error": str, "type": str,
                 "names": list, "ran": list, "tampered": list, "what": str}
MAX_REPORT_TEXT = 2000
MAX_REPORT_LIST = 500


def _parse_report(raw: bytes, nonce: str) -> dict | None:
    """Merge the runner's report lines that carry the call's nonce; anything else is ignored.

    Never raises: junk on the result pipe (not JSON, nested past the parser's depth, wrong types) is
    skipped line by line. `tamper` events accumulate into "tampered", so a tamper attempt reported
    before the run hung or exited still counts.
    """
    report: dict = {}
    tampered: list[str] = []
    stamp = nonce.encode()
    for line in raw.splitlines():
        if stamp not in line:
            continue  # not the harness's (and not worth parsing)
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError, MemoryError):
            continue
        if not isinstance(msg, dict) or msg.pop("nonce", None) != nonce:
            continue
        clean = {k: _clean_field(v, REPORT_FIELDS[k]) for k, v in msg.items() if k in REPORT_FIELDS}
        clean = {k: v for k, v in clean.items() if v is not None or k == "error"}
        if clean.get("event") == "tamper":
            tampered.append(clean.get("what", "?"))
            continue
        tampered += clean.pop("tampered", None) or []
        report.update(clean)
    if tampered:
        report["tampered"] = list(dict.fromkeys(tampered))[:MAX_REPORT_LIST]
    return report or None


def _clean_field(value: object, kind: type) -> object:
    """`value` if it is of `kind` (lists: of strings), capped in size; else None."""
    if kind is int:
        return value if type(value) is int and 0 <= value < 1 << 31 else None
    if kind is str:
        return value[:MAX_REPORT_TEXT] if isinstance(value, str) else None
    if isinstance(value, list):
        return [v[:MAX_REPORT_TEXT] for v in value[:MAX_REPORT_LIST] if isinstance(v, str)]
    return None


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client stops us by closing our stdin
    serve(json.loads(sys.argv[1]))
