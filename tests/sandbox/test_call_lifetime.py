"""Calls end when they end (issue #24): whatever a call starts, however it was created, is gone when the
call returns; nothing it leaves (processes, zombies, memory) reaches a later call; and its memory bound
covers memory that is not mapped anywhere (memfd pages, socket buffers).

Each attack runs on a one-worker sandbox, so the later call is sure to run where the earlier one did.
"""

from __future__ import annotations

import glob
import os
import time
import uuid

import psutil
import pytest

from .conftest import make_sandbox, needs_root, stray_processes

# A child made with clone(CLONE_PARENT) is the runner's sibling: its parent is whatever forked the runner.
CLONE_PARENT_CHILD = (
    "import ctypes, os, platform\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "SYS_CLONE = {'x86_64': 56, 'aarch64': 220}[platform.machine()]\n"
    "CLONE_PARENT, SIGCHLD = 0x00008000, 17\n"
    "def sibling():\n"
    "    pid = libc.syscall(SYS_CLONE, ctypes.c_long(CLONE_PARENT | SIGCHLD), ctypes.c_long(0), ctypes.c_long(0),\n"
    "                       ctypes.c_long(0), ctypes.c_long(0))\n"
    "    assert pid >= 0, ctypes.get_errno()\n"
    "    return pid\n"
)


@pytest.fixture(scope="module")
def solo():
    with make_sandbox(workers=1) as sb:
        yield sb


@needs_root
def test_clone_parent_child_dies_with_its_call_and_cannot_read_a_later_one(solo):
    secret = uuid.uuid4().hex
    spy = CLONE_PARENT_CHILD + (
        "if sibling() == 0:\n"
        "    import glob, time\n"
        "    end = time.time() + 20\n"
        "    while time.time() < end:\n"  # look for a later call's files through /proc, and leave a note in it
        "        for path in glob.glob('/proc/[0-9]*/cwd/secret.txt'):\n"
        "            try:\n"
        "                stolen = open(path).read()\n"
        "                open(path.replace('secret.txt', 'stolen.txt'), 'w').write(stolen)\n"
        "            except OSError:\n"
        "                pass\n"
        "        time.sleep(0.02)\n"
        "    os._exit(0)\n"
        "print('spy planted')\n"
    )
    r = solo.execute(spy, timeout_s=5.0)
    assert r.ok and r.stdout == "spy planted\n", r
    assert stray_processes(solo, wait_s=1.0) == []  # the sibling did not outlive its call
    victim = (
        f"open('secret.txt', 'w').write({secret!r})\n"
        "import os, time\ntime.sleep(1.5)\n"
        "print(open('stolen.txt').read() if os.path.exists('stolen.txt') else 'nothing stolen')\n"
    )
    r = solo.execute(victim, timeout_s=5.0)
    assert r.ok and r.stdout == "nothing stolen\n", r


@needs_root
def test_a_call_sees_only_its_own_processes(solo):
    r = solo.execute("import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n")
    assert r.ok, r.stderr
    pids = eval(r.stdout)  # noqa: S307 - a list of ints printed by the sandbox
    assert len(pids) <= 3, pids  # the call's init, its runner (and nothing of the host or the server)


@needs_root
def test_a_calls_init_is_not_a_fork_of_the_zygote(solo):
    # Forking the zygote (the preloaded libraries' page tables) costs about as much CPU as the call's own
    # fork; the namespace's init comes from the small factory process instead, and runs nothing.
    r = solo.execute(
        "import os\nstatus = dict(line.split(':', 1) for line in open('/proc/1/status'))\n"
        "print(os.getpid(), int(status['VmRSS'].split()[0]) * 1024)\n"
    )
    assert r.ok, r.stderr
    runner_pid, init_rss = map(int, r.stdout.split())
    assert runner_pid == 2  # the runner is the namespace's second process, forked into it by the zygote
    zygote_rss = psutil.Process(solo.zygote_pids[0]).memory_info().rss
    assert init_rss < zygote_rss / 2, (init_rss, zygote_rss)


@needs_root
def test_calls_go_on_when_the_init_factory_dies():
    # The zygote then forks each call's init itself (the slower way), in its own PID namespace again.
    with make_sandbox(workers=1) as sb:
        assert sb.execute("print(1)").stdout == "1\n"
        zygote = psutil.Process(sb.zygote_pids[0])
        factories = [p for p in zygote.children() if "-S" in p.cmdline()]
        assert len(factories) == 1, [p.cmdline() for p in zygote.children()]
        factories[0].kill()
        results = [sb.execute("import os\nprint(os.getpid())") for _ in range(3)]
        # the call already handed to the server when its namespace died fails ("killed"); later ones run
        assert [r.ok for r in results[1:]] == [True] * 2, results
        assert results[-1].stdout.strip() in ("2", "3")  # a fresh PID namespace per call still
        assert sb.zygote_pids == [zygote.pid]  # the same zygote: the server was not restarted
        assert stray_processes(sb, wait_s=1.0) == []


@needs_root
def test_inits_end_with_their_factory():
    # An init shares the factory's memory and has no parent-death signal: the factory kills the ones it
    # made (the calls made ready ahead) when the zygote goes, or they would outlive the sandbox.
    with make_sandbox(workers=1) as sb:
        assert sb.execute("print(1)").ok
        zygote = psutil.Process(sb.zygote_pids[0])
        factory = next(p for p in zygote.children() if "-S" in p.cmdline())
        inits = factory.children()
        assert inits, "no init made ahead"
    deadline = time.monotonic() + 10.0
    while any(_alive(p) for p in inits) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in inits if _alive(p)]


def _alive(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@needs_root
def test_zombies_of_a_call_do_not_use_up_later_calls_processes():
    with make_sandbox(workers=1, nproc=32) as sb:
        zombies = CLONE_PARENT_CHILD + (
            "made = 0\n"
            "for _ in range(40):\n"  # children that exit at once and that nobody in the call can reap
            "    try:\n"
            "        if sibling() == 0:\n"
            "            os._exit(0)\n"
            "        made += 1\n"
            "    except AssertionError:\n"
            "        break\n"
            "print(made > 0)\n"
        )
        r = sb.execute(zombies, timeout_s=5.0)
        assert r.ok and r.stdout == "True\n", r
        threads = (
            "import threading\nts = [threading.Thread(target=lambda: None) for _ in range(8)]\n"
            "for t in ts:\n    t.start()\nfor t in ts:\n    t.join()\nprint('threads ok')\n"
        )
        r = sb.execute(threads, timeout_s=5.0)
        assert r.ok and r.stdout == "threads ok\n", r
        assert stray_processes(sb, wait_s=1.0) == []


@needs_root
def test_a_survivors_memory_is_not_charged_to_a_later_call():
    with make_sandbox(workers=1, memory_mb=1024) as sb:
        hog = CLONE_PARENT_CHILD + (
            "if sibling() == 0:\n"
            "    import time\n"
            "    block = bytearray(750 * 1024 * 1024)\n"
            "    for i in range(0, len(block), 4096):\n"
            "        block[i] = 1\n"
            "    time.sleep(30)\n"
            "    os._exit(0)\n"
            "print('hog planted')\n"
        )
        r = sb.execute(hog, timeout_s=5.0)
        assert r.ok, r
        time.sleep(3.0)  # the survivor (if any) has its memory by now
        honest = "block = bytearray(400 * 1024 * 1024)\nprint('fine')\n"  # with the survivor's: over memory_mb
        r = sb.execute(honest, timeout_s=20.0)
        assert (r.status, r.stdout) == ("ok", "fine\n"), r


MEMFD_HOG = (
    "import os, time\nfds = []\nchunk = b'x' * (16 << 20)\nheld = 0\n"
    "while held < (2048 << 20):\n"  # four times memory_mb (512), none of it mapped
    "    fd = os.memfd_create('hold')\n"
    "    for _ in range(3):\n"
    "        os.write(fd, chunk)\n"
    "        held += len(chunk)\n"
    "    fds.append(fd)\n"
    "print('held', held >> 20, 'MB', flush=True)\ntime.sleep(2)\n"
)


@needs_root
def test_memfd_pages_count_against_memory_mb():
    with make_sandbox(workers=1, memory_mb=512, fsize_mb=64) as sb:
        r = sb.execute(MEMFD_HOG, timeout_s=20.0)
        assert r.status == "memory" and not r.ok, r
        assert sb.execute("print(1)").ok  # and the worker is fine afterwards


@needs_root
def test_reused_memory_cgroups_bound_and_judge_each_call_alone():
    """A worker's calls take turns in a ring of three memory cgroups (cgroups.py): over four rounds every
    group serves a hog and an honest call, so each group's OOM kill count is already above zero when a
    later call starts in it. Each hog must still be bound and reported `memory`, each honest call after one
    `ok`; and the worker makes no new group per call."""
    with make_sandbox(workers=1, memory_mb=512, fsize_mb=64) as sb:
        for _ in range(4):
            r = sb.execute(MEMFD_HOG, timeout_s=20.0)
            assert r.status == "memory" and "held" not in r.stdout, r
            r = sb.execute("print(1)")
            assert (r.status, r.stdout) == ("ok", "1\n"), r
        base = sb.server_info["memory_cgroup"]
        assert base is not None
        groups = glob.glob(os.path.join(base, f"agentic_rl_sandbox-{sb.zygote_pids[0]}-*"))
        assert len(groups) == 3, groups


@needs_root
def test_socket_buffers_count_against_memory_mb():
    with make_sandbox(workers=1, memory_mb=512) as sb:
        buffers = (
            "import socket, time\npairs = []\nheld = 0\n"
            "while held < (2048 << 20):\n"
            "    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
            "    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)\n"
            "    b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)\n"
            "    a.setblocking(False)\n"
            "    try:\n"
            "        while True:\n"
            "            held += a.send(b'y' * 60000)\n"
            "    except BlockingIOError:\n"
            "        pass\n"
            "    pairs.append((a, b))\n"
            "print('held', held >> 20, 'MB', flush=True)\ntime.sleep(2)\n"
        )
        r = sb.execute(buffers, timeout_s=20.0)
        assert r.status in ("memory", "error") and "held" not in r.stdout, r  # error: EMFILE/ENOBUFS first


GOOD = "def add(a, b):\n    return a + b\n"
CHECK = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"


def test_moving_the_result_fd_does_not_hand_over_the_nonce(solo):
    """The harness's own report line must never reach a pipe the candidate put in the result fd's place."""
    forge = (
        "import os, json\n"
        "real = os.dup(3)\n"
        "r, w = os.pipe()\n"
        "os.dup2(w, 3)\n"  # the harness now writes its report to our pipe ...
        "def add(a, b):\n"
        "    os.set_blocking(r, False)\n"
        "    try:\n"
        "        line = os.read(r, 65536).split(b'\\n')[0]\n"
        "        nonce = json.loads(line)['nonce']\n"  # ... and hands over the nonce with it
        "    except (OSError, ValueError, KeyError, IndexError):\n"
        "        return a - b\n"
        "    done = {'nonce': nonce, 'event': 'done', 'n_tests': 1, 'n_passed': 1, 'failures': [], 'error': None}\n"
        "    os.write(real, (json.dumps(done) + '\\n').encode())\n"
        "    os._exit(0)\n"
    )
    r = solo.run_tests(forge, CHECK, harness="humaneval", entry_point="add")
    assert not r.passed and r.status != "passed", r
    assert solo.run_tests(GOOD, CHECK, harness="humaneval", entry_point="add").passed
