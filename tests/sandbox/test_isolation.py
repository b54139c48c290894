"""Hostile programs are contained: each gets a status, the caller lives, nothing outside changes,
no process survives the call, and the call ends in bounded time."""

from __future__ import annotations

import socket
import time
import uuid
from pathlib import Path

import psutil
import pytest

from agentic_rl.sandbox.client import REPO_ROOT

from .conftest import IS_ROOT, make_sandbox, needs_root, stray_processes


def run(sandbox, code: str, timeout_s: float = 3.0):
    start = time.monotonic()
    result = sandbox.execute(code, timeout_s=timeout_s)
    elapsed = time.monotonic() - start
    assert elapsed < timeout_s + 5.0, f"call took {elapsed:.1f}s"  # bounded wall time
    return result


def test_plain_program(sandbox, no_strays):
    r = run(sandbox, "import sys\nprint('out')\nprint('err', file=sys.stderr)\n")
    assert (r.ok, r.status, r.stdout, r.stderr, r.exit_code) == (True, "ok", "out\n", "err\n", 0)


def test_exception_and_exit_status(sandbox, no_strays):
    r = run(sandbox, "print('before')\n1 / 0\n")
    assert (r.ok, r.status, r.exit_code, r.stdout) == (False, "error", 1, "before\n")
    assert r.stderr.startswith("Traceback") and "ZeroDivisionError" in r.stderr and "runpy" not in r.stderr
    assert run(sandbox, "import sys\nsys.exit(3)").exit_code == 3
    assert run(sandbox, "import sys\nsys.exit(0)").ok


def test_infinite_loop(sandbox, no_strays):
    r = run(sandbox, "print('started', flush=True)\nwhile True:\n    pass\n", timeout_s=1.5)
    assert r.status == "timeout" and not r.ok
    assert r.stdout == "started\n"  # what was printed before the deadline is kept


def test_sleep_forever(sandbox, no_strays):
    assert run(sandbox, "import time\ntime.sleep(1e6)\n", timeout_s=1.0).status == "timeout"


def test_busy_non_daemon_thread(sandbox, no_strays):
    code = (
        "import threading\nthreading.Thread(target=lambda: [None for _ in iter(int, 1)]).start()\nprint('main done')\n"
    )
    r = run(sandbox, code, timeout_s=1.5)
    assert r.status == "timeout" and "main done" in r.stdout


def test_fork_bomb(sandbox, no_strays):
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    r = run(sandbox, code, timeout_s=2.0)
    assert r.status in ("timeout", "killed") and not r.ok


def test_memory_bomb(sandbox, no_strays):
    r = run(sandbox, "chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 1024 * 1024))\n", timeout_s=10.0)
    assert r.status == "memory" and not r.ok
    r = run(sandbox, "x = bytearray(8 * 1024 ** 3)\n")
    assert r.status == "memory"


def test_huge_output_never_reaches_the_caller(sandbox, no_strays):
    rss_before = psutil.Process().memory_info().rss
    r = run(sandbox, "import sys\nsys.stdout.write('x' * 100_000_000)\n")
    assert r.status == "output_limit" and not r.ok
    assert len(r.stdout) <= sandbox.max_output_bytes and r.truncated
    r = run(sandbox, "while True:\n    print('y' * 1000)\n")
    assert r.status == "output_limit"
    assert psutil.Process().memory_info().rss - rss_before < 50 * 1024 * 1024


def test_kill_parent(sandbox, no_strays):
    r = run(sandbox, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('still here')\n")
    assert r.status in ("ok", "error", "killed", "sandbox_error")
    assert run(sandbox, "print(42)").stdout == "42\n"  # the sandbox still works afterwards


def test_kill_own_process_group(sandbox, no_strays):
    r = run(sandbox, "import os, signal\nos.killpg(0, signal.SIGKILL)\n")
    assert r.status == "killed" and r.signal == 9


def test_setsid_daemon_does_not_outlive_the_call(sandbox, no_strays):
    marker = f"daemon-{uuid.uuid4().hex}"
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        import sys; sys.argv[0] = '{marker}'\n"
        "        time.sleep(1000)\n"
        "    os._exit(0)\n"
        "print('parent exits')\n"
    )
    start = time.monotonic()
    r = run(sandbox, code, timeout_s=5.0)
    assert r.ok and r.stdout == "parent exits\n"
    assert time.monotonic() - start < 4.0  # the call ends with its main process, not at the deadline
    assert stray_processes(sandbox) == []


@needs_root
def test_runs_unprivileged_in_fresh_private_dirs(sandbox, no_strays):
    r = run(
        sandbox,
        "import os\nprint(os.getuid(), os.getgid(), os.getgroups(), os.getcwd())\n"
        "open('left_behind.txt', 'w').write('x')\nopen('/tmp/left_behind_tmp.txt', 'w').write('x')\n",
    )
    uid, gid, groups, cwd = r.stdout.split(" ", 3)
    assert int(uid) in sandbox.worker_uids and int(gid) == int(uid) and groups == "[]"
    r2 = run(sandbox, "import os\nprint(sorted(os.listdir('.')), sorted(os.listdir('/tmp')))")
    assert "left_behind" not in r2.stdout  # nothing of an earlier call is visible
    assert not any(Path("/tmp").glob("left_behind*"))  # and the host's /tmp was never touched


@pytest.fixture
def sacrificial_files():
    """Files the sandbox must neither read, change nor delete: in the repo and in the caller's home."""
    token = uuid.uuid4().hex
    paths = [REPO_ROOT / "tests" / "sandbox" / f".sacrificial-{token}", Path.home() / f".sacrificial-{token}"]
    for p in paths:
        p.write_text(token)
        p.chmod(0o644)
    yield paths, token
    for p in paths:
        p.unlink(missing_ok=True)


def test_no_writes_outside(sandbox, sacrificial_files, no_strays):
    paths, token = sacrificial_files
    code = (
        "import os, shutil\nhits = []\n"
        f"for p in {[str(p) for p in paths]!r}:\n"
        "    for action in (lambda: open(p).read(), lambda: open(p, 'a').write('pwned'), lambda: os.remove(p)):\n"
        "        try:\n            hits.append(str(action()))\n        except OSError as e:\n            pass\n"
        f"for d in [{str(REPO_ROOT)!r}, os.path.expanduser('~root'), '/usr/lib']:\n"
        "    try:\n        open(os.path.join(d, 'sandbox_was_here'), 'w').write('x')\n"
        "        hits.append('wrote ' + d)\n"
        "    except OSError:\n        pass\n"
        f"try:\n    shutil.rmtree({str(REPO_ROOT / 'agentic_rl')!r})\nexcept OSError:\n    pass\n"
        "print(hits)\n"
    )
    r = run(sandbox, code)
    assert r.ok, r.stderr
    if IS_ROOT:
        assert r.stdout == "[]\n"  # could not even read them
    for p in paths:
        assert p.read_text() == token
    assert not (REPO_ROOT / "sandbox_was_here").exists() and not (Path.home() / "sandbox_was_here").exists()
    assert (REPO_ROOT / "agentic_rl" / "sandbox" / "server.py").exists()


@needs_root
def test_no_network(sandbox, no_strays):
    with socket.socket() as server:  # a listener of the test on the host's loopback
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        port = server.getsockname()[1]
        code = (
            "import socket\nresults = []\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=1)\n    results.append('tcp connected')\n"
            "except OSError as e:\n    results.append('tcp blocked')\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"s.sendto(b'x', ('127.0.0.1', {port}))\n"
            "print(results[0])\n"
        )
        r = run(sandbox, code)
        assert r.stdout == "tcp blocked\n", r
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing ever arrived


@needs_root
def test_loopback_inside_the_call_works(sandbox, no_strays):
    code = (
        "import socket, threading\nsrv = socket.socket()\nsrv.bind(('127.0.0.1', 0))\nsrv.listen(1)\n"
        "threading.Thread(target=lambda: srv.accept()[0].sendall(b'hello'), daemon=True).start()\n"
        "c = socket.create_connection(srv.getsockname())\nprint(c.recv(5).decode())\n"
    )
    assert run(sandbox, code).stdout == "hello\n"


def test_secrets_are_scrubbed(monkeypatch):
    secrets = {
        "WANDB_API_KEY": "wandb-secret-1",
        "HF_TOKEN": "hf-secret-2",
        "OPENAI_API_KEY": "sk-secret-3",
        "AWS_SECRET_ACCESS_KEY": "aws-secret-4",
        "MY_SERVICE_TOKEN": "tok-secret-5",
    }
    for k, v in secrets.items():
        monkeypatch.setenv(k, v)
    code = (
        "import os, glob\nleaks = [k for k in os.environ if 'KEY' in k or 'TOKEN' in k or 'SECRET' in k]\n"
        "for path in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n        leaks.append(open(path, 'rb').read().decode(errors='replace'))\n"
        "    except OSError:\n        pass\n"
        "print(leaks)\n"
    )
    with make_sandbox(workers=1) as sb:
        r = sb.execute(code)
    assert r.ok, r.stderr
    for v in secrets.values():
        assert v not in r.stdout


def test_accelerators_are_hidden_from_candidate_code(monkeypatch, sandbox):
    # the trainer's own environment may point at a GPU; the candidate must not inherit it
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    r = run(
        sandbox, "import os\nprint(repr(os.environ.get('CUDA_VISIBLE_DEVICES')), os.environ.get('JAX_PLATFORMS'))\n"
    )
    assert r.ok, r.stderr
    assert r.stdout == "'' cpu\n"


def test_module_level_functions_use_one_default_sandbox(monkeypatch, sandbox):
    import agentic_rl.sandbox as sbx
    from agentic_rl.sandbox import client as impl

    monkeypatch.setattr(impl, "_default", sandbox)
    assert sbx.execute("print(6 * 7)").stdout == "42\n"
    r = sbx.run_tests(
        "def f():\n    return 1\n", "def check(c):\n    assert c() == 1\n", harness="humaneval", entry_point="f"
    )
    assert r.passed and sbx.default_sandbox() is sandbox


def test_fallback_without_uid_isolation_still_contains_the_basics():
    """isolation="none" (what a non-root user gets): deadline, output cap, cleanup, fresh dirs, env."""
    with make_sandbox(workers=1, isolation="none") as sb:
        assert sb.worker_uids == []
        assert sb.execute("while True:\n    pass\n", timeout_s=1.0).status == "timeout"
        assert sb.execute("print('x' * 50_000_000)").status == "output_limit"
        daemon = (
            "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(1000)\nopen('f', 'w').write('x')\n"
        )
        assert sb.execute(daemon).ok
        assert stray_processes(sb) == []
        assert sb.execute("import os\nprint(os.listdir('.'))").stdout == "['main.py']\n"  # no 'f' from before
        r = sb.run_tests(CHEAT_EXIT, "def check(c):\n    assert c() == 1\n", harness="humaneval", entry_point="f")
        assert not r.passed


CHEAT_EXIT = "import os\ndef f():\n    os._exit(0)\n"
