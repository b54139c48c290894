"""The client side of the sandbox: `Sandbox` owns `workers` worker slots, each a warm server.

Thread safety: every public method may be called from many threads at once. A call takes an idle
worker from a queue (so at most `workers` programs run at a time), talks to that worker's server
alone, and puts the worker back when the reply is in. A worker whose server died is restarted by the
next call that takes it; only that call waits.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import fcntl
import json
import logging
import math
import os
import pwd
import queue
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentic_rl.data.shared_data import shared_data_dir
from agentic_rl.paths import SANDBOX_PYTHON_ENV, repo_root, resolve_python
from agentic_rl.sandbox import server, wire
from agentic_rl.sandbox.results import ExecResult, TestReport, exec_result, test_report
from agentic_rl.sandbox.split import merge_parts, plan_test_names
from agentic_rl.sandbox.trust import IN_PROCESS
from agentic_rl.sandbox.trust import plan as plan_trust
from agentic_rl.types import HARNESSES

log = logging.getLogger(__name__)

PYTHON_ENV_VAR = SANDBOX_PYTHON_ENV
REPO_ROOT = repo_root()
SERVER_SCRIPT = Path(server.__file__).resolve()
UID_LOCK_DIR = Path(tempfile.gettempdir()) / "agentic_rl_sandbox_uids"

DEFAULT_PRELOAD = (
    "numpy",
    "pandas",
    "matplotlib",
    "matplotlib.pyplot",
    "scipy",
    "scipy.stats",
    "sklearn",
    "sklearn.preprocessing",
    "sklearn.model_selection",
    "sklearn.linear_model",
    "sklearn.cluster",
    "sklearn.decomposition",
    "sklearn.metrics",
    "seaborn",
    "requests",
    "bs4",
    "pytest",
    "unittest.mock",
    "collections",
    "datetime",
    "itertools",
    "json",
    "math",
    "random",
    "re",
    "csv",
    "io",
    "string",
)


class Sandbox:
    """Isolated execution of untrusted Python, and grading with the pytest/unittest/humaneval harnesses.

    Args (all in conf/sandbox/default.yaml):
        workers: programs running at once; each worker is one warm server process (about 250 MB with the
            default `preload`) and, as root, one uid.
        python: sandbox interpreter; None -> $AGENTIC_RL_SANDBOX_PYTHON -> the current interpreter.
            A relative path is taken from the repository root.
        timeout_s / test_timeout_s: default wall-clock limits of execute / run_tests.
        memory_mb: address-space limit per process (RLIMIT_AS); must exceed the warm server's own size.
        cpu_s: CPU-seconds per process (RLIMIT_CPU); None -> the call's timeout + 1.
        nproc: processes + threads of the call (RLIMIT_NPROC on the worker uid; root only).
        nofile, fsize_mb: open files, and the largest file it may write.
        tmp_mb: size of the call's private tmpfs (its /tmp and working dir; root only).
        max_output_bytes: stdout and stderr kept for the caller (each); the rest is counted and dropped.
        output_limit_bytes: stdout + stderr after which the program is killed ("output_limit").
        max_detail_chars: cap of TestReport.detail.
        preload: modules the warm server imports once (missing ones are skipped).
        isolation: "auto" (uid if root, else none), "uid" (require root) or "none" (same user: weaker).
        network: "none" (each worker has its own network namespace with only loopback) or "host".
        hide_paths: directories covered by an empty tmpfs for sandboxed code; None -> home, repo, data dir.
        uid_base, uid_count: range of otherwise unused uids to run calls under (isolation "uid").
        startup_timeout_s: how long a server may take to import `preload`.
        split_after_s, split_max_cpu: a unittest run (BigCodeBench) still going after split_after_s seconds
            while using less than split_max_cpu of a core (its tests mostly wait: sleep, subprocesses,
            sockets) is stopped, and its test methods run one per call, side by side (split.py).
            split_after_s None: never split.
        out_of_process: grade with the tests in a trusted process and the candidate in another (trust.py,
            isolated.py), where the test allows it; False: every grading in process (`trust: in_process`).
    """

    def __init__(
        self,
        workers: int = 2,
        python: str | None = None,
        timeout_s: float = 10.0,
        test_timeout_s: float = 30.0,
        memory_mb: int = 4096,
        cpu_s: int | None = None,
        nproc: int = 64,
        nofile: int = 1024,
        fsize_mb: int = 64,
        tmp_mb: int = 256,
        max_output_bytes: int = 64 * 1024,
        output_limit_bytes: int = 16 * 1024 * 1024,
        max_detail_chars: int = 4000,
        preload: Sequence[str] | None = DEFAULT_PRELOAD,
        isolation: str = "auto",
        network: str = "none",
        hide_paths: Sequence[str] | None = None,
        uid_base: int = 61000,
        uid_count: int = 1000,
        startup_timeout_s: float = 180.0,
        split_after_s: float | None = 2.0,
        split_max_cpu: float = 0.5,
        out_of_process: bool = True,
    ) -> None:
        if workers < 1:
            raise ValueError(f"sandbox.workers must be >= 1, got {workers}")
        if isolation not in ("auto", "uid", "none"):
            raise ValueError(f"sandbox.isolation must be auto, uid or none, got {isolation!r}")
        if network not in ("none", "host"):
            raise ValueError(f"sandbox.network must be none or host, got {network!r}")
        root = os.geteuid() == 0
        if isolation == "uid" and not root:
            raise ValueError("sandbox.isolation=uid needs root; use isolation=none (weaker) or run as root")
        self.workers = workers
        self.python = resolve_python(python)
        self.timeout_s, self.test_timeout_s = timeout_s, test_timeout_s
        self.memory_mb, self.cpu_s, self.nproc, self.nofile, self.fsize_mb = memory_mb, cpu_s, nproc, nofile, fsize_mb
        self.tmp_mb = tmp_mb
        self.max_output_bytes, self.output_limit_bytes = max_output_bytes, output_limit_bytes
        self.max_detail_chars = max_detail_chars
        self.preload = list(preload or [])
        self.privileged = root and isolation != "none"
        self.network = network
        if hide_paths is None:
            hide_paths = [str(Path.home()), str(REPO_ROOT), str(shared_data_dir())]
        self.hide_paths = [str(p) for p in hide_paths]
        self.uid_base, self.uid_count = uid_base, uid_count
        self.startup_timeout_s = startup_timeout_s
        if split_after_s is not None and split_after_s <= 0:
            raise ValueError(f"sandbox.split_after_s must be > 0 seconds or null (never split), got {split_after_s}")
        if not 0 < split_max_cpu <= 1:
            raise ValueError(f"sandbox.split_max_cpu must be in (0, 1] (CPU-seconds per second), got {split_max_cpu}")
        self.split_after_s, self.split_max_cpu = split_after_s, split_max_cpu
        self.out_of_process = out_of_process

        self.server_info: dict[str, Any] = {}  # what a server reported at start (pid, preloaded, hidden...)
        self.worker_uids: list[int] = []  # as root: the uids calls run under, one per worker
        self.closed = False
        self._lock = threading.Lock()
        self._workers: list[_Worker] = []
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._base: Path | None = None
        self._uid_locks: list[Any] = []
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    # ------------------------------------------------------------------ public API
    def execute(self, code: str, timeout_s: float | None = None) -> ExecResult:
        """Run `code` as a script (`python main.py`) in a fresh directory; never raises for bad code."""
        timeout = self.timeout_s if timeout_s is None else timeout_s
        raw = self._call({"mode": "exec", "code": code}, timeout)
        return exec_result(raw, self.max_output_bytes)

    def run_tests(
        self,
        code: str,
        test: str,
        *,
        harness: str,
        entry_point: str | None = None,
        timeout_s: float | None = None,
    ) -> TestReport:
        """Grade `code` against `test` with `harness` ("pytest", "unittest" or "humaneval").

        A unittest job still running after `split_after_s` and mostly waiting so far (under
        `split_max_cpu` of a core) is stopped and run again as one call per test method, side by side
        (split.py): tests that wait hold a worker but not a core, so waiting in parallel is nearly free,
        where computing in parallel is not. Only a pass, or a part that hit a limit, is taken from the
        parts; a job that failed split is graded again in one run, so every failing verdict, count
        and detail is the one-run one (a test may fail alone that passes after the tests before it,
        e.g. on the random state they left).
        """
        return self._grade(
            self._test_request(code, test, harness=harness, entry_point=entry_point, timeout_s=timeout_s)
        )

    def execute_many(self, codes: Iterable[str], timeout_s: float | None = None) -> list[ExecResult]:
        """`execute` over many programs, `workers` at a time; results in input order."""
        return self._map(lambda code: self.execute(code, timeout_s=timeout_s), codes)

    def run_tests_many(self, jobs: Iterable[dict]) -> list[TestReport]:
        """`run_tests(**job)` for each job dict, `workers` programs at a time; results in input order."""
        return self._map(self._grade, [self._test_request(**job) for job in jobs])

    def _grade(self, req: dict) -> TestReport:
        timeout, split_after = req["timeout_s"], self.split_after_s
        names = plan_test_names(req["test"], req["harness"]) if split_after and split_after < timeout else None
        if names:
            idle_check = {"after_s": split_after, "max_cpu": self.split_max_cpu}
            first = self._call({**req, "yield_if_idle": idle_check}, timeout)
            if not first.get("yielded") or (first.get("report") or {}).get("tampered"):
                # the one-run verdict; or the cut run tampered, which no part may hide (it would not
                # have to tamper again, and a part's limit would decide)
                return test_report(first, self.max_detail_chars)
            first_s = first.get("duration_s", 0.0)
            raws = self._run_parts(req, names, timeout - first_s)
            report = merge_parts(names, raws, timeout, self.max_detail_chars, self.max_output_bytes, first_s)
            if report is not None:
                return report
        return test_report(self._call(dict(req), timeout), self.max_detail_chars)

    def _run_parts(self, req: dict, names: list[str], budget_s: float) -> list[dict]:
        """Run one part per test method, side by side, within ONE time budget: what is left of the task's
        limit after the cut first run, spent by all parts together (a part may run only as long as the
        budget still allows when it starts, and once the running parts have used it up, or one part hit
        a limit, every other part is stopped: a hanging candidate costs one limit, not one per part)."""
        budget = _Budget(budget_s)

        def part(name: str) -> dict:
            token = budget.begin()
            if token is None:
                return {"cancelled": True}
            raw = self._call({**req, "only": [name]}, budget.left_for(token), token=token, budget=budget)
            budget.end(token, raw)
            return raw

        # The parts wait for idle workers like any call: the worker queue, not this pool, bounds them.
        with concurrent.futures.ThreadPoolExecutor(len(names), thread_name_prefix="sandbox-part") as pool:
            futures = [pool.submit(part, name) for name in names]
            while not all(f.done() for f in futures):
                concurrent.futures.wait(futures, timeout=0.1, return_when=concurrent.futures.FIRST_COMPLETED)
                if budget.exhausted():
                    budget.stop_all()
            return [f.result() for f in futures]

    def _test_request(
        self, code: str, test: str, *, harness: str, entry_point: str | None = None, timeout_s: float | None = None
    ) -> dict:
        if harness not in HARNESSES:
            raise ValueError(f"unknown harness {harness!r}; available: {', '.join(HARNESSES)}")
        if harness == "humaneval" and not entry_point:
            raise ValueError("the humaneval harness needs entry_point (the function passed to check)")
        timeout = self.test_timeout_s if timeout_s is None else timeout_s
        trust = plan_trust(test, harness)[0] if self.out_of_process else IN_PROCESS
        return {
            "mode": "test",
            "harness": harness,
            "code": code,
            "test": test,
            "entry_point": entry_point,
            "timeout_s": float(timeout),
            "trust": trust,
        }

    def start(self) -> Sandbox:
        """Start the workers' servers now, in parallel (otherwise the first call does)."""
        self._ensure_workers()
        return self

    @property
    def server_pids(self) -> list[int]:
        return [w.info["pid"] for w in self._workers if w.alive()]

    @property
    def zygote_pids(self) -> list[int]:
        """Each live server's zygote (server.py): the one child of a server that outlives calls."""
        return [w.info["zygote_pid"] for w in self._workers if w.alive() and w.info.get("zygote_pid")]

    def close(self) -> None:
        """Stop the servers and release the worker uids. Calls in flight end with "sandbox_error"."""
        with self._lock:
            self.closed = True
            for w in self._workers:
                w.stop()
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
            for f in self._uid_locks:
                f.close()
            self._uid_locks = []
            if self._base is not None:
                shutil.rmtree(self._base, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ calls
    def _map(self, fn, items: Iterable) -> list:
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(self.workers, thread_name_prefix="sandbox")
        return list(self._pool.map(fn, items))

    def _call(self, req: dict, timeout_s: float, token: object | None = None, budget: _Budget | None = None) -> dict:
        self._ensure_workers()
        worker = self._idle.get()
        try:
            if budget is not None and not budget.bind(token, worker):
                return {"cancelled": True, "trust": req.get("trust")}  # stopped while it waited for a worker
            req.update(
                uid=worker.uid,
                timeout_s=float(timeout_s),
                limits=self._limits(timeout_s),
                max_output_bytes=self.max_output_bytes,
                output_limit_bytes=self.output_limit_bytes,
            )
            reply = worker.call(req, timeout_s, token=token)
            if req.get("mode") == "test" and isinstance(reply, dict):
                reply.setdefault("trust", req.get("trust"))  # a reply the client made (server gone) too
            return reply
        finally:
            if budget is not None:
                budget.unbind(token)
            self._idle.put(worker)

    def _limits(self, timeout_s: float) -> dict:
        cpu = self.cpu_s if self.cpu_s is not None else math.ceil(timeout_s) + 1
        return {
            "memory_bytes": self.memory_mb * 1024 * 1024,
            "total_memory_bytes": self.memory_mb * 1024 * 1024,  # all the call's processes together
            "cpu_s": int(cpu),
            "nproc": self.nproc,
            "nofile": self.nofile,
            "fsize_bytes": self.fsize_mb * 1024 * 1024,
            "tmp_bytes": self.tmp_mb * 1024 * 1024,
        }

    def _ensure_workers(self) -> None:
        with self._lock:
            if self.closed:
                raise RuntimeError("the sandbox is closed")
            if self._workers:
                return
            self._base = Path(tempfile.mkdtemp(prefix="agentic_rl_sandbox_"))
            os.chmod(self._base, 0o711)  # without root, calls must traverse to their own dir under work/
            self.worker_uids = self._claim_uids() if self.privileged else []
            uids = self.worker_uids or [None] * self.workers
            workers = [_Worker(self, i, uid) for i, uid in enumerate(uids)]
            for w in workers:  # start all servers, then wait for all: they import in parallel
                w.spawn()
            try:
                for w in workers:
                    w.await_ready()
            except Exception:
                for w in workers:
                    w.stop()
                raise
            self._workers = workers
            for w in workers:
                self._idle.put(w)
            self.server_info = workers[0].info
            info = self.server_info
            log.info(
                "sandbox ready: %d workers, python %s (%s), isolation %s, hidden %s, preloaded %d/%d",
                self.workers,
                info["python"],
                self.python,
                "uid" if self.privileged else "none",
                info["hidden"],
                len(info["preloaded"]),
                len(self.preload),
            )

    def _server_config(self, index: int) -> dict:
        scratch, work = self._base / "scratch" / str(index), self._base / "work" / str(index)
        scratch.mkdir(parents=True, mode=0o700)
        work.mkdir(parents=True, mode=0o711)
        os.chmod(self._base / "scratch", 0o700)
        os.chmod(self._base / "work", 0o711)
        return {
            "scratch_dir": str(scratch),
            "work_dir": str(work),
            "preload": self.preload,
            "privileged": self.privileged,
            "network": self.network,
            "hide_paths": self.hide_paths if self.privileged else [],
        }

    # ------------------------------------------------------------------ worker uids
    def _claim_uids(self) -> list[int]:
        """Take `workers` uids from the range, each under an exclusive lock held while we live.

        The lock keeps two sandboxes (two processes, or two Sandbox objects) from sharing a uid, which
        would let one's cleanup kill the other's program. A uid of the range that a user account owns
        is skipped; leftovers of a crashed owner of a freshly locked uid are killed.
        """
        UID_LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(UID_LOCK_DIR)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise RuntimeError(f"{UID_LOCK_DIR} must be a directory of uid {os.geteuid()} with mode 0700")
        uids = []
        for uid in range(self.uid_base, self.uid_base + self.uid_count):
            if len(uids) == self.workers:
                break
            try:
                pwd.getpwuid(uid)
                continue
            except KeyError:
                pass
            f = os.fdopen(os.open(UID_LOCK_DIR / f"{uid}.lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600), "w")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
                continue
            self._uid_locks.append(f)
            _kill_uid(uid)  # leftovers of a crashed earlier owner
            uids.append(uid)
        if len(uids) < self.workers:
            raise RuntimeError(f"only {len(uids)} free sandbox uids in [{self.uid_base}, +{self.uid_count})")
        return uids


class _Worker:
    """One worker slot: its uid (as root) and the warm server that runs its calls, one at a time.

    Only the thread that took the worker from the idle queue touches it, so it needs no lock.
    """

    def __init__(self, sandbox: Sandbox, index: int, uid: int | None) -> None:
        self.sandbox, self.index, self.uid = sandbox, index, uid
        self.config = sandbox._server_config(index)
        self.proc: subprocess.Popen | None = None
        self.info: dict[str, Any] = {}
        # Writes to the server's stdin: the call's request (by the thread holding the worker) and a cancel
        # (by the thread running a split task's budget) must not interleave.
        self.write_lock = threading.Lock()
        self.in_call = False
        self.call_token: object | None = None  # what a cancel must name to reach the call in flight

    def spawn(self) -> None:
        sb, config = self.sandbox, self.config
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}  # no secrets, ever
        self.proc = subprocess.Popen(
            [sb.python, "-I", str(SERVER_SCRIPT), json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=config["scratch_dir"],
            start_new_session=True,
            close_fds=True,
        )
        threading.Thread(
            target=_log_stream, args=(self.proc.stderr, self.index), daemon=True, name=f"sandbox-log-{self.index}"
        ).start()

    def await_ready(self) -> None:
        try:
            info = wire.read_msg(self.proc.stdout.fileno(), timeout_s=self.sandbox.startup_timeout_s)
        except (EOFError, TimeoutError, ValueError) as e:
            self.stop()
            raise RuntimeError(
                f"sandbox server ({self.sandbox.python}) did not start: {e}; "
                "its stderr is in the log (logger agentic_rl.sandbox.client)"
            ) from None
        self.info = info
        for problem in info["isolation_errors"]:
            log.warning("sandbox worker %d: %s", self.index, problem)
        if info["vm_bytes"] + (256 << 20) > self.sandbox.memory_mb << 20:
            log.warning(
                "sandbox.memory_mb=%d leaves little room above the server's own %d MB address space",
                self.sandbox.memory_mb,
                info["vm_bytes"] >> 20,
            )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def call(self, req: dict, timeout_s: float, token: object | None = None) -> dict:
        if not self.alive():
            if self.sandbox.closed:
                return {"error": "the sandbox was closed"}
            log.warning(
                "sandbox worker %d: server gone (exit %s); restarting",
                self.index,
                None if self.proc is None else self.proc.returncode,
            )
            self.stop()
            try:
                self.spawn()
                self.await_ready()
            except (OSError, RuntimeError) as e:
                log.error("sandbox worker %d: restart failed: %s", self.index, e)
                return {"error": f"restart failed: {e}"}
        try:
            with self.write_lock:
                wire.write_msg(self.proc.stdin.fileno(), req)
                self.in_call, self.call_token = True, token
            # Generous: the server enforces the deadline itself and cleans up after it.
            reply = wire.read_msg(self.proc.stdout.fileno(), timeout_s=timeout_s + 30.0)
        except (OSError, EOFError, TimeoutError, ValueError) as e:  # died or hung: no verdict, go on
            log.error("sandbox worker %d: call failed: %s: %s", self.index, type(e).__name__, e)
            self.stop()
            return {"error": f"{type(e).__name__}: {e}"}
        finally:
            with self.write_lock:
                self.in_call, self.call_token = False, None
        if not isinstance(reply, dict):
            return {"error": f"malformed reply from the server: {type(reply).__name__}"}
        if reply.get("error"):
            log.error("sandbox worker %d: %s\n%s", self.index, reply["error"], reply.get("trace", ""))
        return reply

    def cancel(self, token: object) -> None:
        """Ask the server to end the call in flight (status "cancelled") if it is the one `token` names;
        a no-op otherwise (the call ended meanwhile, and the worker may already run another)."""
        with self.write_lock:
            if self.in_call and self.call_token is token and token is not None and self.alive():
                try:
                    wire.write_msg(self.proc.stdin.fileno(), {"cancel": True})
                except OSError:
                    pass

    def stop(self) -> None:
        """End the server (EOF on its stdin, then SIGKILL) and anything left running as our uid."""
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
            proc.stdout.close()
        _kill_uid(self.uid)


class _Budget:
    """One time budget shared by the parts of a split task (see Sandbox._run_parts); thread-safe."""

    def __init__(self, seconds: float) -> None:
        self.total = seconds
        self.spent = 0.0  # by finished parts
        self.stopped = False
        self._running: dict[int, tuple[object, float, _Worker | None]] = {}
        self._lock = threading.Lock()

    def begin(self) -> object | None:
        """A token for a part about to run, or None when the budget is stopped or used up."""
        with self._lock:
            if self.stopped or self._left() <= 0:
                return None
            token = object()
            self._running[id(token)] = (token, time.monotonic(), None)
            return token

    def left_for(self, token: object) -> float:
        with self._lock:
            return max(self._left(), 0.001)

    def bind(self, token: object, worker: _Worker) -> bool:
        """The part got a worker: restart its clock (waiting in the queue is not running). False: stopped."""
        with self._lock:
            if self.stopped:
                return False
            self._running[id(token)] = (token, time.monotonic(), worker)
            return True

    def unbind(self, token: object) -> None:
        with self._lock:
            entry = self._running.get(id(token))
            if entry is not None:
                self._running[id(token)] = (entry[0], entry[1], None)

    def end(self, token: object, raw: dict) -> None:
        with self._lock:
            entry = self._running.pop(id(token), None)
            self.spent += raw.get("duration_s", 0.0) if isinstance(raw, dict) else 0.0
            if entry is not None and _hit_limit(raw):
                self.stopped = True

    def exhausted(self) -> bool:
        with self._lock:
            return self.stopped or self._left() <= 0

    def stop_all(self) -> None:
        """Stop the budget and cancel every part still running."""
        with self._lock:
            self.stopped = True
            running = [(token, w) for token, _, w in self._running.values() if w is not None]
        for token, w in running:
            w.cancel(token)

    def _left(self) -> float:
        now = time.monotonic()
        running = sum(now - start for _, start, w in self._running.values() if w is not None)
        return self.total - self.spent - running


def _hit_limit(raw: dict) -> bool:
    """A part that ended on a limit (time, memory, output, signal): the task's verdict is decided."""
    from agentic_rl.sandbox.results import resource_status

    return isinstance(raw, dict) and resource_status(raw) not in (None, "cancelled")


def _kill_uid(uid: int | None) -> None:
    """Kill every process whose real uid is `uid` (a worker uid: only sandboxed code runs as it)."""
    if uid is None:
        return
    import psutil

    for p in psutil.process_iter(["uids"]):
        try:
            if p.info["uids"] and p.info["uids"].real == uid:
                p.kill()
        except psutil.Error:
            pass


def _log_stream(stream, index: int) -> None:
    for line in iter(stream.readline, b""):
        log.warning("sandbox server %d: %s", index, line.decode(errors="replace").rstrip())
    stream.close()


# ------------------------------------------------------------------ module-level default sandbox

_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """The Sandbox behind module-level `execute`/`run_tests`: default settings, created lazily."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Sandbox()
            atexit.register(_default.close)
        return _default


def execute(code: str, *, timeout_s: float = 10.0) -> ExecResult:
    return default_sandbox().execute(code, timeout_s=timeout_s)


def run_tests(
    code: str, test: str, *, harness: str, entry_point: str | None = None, timeout_s: float = 30.0
) -> TestReport:
    return default_sandbox().run_tests(code, test, harness=harness, entry_point=entry_point, timeout_s=timeout_s)
