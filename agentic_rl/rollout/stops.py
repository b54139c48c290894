"""Stop detection while a turn streams: the stop condition, incremental detokenization and the tool-call check.

`StopCondition` says whether a turn's text is complete (a tool call of the active set has closed) and which
closing markers such a text ends with.

`TextStream` turns appended token ids into the new text each brings; `StopScanner` runs a turn's
`StopCondition` only when that new text (with an overlap for markers split across tokens) holds a closing
marker; `first_stop_prefix` finds, for finished ids, the shortest prefix whose text satisfies the condition:
the cut every backend applies (the HF engine stops there while decoding, the scripted and vLLM backends cut
their output there afterwards), so all of them end a turn at the same token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentic_rl.rollout.tokenizer import ChatTokenizer


class StopCondition:
    """Whether a turn's text is complete, and the closing markers that a text which just became complete
    must end with; a policy then runs `check` only when new text brings one of them (see `StopScanner`).

    `markers=None` means they are unknown: the check runs after every token.
    """

    def __init__(self, check: Callable[[str], bool], markers: Sequence[str] | None = None) -> None:
        self.check = check
        self.markers = tuple(markers) if markers is not None else None

    def __call__(self, text: str) -> bool:
        return self.check(text)


StopFn = Callable[[str], bool]  # a plain predicate is accepted too (checked after every token)


class TextStream:
    """Incremental detokenization: the new text each appended token brings, decoding a few tokens at a time.

    Decodes ids[prefix:] against ids[prefix:read] (the text already emitted from the same starting point), so
    tokenizers whose decoding depends on the preceding token (leading spaces, multi-byte characters split
    across tokens) give the same text as decoding the whole sequence. A trailing U+FFFD means an unfinished
    UTF-8 sequence: the token's text is held back until the next one completes it.
    """

    def __init__(self, tokenizer: ChatTokenizer) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.text = ""
        self._prefix = self._read = 0

    def push(self, token: int) -> str:
        self.ids.append(token)
        emitted = self.tokenizer.decode(self.ids[self._prefix : self._read])
        current = self.tokenizer.decode(self.ids[self._prefix :])
        if len(current) <= len(emitted) or current.endswith("\ufffd"):
            return ""
        chunk = current[len(emitted) :]
        self._prefix, self._read = self._read, len(self.ids)
        self.text += chunk
        return chunk


class StopScanner:
    """Per-sequence stop detection that looks only at new text (plus an overlap for markers split across
    tokens); the full `stop` check runs only when a closing marker shows up in that window."""

    def __init__(self, tokenizer: ChatTokenizer, stop: StopCondition | StopFn) -> None:
        self.stream = TextStream(tokenizer)
        self.stop = stop
        self.markers = getattr(stop, "markers", None)
        self._overlap = max((len(m) for m in self.markers), default=1) - 1 if self.markers is not None else 0
        self.full_checks = 0

    def push(self, token: int) -> bool:
        chunk = self.stream.push(token)
        if not chunk or self.markers == ():
            return False
        if self.markers is not None:
            window = self.stream.text[-(len(chunk) + self._overlap) :]
            if not any(m in window for m in self.markers):
                return False
        self.full_checks += 1
        return bool(self.stop(self.stream.text))


def first_stop_prefix(ids: list[int], tokenizer: ChatTokenizer, stop: StopCondition | StopFn) -> int | None:
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
