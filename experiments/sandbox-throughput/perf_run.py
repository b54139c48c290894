"""perf record of the whole machine around N snippets of workload (a) through a warm Sandbox(workers=2):
    PYTHONPATH=<tree> python perf_run.py OUT.data N   (as root; prints calls/s)"""
import os, sys, time, signal, subprocess
try:
    from agentic_rl.bench.sandbox import snippets
except ImportError:
    from agentic_rl.sandbox.bench import snippets
from agentic_rl.sandbox.sandbox import Sandbox
n = int(sys.argv[2]); out = sys.argv[1]
progs = snippets(n)
with Sandbox(workers=2) as sb:
    sb.start()
    sb.execute_many(progs[:8])
    time.sleep(0.5)
    p = subprocess.Popen(["perf", "record", "-a", "-g", "-e", "cpu-clock", "-F", "2999", "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    t0 = time.perf_counter()
    sb.execute_many(progs, timeout_s=30)
    dt = time.perf_counter() - t0
    p.send_signal(signal.SIGINT); p.wait()
    print(f"{n/dt:.1f} calls/s")
