"""The sandbox part of `make bench-sandbox` workload (a) alone (no naive run): calls/s of WORKERS workers
over N of the benchmark's snippets, ROUNDS times on one warm Sandbox (server start-up not timed, as in
the benchmark).

    PYTHONPATH=<tree> python experiments/sandbox-throughput/sandbox_part.py [WORKERS] [N] [ROUNDS]
"""

import os
import sys
import time

try:
    from agentic_rl.bench.sandbox import snippets
except ImportError:  # the trees before the benchmark moved
    from agentic_rl.sandbox.bench import snippets
from agentic_rl.sandbox.sandbox import Sandbox

workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
progs = snippets(n)
with Sandbox(workers=workers) as sb:
    sb.start()
    sb.execute_many(progs[:4])
    for _ in range(rounds):
        t0 = time.perf_counter()
        results = sb.execute_many(progs, timeout_s=30)
        dt = time.perf_counter() - t0
        print(
            f"{os.environ.get('TAG', '')} workers={workers}: {n} calls: {n / dt:6.2f} calls/s ({dt:5.2f} s), "
            f"ok {sum(r.ok for r in results)}; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
