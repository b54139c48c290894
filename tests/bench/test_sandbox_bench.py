"""bench-sandbox's naive runner (agentic_rl/bench/sandbox.py): its programs run, and, as root, without a network
but loopback, all in one namespace made once (a namespace each would leave the kernel tearing hundreds down while
the sandbox's side is timed next)."""

from __future__ import annotations

import os
import sys

import pytest

from agentic_rl.bench.sandbox import naive_run


def test_the_naive_runner_reports_each_programs_exit_status():
    seconds, ok = naive_run(sys.executable, ["print(1)", "raise SystemExit(3)"], timeout_s=30)
    assert ok == [True, False] and len(seconds) == 2 and all(s > 0 for s in seconds)


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace needs root; without it the naive runner has none")
def test_as_root_every_naive_program_runs_in_one_empty_network_namespace(tmp_path):
    # each program writes what it saw to a file: the runner keeps their output to itself
    seen = tmp_path / "seen.txt"
    programs = [
        f"import os\nopen({str(seen)!r}, 'a').write(os.readlink('/proc/self/ns/net') + '\\n')\n",
        f"import os\nopen({str(seen)!r}, 'a').write(os.readlink('/proc/self/ns/net') + '\\n')\n",
        f"import socket\nopen({str(seen)!r}, 'a').write(repr(sorted(n for _, n in socket.if_nameindex())) + '\\n')\n",
    ]
    _, ok = naive_run(sys.executable, programs, timeout_s=30)
    assert ok == [True, True, True]
    first, second, interfaces = seen.read_text().splitlines()
    assert first == second != os.readlink("/proc/self/ns/net")  # one namespace, not this process's
    assert interfaces == "['lo']"
    assert os.readlink("/proc/self/ns/net") == os.readlink("/proc/thread-self/ns/net")  # this thread went back
