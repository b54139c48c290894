"""Isolated execution and grading of untrusted (model-written) Python code.

Public API (what training, evaluation and the tools call; kept stable):
    execute(code, *, timeout_s=10.0) -> ExecResult(ok, status, stdout, stderr, exit_code, signal, ...)
    run_tests(code, test, *, harness, entry_point=None, timeout_s=30.0)
        -> TestReport(passed, status, n_tests, n_failed, detail, trust, ...)
    Sandbox(workers=..., python=..., limits...)   built from conf/sandbox/*.yaml via `_target_`;
        .execute, .run_tests, .execute_many, .run_tests_many, .start, .close, context manager.
The module-level functions use one lazily created default Sandbox, closed at interpreter exit.

How a call runs (details and known weaknesses: README.md beside this file):
  * Each of the `workers` slots has a warm server (server.py, stdlib only, run with the sandbox
    interpreter, which may be a separate venv such as .venv-bcb) that imports numpy/pandas/
    matplotlib/sklearn/pytest... once, never runs untrusted code, and per call forks a runner that
    executes the code (harness.py), then kills everything of the call.
  * The runner gets a new session, a private tmpfs as /tmp (its fresh working dir is /tmp/work),
    rlimits (address space, CPU, nproc, nofile, fsize, no core), then drops to the slot's dedicated
    unprivileged uid (locked so no two sandboxes share it) with no_new_privs. The server's own mount
    namespace covers the caller's home, the repository and the data directory with empty tmpfs
    mounts; its own network namespace has only loopback. The environment is rebuilt from a
    whitelist (no *_KEY/*_TOKEN/*_SECRET, WANDB_API_KEY, HF_TOKEN...).
  * The server enforces the wall-clock deadline and an output cap (stdout/stderr are pipes it reads;
    at most max_output_bytes each are kept, past output_limit_bytes the program is killed). When the
    call ends, every process of the worker uid is killed (kill(-1) run as that uid) and, as a child
    subreaper, every remaining descendant (setsid daemons included) is killed and reaped. Every
    failure becomes a status; the caller never gets an exception for bad code.
  * Each call has its own PID namespace (its init, a small process of nsinit.py, never lets a process
    of the call stay a zombie; when the runner exits the init is killed, and with it everything left
    in the namespace) and, where the host allows, its own memory
    cgroup (memfd pages, tmpfs and socket buffers count against memory_mb).
  * Graders: the verdict comes only from a harness report written to a separate pipe with a per-call
    nonce, never from stdout or the exit code; a run that ends before the harness reports is a failure.
    By default the tests run in a trusted process and the candidate in another, called through a
    channel that carries only data (isolated.py, remote.py; TestReport.trust "out_of_process"); tests
    that patch or read the candidate's process run in it (trust.py; "in_process"), where a detected
    attempt to forge or bend the grader is the failed status "tampered" (tamper.py).
  * Without root (isolation "none"): same structure, limits and cleanup, but no uid drop, no nproc
    limit, no hidden paths, and network isolation only if unprivileged user namespaces work.
"""

from agentic_rl.sandbox.client import (
    HARNESSES,
    PYTHON_ENV_VAR,
    REPO_ROOT,
    Sandbox,
    default_sandbox,
    execute,
    resolve_python,
    run_tests,
)
from agentic_rl.sandbox.reports import TAMPER_KINDS
from agentic_rl.sandbox.results import ExecResult, TestReport
from agentic_rl.sandbox.trust import IN_PROCESS, OUT_OF_PROCESS
from agentic_rl.sandbox.trust import plan as plan_trust

# The facade: the rest of the package imports the sandbox only from here (an import-linter contract in
# pyproject.toml); the modules beside this file are its inside.
__all__ = [
    "ExecResult",
    "TestReport",
    "TAMPER_KINDS",
    "Sandbox",
    "HARNESSES",
    "PYTHON_ENV_VAR",
    "REPO_ROOT",
    "IN_PROCESS",
    "OUT_OF_PROCESS",
    "plan_trust",
    "execute",
    "run_tests",
    "default_sandbox",
    "resolve_python",
]
