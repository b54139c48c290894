"""One episode's turn on its way through an engine that stops on strings (vLLM in this process, or a sampler
server): the ids and log-probs so far, resumed after a marker that closed no call, cut where the HF backend cuts.

An engine stops on the closing markers of the active tools (stop strings, included in the output); the turn is cut
with `first_stop_prefix`, the shortest prefix whose text satisfies the same `StopCondition` the HF engine checks
token by token. A marker that closed no call resumes generation from the ids so far with the remaining budget;
after `MARKER_ROUNDS` such calls the rest of the turn is generated in one call without stop strings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_rl.rollout.policy import SamplingParams, StopCondition, StopFn, TurnRequest
from agentic_rl.rollout.stops import first_stop_prefix

# engine calls of one turn that stop on the closing markers; then one more without them: a call's opening fence
# and its closing one take two, and one spare covers a fence that was not a call
MARKER_ROUNDS = 3


def turn_seed(rollout_seed: int, episode: int | None, turn_index: int) -> int:
    """A turn's sampling seed from the rollout's seed, its episode and its turn index alone: continuous batching
    queues turns in the order tools answer, which must not change what any episode samples."""
    digest = hashlib.blake2b(f"{rollout_seed}/{episode}/{turn_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2  # 62 bits, as the per-request seeds drawn from the global RNG


@dataclass
class EngineTurn:
    """One episode's turn on its way through the engine: the ids and log-probs generated so far, over the engine
    calls it took (`rounds`)."""

    request: TurnRequest
    seed: int
    sampling: SamplingParams
    stop: StopCondition | StopFn
    new_ids: list[int] = field(default_factory=list)
    logps: list[float] = field(default_factory=list)
    rounds: int = 0

    def prompt(self) -> list[int]:
        return self.request.history_ids + self.new_ids

    def budget(self) -> int:
        return self.sampling.max_new_tokens - len(self.new_ids)

    def call_seed(self) -> int:
        return self.seed + len(self.new_ids)  # a resumed call does not redraw what the first one drew

    def markers(self) -> Sequence[str] | None:
        return getattr(self.stop, "markers", None) if self.rounds < MARKER_ROUNDS else None

    def extend(self, ids: list[int], logps: list[float], stopped_on_marker: bool, tokenizer: Any) -> bool:
        """Add one engine call's output; True when the turn goes on: a closing marker without a call before it."""
        self.new_ids += ids
        self.logps += logps
        self.rounds += 1
        return stopped_on_marker and self.budget() > 0 and not self.stop(tokenizer.decode(self.new_ids))

    def cut(self, tokenizer: Any) -> tuple[list[int], list[float]]:
        """The turn's ids and log-probs, cut where the HF backend cuts them."""
        cut = first_stop_prefix(self.new_ids, tokenizer, self.stop)
        if cut is None:
            return self.new_ids, self.logps
        return self.new_ids[:cut], self.logps[:cut]
