"""The isolation of one call, as its runner makes it: the kernel state it makes while it waits for its order
(mount, IPC and network namespaces, its own ptys, a seccomp filter), then, with the request, the call's
tmpfs and /proc, the candidate's own process (graded out of process), the tests' files, rlimits and the
drop to the call's uid. Runs in the runner (forked by the zygote, zygote.py); the call's lifecycle around
it is supervisor.py's."""

from __future__ import annotations

import fcntl
import importlib
import os
import resource
import signal
import socket
import sys
import tempfile

from agentic_rl.sandbox.linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    HOST_BUDGET_SYSCALLS,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_RDONLY,
    MS_REMOUNT,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    deny_syscalls,
    fork_pid_namespace,
    fresh_keyrings,
    loopback_up,
    mount,
    prctl,
    setrlimit_capped,
    unshare,
    within,
)
from agentic_rl.sandbox.patching import top_level_imports
from agentic_rl.sandbox.wire import read_msg

RESULT_FD = 3  # the runner's harness report channel (stdout/stderr are fds 1 and 2)
REQUEST_FD = 4  # the runner's request pipe, until it has read the tests (the second message)
SETUP_FAILED_EXIT = 125
PTY_MAX = 64  # ptys one call may open (its own devpts instance; the host has ~4096 for everyone)

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


class CallIsolation:
    """What a call's runner does to itself and its candidate before any code of the call runs."""

    def __init__(
        self,
        config: dict,
        harness,
        private_tmp: bool,
        world_writable: list[str],
        pid_namespace: bool,
    ) -> None:
        self.config = config
        self.harness = harness
        self.private_tmp = private_tmp
        world_writable = [d for d in world_writable if d != "/tmp"]
        # Where each call's tmpfs is bound besides /tmp, each once (a second bind on the same directory
        # hides nothing more, and is one more mount to make and to tear down per call).
        self.bind_targets = list(dict.fromkeys(["/var/tmp", "/dev/shm", *world_writable]))
        # Whether each call has its own PID namespace (the zygote turns it off where the kernel refuses one).
        self.pid_namespace = pid_namespace

    def prepare(self) -> None:
        """Kernel state of the call's own, made while the runner waits for its order (off the call's path):
        with mount namespaces, its own mount and IPC namespaces (System V and POSIX IPC objects die with
        the call) and its own ptys (`_own_ptys`); a network namespace of its own (where the server has
        one: network "none"), so the sockets a call leaves (TIME_WAIT, a listener kept in flight) never
        hold a port of the next call's; and a seccomp filter refusing the calls that take from a budget
        the kernel counts for the whole host with nothing to bound it per call
        (`linux.HOST_BUDGET_SYSCALLS`: AIO events, io_uring)."""
        if self.private_tmp:
            unshare(CLONE_NEWNS | CLONE_NEWIPC)
            _own_ptys()
        if self.config.get("network") == "none":
            try:
                unshare(CLONE_NEWNET)
                loopback_up()
            except OSError:  # not allowed here (no root): the calls share the server's (README, "Across calls")
                pass
        deny_syscalls(HOST_BUDGET_SYSCALLS)

    def run(self, fds: list[int]) -> None:
        """Runner side (forked by the zygote): read the request, isolate, drop privileges, run. Never returns.

        The tests come in a second message (`_send_request`). Graded out of process with mount namespaces,
        the candidate's process is forked before that message is read (`_fork_candidate`): its memory is a
        copy of a process that never held the tests, and the tests' files are mounted only in the tests'
        own mount namespace."""
        stdout_w, stderr_w, result_w, request_r = fds
        try:
            os.setsid()
            req = read_msg(request_r)
            nonce, call_dir = req.pop("nonce"), req.pop("call_dir")
            devnull = os.open(os.devnull, os.O_RDONLY)
            targets = [devnull, stdout_w, stderr_w, result_w, request_r]
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in targets]
            for target, fd in enumerate(high):
                os.dup2(fd, target)
            os.closerange(REQUEST_FD + 1, 1 << 20)  # the protocol channel included
            root = self._mount_call(req, call_dir)
            workdir = os.path.join(root, "work")
            os.mkdir(workdir, 0o700)
            if req.get("uid") is not None:
                os.chown(workdir, req["uid"], req["uid"])
            candidate = None
            imports = req.pop("test_imports", ())
            if req.pop("test_follows", False):
                if req.get("trust") == "out_of_process" and self.private_tmp:
                    import_before_fork(imports, req.get("uid"))
                    candidate = self._fork_candidate(req, root, workdir)
                req["test"] = read_msg(REQUEST_FD)
            os.close(REQUEST_FD)
            if req.get("trust") == "out_of_process":
                req["trusted_dir"] = trusted_files(req, self.private_tmp, call_dir)
            self.drop_privileges(req)
            _enter_workdir(root, workdir)
        except BaseException as e:  # noqa: BLE001
            os.write(2, f"sandbox setup failed: {type(e).__name__}: {e}\n".encode())
            os._exit(SETUP_FAILED_EXIT)
        # the nonce in a list main() empties: this frame lies below the tests' (in process a frame handed to the
        # candidate leads here through `f_back`), and the nonce is what forges a report line (issue #47)
        box = [nonce]
        del nonce
        self.harness.main(req, workdir, RESULT_FD, box, candidate)  # calls os._exit

    def _fork_candidate(self, req: dict, root: str, workdir: str) -> int:
        """Graded out of process (as root, before the tests are read): fork the candidate's process, in a
        PID namespace of its own whose /proc it mounts (it sees its own processes only, nothing of the
        tests' process or the call's init), and in a mount namespace of its own; then move the tests'
        process into another mount namespace, where its files will be mounted. The fd of the tests' end
        of the channel; never returns in the candidate's process."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = fork_pid_namespace() if self.pid_namespace else os.fork()
        if pid == 0:
            try:
                ours.close()
                os.close(REQUEST_FD)  # the tests are still in that pipe: never readable from here
                os.close(RESULT_FD)  # no report channel either
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the tests' process gone: so is the candidate
                unshare(CLONE_NEWNS)
                if self.pid_namespace:
                    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
                self.drop_privileges(req)
                _enter_workdir(root, workdir)
            except BaseException as e:  # noqa: BLE001
                os.write(2, f"sandbox setup failed: {type(e).__name__}: {e}\n".encode())
                os._exit(SETUP_FAILED_EXIT)
            self.harness.candidate(req, workdir, theirs)  # calls os._exit
        theirs.close()
        # Mounts made from here on (the tests' tmpfs) are in this namespace only: the candidate's is a copy
        # made before them, and every mount is private (the server made its namespace's mounts private).
        unshare(CLONE_NEWNS)
        return ours.detach()

    def _mount_call(self, req: dict, call_dir: str | None) -> str:
        """As root, with mount namespaces (the call's own already: `prepare`): its tmpfs over
        every world-writable directory, and the /proc of its PID namespace. Returns the directory the
        call sees as its /tmp."""
        if not self.private_tmp:
            return call_dir
        # A private, size-capped /tmp (also seen at every world-writable directory found at start:
        # /var/tmp, /dev/shm, /run/lock...) that no other call can reach; it disappears with the
        # mount namespace when the call's last process is gone, and caps the call's disk writes.
        uid = req.get("uid")
        owner = f",uid={uid},gid={uid}" if uid is not None else ""
        mount(
            "tmpfs",
            "/tmp",
            "tmpfs",
            MS_NOSUID | MS_NODEV,
            f"mode=0700,size={req['limits']['tmp_bytes']}{owner}",
        )
        for target in self.bind_targets:
            if os.path.isdir(target) and not within(target, "/tmp"):
                try:
                    mount("/tmp", target, None, MS_BIND)
                except OSError:
                    pass  # e.g. already covered through a bind above it
        if self.pid_namespace:
            # /proc of the call's own PID namespace: the call sees its own processes only (no other
            # call's /proc/<pid>/cwd, no host command lines).
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        return "/tmp"

    @staticmethod
    def drop_privileges(req: dict) -> None:
        """Rlimits, then the call's uid, fresh keyrings, no new privileges."""
        uid = req.get("uid")
        limits = req["limits"]
        setrlimit_capped(resource.RLIMIT_CORE, 0)
        setrlimit_capped(resource.RLIMIT_AS, limits["memory_bytes"])
        setrlimit_capped(resource.RLIMIT_CPU, limits["cpu_s"], limits["cpu_s"] + 1)
        setrlimit_capped(resource.RLIMIT_NOFILE, limits["nofile"])
        setrlimit_capped(resource.RLIMIT_FSIZE, limits["fsize_bytes"])
        if uid is not None:
            setrlimit_capped(resource.RLIMIT_NPROC, limits["nproc"])
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            fresh_keyrings()
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        # If the server dies, so does the runner. Set after setresuid, which clears this setting.
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def modules_the_tests_import(test: str) -> list[str]:
    """The modules the test code's top-level absolute imports name (`from a.b import c` -> "a.b"): names of
    modules, nothing else of the tests, sent ahead of them (supervisor._send_request). The candidate learns no
    more than `patching.test_imports` binds in its module."""
    return list(dict.fromkeys(module for module, _, _ in top_level_imports(test)))


def import_before_fork(modules, uid: int | None) -> None:
    """Import the libraries the tests import here, before the candidate's process is forked from this one: both
    processes then hold them, where each would import them (out of process, tensorflow's seconds were paid twice:
    BigCodeBench/418). Names from the tests' own import statements only, never the candidate's; imported with the
    call's uid as the effective one (a cache a library writes at import is written as the call would write it,
    not as root), then root again for the rest of the set-up. A module that fails here fails again where the tests
    import it, which reports it."""
    if uid is not None:
        os.setegid(uid)
        os.seteuid(uid)
    try:
        for name in modules:
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: BLE001 - SystemExit included: the tests' own import says what failed
                pass
    finally:
        if uid is not None:
            os.seteuid(0)
            os.setegid(0)


def _own_ptys() -> None:
    """A devpts instance of the call's own over /dev/pts, with /dev/ptmx its multiplexer: the call opens at
    most PTY_MAX ptys (the host has kernel.pty.max, ~4096, for everyone; an instance other than the host's
    cannot take the 1024 it keeps in reserve either), and they go with the call's mount namespace."""
    try:
        options = f"newinstance,ptmxmode=0666,mode=0620,max={PTY_MAX}"
        mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, options)
        mount("/dev/pts/ptmx", "/dev/ptmx", None, MS_BIND)
    except OSError as e:  # no devpts or no /dev/ptmx here: the call uses the host's, unbounded
        os.write(2, f"sandbox: no devpts instance for the call ({e})\n".encode())


def _enter_workdir(root: str, workdir: str) -> None:
    """The program's working directory and environment (nothing of the server's)."""
    os.chdir(workdir)
    env = dict(BASE_ENV, HOME=workdir, TMPDIR=root, USER="sandbox", PWD=workdir)
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None
    sys.dont_write_bytecode = True
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def trusted_files(req: dict, mounted: bool, call_dir: str | None) -> str:
    """Out-of-process grading: the test files, where the tests' process reads them. As root, a read-only
    tmpfs of root's mounted in the tests' own mount namespace (`CallIsolation._fork_candidate`): the
    candidate's view of the filesystem has no such mount, only an empty directory. Without mount
    namespaces, a plain directory the candidate can read (the fallback without root)."""
    path = "/tmp/trusted" if mounted else os.path.join(call_dir, "trusted")
    os.makedirs(path, mode=0o755, exist_ok=True)
    if mounted:
        mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    names = {
        "pytest": ["test_solution.py"],
        "unittest": ["test.py"],
        "humaneval": ["test.py"],
    }[req["harness"]]
    for name in names:
        with open(os.path.join(path, name), "w", encoding="utf-8") as f:
            f.write(req["test"])
    with open(os.path.join(path, "pytest.ini"), "w") as f:
        f.write("[pytest]\n")
    if mounted:
        mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_BIND)
    return path
