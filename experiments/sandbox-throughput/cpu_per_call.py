"""CPU time per call of `make bench-sandbox` workload (a) in the sandbox, by process role.

    PYTHONPATH=<tree> python experiments/sandbox-throughput/cpu_per_call.py [WORKERS] [N]   (as root)

Runs N of the benchmark's snippets through a warm Sandbox (as the benchmark's sandbox part does) inside a
cpuacct cgroup of its own, so every process of the sandbox (server, zygote, init factory, runners, inits)
is counted, and reads the long-lived ones (server, zygote, factory) from /proc/<pid>/stat. "rest" is the
runners and inits. Kernel threads' work (cgroup teardown, RCU) is not counted. Works with the trees
before and after the benchmark moved from agentic_rl.sandbox.bench to agentic_rl.bench.sandbox.
"""

import os
import sys
import time

try:
    from agentic_rl.bench.sandbox import snippets
except ImportError:
    from agentic_rl.sandbox.bench import snippets
from agentic_rl.sandbox.sandbox import Sandbox

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def factories(zygote):
    found = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1]) == zygote:
                if b"-S" in open(f"/proc/{p}/cmdline", "rb").read().split(b"\0"):
                    found.append(int(p))
        except OSError:
            pass
    return found


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    group = f"/sys/fs/cgroup/cpuacct/cpu_per_call-{os.getpid()}"
    os.mkdir(group)
    with open(f"{group}/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
    usage = lambda: int(open(f"{group}/cpuacct.usage").read()) / 1e9  # noqa: E731
    progs = snippets(n)
    try:
        with Sandbox(workers=workers) as sb:
            sb.start()
            sb.execute_many(progs[:4])
            time.sleep(0.5)
            roles = {"server": sb.server_pids, "zygote": sb.zygote_pids}
            roles["factory"] = [p for z in sb.zygote_pids for p in factories(z)]
            before = {r: sum(cpu_s(p) for p in ps) for r, ps in roles.items()}
            u0, t0 = usage(), time.perf_counter()
            sb.execute_many(progs, timeout_s=30)
            time.sleep(0.3)  # what the zygotes make ready for the next calls
            u1, t1 = usage(), time.perf_counter()
            after = {r: sum(cpu_s(p) for p in ps) for r, ps in roles.items()}
        rest = u1 - u0 - sum(after[r] - before[r] for r in roles)
        parts = ", ".join(f"{r} {1000 * (after[r] - before[r]) / n:5.2f}" for r in roles)
        print(
            f"{os.environ.get('TAG', '')} workers={workers} n={n}: wall {1000 * (t1 - t0 - 0.3) / n:6.2f} ms/call, "
            f"cpu {1000 * (u1 - u0) / n:6.2f} ms/call: {parts}, rest {1000 * rest / n:5.2f}; "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    finally:
        with open("/sys/fs/cgroup/cpuacct/cgroup.procs", "w") as f:
            f.write(str(os.getpid()))
        for _ in range(50):
            try:
                os.rmdir(group)
                break
            except OSError:
                time.sleep(0.1)


if __name__ == "__main__":
    main()
