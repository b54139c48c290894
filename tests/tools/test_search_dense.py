"""Tests of the dense (sentence-embedding) ranking of the pydoc search backend (issue 16).

A tiny random BERT, written as an installable-looking package in a temporary folder, stands in for
the packaged model, so these tests need neither the real weights nor more than a few seconds. One
test uses the real packaged model when it is installed (about 5 s).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("bm25s")

from agentic_rl.tools.search import dense as D
from agentic_rl.tools.search import pydoc_backend as P  # noqa: E402
from agentic_rl.tools.search.needs import NeedsMatcher  # noqa: E402

SMALL = ["collections", "heapq", "json"]
TINY_VOCAB = [
    "[PAD]",
    "[UNK]",
    "json",
    "dumps",
    "loads",
    "heap",
    "push",
    "pop",
    "counter",
    "most",
    "common",
    "serialize",
    "object",
    "string",
    "parse",
    "read",
    "write",
    "file",
    "sort",
    "list",
]


def entry(name: str, doc: str) -> dict:
    return {
        "name": name,
        "module": name.rsplit(".", 1)[0],
        "kind": "function",
        "signature": "(x)",
        "doc": doc,
        "extra": "",
    }


def write_tiny_model(folder: Path, hidden: int = 16, positions: int = 64) -> None:
    """A random 1-layer BERT with a word-level tokenizer: the files a packaged model ships."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import BertConfig, BertModel

    folder.mkdir(parents=True, exist_ok=True)
    config = BertConfig(
        vocab_size=len(TINY_VOCAB),
        hidden_size=hidden,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=positions,
    )
    BertModel(config).save_pretrained(str(folder))
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(TINY_VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))


@pytest.fixture
def tiny_model(tmp_path, monkeypatch) -> str:
    """Registers `tiny` (module tiny_embedder_pkg, importable from a temp folder) in dense.MODELS."""
    pkg = tmp_path / "site" / "tiny_embedder_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    write_tiny_model(pkg / "model")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setitem(
        D.MODELS,
        "tiny",
        D.PackagedModel(distribution="tiny-embedder-pkg", module="tiny_embedder_pkg", subdir="model", pooling="mean"),
    )
    monkeypatch.setattr(D, "_ENCODERS", {})  # no encoder of another test's weights
    return "tiny"


class FixedScorer:
    """A dense scorer with given cosines, to test the fusion alone."""

    def __init__(self, cosines: list[float]) -> None:
        self.cosines = np.asarray(cosines, dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        return self.cosines


# ----------------------------------------------------------------------------- fusion
@pytest.mark.parametrize("fusion,weight", [("add", 8.0), ("rrf", 2.0)])
def test_fusion_lets_the_dense_score_break_a_lexical_tie(fusion, weight):
    entries = [
        entry("lib.to_text", "Serialize an object to a string."),
        entry("lib.encode_obj", "Serialize an object to a string."),
    ]
    index = P.build_index(entries, {}, {})
    assert index.search("serialize object", 2)[0].name == "lib.encode_obj"  # tie: the shorter name wins
    index.dense = FixedScorer([0.9, 0.1])
    index.set_ranking(replace(P.DEFAULT_RANKING, dense_weight=weight, dense_fusion=fusion))
    assert [h.name for h in index.search("serialize object", 2)] == ["lib.to_text", "lib.encode_obj"]
    index.set_ranking(replace(P.DEFAULT_RANKING, dense_weight=0.0))  # weight 0: the scorer is ignored
    assert index.search("serialize object", 1)[0].name == "lib.encode_obj"


def test_dense_candidates_join_the_lexical_ones():
    entries = [
        entry("lib.dumps", "Serialize an object to a string."),
        entry("lib.persist", "Write a value to disk for later."),
    ]  # no word of the query
    index = P.build_index(entries, {}, {})
    assert [h.name for h in index.search("serialize object", 5)] == ["lib.dumps"]
    index.dense = FixedScorer([0.2, 0.8])
    index.set_ranking(replace(P.DEFAULT_RANKING, dense_weight=8.0, dense_candidates=2))
    assert {h.name for h in index.search("serialize object", 5)} == {"lib.dumps", "lib.persist"}
    index.set_ranking(replace(P.DEFAULT_RANKING, dense_weight=8.0, dense_candidates=0))
    assert [h.name for h in index.search("serialize object", 5)] == ["lib.dumps"]


def test_ranking_options_are_checked():
    assert P.ranking_with({"dense_weight": 3.0}).dense_weight == 3.0
    with pytest.raises(ValueError, match="unknown ranking option"):
        P.ranking_with({"dense_wieght": 3.0})
    with pytest.raises(ValueError, match="dense_fusion"):
        P.ranking_with({"dense_fusion": "max"})


def test_entry_text_reads_as_words():
    text = D.entry_text("collections.Counter.most_common", "List the n most common elements.")
    assert text == "collections counter most common: List the n most common elements."
    assert D.entry_text("json.dumps", "") == "json dumps"
    assert D.entry_text("heapq.heappush", "x" * 1000).endswith(": " + "x" * D.MAX_DOC_CHARS)


# ----------------------------------------------------------------------------- encoder and cache
def test_encoder_rows_are_normalised_and_pooled_over_real_tokens(tiny_model):
    encoder = D.shared_encoder(tiny_model)
    assert D.shared_encoder(tiny_model) is encoder  # one copy of the weights per process
    short, padded = encoder.encode(["json dumps", "json dumps heap push pop counter most common"])
    assert np.allclose(np.linalg.norm(encoder.encode(["json", "heap push"]), axis=1), 1.0, atol=1e-5)
    alone = encoder.encode(["json dumps"])[0]
    assert np.allclose(short, alone, atol=1e-5)  # padding in a batch does not change a row


def tiny_hidden_states(name: str, text: str):
    """The model's last hidden states for `text` alone, read from the package's files without the encoder."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    folder = D.model_dir(D.MODELS[name])
    ids = torch.tensor([Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text).ids])
    model = AutoModel.from_pretrained(str(folder)).eval()
    with torch.inference_mode():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids))
    return out.last_hidden_state[0].numpy()


def test_a_row_is_the_mean_of_the_token_states_or_the_first_one_by_the_models_pooling(tiny_model, monkeypatch):
    hidden = tiny_hidden_states(tiny_model, "json dumps heap")
    mean, first = hidden.mean(0), hidden[0]
    row = D.DenseEncoder(tiny_model).encode(["json dumps heap"])[0]
    assert np.allclose(row, mean / np.linalg.norm(mean), atol=1e-5)
    monkeypatch.setitem(D.MODELS, tiny_model, replace(D.MODELS[tiny_model], pooling="cls"))
    row = D.DenseEncoder(tiny_model).encode(["json dumps heap"])[0]
    assert np.allclose(row, first / np.linalg.norm(first), atol=1e-5)


def test_a_text_is_read_up_to_128_tokens(tmp_path, monkeypatch):
    pkg = tmp_path / "long_embedder_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    write_tiny_model(pkg / "model", positions=256)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(D.MODELS, "long", replace(D.MODELS["all-minilm-l6-v2"], module="long_embedder_pkg"))
    encoder = D.DenseEncoder("long")
    differ_at_128, differ_at_129 = (
        ("json " * 127 + "heap", "json " * 127 + "push"),
        ("json " * 128 + "heap", "json " * 128 + "push"),
    )
    rows = encoder.encode([*differ_at_128, *differ_at_129])
    assert not np.allclose(rows[0], rows[1], atol=1e-4)  # the 128th token is read
    assert np.allclose(rows[2], rows[3], atol=1e-6)  # the 129th is not


def test_only_encoding_an_index_draws_a_progress_bar(tiny_model, tmp_path, capsys):
    encoder = D.shared_encoder(tiny_model)
    encoder.encode(["json dumps", "heap push"])
    encoder.encode_query("heap")
    assert "encoding with" not in capsys.readouterr().err
    D.load_or_encode(tmp_path, tiny_model, ["json dumps", "heap push"])
    assert "encoding with tiny" in capsys.readouterr().err


def test_a_thread_count_holds_inside_and_the_previous_one_comes_back():
    import torch

    before = torch.get_num_threads()
    other = 2 if before == 1 else 1
    with D.torch_threads(other):
        assert torch.get_num_threads() == other
    assert torch.get_num_threads() == before
    with D.torch_threads(None):
        assert torch.get_num_threads() == before


def test_a_matrix_folder_is_made_with_its_parents(tiny_model, tmp_path):
    folder = tmp_path / "not" / "yet"
    _, encoded = D.load_or_encode(folder, tiny_model, ["json dumps"])
    assert encoded and len(list(folder.glob("dense-tiny-*.npy"))) == 1


def test_matrix_is_stored_once_per_model_and_reloaded(tiny_model, tmp_path):
    texts = ["json dumps: serialize object", "heap push", "counter most common", "read file"]
    scorer, encoded = D.load_or_encode(tmp_path, tiny_model, texts)
    files = list(tmp_path.glob("dense-tiny-*.npy"))
    assert encoded and len(files) == 1
    stored = np.load(files[0])
    assert stored.shape == (4, 16) and stored.dtype == np.float16
    again, encoded_again = D.load_or_encode(tmp_path, tiny_model, texts)
    assert not encoded_again
    assert np.allclose(again.scores("json dumps"), scorer.scores("json dumps"), atol=1e-3)
    # a stored matrix of another length (the index changed) is encoded again, not trusted
    _, encoded_more = D.load_or_encode(tmp_path, tiny_model, texts + ["sort list"])
    assert encoded_more and np.load(files[0]).shape == (5, 16)


def test_matrix_file_name_changes_with_the_model(tiny_model, tmp_path, monkeypatch):
    before = D.matrix_filename(D.model_identity(tiny_model))
    folder = D.model_dir(D.MODELS[tiny_model])
    write_tiny_model(folder, hidden=32)  # other weights in the same package
    assert D.matrix_filename(D.model_identity(tiny_model)) != before
    monkeypatch.setitem(D.MODELS, tiny_model, replace(D.MODELS[tiny_model], pooling="cls"))
    assert D.matrix_filename(D.model_identity(tiny_model)) != before
    monkeypatch.setattr(D, "TEXT_RECIPE", D.TEXT_RECIPE + 1)
    assert D.model_identity(tiny_model)["recipe"] == D.TEXT_RECIPE


def test_backend_with_a_dense_model_encodes_its_index(tiny_model, tmp_path):
    start = time.perf_counter()
    backend = P.PydocBackend(modules=SMALL, cache_dir=tmp_path, dense=tiny_model, ranking={"dense_weight": 4.0})
    took = time.perf_counter() - start
    assert backend.index.dense is not None and len(backend.index.dense) == len(backend.index)
    assert 0 < backend.dense_seconds <= took and list(backend.index.path.glob("dense-tiny-*.npy"))
    assert backend.search("json.dumps", 1)[0].name == "json.dumps"
    again = P.PydocBackend(modules=SMALL, cache_dir=tmp_path, dense=tiny_model, ranking={"dense_weight": 4.0})
    assert again.index.dense is not None and again.dense_seconds == 0.0  # the stored matrix


def test_by_default_only_the_needs_phrases_are_encoded_and_the_weights_are_let_go(tiny_model, tmp_path):
    """The entries' cosine is off by default (every entry: minutes); the needs' phrases (seconds) are encoded,
    stored next to the index, and the model's weights dropped until a search needs them."""
    backend = P.PydocBackend(modules=SMALL, cache_dir=tmp_path, dense=tiny_model)
    needs = backend.index.needs
    assert backend.index.dense is None and not list(backend.index.path.glob("dense-*.npy"))
    assert needs.dense is not None and len(needs.dense) == len(needs) > 0
    assert list(backend.index.path.glob(f"needs-{needs.fingerprint}/dense-tiny-*.npy"))
    encoder = D.shared_encoder(tiny_model)
    assert encoder._model is None  # let go after encoding
    assert backend.search("heapq.heappush", 1)[0].name == "heapq.heappush"
    assert encoder._model is not None  # read again by the first search


# ----------------------------------------------------------------------------- fallback
def test_missing_model_package_warns_once_and_ranks_lexically(tmp_path, monkeypatch, caplog):
    monkeypatch.setitem(
        D.MODELS,
        "ghost",
        D.PackagedModel(
            distribution="ghost-embedder", module="ghost_embedder_not_installed", subdir="model", pooling="mean"
        ),
    )
    monkeypatch.setattr(P, "_DENSE_WARNED", set())
    with caplog.at_level(logging.WARNING, logger="agentic_rl.tools.search.pydoc_backend"):
        first = P.PydocBackend(modules=SMALL, cache_dir=tmp_path, dense="ghost")
        second = P.PydocBackend(modules=SMALL, cache_dir=tmp_path, dense="ghost")
    warnings = [r.getMessage() for r in caplog.records if "ghost" in r.getMessage()]
    assert len(warnings) == 1 and "pip install --no-deps ghost-embedder" in warnings[0]
    assert first.index.dense is None and second.index.dense is None
    assert first.search("json dumps", 1)[0].name == "json.dumps"
    with pytest.raises(ValueError, match="unknown dense model"):
        P.PydocBackend(modules=SMALL, cache_dir=tmp_path, dense="no-such-model")


def test_model_files_missing_from_the_package_are_reported(tiny_model):
    folder = D.model_dir(D.MODELS[tiny_model])
    (folder / "tokenizer.json").unlink()
    with pytest.raises(D.DenseModelMissing, match="tokenizer.json is missing"):
        D.model_dir(D.MODELS[tiny_model])


# ----------------------------------------------------------------------------- the real model
def test_packaged_model_puts_the_obvious_match_first():
    try:
        encoder = D.shared_encoder("all-minilm-l6-v2")
    except D.DenseModelMissing as exc:
        pytest.skip(str(exc))
    docs = {
        "lib.read_table": "Read a comma-separated values file into a table.",
        "lib.dumps": "Serialize an object to a JSON formatted string.",
        "lib.heappush": "Push an item onto the heap, keeping the heap invariant.",
        "lib.sub": "Replace occurrences of a pattern in a string.",
    }
    matrix = encoder.encode([D.entry_text(n, d) for n, d in docs.items()])
    index = P.build_index([entry(n, d) for n, d in docs.items()], {}, {})
    index.dense = D.DenseScorer(encoder, matrix)
    names = list(docs)
    for query, expected in [
        ("load a spreadsheet saved as csv", "lib.read_table"),
        ("turn a dict into json text", "lib.dumps"),
        ("priority queue insert", "lib.heappush"),
    ]:
        assert names[int(np.argmax(index.dense.scores(query)))] == expected, query


def test_switching_the_config_to_docstore_keeps_working():
    """conf/tool/search.yaml sets backend_options.dense; `tools.search.backend=docstore` must still build."""
    from agentic_rl.tools.search import SearchTool

    tool = SearchTool(backend="docstore", backend_options={"dense": "all-minilm-l6-v2"})
    assert tool.backend.search("heap push", 1)[0].name == "heapq.heappush"


def test_a_dense_model_that_fails_at_search_time_falls_back_to_lexical(caplog):
    class Broken:
        def scores(self, query: str) -> np.ndarray:
            raise OSError("model.safetensors: truncated")

    index = P.build_index(
        [entry("lib.dumps", "Serialize an object to a string.")], {}, {}, replace(P.DEFAULT_RANKING, dense_weight=4.0)
    )
    index.dense = Broken()
    index.needs = NeedsMatcher({"lib.dumps": ("turn an object into text",)}, index.by_name, len(index))
    index.needs.dense = Broken()
    with caplog.at_level(logging.WARNING, logger="agentic_rl.tools.search.pydoc_backend"):
        assert [h.name for h in index.search("serialize object", 3)] == ["lib.dumps"]
        assert [h.name for h in index.search("serialize object", 3)] == ["lib.dumps"]
    assert index.dense is None and index.needs.dense is None
    assert sum("dense model failed" in r.getMessage() for r in caplog.records) == 2  # once for each scorer
