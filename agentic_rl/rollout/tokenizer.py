"""The small tokenizer surface the rollout needs, with two implementations.

- `HFChatTokenizer` wraps a transformers tokenizer (the real models);
- `ByteChatTokenizer` maps UTF-8 bytes to ids, so scripted and replay policies (tests, re-grading
  samples from other systems) run the same rollout code without loading any model.
"""
from __future__ import annotations

from typing import Any, Protocol


class ChatTokenizer(Protocol):
    eos_token_id: int | None

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...

    def chat_prompt_ids(self, system: str | None, user: str) -> list[int]: ...


class HFChatTokenizer:
    def __init__(self, tokenizer: Any) -> None:
        self.tok = tokenizer
        self.eos_token_id = tokenizer.eos_token_id

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=True)

    def chat_prompt_ids(self, system: str | None, user: str) -> list[int]:
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
        if getattr(self.tok, "chat_template", None):
            text = self.tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        else:  # base models without a template: a plain transcript
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "
        return self.encode(text)


class ByteChatTokenizer:
    """Byte-level ids (0..255); id 256 is EOS. Deterministic and dependency-free."""

    eos_token_id = 256

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: list[int]) -> str:
        return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")

    def chat_prompt_ids(self, system: str | None, user: str) -> list[int]:
        text = (f"<system>\n{system}\n</system>\n" if system else "") + f"<user>\n{user}\n</user>\n<assistant>\n"
        return self.encode(text)
