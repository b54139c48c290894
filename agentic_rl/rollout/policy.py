"""The rollout's policy interface: what produces the model's next turn for a batch of episodes.

The rollout hands a policy the token-id histories of the active episodes (`TurnRequest`), the sampling
settings (`SamplingParams`) and a `StopCondition` (true once a tool call of the active set has closed). A
policy returns, per episode, the new token ids of this turn, cut right after the stop point or after EOS.
A backend may also offer `generate_with_logprobs` (the same ids plus the sampler's log-prob of each, at the
sampling temperature) and `session()`, a context manager around one rollout that yields the
`GenerationStats` it fills in.

Backends: `HFPolicy` (agentic_rl.rollout.hf_policy, the reference engine on a transformers model),
`VLLMPolicy` (agentic_rl.rollout.vllm_policy), chosen by `rollout.backend` through
agentic_rl.rollout.backends; `ScriptedPolicy` (here) answers from fixed text for tests and replay.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from agentic_rl.rollout.stops import StopCondition, StopFn, first_stop_prefix  # noqa: F401  (part of the interface)
from agentic_rl.rollout.tokenizer import ByteChatTokenizer, ChatTokenizer
from agentic_rl.types import Task


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
    """One episode's next turn.

    `episode` names the episode across turns (a policy may keep its cache under that key; None = do not);
    `keep_cache` is False on an episode's last possible turn, so nothing is kept for a turn that never comes.
    """

    history_ids: list[int]
    task: Task
    sample_index: int
    turn_index: int
    episode: int | None = None
    keep_cache: bool = True


@dataclass
class GenerationStats:
    """What a policy computed during one session (one rollout).

    prefill_tokens: positions whose keys/values the model computed: prefilled prompt and observation tokens
        (a shared prefix counted once) plus each generated token fed back. With a cache kept across turns this
        is at most the episodes' final lengths, summed; re-prefilling each turn makes it grow with every turn.
    generated_tokens: tokens sampled.  generate_s: wall time inside `generate`.
    sync_s: wall time spent bringing the sampler's weights up to date with the trainer's (vLLM backend).
    """

    prefill_tokens: int = 0
    generated_tokens: int = 0
    generate_s: float = 0.0
    sync_s: float = 0.0


class Policy:
    """Base class of the samplers: `generate` (or `generate_with_logprobs`) is the one method a policy must have;
    every optional capability has a default here, so the rollout and the trainer call it rather than probe for it.

    Capabilities a backend overrides where it has them:
      - `generate_with_logprobs`: the turns with the sampler's log-prob of each token (default: `generate`'s, with
        None for the log-probs, i.e. none recorded);
      - `session()`: a context manager around one rollout yielding the `GenerationStats` it fills in (default:
        yields None, nothing counted);
      - `continuous_batching`: true for a `ContinuousPolicy` whose turns the loop feeds one at a time;
      - `samples_apart`: true where the sampler holds its own copy of the weights (servers), so sampling may overlap
        the trainer's update (`algo.max_staleness`);
      - `take_sync_bytes()`: the bytes weight syncs read since the last call, or None for a sampler that syncs none;
      - `shares_trainer_heap(on_gpu)` (a class method, asked before anything is built): whether the engine runs
        inside the trainer's process and heap (the vLLM engine on a CPU), which `memory.mmap_threshold_kib=auto`
        pins for;
      - `close()`: release the engine (default: nothing to release);
    and, for what an evaluation runs (a replayed samples file):
      - `has_sample(task_id, index)`: whether the policy has an answer for that sample (default: always);
      - `source`: where its answers come from, for the records of the missing ones;
      - `for_mode(env, rollout)`: the policy and rollout settings for one evaluation mode (default: as given).
    """

    tokenizer: ChatTokenizer
    samples_apart: bool = False
    source: str = "the samples"

    @property
    def continuous_batching(self) -> bool:
        return False

    def generate(
        self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopCondition | StopFn
    ) -> list[list[int]]:
        raise NotImplementedError(f"{type(self).__name__} must implement generate or generate_with_logprobs")

    def generate_with_logprobs(
        self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopCondition | StopFn
    ) -> Sequence[tuple[list[int], list[float] | None]]:
        return [(ids, None) for ids in self.generate(requests, sampling, stop)]

    def session(self) -> AbstractContextManager[GenerationStats | None]:
        return contextlib.nullcontext(None)

    def take_sync_bytes(self) -> int | None:
        return None

    @classmethod
    def shares_trainer_heap(cls, on_gpu: bool) -> bool:
        return False

    def close(self) -> None:  # noqa: B027  (optional: most samplers hold nothing to release)
        """Release the engine (nothing, unless a backend holds one)."""

    def has_sample(self, task_id: str, index: int) -> bool:
        return True

    def for_mode(self, env: Any, rollout: Any) -> tuple[Policy, Any]:
        return self, rollout


class VersionedWeights(Protocol):
    """The weights a sampler apart from the trainer holds: `version` counts the syncs sent to it (0 at its start)."""

    version: int


class SyncedSampler(Protocol):
    """A sampler that holds its own copy of the weights (`samples_apart`; `rollout/service/remote.py`), as rollouts
    ahead of the trainer (`ahead.py`) drive it: `sync_on_session` false hands the weight syncs to the trainer, which
    calls `sync_if_changed()` between updates (returns the seconds it took); `publisher.version` is the version the
    servers hold now, and `episode_versions` the oldest version that sampled a turn of each episode of the last
    rollout (by its index in the rollout)."""

    samples_apart: bool
    sync_on_session: bool
    episode_versions: dict[int, int]

    @property
    def publisher(self) -> VersionedWeights: ...

    def sync_if_changed(self) -> float: ...


# a turn a continuous policy finished: (its request's `episode`, the new ids cut as `generate` cuts them, the
# sampler's log-prob of each, or None where the policy records none)
FinishedTurn = tuple[int, list[int], list[float] | None]


class LogprobPolicy(Policy):
    """A backend's `generate` from its `generate_with_logprobs`: the same turns without their log-probs."""

    def generate(
        self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopCondition | StopFn
    ) -> list[list[int]]:
        return [ids for ids, _ in self.generate_with_logprobs(requests, sampling, stop)]


class ContinuousPolicy(Protocol):
    """A policy that batches turns continuously, one episode's turn at a time (agentic_rl.rollout.agent uses it
    when `continuous_batching` is true): `start_turn` queues a turn (`request.episode` names its episode, and
    with `request.turn_index` seeds it, so that the order turns are queued in never changes a sample);
    `finished_turns` advances the engine by one step and returns the turns that ended in it; `turns_in_flight`
    counts the turns queued and not yet returned; `abort_turns` drops them (after an error). `session()` scopes
    one rollout, as for `generate`."""

    tokenizer: ChatTokenizer
    continuous_batching: bool

    def session(self) -> AbstractContextManager[GenerationStats]: ...

    def start_turn(self, request: TurnRequest, sampling: SamplingParams, stop: StopCondition | StopFn) -> None: ...

    def finished_turns(self) -> list[FinishedTurn]: ...

    def turns_in_flight(self) -> int: ...

    def abort_turns(self) -> None: ...


class ScriptedPolicy(Policy):
    """Answers from fixed text, for tests and replay: `script(request) -> reply text`.

    The reply is cut the way a real model's would be: right after the first completed tool call
    (per `stop`), else at its end followed by EOS.
    """

    def __init__(self, script: Callable[[TurnRequest], str], tokenizer: ChatTokenizer | None = None) -> None:
        self.script = script
        self.tokenizer = tokenizer or ByteChatTokenizer()

    def generate(
        self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopCondition | StopFn
    ) -> list[list[int]]:
        out = []
        for req in requests:
            ids = self.tokenizer.encode(self.script(req))
            cut = first_stop_prefix(ids, self.tokenizer, stop)
            if cut is None:
                ids = ids[: sampling.max_new_tokens]
                if len(ids) < sampling.max_new_tokens and self.tokenizer.eos_token_id is not None:
                    ids = ids + [self.tokenizer.eos_token_id]
            else:
                ids = ids[: min(cut, sampling.max_new_tokens)]
            out.append(ids)
        return out
