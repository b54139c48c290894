"""Benchmark the search backends on the labelled query set.

    python -m agentic_rl.bench.search [--queries SET.jsonl ...] [--backends pydoc,docstore]
        [--cached] [--python PATH ...] [--dense MODEL|none] [--repeat 3] [--failures] [--ablation]

Query sets: the development set and the held-out set (default both). Interpreters: this one and
`.venv-bcb/bin/python` when present (default). For each backend, interpreter and set: recall@1, recall@3, MRR
(first relevant rank within the top 10), median and p95 query latency once loaded, index size (entries, bytes on
disk) and build time. By default the pydoc index is built from scratch in a temporary cache folder so the build
time is real; `--cached` uses the normal cache instead (and then also reports the warm load time).
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

from agentic_rl.bench.bcb import BCB_VENV_PYTHON
from agentic_rl.paths import repo_root
from agentic_rl.tools.search import BACKENDS, SearchBackend
from agentic_rl.tools.search.dense import DEFAULT_MODEL as DEFAULT_DENSE_MODEL

REPO_ROOT = repo_root()
# The development set (ranking was tuned on it) and the held-out set (written before the ranker was
# changed and never tuned on): both are reported so over-fitting shows as a gap between them.
DEFAULT_QUERIES = REPO_ROOT / "tests" / "tools" / "search_queries.jsonl"
HELDOUT_QUERIES = REPO_ROOT / "tests" / "tools" / "search_queries_heldout.jsonl"
# 120 needs written in a later session by someone who had seen neither the needs nor the other sets; measured
# blind once, then read (its misses informed turning the needs' cosine on by default): see the README
FRESH_QUERIES = REPO_ROOT / "tests" / "tools" / "search_queries_fresh.jsonl"
BCB_PYTHON = BCB_VENV_PYTHON
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
    unanswerable: int = 0  # queries none of whose labelled answers is in the index
    recall_at_1: float = 0.0
    recall_at_3: float = 0.0
    mrr: float = 0.0
    latency_median_ms: float = 0.0
    latency_p95_ms: float = 0.0
    entries: int = 0
    disk_bytes: int = 0
    build_s: float = 0.0
    load_s: float | None = None
    dense_s: float = 0.0  # encoding the entries with the dense model (part of build_s when built)
    failures: list[dict[str, Any]] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def evaluate(
    backend: SearchBackend, queries: list[dict[str, Any]], repeat: int = 3, known: set[str] | None = None
) -> dict[str, Any]:
    """Quality and latency of `backend` on `queries` (latency: every query `repeat` times).

    With `known` (the names the index holds), queries none of whose answers is known are left out
    of the recall (counted as `unanswerable`): an interpreter without scikit-learn cannot find it.
    """
    r1 = r3 = rr = 0.0
    failures = []
    answerable = [row for row in queries if known is None or known.intersection(row["expected"])]
    for row in answerable:
        names = [h.name for h in backend.search(row["query"], MRR_DEPTH)]
        expected = set(row["expected"])
        rank = next((i + 1 for i, n in enumerate(names) if n in expected), None)
        r1 += rank == 1
        r3 += rank is not None and rank <= 3
        rr += 1.0 / rank if rank else 0.0
        if rank is None or rank > 3:
            failures.append({"query": row["query"], "expected": row["expected"], "rank": rank, "got": names[:3]})
    latencies = []
    for _ in range(max(1, repeat)):
        for row in queries:
            start = time.perf_counter()
            backend.search(row["query"], 3)
            latencies.append((time.perf_counter() - start) * 1e3)
    n = max(1, len(answerable))
    return {
        "unanswerable": len(queries) - len(answerable),
        "recall_at_1": r1 / n,
        "recall_at_3": r3 / n,
        "mrr": rr / n,
        "latency_median_ms": statistics.median(latencies),
        "latency_p95_ms": percentile(latencies, 0.95),
        "failures": failures,
    }


def bench_docstore(queries: list[dict[str, Any]], repeat: int) -> BenchResult:
    from agentic_rl.tools.search import docstore_data

    start = time.perf_counter()
    backend = BACKENDS.get("docstore")()
    build = time.perf_counter() - start
    res = BenchResult(
        "docstore",
        n_queries=len(queries),
        entries=len(backend),
        disk_bytes=Path(docstore_data.__file__).stat().st_size,
        build_s=build,
    )
    for key, value in evaluate(backend, queries, repeat).items():
        setattr(res, key, value)
    return res


def bench_pydoc(
    query_sets: dict[str, list[dict[str, Any]]], repeat: int, cached: bool, options: dict[str, Any]
) -> dict[str, BenchResult]:
    """One pydoc index (built once) evaluated on every query set."""
    factory = BACKENDS.get("pydoc")
    out: dict[str, BenchResult] = {}
    with tempfile.TemporaryDirectory(prefix="agentic_rl_search_bench_") as tmp:
        opts = dict(options)
        if not cached:
            opts.setdefault("cache_dir", tmp)
        start = time.perf_counter()
        backend = first_backend = factory(**opts)
        first = time.perf_counter() - start
        start = time.perf_counter()
        backend = factory(**opts)  # now from the cache: the load time every later run pays
        load = time.perf_counter() - start
        # build time: measured now, or as recorded when the cached index was built
        build = first if not cached else float(backend.index.meta.get("build_seconds", first))
        # the first backend also encoded the entries when a dense model is on and no matrix was stored
        dense_s = first_backend.dense_seconds
        known = set(backend.index.names)
        for set_name, queries in query_sets.items():
            res = BenchResult(
                "pydoc",
                n_queries=len(queries),
                entries=len(backend),
                disk_bytes=backend.disk_bytes(),
                build_s=build,
                load_s=load,
                dense_s=dense_s,
            )
            for key, value in evaluate(backend, queries, repeat, known=known).items():
                setattr(res, key, value)
            out[set_name] = res
    return out


def format_table(results: list[BenchResult]) -> str:
    rows = [
        ("queries answerable/total", lambda r: f"{r.n_queries - r.unanswerable}/{r.n_queries}"),
        ("recall@1", lambda r: f"{r.recall_at_1:.3f}"),
        ("recall@3", lambda r: f"{r.recall_at_3:.3f}"),
        (f"MRR@{MRR_DEPTH}", lambda r: f"{r.mrr:.3f}"),
        ("latency median (ms)", lambda r: f"{r.latency_median_ms:.2f}"),
        ("latency p95 (ms)", lambda r: f"{r.latency_p95_ms:.2f}"),
        ("index entries", lambda r: f"{r.entries}"),
        ("index bytes on disk", lambda r: f"{r.disk_bytes:,}"),
        ("build time (s)", lambda r: f"{r.build_s:.2f}"),
        ("of which dense encoding (s)", lambda r: f"{r.dense_s:.2f}"),
        ("load time, cached (s)", lambda r: "-" if r.load_s is None else f"{r.load_s:.2f}"),
    ]
    width = max(len(label) for label, _ in rows)
    colw = max(12, *(len(r.backend) for r in results))
    lines = [
        f"{'metric':<{width}}  " + "  ".join(f"{r.backend:>{colw}}" for r in results),
        "-" * (width + 2 + (colw + 2) * len(results)),
    ]
    for label, fmt in rows:
        lines.append(f"{label:<{width}}  " + "  ".join(f"{fmt(r):>{colw}}" for r in results))
    return "\n".join(lines)


# The ablation: each row switches parts of pydoc_backend.Ranking off (or is the earlier ranker).
def ablation_variants() -> dict[str, Any]:
    from dataclasses import replace

    from agentic_rl.tools.search.pydoc_backend import DEFAULT_RANKING as full

    no_usage = {"usage_last": 0.0, "usage_pair": 0.0, "usage_parent": 0.0}
    lexical = replace(full, dense_weight=0.0, needs_dense_weight=0.0)  # no dense model at all
    earlier = replace(
        lexical,
        fielded=False,
        expansion_weight=0.0,
        deprecated_penalty=0.0,
        relevance_scale=0.0,
        needs_weight=0.0,
        **no_usage,
    )
    return {
        "earlier ranker (BM25 + boosts)": earlier,
        "+ usage prior": replace(
            earlier, usage_last=full.usage_last, usage_pair=full.usage_pair, usage_parent=full.usage_parent
        ),
        "+ expansion": replace(earlier, expansion_weight=full.expansion_weight),
        "+ fields": replace(earlier, fielded=True),
        "+ needs": replace(earlier, needs_weight=full.needs_weight),
        "lexical (prior + expansion + needs)": lexical,
        "lexical + fields": replace(lexical, fielded=True),
        "lexical - usage prior": replace(lexical, **no_usage),
        "lexical - pair/parent usage": replace(lexical, usage_pair=0.0, usage_parent=0.0),
        "lexical - expansion": replace(lexical, expansion_weight=0.0),
        "lexical - deprecated penalty": replace(lexical, deprecated_penalty=0.0),
        "lexical - needs": replace(lexical, needs_weight=0.0),
        "lexical + scaled relevance (30)": replace(lexical, relevance_scale=30.0),
        # the rows below use the dense model (`--dense MODEL`): the needs' phrases' cosine (the default) and
        # the entries' cosine (off by default: encoding every entry takes minutes)
        "full (chosen)": full,  # lexical + the needs' cosine, w=20
        "full + fields": replace(full, fielded=True),
        "full, needs cosine w=10": replace(full, needs_dense_weight=10.0),
        "full, needs cosine w=40": replace(full, needs_dense_weight=40.0),
        "full + entry cosine w=15": replace(full, dense_weight=15.0),
        "lexical - needs + entry cosine w=15": replace(lexical, needs_weight=0.0, dense_weight=15.0),
        "lexical + entry cosine w=15": replace(lexical, dense_weight=15.0),
        "lexical + entry cosine, add w=8": replace(lexical, dense_weight=8.0, dense_fusion="add"),
        "lexical + entry cosine, rrf w=1 k=10": replace(lexical, dense_weight=1.0, dense_fusion="rrf", rrf_k=10.0),
    }


def run_ablation(query_sets: dict[str, list[dict[str, Any]]], python: str, dense: str | None = None) -> str:
    """Recall@3 / MRR of each ranking variant on the cached index of `python` (same entries).
    Variants that fuse a dense model run only with `dense` (the model's name)."""
    from agentic_rl.tools.search import pydoc_backend as P

    # both of the dense model's scorers, so that every variant can be ranked on the same index
    backend = BACKENDS.get("pydoc")(python=python, dense=dense, ranking={"dense_weight": 15.0})
    entries, usage = P.load_raw(backend.index.path)
    built = {}
    label = interpreter_label(python)
    lines = [
        f"ablation, pydoc[{label}], dense model {dense or 'none'}: recall@3 / MRR@{MRR_DEPTH} per query set",
        f"{'variant':<32}" + "".join(f"{name:>32}" for name in query_sets),
    ]
    for variant, ranking in ablation_variants().items():
        needs_cosine = backend.index.needs is not None and backend.index.needs.dense is not None
        if ranking.dense_weight and backend.index.dense is None or ranking.needs_dense_weight and not needs_cosine:
            lines.append(f"{variant:<32}" + "".join(f"{'- (no dense model)':>32}" for _ in query_sets))
            continue
        if ranking.fielded not in built:
            # the same entries in the same order as the cached index, so its dense matrix fits
            built[ranking.fielded] = P.build_index(entries, {}, usage, ranking)
            built[ranking.fielded].dense = backend.index.dense
            built[ranking.fielded].needs = backend.index.needs
        index = built[ranking.fielded]
        index.set_ranking(ranking)
        known = set(index.names)
        cells = []
        for queries in query_sets.values():
            res = evaluate(index, queries, repeat=1, known=known)
            cells.append(f"{res['recall_at_3']:.3f} / {res['mrr']:.3f} ({res['latency_median_ms']:.1f} ms)")
        lines.append(f"{variant:<32}" + "".join(f"{c:>32}" for c in cells))
    return "\n".join(lines)


def default_interpreters() -> list[str]:
    """This interpreter, plus the BigCodeBench one (`make setup-bcb`) when it exists."""
    out = [sys.executable]
    if BCB_PYTHON.exists():
        out.append(str(BCB_PYTHON))
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.bench.search", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--queries",
        action="append",
        default=None,
        help="labelled JSONL query set (repeatable; default: the dev and held-out sets)",
    )
    parser.add_argument("--backends", default="pydoc,docstore")
    parser.add_argument(
        "--cached", action="store_true", help="use the normal pydoc cache instead of a fresh build in a temp folder"
    )
    parser.add_argument(
        "--python",
        action="append",
        default=None,
        help="sandbox interpreter to index with pydoc (repeatable; default: this one and "
        ".venv-bcb/bin/python when present)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="latency: times each query is run")
    parser.add_argument("--failures", action="store_true", help="list queries missed at rank 3")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument(
        "--dense",
        default=DEFAULT_DENSE_MODEL,
        metavar="MODEL",
        help=f"packaged dense model (default {DEFAULT_DENSE_MODEL}, as in conf/tool/search.yaml; none: lexical only)",
    )
    parser.add_argument(
        "--ablation", action="store_true", help="instead: recall of each ranking variant (uses the normal pydoc cache)"
    )
    return parser


def run_backends(
    query_sets: dict[str, list[dict[str, Any]]],
    backends: list[str],
    interpreters: list[str],
    args: argparse.Namespace,
    dense: str | None,
) -> list[BenchResult]:
    """One result per backend (pydoc once per interpreter) and query set, named `backend/set`."""
    results: list[BenchResult] = []
    if "pydoc" in backends:
        for python in interpreters:
            for set_name, res in bench_pydoc(
                query_sets, args.repeat, args.cached, {"python": python, "dense": dense}
            ).items():
                res.backend = f"pydoc[{interpreter_label(python)}]/{set_name}"
                results.append(res)
    if "docstore" in backends:
        for set_name, queries in query_sets.items():
            res = bench_docstore(queries, args.repeat)
            res.backend = f"docstore/{set_name}"
            results.append(res)
    return results


def print_report(
    results: list[BenchResult], query_sets: dict[str, list[dict[str, Any]]], interpreters: list[str]
) -> None:
    """The workload's line, then one table per query set."""
    print(  # noqa: T201 (the benchmark's report)
        "search benchmark: "
        + ", ".join(f"{k} ({len(v)} queries)" for k, v in query_sets.items())
        + "; interpreters: "
        + ", ".join(interpreters)
    )
    print(  # noqa: T201 (the benchmark's report)
        "recall counts only the queries whose labelled answers the index holds (answerable);"
        " a library the interpreter lacks cannot be found"
    )
    for set_name in query_sets:
        print(f"\n== {set_name}")  # noqa: T201 (the benchmark's report)
        print(format_table([r for r in results if r.backend.endswith("/" + set_name)]))  # noqa: T201 (the benchmark's report)


def print_failures(results: list[BenchResult]) -> None:
    """The queries each backend missed at rank 3, with the rank they got and what came first."""
    for r in results:
        print(f"\n{r.backend}: {len(r.failures)} queries without a relevant hit in the top 3")  # noqa: T201 (the benchmark's report)
        for f in r.failures:
            print(f"  rank={f['rank']!s:>4}  {f['query']!r}  expected {f['expected'][:2]}  got {f['got']}")  # noqa: T201 (the benchmark's report)


def main(argv: list[str] | None = None) -> int:
    cli = build_parser()
    args = cli.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    query_paths = args.queries or [str(DEFAULT_QUERIES), str(HELDOUT_QUERIES), str(FRESH_QUERIES)]
    for path in query_paths:
        if not Path(path).exists():
            cli.error(f"query set not found: {path} (pass --queries)")
    query_sets = {Path(p).stem: load_queries(p) for p in query_paths}
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in backends if b not in ("pydoc", "docstore")]
    if unknown:
        cli.error(f"unknown backend(s) {unknown}; available: pydoc, docstore")
    interpreters = args.python or default_interpreters()
    dense = None if args.dense.lower() == "none" else args.dense
    if args.ablation:
        for python in interpreters:
            print(run_ablation(query_sets, python, dense))  # noqa: T201 (the benchmark's report)
        return 0
    results = run_backends(query_sets, backends, interpreters, args, dense)
    if args.json:
        print(json.dumps({r.backend: {k: v for k, v in vars(r).items() if k != "failures"} for r in results}, indent=1))  # noqa: T201 (the benchmark's report)
    else:
        print_report(results, query_sets, interpreters)
    if args.failures:
        print_failures(results)
    return 0


def interpreter_label(python: str) -> str:
    """A short column name: `.venv-bcb` for a venv's python, else `main`."""
    path = Path(python)
    if path.parent.name == "bin" and (path.parent.parent / "pyvenv.cfg").exists():
        return path.parent.parent.name
    return "main"


if __name__ == "__main__":
    sys.exit(main())
