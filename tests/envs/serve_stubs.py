"""Stand-ins for the environment-server tests: a sandbox that runs programs in this process (the CodeGym driver and
`python` blocks need nothing more, and a fresh interpreter per call would cost seconds each on a loaded machine),
and servers in threads."""

from __future__ import annotations

import contextlib
import io
import threading
import traceback
from types import SimpleNamespace

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from agentic_rl.config import register_configs
from agentic_rl.envs.serve.server import EnvServer, Sessions
from agentic_rl.envs.toolset import build_environment
from agentic_rl.paths import CONF_DIR
from agentic_rl.tools import build_toolset
from tests.envs.test_codegym import task as codegym_task


class InProcessSandbox:
    """`execute` runs the program here, its stdout captured (one at a time: stdout is the process's); `run_tests`
    passes a candidate that defines `solve`. The sandbox itself fails (status "sandbox_error") on every program that
    holds the text `fail_if`."""

    # one lock for every instance: stdout is the process's, and a test runs two servers' sandboxes in one process
    _lock = threading.Lock()

    def __init__(self, fail_if: str | None = None) -> None:
        self.fail_if = fail_if

    def _failing(self, code: str) -> bool:
        return bool(self.fail_if and self.fail_if in code)

    def execute(self, code: str, timeout_s: float = 10.0) -> SimpleNamespace:
        if self._failing(code):
            return SimpleNamespace(ok=False, status="sandbox_error", stdout="", stderr="the sandbox could not start")
        out, err, status = io.StringIO(), "", "ok"
        with self._lock, contextlib.redirect_stdout(out):
            try:
                exec(compile(code, "<program>", "exec"), {"__name__": "__main__"})
            except SystemExit as exc:
                status = "ok" if exc.code in (None, 0) else "error"
            except BaseException:
                err, status = traceback.format_exc(), "error"
        return SimpleNamespace(ok=status == "ok", status=status, stdout=out.getvalue(), stderr=err)

    def run_tests(self, code: str, tests: str, **_: object) -> SimpleNamespace:
        if self._failing(code):
            return SimpleNamespace(passed=False, status="sandbox_error", n_tests=0, n_failed=0, detail="no sandbox")
        passed = "def solve" in code
        return SimpleNamespace(
            passed=passed, status="passed" if passed else "failed", n_tests=1, n_failed=int(not passed), detail="x"
        )


def counter_task(numbers=(2, 3)):
    """A configuration of test_codegym's counter environment (Observe, Add, Sleep, Total, Done)."""
    return codegym_task(numbers)


def tools_cfg(name: str):
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("train", overrides=[f"tools={name}"]).tools


def local_environment(tools, sandbox):
    return build_environment(build_toolset(tools, sandbox), sandbox)


@contextlib.contextmanager
def thread_server(sandbox, token=None, host="127.0.0.1", port=0):
    """An environment server in a thread of this process, building tool sets over `sandbox`."""
    sessions = Sessions(lambda spec: local_environment(OmegaConf.create(spec["tools"]), sandbox))
    server = EnvServer(host, port, sessions, token)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
