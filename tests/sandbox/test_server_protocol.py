"""The server's bookkeeping with its zygote: every call gets its own runner's status, whatever the timing.

The Supervisor runs in a child Python (so the forks never happen inside pytest), with a stand-in harness
whose runner exits at once with the exit code its request names. No isolation (no uid, no namespaces):
what is tested is the protocol between the server, the zygote and the runner.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from agentic_rl.sandbox.client import REPO_ROOT

PRELUDE = textwrap.dedent("""
    import json, os, sys, tempfile, time
    sys.path.insert(0, sys.argv[1])
    from agentic_rl.sandbox import server

    class ExitAtOnce:  # the harness: the program is done as soon as it starts
        @staticmethod
        def main(req, workdir, result_fd, nonce, candidate_fd=None):
            os._exit(req["exit_code"])

    supervisor = server.Supervisor({"work_dir": tempfile.mkdtemp()}, ExitAtOnce, private_tmp=False, world_writable=[])
    LIMITS = {"memory_bytes": None, "cpu_s": 30, "nofile": None, "fsize_bytes": None, "total_memory_bytes": None}

    def call(exit_code):
        req = {"exit_code": exit_code, "uid": None, "timeout_s": 10.0, "output_limit_bytes": 1 << 20,
               "max_output_bytes": 1 << 16, "limits": LIMITS}
        try:
            reply = supervisor.run(req)
            return {"exit_code": reply["exit_code"], "timed_out": reply["timed_out"]}
        except Exception as e:
            return {"raised": f"{type(e).__name__}: {e}"}
""")


def run_script(body: str) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_runner_that_is_done_before_the_server_looks_still_gives_its_own_status():
    """The server is slow (here: asleep after it hands the runner its request); the runner has exited and
    its zygote has reaped it by the time the server starts to watch. Each call still gets its own exit code."""
    results = run_script("""
        from agentic_rl.sandbox import supervisor as sup
        write_msg = sup.write_msg
        def write_then_stall(fd, obj):
            write_msg(fd, obj)
            time.sleep(0.3)
        sup.write_msg = write_then_stall
        print(json.dumps([call(code) for code in (3, 4, 5)]))
    """)
    assert results == [{"exit_code": code, "timed_out": False} for code in (3, 4, 5)]


def test_a_call_that_fails_midway_leaves_the_next_call_in_step_with_the_zygote():
    """Watching the first call raises. The zygote has already sent that runner's wait status; the next
    calls must not read it as their runner's pid (which made every later reply one call late)."""
    results = run_script("""
        wait = server.Supervisor._wait
        calls = []
        def fail_once(*args, **kwargs):
            calls.append(1)
            if len(calls) == 1:
                raise OSError("watching the runner failed")
            return wait(*args, **kwargs)
        server.Supervisor._wait = staticmethod(fail_once)
        print(json.dumps([call(code) for code in (3, 4, 5)]))
    """)
    assert results[0] == {"raised": "OSError: watching the runner failed"}
    assert results[1:] == [{"exit_code": 4, "timed_out": False}, {"exit_code": 5, "timed_out": False}]
