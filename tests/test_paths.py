"""agentic_rl.paths: the one rule for the sandbox interpreter and the cache dir, whoever asks."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from agentic_rl import paths
from agentic_rl.models import loading
from agentic_rl.sandbox import resolve_python as sandbox_python
from agentic_rl.tools.search import pydoc_backend


@pytest.fixture
def fake_venv(tmp_path, monkeypatch):
    """A checkout holding `.venv-x/bin/python` (a symlink to this interpreter), and a working dir elsewhere."""
    checkout = tmp_path / "checkout"
    python = checkout / ".venv-x" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setattr(paths, "repo_root", lambda: checkout)
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv(paths.SANDBOX_PYTHON_ENV, raising=False)
    return python


@pytest.mark.parametrize(
    "resolve", [paths.resolve_python, sandbox_python, pydoc_backend.resolve_python], ids=["paths", "sandbox", "search"]
)
def test_a_relative_interpreter_is_taken_from_the_checkout_not_the_working_dir(fake_venv, resolve):
    assert resolve(".venv-x/bin/python") == str(fake_venv)  # the symlink itself: a venv keeps its sys.path
    os.environ[paths.SANDBOX_PYTHON_ENV] = ".venv-x/bin/python"
    try:
        assert resolve(None) == str(fake_venv)
    finally:
        del os.environ[paths.SANDBOX_PYTHON_ENV]
    assert resolve(None) == sys.executable


def test_a_missing_interpreter_says_what_to_set(fake_venv):
    with pytest.raises(FileNotFoundError, match=paths.SANDBOX_PYTHON_ENV):
        paths.resolve_python(".venv-y/bin/python")


def test_the_model_and_search_caches_follow_one_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(paths.CACHE_DIR_ENV, str(tmp_path / "c"))
    assert loading.cache_root() == tmp_path / "c"
    assert pydoc_backend.default_cache_dir() == tmp_path / "c" / "search"
    monkeypatch.setenv(paths.CACHE_DIR_ENV, "~/agentic-cache")  # expanded for both (the model cache did not)
    assert loading.cache_root() == Path.home() / "agentic-cache"
    monkeypatch.delenv(paths.CACHE_DIR_ENV)
    assert pydoc_backend.default_cache_dir() == Path.home() / ".cache" / "agentic_rl" / "search"


def test_conf_dir_is_the_checkouts_conf():
    assert (paths.CONF_DIR / "train.yaml").is_file() and paths.CONFIG_PATH == str(paths.CONF_DIR)
