"""Rollouts ahead of the trainer, bounded: `algo.max_staleness`.

With k = 0 a rollout batch is generated when the trainer asks for it, in the trainer's thread: the synchronous loop,
exactly. With k >= 1, once the trainer has updated on batch t (and sent its weights to the servers as the next
version), the rollouts of the next k batches of the epoch's order are generated in a background thread while the
trainer updates; the servers keep sampling across a weight load, so each turn is tagged with the version that
sampled it. A trajectory's staleness is the trainer's version when it is trained on less the oldest version that
sampled any of its turns; it never exceeds k (`rollout/staleness_mean`, `rollout/staleness_max`). The importance
correction then takes the sampler's own log-probs as the behaviour policy (`update_rollout_batch`'s `stale`).

Only batches the trainer has updated on count as done: a checkpoint records the position of the last one, and
rollouts generated ahead of it are dropped on a restart (their prompts are rolled out again, in the same order),
so every training prompt is trained exactly once, whatever was in flight. Ahead-of-time sampling needs a sampler
that runs apart from the trainer's weights (sampler servers); an in-process sampler would read weights the
optimizer is changing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, cast

from agentic_rl.rollout.policy import Policy, SyncedSampler

Jobs = tuple[tuple[str, int], ...]  # a batch's (task id, sample index) in order: what identifies its rollout


def batch_jobs(tasks: Sequence[Any], group_size: int) -> list[tuple[Any, int]]:
    """A rollout batch's jobs, task-major: the G samples of each task together, so that slicing the trajectories
    into runs of G gives one task's group each (sample-major jobs would make every "group" mix tasks)."""
    return [(task, g) for task in tasks for g in range(group_size)]


def jobs_key(jobs: Sequence[tuple[Any, int]]) -> Jobs:
    return tuple((task.task_id, g) for task, g in jobs)


class RolloutsAhead:
    """`take(jobs, upcoming)` gives a batch's rollout and each trajectory's staleness, and queues the rollouts of the
    batches after it (at most k) to run while the trainer updates; `updated()` follows each update."""

    def __init__(
        self, roll: Callable[[Sequence[tuple[Any, int]]], Any], policy: Policy | SyncedSampler, max_staleness: int
    ) -> None:
        if max_staleness < 0:
            raise ValueError(f"algo.max_staleness must be >= 0 (0: synchronous), got {max_staleness}")
        if max_staleness > 0 and not policy.samples_apart:  # declared on the Policy base (False there)
            raise ValueError(
                f"algo.max_staleness={max_staleness} samples while the trainer updates, which needs the sampler on "
                "servers (its weights apart from the trainer's): set rollout.servers=1 (or rollout.backend=vllm), "
                "or algo.max_staleness=0"
            )
        self.roll, self.max_staleness = roll, max_staleness
        # only read with k >= 1, where `samples_apart` has just said the policy is a `SyncedSampler`
        self.policy = cast(SyncedSampler, policy)
        self._ahead: deque[tuple[Jobs, Future]] = deque()
        self._pool = None
        if max_staleness:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rollout-ahead")
            self.policy.sync_on_session = False  # weights go out from the trainer's thread, between updates
            self.policy.sync_if_changed()  # a warm-up or a restored checkpoint changed them since the servers started

    def take(
        self, jobs: Sequence[tuple[Any, int]], upcoming: Sequence[Sequence[tuple[Any, int]]] = ()
    ) -> tuple[Any, list[int]]:
        """The batch's rollout (generated ahead, or now) and each trajectory's staleness; then the next batches of
        `upcoming` (at most k, not already queued) start rolling out behind it."""
        key = jobs_key(jobs)
        if self._ahead and self._ahead[0][0] == key:
            result, versions = self._ahead.popleft()[1].result()
        else:  # nothing ahead for it (the first batch, a new epoch, a restart): anything queued is dropped
            self.drop()
            result, versions = self._roll(jobs)
        queued = {k for k, _ in self._ahead}
        for more in list(upcoming)[: self.max_staleness]:
            if jobs_key(more) not in queued and self._pool is not None:
                self._ahead.append((jobs_key(more), self._pool.submit(self._roll, more)))
        return result, [self._version() - v for v in versions]

    def updated(self) -> float:
        """After the trainer's update on a batch: its weights go to the servers as the next version (k >= 1);
        returns the seconds that took (`time/sync_s`)."""
        return self.policy.sync_if_changed() if self.max_staleness else 0.0

    def _version(self) -> int:
        return self.policy.publisher.version if self.max_staleness else 0

    def _roll(self, jobs: Sequence[tuple[Any, int]]) -> tuple[Any, list[int]]:
        result = self.roll(jobs)
        if not self.max_staleness:  # synchronous: sampled by the weights it is trained from
            return result, [0] * len(result)
        versions = self.policy.episode_versions
        return result, [versions.get(n, self._version()) for n in range(len(result))]

    def drop(self) -> None:
        """Forget the rollouts generated ahead (waiting for one in flight: the servers are shared)."""
        while self._ahead:
            future = self._ahead.popleft()[1]
            if not future.cancel():
                future.exception()

    def close(self) -> None:
        """After training: nothing runs ahead any more, and rollouts (the evaluation's) sync as they start again."""
        self.drop()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self.policy.sync_on_session = True


def staleness_metrics(staleness: Sequence[int]) -> dict[str, float]:
    """`rollout/staleness_mean|max` over a batch's trajectories (versions between sampling and training)."""
    if not staleness:
        return {}
    return {"rollout/staleness_mean": sum(staleness) / len(staleness), "rollout/staleness_max": float(max(staleness))}


def sync_metrics(policy: Policy) -> dict[str, float]:
    """`rollout/sync_bytes`: what the sampler servers read for weight syncs since the last call (one a training
    step); nothing for a sampler that syncs no weights over a folder."""
    sent = policy.take_sync_bytes()
    return {} if sent is None else {"rollout/sync_bytes": float(sent)}
