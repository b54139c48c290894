import glob, os, sys, time, statistics as st
try:
    from agentic_rl.bench.sandbox import snippets
except ImportError:
    from agentic_rl.sandbox.bench import snippets
from agentic_rl.sandbox.sandbox import Sandbox
w, n, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
progs = snippets(n) if kind == "snip" else ["print(1)"] * n
for f in glob.glob("/tmp/sbxprof-*.log"): os.unlink(f)
with Sandbox(workers=w) as sb:
    sb.start()
    t0 = time.perf_counter()
    res = sb.execute_many(progs, timeout_s=30)
    print(f"{n/(time.perf_counter()-t0):.1f} calls/s")
srv = [dict((kv.split("=")[0], float(kv.split("=")[1])) for kv in l.split()) for f in glob.glob("/tmp/sbxprof-*.log") for l in open(f)]
names = ["start", "forked", "waited", "status", "killall", "drain", "cgrm", "end"]
names = [k for k in names if k in srv[0]]
for i in range(1, len(names)):
    vals = [(r[names[i]] - r[names[i-1]]) * 1000 for r in srv[5:]]
    print(f"{names[i-1]:>8} -> {names[i]:<8} median {st.median(vals):6.2f} mean {st.mean(vals):6.2f} ms")
# gap between calls per server: end of one to start of next
bys = {}
for f in glob.glob("/tmp/sbxprof-*.log"):
    rows = [dict((kv.split("=")[0], float(kv.split("=")[1])) for kv in l.split()) for l in open(f)]
    gaps = [(b["start"] - a["end"]) * 1000 for a, b in zip(rows, rows[1:])]
    print("gap end->next start median", f"{st.median(gaps):.2f} mean {st.mean(gaps):.2f}")
