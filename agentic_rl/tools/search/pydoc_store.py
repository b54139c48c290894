"""A pydoc index from introspected entries (`build_index`), and its files on disk (`save_index`, `load_index`).

An entry's BM25 fields are its name tokens, parameter names, first sentence and the rest of its doc; its usage
counts and depth feed the static prior. An index folder holds one bm25s model per field, entries.json,
meta.json and raw.json (the entries and usage it was built from, for `bench --ablation`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from agentic_rl.tools.search import text as T
from agentic_rl.tools.search.bm25 import import_bm25s
from agentic_rl.tools.search.pydoc_index import PydocIndex
from agentic_rl.tools.search.ranking import DEFAULT_RANKING, Ranking


def short_signature(sig: str, max_len: int = 160) -> str:
    if len(sig) <= max_len:
        return sig
    cut = sig.rfind(",", 0, max_len - 6)
    return (sig[:cut] if cut > 0 else sig[: max_len - 6]) + ", ...)"


def entry_fields(entry: dict[str, Any], vocabulary: set[str]) -> dict[str, list[str]]:
    """BM25 tokens of one entry, per field; "all" is the single-field form (name counted 3x)."""
    doc = entry.get("doc", "")
    summary, _, rest = doc.partition(". ")
    fields = {
        "name": T.name_tokens(entry["name"], vocabulary, last_weight=1),
        "params": T.param_tokens(entry.get("signature", ""), vocabulary),
        "summary": T.prose_tokens(summary),
        "body": T.prose_tokens(rest + " " + entry.get("extra", "")),
    }
    fields["all"] = T.name_tokens(entry["name"], vocabulary) + fields["params"] + fields["summary"] + fields["body"]
    return fields


def entry_uses(entries: list[dict[str, Any]], usage: dict[str, Any]) -> dict[str, list[int]]:
    """Per entry: uses of its last name, of parent.name, and of its parent's name."""
    last, pair = usage.get("last") or {}, usage.get("pair") or {}
    out: dict[str, list[int]] = {"last": [], "pair": [], "parent": []}
    for e in entries:
        parts = e["name"].split(".")
        parent = parts[-2] if len(parts) > 1 else ""
        out["last"].append(int(last.get(parts[-1], 0)))
        out["pair"].append(int(pair.get(f"{parent}.{parts[-1]}", 0)) if parent else 0)
        # a member of a much-used class (DataFrame.sort_values over Index.sort_values), counted by
        # the class's own qualified uses (pd.DataFrame), not by its bare name: a class named with a
        # common word (numpy.generic) is not thereby popular. A module-level name gets nothing here.
        is_member = e.get("kind") in ("method", "property", "attribute") and len(parts) > 2
        out["parent"].append(int(pair.get(f"{parts[-3]}.{parent}", 0)) if is_member else 0)
    return out


def build_index(
    entries: list[dict[str, Any]],
    meta: dict[str, Any],
    usage: dict[str, Any] | None = None,
    ranking: Ranking = DEFAULT_RANKING,
) -> PydocIndex:
    bm25s = import_bm25s()

    counts = Counter(w.lower() for e in entries for w in T.words(e.get("doc", "") + " " + e.get("extra", "")))
    vocabulary = {w for w, c in counts.items() if c >= 2 and len(w) >= 2}
    per_entry = [entry_fields(e, vocabulary) for e in entries]
    retrievers = {}
    for fname in ranking.field_weights():
        retriever = bm25s.BM25(k1=1.2, b=0.75)
        retriever.index([f[fname] or [""] for f in per_entry], show_progress=False)
        retrievers[fname] = retriever
    uses = entry_uses(entries, usage or {})
    return PydocIndex(
        names=[e["name"] for e in entries],
        kinds=[e.get("kind", "") for e in entries],
        signatures=[short_signature(e.get("signature", "")) for e in entries],
        docs=[e.get("doc", "") for e in entries],
        depths=[entry_depth(e) for e in entries],
        retrievers=retrievers,
        uses=uses,
        meta=meta,
        ranking=ranking,
    )


def entry_depth(entry: dict[str, Any]) -> int:
    module = entry.get("module") or entry["name"].split(".")[0]
    if entry.get("kind") == "module":
        return 0
    return entry["name"].count(".") - module.count(".")


def save_index(
    index: PydocIndex, path: Path, entries: list[dict[str, Any]] | None = None, usage: dict[str, Any] | None = None
) -> None:
    """Write atomically: build in a sibling temp folder, then rename into place.

    The raw entries and usage counts are kept too (raw.json), so `bench --ablation` can re-rank
    and re-index the same entries without introspecting again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=path.name + ".tmp-", dir=path.parent))
    try:
        for fname, retriever in index.retrievers.items():
            retriever.save(str(tmp / f"bm25-{fname}"), show_progress=False)
        with open(tmp / "entries.json", "w", encoding="utf-8") as f:
            json.dump(
                {
                    "names": index.names,
                    "kinds": index.kinds,
                    "signatures": index.signatures,
                    "docs": index.docs,
                    "depths": index.depths,
                    "uses": index.uses,
                },
                f,
                ensure_ascii=False,
                separators=(",", ":"),
            )
        if entries is not None:
            with open(tmp / "raw.json", "w", encoding="utf-8") as f:
                json.dump({"entries": entries, "usage": usage or {}}, f, ensure_ascii=False, separators=(",", ":"))
        with open(tmp / "meta.json", "w", encoding="utf-8") as f:
            json.dump(index.meta, f, indent=1, ensure_ascii=False)
        try:
            os.rename(tmp, path)
        except OSError:  # another process got there first: its index is as good as ours
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    index.path = path


def load_raw(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The introspected entries and usage counts an index was built from."""
    with open(path / "raw.json", encoding="utf-8") as f:
        data = json.load(f)
    return data["entries"], data["usage"]


def load_index(path: Path) -> PydocIndex:
    bm25s = import_bm25s()

    with open(path / "meta.json", encoding="utf-8") as f:
        meta = json.load(f)
    with open(path / "entries.json", encoding="utf-8") as f:
        data = json.load(f)
    retrievers = {
        d.name.removeprefix("bm25-"): bm25s.BM25.load(str(d), show_progress=False)
        for d in sorted(path.glob("bm25-*"))
        if d.is_dir()
    }
    return PydocIndex(
        names=data["names"],
        kinds=data["kinds"],
        signatures=data["signatures"],
        docs=data["docs"],
        depths=data["depths"],
        retrievers=retrievers,
        uses=data.get("uses") or {},
        meta=meta,
        path=path,
    )


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())
