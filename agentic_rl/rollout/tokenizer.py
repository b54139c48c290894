"""The small tokenizer surface the rollout needs, with two implementations.

- `HFChatTokenizer` wraps a transformers tokenizer (the real models) and its chat template;
- `ByteChatTokenizer` maps UTF-8 bytes to ids, so scripted and replay policies (tests, re-grading
  samples from other systems) run the same rollout code without loading any model.

Observations can be appended inline (continuing the assistant's message, as the reference notebook does)
or as a new user turn of the chat template ("chat"), which small chat models follow far better: the
template's end-of-turn and role tokens around the observation are observation tokens, masked from the loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

Message = dict[str, str]
_SENTINEL_REPLY = "\x00REPLY\x00"
_SENTINEL_OBS = "\x00OBS\x00"


class ChatTokenizer(Protocol):
    eos_token_id: int | None

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...

    def chat_prompt_ids(self, messages: Sequence[Message]) -> list[int]: ...

    def chat_observation_text(self, observation: str, after_eos: bool) -> str: ...


class HFChatTokenizer:
    def __init__(self, tokenizer: Any) -> None:
        self.tok = tokenizer
        self.eos_token_id = tokenizer.eos_token_id
        self._has_template = bool(getattr(tokenizer, "chat_template", None))
        self._obs_wrap = self._observation_wrapper() if self._has_template else ("\nuser: ", "\nassistant: ")

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=True)

    def chat_prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        if self._has_template:
            text = self.tok.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
        else:  # base models without a template: a plain transcript
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "
        return self.encode(text)

    def _observation_wrapper(self) -> tuple[str, str]:
        """What the template puts between an assistant reply and the next reply, around a user message.

        Found by rendering a conversation with sentinels, so it works for any chat template.
        """
        convo = [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": _SENTINEL_REPLY},
            {"role": "user", "content": _SENTINEL_OBS},
        ]
        text = self.tok.apply_chat_template(convo, tokenize=False, add_generation_prompt=True)
        between = text.split(_SENTINEL_REPLY, 1)[1]
        before, after = between.split(_SENTINEL_OBS, 1)
        return before, after

    def chat_observation_text(self, observation: str, after_eos: bool) -> str:
        before, after = self._obs_wrap
        eos_text = self.tok.eos_token or ""
        if after_eos and eos_text and before.startswith(eos_text):
            before = before[len(eos_text) :]  # the model already closed its turn
        return before + observation + after


class ByteChatTokenizer:
    """Byte-level ids (0..255); id 256 is EOS. Deterministic and dependency-free."""

    eos_token_id: int | None = 256  # typed as the protocol's attribute, which a tokenizer may lack

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: list[int]) -> str:
        return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")

    def chat_prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        text = "".join(f"<{m['role']}>\n{m['content']}\n</{m['role']}>\n" for m in messages)
        return self.encode(text + "<assistant>\n")

    def chat_observation_text(self, observation: str, after_eos: bool) -> str:
        return f"\n</assistant>\n<user>\n{observation}\n</user>\n<assistant>\n"
