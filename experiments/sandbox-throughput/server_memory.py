"""The warm server's and zygote's memory (smaps_rollup) with the default preload, after a few calls.
    PYTHONPATH=<tree> python server_memory.py   (as root)"""

import os

from agentic_rl.sandbox.sandbox import Sandbox

with Sandbox(workers=1) as sb:
    sb.start()
    sb.execute_many(["print(1)"] * 4)
    for role, pid in (("server", sb.server_pids[0]), ("zygote", sb.zygote_pids[0])):
        with open(f"/proc/{pid}/smaps_rollup") as f:
            keep = [" ".join(line.split()) for line in f if line.startswith(("Rss", "Pss_Anon", "AnonHugePages"))]
        print(os.environ.get("TAG", ""), role, "; ".join(keep), flush=True)
