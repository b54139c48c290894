"""Which mutants of `tools/search/ranking.py`'s tuning values change a search result on the labelled query sets.

    python -m tests.mutation.ranking_mutants [--out DIR] [--only 0 13 ...] [--settings default stdlib ...]
        [--budget-s S] [--queries N]

`ranking.py` is mostly numbers: the boosts and priors (module constants, which `pydoc_index.py` imports by name)
and `Ranking`'s defaults (`DEFAULT_RANKING`, which every backend starts from). Their mutants each run every test
of `tests/tools` (about a minute), and a +1 step changes scores, not necessarily any result a unit test sees. This
script asks the question that decides whether such a mutant is equivalent in use: does it change the top 3 of any
query of the three labelled sets (`tests/tools/search_queries*.jsonl`: development, held-out, fresh)?

Each mutant is the mutation tool's own (`mutate.find_mutants`, `mutate.mutated_tree`), loaded the way the tool
loads it (its import hook, in a process forked per mutant), so `pydoc_index`, `pydoc_store` and
`pydoc_backend` import the mutated constants and `DEFAULT_RANKING`. The backend is the one the default
configuration builds (`conf/tool/search.yaml`: the pydoc index of this interpreter, the needs matched with the
dense model `all-minilm-l6-v2`), loaded from a private copy of the normal cache folder (a mutant that rebuilds or
encodes writes there, never into the shared cache). The queries are ranked with `bench.search.evaluate` (recall@3
and MRR, the benchmark's own figures) and each query's top 3 is compared with the unmutated top 3.

Some values act only in a setting that is not the default; each such mutant is also run in that setting, against
the unmutated ranking in the same setting:
- `name_weight`, `params_weight`, `summary_weight`, `body_weight` act only with `fielded=True`, which a backend
  cannot be configured with (its cached index has the one `all` field): the benchmark's ablation builds such an
  index from the raw entries (`bench --ablation`, "full + fields"); so does this script.
- The tests' settings: the standard library's index without a dense model ("stdlib", as `test_ranking_pins.py`
  builds it), with the needs' cosine ("stdlib-dense") and fielded ("stdlib-fielded"); `choose_pins` picks the
  queries to pin from them.
- `dense_candidates` acts only when the entries' own cosine is on (`ranking: {dense_weight: 15}`, the switch that
  `conf/tool/search.yaml` documents); `rrf_k` only with `dense_fusion: rrf` as well.

Output: one JSON line per (setting, mutant) in `DIR/results.jsonl` (resumable: done lines are skipped), and the
summary `DIR/summary.md`. The private cache is `DIR/cache`; each mutant runs on a fresh copy of it (a mutant that
cannot read the index rebuilds it, as the backend does with a damaged cache). Each run is a process forked from
this one (the third-party libraries imported once; every `agentic_rl` module imported again in the child). Run
it under the shared lock; the entries' encoding (needed by `dense_weight` and the dense settings, once) takes
minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.mutation import mutate

REPO = Path(__file__).resolve().parents[2]
RANKING = REPO / "agentic_rl" / "tools" / "search" / "ranking.py"
MODULE = "agentic_rl.tools.search.ranking"
DENSE_MODEL = "all-minilm-l6-v2"  # conf/tool/search.yaml's backend_options.dense
CONSTANTS = (
    "EXACT_BOOST",
    "DOTTED_BOOST",
    "SPACED_BOOST",
    "IDENT_BOOST",
    "JOINED_BOOST",
    "WORD_BOOST",
    "MENTION_BOOST",
    "DEPTH_PENALTY",
    "KIND_PRIOR",
    "MAX_QUERY_CHARS",
    "BM25_CANDIDATES",
)
# The settings in which a mutant is run: name -> (the `ranking` backend option, build a fielded index, the other
# backend options). "stdlib" is the tests' setting (`tests/tools/test_ranking_pins.py`): the standard library
# only, no dense model, built in seconds.
SETTINGS: dict[str, tuple[dict[str, Any], bool, dict[str, Any]]] = {
    "default": ({}, False, {}),
    "stdlib": ({}, False, {"modules": "stdlib", "dense": None}),
    "stdlib-dense": ({}, False, {"modules": "stdlib"}),  # the same with the needs' cosine (the dense model)
    "fielded": ({"fielded": True}, True, {}),  # bench --ablation's "full + fields"
    "stdlib-fielded": ({"fielded": True}, True, {"modules": "stdlib", "dense": None}),  # the tests' fielded index
    "entry-cosine": ({"dense_weight": 15.0}, False, {}),
    "entry-cosine-rrf": ({"dense_weight": 1.0, "dense_fusion": "rrf"}, False, {}),
}
# Which mutants also run in other settings: the name their line assigns -> the settings
EXTRA_SETTING = {
    "name_weight": ["fielded", "stdlib-fielded"],
    "params_weight": ["fielded", "stdlib-fielded"],
    "summary_weight": ["fielded", "stdlib-fielded"],
    "body_weight": ["fielded", "stdlib-fielded"],
    "dense_candidates": ["entry-cosine"],
    "rrf_k": ["entry-cosine-rrf"],
}


def value_mutants() -> list[mutate.Mutant]:
    """The mutants of ranking.py's numbers and switches: every constant mutant (n -> n + 1, True <-> False) but
    the dataclass's `frozen=True` (a behaviour its tests check: killed by them)."""
    return [
        m
        for m in mutate.find_mutants(RANKING)
        if " -> " in m.what
        and "@dataclass" not in m.source_line
        and (m.what.split(" -> ")[0].lstrip("-").replace(".", "", 1).isdigit() or m.what.startswith(("True", "False")))
    ]


def settings_of(m: mutate.Mutant) -> list[str]:
    name = m.source_line.split(":")[0].strip()
    return ["default", "stdlib", "stdlib-dense"] + EXTRA_SETTING.get(name, [])


# ----------------------------------------------------------------------------------------------- child
class _Memo:
    """A backend whose `search(q, k)` ranks each query once at the benchmark's depth: `evaluate` asks for it
    twice (its recall, then its latency loop), and the top 3 is the first three of the same list."""

    def __init__(self, backend: Any, depth: int) -> None:
        self.backend, self.depth, self.names = backend, depth, {}

    def search(self, query: str, k: int) -> list[Any]:
        if query not in self.names:
            self.names[query] = self.backend.search(query, self.depth)
        return self.names[query][:k]


def child(index: int | None, setting: str, cache_dir: str, limit: int | None) -> dict[str, Any]:
    """In a fresh interpreter: load mutant `index` (None: the original) and rank every query in `setting`."""
    if index is not None:
        sys.meta_path.insert(0, mutate._MutantFinder(MODULE, RANKING, mutate.mutated_tree(RANKING, index)))
    from agentic_rl.bench import search as bench
    from agentic_rl.tools.search import pydoc_backend as P

    overrides, fielded, options = SETTINGS[setting]
    options = {"dense": DENSE_MODEL, **options}
    if options.get("modules") == "stdlib":
        options["modules"] = list(P.STDLIB_MODULES)
    start = time.perf_counter()
    backend = P.PydocBackend(cache_dir=cache_dir, ranking=None if fielded else overrides, **options)
    index_ = backend.index
    if fielded:  # as bench --ablation builds "full + fields": the same entries, both fields, the same scorers
        from dataclasses import replace

        ranking = replace(P.DEFAULT_RANKING, **overrides)
        entries, usage = P.load_raw(backend.index.path)
        index_ = P.build_index(entries, {}, usage, ranking)
        index_.dense, index_.needs = backend.index.dense, backend.index.needs
        index_.set_ranking(ranking)
    known = set(index_.names)
    from dataclasses import asdict

    from agentic_rl.tools.search import pydoc_index as I

    # what the searching code sees: the constants pydoc_index imported, the ranking in use, its fields' weights
    values = {n: getattr(I, n) for n in CONSTANTS} | asdict(index_.ranking)
    values["field_weights"] = index_.ranking.field_weights()
    out: dict[str, Any] = {"index": index, "setting": setting, "values": values, "sets": {}, "top3": {}}
    for path in (bench.DEFAULT_QUERIES, bench.HELDOUT_QUERIES, bench.FRESH_QUERIES):
        queries = bench.load_queries(path)[:limit]
        memo = _Memo(index_, bench.MRR_DEPTH)
        res = bench.evaluate(memo, queries, repeat=1, known=known)
        out["sets"][path.stem] = {k: res[k] for k in ("recall_at_1", "recall_at_3", "mrr", "unanswerable")}
        out["top3"][path.stem] = {q: [h.name for h in hits[:3]] for q, hits in memo.names.items()}
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


# ---------------------------------------------------------------------------------------------- parent
def private_cache(out: Path) -> Path:
    """`out/cache`: a copy of the default configuration's index folder (built first if it is missing)."""
    from agentic_rl.tools.search import pydoc_backend as P

    source = P.PydocBackend(dense=DENSE_MODEL).index.path  # loads (or builds) the shared cache's index
    if not (out / "cache" / source.name).exists():
        shutil.copytree(source, out / "cache" / source.name)
    return out / "cache"


def run_forked(index: int | None, setting: str, cache: str, limit: int | None, tmp: Path) -> dict[str, Any]:
    """`child` in a forked process: the third-party libraries stay imported, every `agentic_rl` module is
    imported again there (the mutated ranking.py through the tool's import hook, and the modules that import
    its names after it)."""
    result = tmp / "child.json"
    result.unlink(missing_ok=True)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for name in [n for n in sys.modules if n == "agentic_rl" or n.startswith("agentic_rl.")]:
                del sys.modules[name]
            result.write_text(json.dumps(child(index, setting, cache, limit)))
            code = 0
        except BaseException:
            import traceback

            result.write_text(json.dumps({"index": index, "setting": setting, "error": traceback.format_exc()}))
        finally:
            os._exit(code)
    os.waitpid(pid, 0)
    return json.loads(result.read_text())


def compare(base: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    changed = {
        name: [q for q, top in tops.items() if top != base["top3"][name].get(q)] for name, tops in run["top3"].items()
    }
    top1 = {
        name: [q for q, top in tops.items() if top[:1] != base["top3"][name].get(q, [])[:1]]
        for name, tops in run["top3"].items()
    }
    return {"changed_top3": changed, "changed_top1": top1}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="outputs/mutation/ranking_values")
    parser.add_argument("--only", type=int, nargs="*", help="these mutant indices only")
    parser.add_argument("--budget-s", type=float, default=1200.0, help="start no run after this")
    parser.add_argument("--queries", type=int, default=None, help="the first N queries of each set (a dry run)")
    parser.add_argument("--settings", nargs="*", choices=list(SETTINGS), help="these settings only (default: all)")
    args = parser.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    done = {(r["index"], r["setting"]): r for r in rows if "error" not in r}  # an error is run again
    mutants = [m for m in value_mutants() if args.only is None or m.index in args.only]
    jobs: list[tuple[int | None, str]] = []
    for m in mutants:
        for setting in settings_of(m):
            if args.settings and setting not in args.settings:
                continue
            if (None, setting) not in jobs:
                jobs.append((None, setting))
            jobs.append((m.index, setting))
    # the bases before the mutants; last the runs that need every entry encoded (minutes, once, by a base)
    dense_weight = {m.index for m in mutants if m.source_line.startswith("dense_weight")}
    jobs.sort(key=lambda j: (j[0] in dense_weight or "cosine" in j[1], j[0] is not None, j[1] != "default"))
    start = time.time()
    mutate.preload([*mutate.PRELOAD, "bm25s", "tokenizers", "safetensors"])
    with tempfile.TemporaryDirectory(prefix="ranking_mutants_") as tmp:
        cache = None  # the private copy of the index folder, kept in `out` (a resumed run finds the encodings)
        for index, setting in jobs:
            if (index, setting) in done:
                continue
            if time.time() - start > args.budget_s:
                print(f"budget spent; {sum(j not in done for j in jobs)} runs left (rerun to resume)", flush=True)
                break
            cache = cache or private_cache(out)
            t0 = time.time()
            if index is not None:  # a mutant may rebuild or re-encode: it gets a copy of the bases' cache
                shutil.rmtree(Path(tmp) / "cache", ignore_errors=True)
                shutil.copytree(cache, Path(tmp) / "cache")
            where = cache if index is None else Path(tmp) / "cache"
            row = run_forked(index, setting, str(where), args.queries, Path(tmp))
            row["wall_s"] = round(time.time() - t0, 1)
            done[(index, setting)] = row
            with open(results, "a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
            print(
                f"{setting:>16} {'base' if index is None else '#' + str(index):>5}: {row['wall_s']} s"
                + (" ERROR" if "error" in row else ""),
                flush=True,
            )
    (out / "summary.md").write_text(summary(done, mutants))
    print(summary(done, mutants))
    return 0


def choose_pins(
    done: dict[tuple[int | None, str], dict[str, Any]], setting: str = "stdlib", only: set[int] | None = None
) -> list[dict[str, Any]]:
    """Few queries whose pinned result every mutant that changes a result in `setting` breaks: greedily, first
    queries whose labelled answer the unmutated ranking puts first and the mutant does not (a pinned top 1),
    then any change of a top 3 (a pinned top 3)."""
    from agentic_rl.bench import search as bench

    base = done.get((None, setting))
    if base is None:
        return []
    expected = {
        path.stem: {row["query"]: set(row["expected"]) for row in bench.load_queries(path)}
        for path in (bench.DEFAULT_QUERIES, bench.HELDOUT_QUERIES, bench.FRESH_QUERIES)
    }
    breaks: dict[tuple[str, str, str], set[int]] = {}  # (kind, set, query) -> the mutants it kills
    for (index, where), row in done.items():
        if index is None or where != setting or only is not None and index not in only:
            continue
        for name, tops in row["top3"].items():
            for query, top in tops.items():
                was = base["top3"][name][query]
                if top == was:
                    continue
                if was[:1] and was[0] in expected[name][query] and top[:1] != was[:1]:
                    breaks.setdefault(("top1", name, query), set()).add(index)
                breaks.setdefault(("top3", name, query), set()).add(index)
    left = set().union(*breaks.values()) if breaks else set()
    pins = []
    while left:
        # a labelled answer kept first where one kills something left; else the top 3 that kills the most, of a
        # query about the standard library where one does
        top1 = [k for k in breaks if k[0] == "top1" and breaks[k] & left]
        stdlib = [
            k
            for k in breaks
            if breaks[k] & left and all(n.split(".")[0] in sys.stdlib_module_names for n in expected[k[1]][k[2]])
        ]
        key = max(top1 or stdlib or breaks, key=lambda k: (len(breaks[k] & left), -len(k[2]), k))
        kind, name, query = key
        was = base["top3"][name][query]
        pins.append(
            {
                "kind": kind,
                "set": name,
                "query": query,
                "pinned": was[:1] if kind == "top1" else was,
                "kills": sorted(breaks[key] & left),
            }
        )
        left -= breaks[key]
    return pins


def summary(done: dict[tuple[int | None, str], dict[str, Any]], mutants: list[mutate.Mutant]) -> str:
    lines = [
        "| mutant | line | setting | what the search code saw (unmutated -> mutant) "
        "| queries whose top 3 changed (dev / held-out / fresh) | of them top 1 "
        "| recall@3 dev / held-out / fresh (unmutated) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for m in mutants:
        for setting in settings_of(m):
            row, base = done.get((m.index, setting)), done.get((None, setting))
            if row is None or base is None or "error" in row or "error" in base:
                state = (
                    "not run" if row is None or base is None else "error: " + (row.get("error") or base["error"])[-200:]
                )
                lines.append(f"| #{m.index} `{m.what}` | `{m.source_line[:60]}` | {setting} | | {state} | | |")
                continue
            diff = compare(base, row)
            sets = list(row["top3"])
            n3 = " / ".join(str(len(diff["changed_top3"][s])) for s in sets)
            n1 = " / ".join(str(len(diff["changed_top1"][s])) for s in sets)
            rec = " / ".join(
                f"{row['sets'][s]['recall_at_3']:.3f} ({base['sets'][s]['recall_at_3']:.3f})" for s in sets
            )
            seen = "; ".join(
                f"{k} {base['values'][k]} -> {v}" for k, v in row["values"].items() if base["values"].get(k) != v
            )
            line = (
                f"| #{m.index} `{m.what}` | `{m.source_line[:60]}` | {setting} | {seen or 'no change'} | {n3} | {n1} |"
            )
            lines.append(line + f" {rec} |")
    lines.append("")
    lines.append("Pins for the tests' settings (`choose_pins`; a later setting only for the mutants no earlier one")
    lines.append("changes): kind, set, query, pinned result, the mutants it kills:")
    covered: set[int] = set()
    for setting in ("stdlib", "stdlib-dense", "stdlib-fielded"):
        for pin in choose_pins(done, setting, only={m.index for m in mutants} - covered):
            lines.append(
                f"- {setting} {pin['kind']} {pin['set']}: {pin['query']!r} -> {pin['pinned']}: kills {pin['kills']}"
            )
            covered |= set(pin["kills"])
    lines.append("")
    lines.append("The queries whose top 3 changed, per mutant and setting (first three of each set):")
    for m in mutants:
        for setting in settings_of(m):
            row, base = done.get((m.index, setting)), done.get((None, setting))
            if row is None or base is None or "error" in row or "error" in base:
                continue
            diff = compare(base, row)
            for s, qs in diff["changed_top3"].items():
                for q in qs[:3]:
                    lines.append(f"- #{m.index} {setting} {s}: {q!r}: {base['top3'][s][q]} -> {row['top3'][s][q]}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
