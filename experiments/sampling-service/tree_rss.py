"""Peak memory of one run's process tree, polled: the trainer and every process it started (sampler servers, sandbox
workers), for issue #49's "trainer plus servers stay within 4 GiB". `/usr/bin/time -v` reports the trainer's own
peak only, and a server is a child it does not count.

Usage: python tree_rss.py PID OUT.json [--every SECONDS]; it stops when PID exits and writes OUT.json:
  peak_tree_gib          the largest sum of RSS over the tree seen at one poll (shared pages counted once per process,
                         so an upper bound on what the tree holds)
  peak_servers_gib       the largest sum over the sampler servers alone (command line names agentic_rl.rollout.service)
  peak_trainer_and_servers_gib  the same poll's trainer + servers, without the sandbox's workers
  polls, every_s
"""

from __future__ import annotations

import argparse
import json
import time

import psutil

GIB = 1024**3
SERVER_MARK = "agentic_rl.rollout.service"


def _rss(proc: psutil.Process) -> int:
    try:
        return proc.memory_info().rss
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return 0  # it ended between the listing and the read


def _is_server(proc: psutil.Process) -> bool:
    return any(SERVER_MARK in part for part in _cmd(proc))


def poll(pid: int, every_s: float) -> dict:
    root = psutil.Process(pid)
    peaks = {"peak_tree_gib": 0.0, "peak_servers_gib": 0.0, "peak_trainer_and_servers_gib": 0.0}
    polls = 0
    while root.is_running() and root.status() != psutil.STATUS_ZOMBIE:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        # a server's own children (vLLM's engine core) belong to the server
        server_roots = [p for p in tree if _is_server(p)]
        server_pids = {p.pid for s in server_roots for p in [s, *s.children(recursive=True)]}
        # the trainer: the python under /usr/bin/time (the root may be `time` itself, whose RSS is negligible)
        trainer = sum(_rss(p) for p in tree if p.pid not in server_pids and "agentic_rl.train" in " ".join(_cmd(p)))
        servers = sum(_rss(p) for p in tree if p.pid in server_pids)
        total = sum(_rss(p) for p in tree)
        peaks["peak_tree_gib"] = max(peaks["peak_tree_gib"], total / GIB)
        peaks["peak_servers_gib"] = max(peaks["peak_servers_gib"], servers / GIB)
        peaks["peak_trainer_and_servers_gib"] = max(peaks["peak_trainer_and_servers_gib"], (trainer + servers) / GIB)
        polls += 1
        time.sleep(every_s)
    return {**{k: round(v, 3) for k, v in peaks.items()}, "polls": polls, "every_s": every_s}


def _cmd(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pid", type=int)
    parser.add_argument("out")
    parser.add_argument("--every", type=float, default=2.0)
    args = parser.parse_args()
    result = poll(args.pid, args.every)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
