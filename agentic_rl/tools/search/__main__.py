"""Command line: search the docs the way the agent does.

    python -m agentic_rl.tools.search "query" [--backend pydoc|docstore] [--k 3] [--json]
        [--python PATH] [--cache-dir DIR] [--modules a,b,c] [--dense MODEL|none] [--rebuild] [--observation]

Default output is the text of the hits as the tool formats them; `--observation` prints the exact
`<doc_result>` observation; `--json` prints one JSON object per hit and line with `name`,
`signature`, `doc` and `score`.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from agentic_rl.tools.search import BACKENDS, SearchTool, format_hits
from agentic_rl.tools.search.dense import DEFAULT_MODEL as DEFAULT_DENSE_MODEL
from agentic_rl.types import Task, ToolCall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.tools.search", description="Search API documentation.")
    parser.add_argument("query", nargs="+", help="the search query (words are joined by spaces)")
    parser.add_argument("--backend", default="pydoc", choices=BACKENDS.names())
    parser.add_argument("--k", type=int, default=3, help="number of hits")
    parser.add_argument("--json", action="store_true", help="one JSON object per hit and line")
    parser.add_argument(
        "--observation", action="store_true", help="print the <doc_result> observation the agent would see"
    )
    parser.add_argument("--python", default=None, help="sandbox interpreter to index (pydoc)")
    parser.add_argument("--cache-dir", default=None, help="index cache folder (pydoc)")
    parser.add_argument("--modules", default=None, help="comma-separated modules to index (pydoc)")
    parser.add_argument(
        "--dense",
        default=DEFAULT_DENSE_MODEL,
        metavar="MODEL",
        help=f"packaged dense model (pydoc; default {DEFAULT_DENSE_MODEL}, as in "
        "conf/tool/search.yaml; none: lexical only)",
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild the index (pydoc)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log index building")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if args.k < 1:
        parser.error("--k must be >= 1")

    options: dict = {}
    if args.backend == "pydoc":
        if args.python:
            options["python"] = args.python
        if args.cache_dir:
            options["cache_dir"] = args.cache_dir
        if args.modules:
            options["modules"] = [m.strip() for m in args.modules.split(",") if m.strip()]
        if args.rebuild:
            options["rebuild"] = True
        if args.dense.lower() != "none":
            options["dense"] = args.dense
    query = " ".join(args.query)

    if args.observation:
        tool = SearchTool(backend=args.backend, k=args.k, backend_options=options)
        task = Task(task_id="cli", prompt="", tests="", harness="pytest")
        print(tool(ToolCall(name="search", content=query, start=0, end=0), task).text)  # noqa: T201 (the CLI's output)
        return 0
    backend = BACKENDS.get(args.backend)(**options)
    hits = backend.search(query, args.k)
    if args.json:
        for hit in hits:
            print(  # noqa: T201 (the CLI's output)
                json.dumps(
                    {"name": hit.name, "signature": hit.signature, "doc": hit.doc, "score": hit.score},
                    ensure_ascii=False,
                )
            )
    else:
        print(format_hits(hits, max_doc_chars=10_000))  # noqa: T201 (the CLI's output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
