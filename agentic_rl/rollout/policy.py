"""Policies: whatever produces the model's next turn for a batch of episodes.

The rollout hands a policy the token-id histories of the active episodes and a `stop` predicate on the
decoded new text (true once a tool call of the active set has closed). A policy returns, per episode,
the new token ids of this turn, cut right after the stop point or after EOS.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import torch

from agentic_rl.rollout.tokenizer import ByteChatTokenizer, ChatTokenizer, HFChatTokenizer
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

StopFn = Callable[[str], bool]


@dataclass(frozen=True)
class SamplingParams:
    max_new_tokens: int = 256
    temperature: float = 0.7
    top_p: float = 0.95

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"rollout.max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"rollout.temperature must be >= 0 (0 = greedy), got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"rollout.top_p must be in (0, 1], got {self.top_p}")


@dataclass(frozen=True)
class TurnRequest:
    history_ids: list[int]
    task: Task
    sample_index: int
    turn_index: int


class Policy(Protocol):
    tokenizer: ChatTokenizer

    def generate(self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopFn) -> list[list[int]]: ...


class _StopAtToolCall:
    """Per-sequence stopping criterion: a sequence is done once its new text contains a completed call.

    Records, for each sequence, how many new tokens it had when it stopped, because transformers pads
    finished sequences and the pad id may equal EOS (SmolLM2), so the cut point cannot be recovered later.
    """

    def __init__(self, tokenizer: ChatTokenizer, prompt_len: int, batch: int, stop: StopFn) -> None:
        self.tokenizer, self.prompt_len, self.stop = tokenizer, prompt_len, stop
        self.stop_len: list[int | None] = [None] * batch

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        new_len = input_ids.shape[1] - self.prompt_len
        for i in range(input_ids.shape[0]):
            if self.stop_len[i] is not None:
                done[i] = True
                continue
            text = self.tokenizer.decode(input_ids[i, self.prompt_len:].tolist())
            if self.stop(text):
                self.stop_len[i] = new_len
                done[i] = True
        return done


class HFPolicy:
    """Batched sampling from a transformers model (with or without a LoRA adapter)."""

    def __init__(self, model: Any, tokenizer: Any, max_batch_size: int = 32) -> None:
        self.model = model
        self.hf_tokenizer = tokenizer
        self.tokenizer = HFChatTokenizer(tokenizer)
        self.max_batch_size = max_batch_size

    @torch.no_grad()
    def generate(self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopFn) -> list[list[int]]:
        out: list[list[int]] = []
        for start in range(0, len(requests), self.max_batch_size):
            out.extend(self._generate_batch([r.history_ids for r in requests[start:start + self.max_batch_size]],
                                            sampling, stop))
        return out

    def _generate_batch(self, histories: list[list[int]], sampling: SamplingParams, stop: StopFn) -> list[list[int]]:
        from transformers import StoppingCriteriaList

        pad_id = self.hf_tokenizer.pad_token_id
        width = max(len(h) for h in histories)
        device = next(self.model.parameters()).device
        ids = torch.full((len(histories), width), pad_id, dtype=torch.long)
        attn = torch.zeros((len(histories), width), dtype=torch.long)
        for i, h in enumerate(histories):  # left padding: the new tokens line up on the right
            ids[i, width - len(h):] = torch.tensor(h, dtype=torch.long)
            attn[i, width - len(h):] = 1
        criterion = _StopAtToolCall(self.tokenizer, width, len(histories), stop)
        greedy = sampling.temperature == 0
        was_training = self.model.training
        self.model.eval()
        try:
            gen = self.model.generate(
                input_ids=ids.to(device), attention_mask=attn.to(device),
                max_new_tokens=sampling.max_new_tokens, do_sample=not greedy,
                temperature=None if greedy else sampling.temperature, top_p=None if greedy else sampling.top_p,
                top_k=None, pad_token_id=pad_id, eos_token_id=self.tokenizer.eos_token_id,
                stopping_criteria=StoppingCriteriaList([criterion]),
            )
        finally:
            self.model.train(was_training)
        new = gen[:, width:].tolist()
        return [self._cut(row, criterion.stop_len[i]) for i, row in enumerate(new)]

    def _cut(self, row: list[int], stop_len: int | None) -> list[int]:
        eos = self.tokenizer.eos_token_id
        end = len(row) if stop_len is None else stop_len
        if eos is not None and eos in row[:end]:
            end = row.index(eos) + 1  # keep EOS: ending the turn is the model's own decision
        return row[:end]


class ScriptedPolicy:
    """Answers from fixed text, for tests and replay: `script(request) -> reply text`.

    The reply is cut the way a real model's would be: right after the first completed tool call
    (per `stop`), else at its end followed by EOS.
    """

    def __init__(self, script: Callable[[TurnRequest], str], tokenizer: ChatTokenizer | None = None) -> None:
        self.script = script
        self.tokenizer = tokenizer or ByteChatTokenizer()

    def generate(self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopFn) -> list[list[int]]:
        out = []
        for req in requests:
            ids = self.tokenizer.encode(self.script(req))
            cut = _first_stop_prefix(ids, self.tokenizer, stop)
            if cut is None:
                ids = ids[: sampling.max_new_tokens]
                if len(ids) < sampling.max_new_tokens and self.tokenizer.eos_token_id is not None:
                    ids = ids + [self.tokenizer.eos_token_id]
            else:
                ids = ids[: min(cut, sampling.max_new_tokens)]
            out.append(ids)
        return out


def _first_stop_prefix(ids: list[int], tokenizer: ChatTokenizer, stop: StopFn) -> int | None:
    """Length of the shortest prefix of `ids` whose text satisfies `stop` (None if even the whole fails).

    `stop` is monotone (a closed call stays closed as text is appended), so binary search applies.
    """
    if not ids or not stop(tokenizer.decode(ids)):
        return None
    lo, hi = 1, len(ids)
    while lo < hi:
        mid = (lo + hi) // 2
        if stop(tokenizer.decode(ids[:mid])):
            hi = mid
        else:
            lo = mid + 1
    return lo
