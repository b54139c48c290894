"""Importing bm25s, the BM25 library of the pydoc index and of the needs, without its side effects."""

from __future__ import annotations

import logging
import os
from typing import Any


def import_bm25s() -> Any:
    # bm25s runs a jax op at import when jax is installed; jax would then reserve 75% of a GPU's memory in the
    # trainer's process (seen on an H200: one such process held 106 GiB and every other job ran out of memory).
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import bm25s

    # bm25s sets its logger to DEBUG, so every index build/load would reach the root handlers
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s
