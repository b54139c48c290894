"""Benchmark the search backends on the labelled query set.

    python -m agentic_rl.tools.search.bench [--queries tests/tools/search_queries.jsonl]
        [--backends pydoc,docstore] [--cached] [--python PATH] [--repeat 3] [--failures]

For each backend: recall@1, recall@3, MRR (first relevant rank within the top 10), median and p95
query latency once loaded, index size (entries, bytes on disk) and build time. By default the pydoc
index is built from scratch in a temporary cache folder so the build time is real; `--cached`
uses the normal cache instead (and then also reports the warm load time).
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_rl.tools.search import BACKENDS, SearchBackend

DEFAULT_QUERIES = Path(__file__).resolve().parents[3] / "tests" / "tools" / "search_queries.jsonl"
MRR_DEPTH = 10


def load_queries(path: str | Path) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                out.append({"query": row["query"], "expected": list(row["expected"])})
    return out


@dataclass
class BenchResult:
    backend: str
    n_queries: int = 0
    recall_at_1: float = 0.0
    recall_at_3: float = 0.0
    mrr: float = 0.0
    latency_median_ms: float = 0.0
    latency_p95_ms: float = 0.0
    entries: int = 0
    disk_bytes: int = 0
    build_s: float = 0.0
    load_s: float | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def evaluate(backend: SearchBackend, queries: list[dict[str, Any]], repeat: int = 3) -> dict[str, Any]:
    """Quality and latency of `backend` on `queries` (latency: every query `repeat` times)."""
    r1 = r3 = rr = 0.0
    failures = []
    for row in queries:
        names = [h.name for h in backend.search(row["query"], MRR_DEPTH)]
        expected = set(row["expected"])
        rank = next((i + 1 for i, n in enumerate(names) if n in expected), None)
        r1 += rank == 1
        r3 += rank is not None and rank <= 3
        rr += 1.0 / rank if rank else 0.0
        if rank is None or rank > 3:
            failures.append({"query": row["query"], "expected": row["expected"], "rank": rank,
                             "got": names[:3]})
    latencies = []
    for _ in range(max(1, repeat)):
        for row in queries:
            start = time.perf_counter()
            backend.search(row["query"], 3)
            latencies.append((time.perf_counter() - start) * 1e3)
    n = max(1, len(queries))
    return {"recall_at_1": r1 / n, "recall_at_3": r3 / n, "mrr": rr / n,
            "latency_median_ms": statistics.median(latencies),
            "latency_p95_ms": percentile(latencies, 0.95), "failures": failures}


def bench_docstore(queries: list[dict[str, Any]], repeat: int) -> BenchResult:
    from agentic_rl.tools.search import docstore_data

    start = time.perf_counter()
    backend = BACKENDS.get("docstore")()
    build = time.perf_counter() - start
    res = BenchResult("docstore", n_queries=len(queries), entries=len(backend),
                      disk_bytes=Path(docstore_data.__file__).stat().st_size, build_s=build)
    for key, value in evaluate(backend, queries, repeat).items():
        setattr(res, key, value)
    return res


def bench_pydoc(queries: list[dict[str, Any]], repeat: int, cached: bool,
                options: dict[str, Any]) -> BenchResult:
    factory = BACKENDS.get("pydoc")
    with tempfile.TemporaryDirectory(prefix="agentic_rl_search_bench_") as tmp:
        opts = dict(options)
        if not cached:
            opts.setdefault("cache_dir", tmp)
        start = time.perf_counter()
        backend = factory(**opts)
        first = time.perf_counter() - start
        start = time.perf_counter()
        backend = factory(**opts)  # now from the cache: the load time every later run pays
        load = time.perf_counter() - start
        # build time: measured now, or as recorded when the cached index was built
        build = first if not cached else float(backend.index.meta.get("build_seconds", first))
        res = BenchResult("pydoc", n_queries=len(queries), entries=len(backend),
                          disk_bytes=backend.disk_bytes(), build_s=build, load_s=load)
        for key, value in evaluate(backend, queries, repeat).items():
            setattr(res, key, value)
    return res


def format_table(results: list[BenchResult]) -> str:
    rows = [
        ("queries", lambda r: f"{r.n_queries}"),
        ("recall@1", lambda r: f"{r.recall_at_1:.3f}"),
        ("recall@3", lambda r: f"{r.recall_at_3:.3f}"),
        (f"MRR@{MRR_DEPTH}", lambda r: f"{r.mrr:.3f}"),
        ("latency median (ms)", lambda r: f"{r.latency_median_ms:.2f}"),
        ("latency p95 (ms)", lambda r: f"{r.latency_p95_ms:.2f}"),
        ("index entries", lambda r: f"{r.entries}"),
        ("index bytes on disk", lambda r: f"{r.disk_bytes:,}"),
        ("build time (s)", lambda r: f"{r.build_s:.2f}"),
        ("load time, cached (s)", lambda r: "-" if r.load_s is None else f"{r.load_s:.2f}"),
    ]
    width = max(len(label) for label, _ in rows)
    colw = max(12, *(len(r.backend) for r in results))
    lines = [f"{'metric':<{width}}  " + "  ".join(f"{r.backend:>{colw}}" for r in results),
             "-" * (width + 2 + (colw + 2) * len(results))]
    for label, fmt in rows:
        lines.append(f"{label:<{width}}  " + "  ".join(f"{fmt(r):>{colw}}" for r in results))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.tools.search.bench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", default=str(DEFAULT_QUERIES), help="labelled JSONL query set")
    parser.add_argument("--backends", default="pydoc,docstore")
    parser.add_argument("--cached", action="store_true",
                        help="use the normal pydoc cache instead of a fresh build in a temp folder")
    parser.add_argument("--python", default=None, help="sandbox interpreter to index (pydoc)")
    parser.add_argument("--repeat", type=int, default=3, help="latency: times each query is run")
    parser.add_argument("--failures", action="store_true", help="list queries missed at rank 3")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    if not Path(args.queries).exists():
        parser.error(f"query set not found: {args.queries} (pass --queries)")
    queries = load_queries(args.queries)
    results = []
    for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
        if name == "docstore":
            results.append(bench_docstore(queries, args.repeat))
        elif name == "pydoc":
            opts = {"python": args.python} if args.python else {}
            results.append(bench_pydoc(queries, args.repeat, args.cached, opts))
        else:
            parser.error(f"unknown backend {name!r}")
    if args.json:
        print(json.dumps({r.backend: {k: v for k, v in vars(r).items() if k != "failures"}
                          for r in results}, indent=1))
    else:
        print(f"search benchmark: {len(queries)} labelled queries from {args.queries}")
        print(format_table(results))
    if args.failures:
        for r in results:
            print(f"\n{r.backend}: {len(r.failures)} queries without a relevant hit in the top 3")
            for f in r.failures:
                print(f"  rank={f['rank']!s:>4}  {f['query']!r}  expected {f['expected'][:2]}  got {f['got']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
