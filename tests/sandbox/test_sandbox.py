"""The Sandbox object: concurrency from threads, configuration, interpreter choice, recovery."""

from __future__ import annotations

import concurrent.futures
import inspect
import os
import signal
import sys
import time
from pathlib import Path

import pytest
import yaml

from agentic_rl.sandbox import Sandbox, resolve_python
from agentic_rl.sandbox.client import PYTHON_ENV_VAR, REPO_ROOT

from .conftest import make_sandbox, stray_processes

CONF = REPO_ROOT / "conf" / "sandbox" / "default.yaml"


def test_concurrent_calls_from_threads_are_bounded_by_workers(sandbox):
    """32 calls from 16 threads: every result belongs to its call, and never more than `workers` run."""
    code = "import time\nstart = time.time()\ntime.sleep(0.2)\nprint({i}, start, time.time())\n"

    def call(i):
        if i % 2:
            return i, sandbox.execute(code.format(i=i))
        return i, sandbox.run_tests(
            f"def f():\n    return {i}\n",
            f"def check(c):\n    assert c() == {i}\n",
            harness="humaneval",
            entry_point="f",
        )

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(call, range(32)))
    spans = []
    for i, r in results:
        if i % 2:
            tag, start, end = r.stdout.split()
            assert r.ok and int(tag) == i
            spans.append((float(start), float(end)))
        else:
            assert r.passed, r
    # At any start, count the spans running then: at most `workers` (0.05 s slack for clock reads).
    overlap = max(sum(s <= t < e - 0.05 for s, e in spans) for t, _ in spans)
    assert overlap <= sandbox.workers
    assert stray_processes(sandbox) == []


def test_execute_many_keeps_order(sandbox):
    results = sandbox.execute_many([f"print({i})" for i in range(10)])
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(10)]


def test_run_tests_many(sandbox):
    jobs = [
        {
            "code": f"def f():\n    return {i}\n",
            "test": "def check(c):\n    assert c() == 3\n",
            "harness": "humaneval",
            "entry_point": "f",
        }
        for i in range(5)
    ]
    assert [r.passed for r in sandbox.run_tests_many(jobs)] == [False, False, False, True, False]


def test_server_death_is_a_status_and_the_worker_restarts():
    with make_sandbox(workers=1) as sb:
        old_pid = sb.server_pids[0]
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pending = pool.submit(sb.execute, "import time\ntime.sleep(30)\nprint('done')")
            time.sleep(0.5)
            os.kill(old_pid, signal.SIGKILL)
            start = time.monotonic()
            r = pending.result()
        assert r.status == "sandbox_error" and not r.ok and time.monotonic() - start < 5
        assert stray_processes(sb) == []  # the orphaned program was killed with its worker
        r = sb.execute("print('after')")
        assert r.ok and r.stdout == "after\n" and sb.server_pids != [old_pid]


def test_closed_sandbox_refuses_calls():
    sb = make_sandbox(workers=1)
    sb.close()
    with pytest.raises(RuntimeError, match="closed"):
        sb.execute("print(1)")


def test_config_matches_constructor_defaults():
    """conf/sandbox/default.yaml states every default of Sandbox, with the same value, except the default
    per-call timeouts: every call passes its tool's own (tools.execute.timeout_s, tools.submit.timeout_s), so
    in the config they would be keys nothing reads."""
    cfg = yaml.safe_load(CONF.read_text())
    assert cfg.pop("_target_") == "agentic_rl.sandbox.Sandbox"
    params = inspect.signature(Sandbox).parameters
    assert set(cfg) == set(params) - {"timeout_s", "test_timeout_s"}
    for name, value in cfg.items():
        default = params[name].default
        assert (list(default) if isinstance(default, tuple) else default) == value, name


def test_hydra_builds_the_sandbox():
    hydra_utils = pytest.importorskip("hydra.utils")
    omegaconf = pytest.importorskip("omegaconf")
    cfg = omegaconf.OmegaConf.load(CONF)
    cfg.workers = 1
    cfg.preload = ["json"]
    sb = hydra_utils.instantiate(cfg, _recursive_=False)
    try:
        assert isinstance(sb, Sandbox) and sb.workers == 1
        assert sb.execute("import json\nprint(json.dumps([1]))").stdout == "[1]\n"
    finally:
        sb.close()


def test_python_choice(monkeypatch, tmp_path):
    monkeypatch.delenv(PYTHON_ENV_VAR, raising=False)
    assert resolve_python(None) == sys.executable
    monkeypatch.setenv(PYTHON_ENV_VAR, sys.executable)
    assert resolve_python(None) == sys.executable
    assert resolve_python("python3") == str(Path(__import__("shutil").which("python3")))
    with pytest.raises(FileNotFoundError, match=PYTHON_ENV_VAR):
        resolve_python(str(tmp_path / "nope"))


def test_bad_config_values():
    for kw, msg in [
        ({"workers": 0}, "workers"),
        ({"isolation": "docker"}, "isolation"),
        ({"network": "vpn"}, "network"),
    ]:
        with pytest.raises(ValueError, match=msg):
            Sandbox(**kw)


def test_preload_is_reported_and_missing_modules_skipped():
    with make_sandbox(workers=1, preload=["json", "no_such_module_xyz"]) as sb:
        assert sb.server_info["preloaded"] == ["json"]
        assert "no_such_module_xyz" in sb.server_info["preload_failed"]
        assert sb.execute("import json, sys\nprint('json' in sys.modules)").stdout == "True\n"
