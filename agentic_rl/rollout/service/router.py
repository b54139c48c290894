"""The router in front of the sampler servers.

- An episode's turns go to one server (its prefix cache holds the episode's keys/values); a new episode goes to
  the server with the fewest episodes assigned (ties: the first), so a rollout's episodes spread evenly.
- Pause and weight loads go to every live server (`broadcast`).
- A server that fails a call (gone, timed out, failed on it) is dropped: the turns it had in flight are sent again
  to another server, counted (`retries`) and logged in one line each; nothing else is lost, since a turn's whole
  state is its token ids. With no server left the rollout stops with one message that says what to do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from agentic_rl.rollout.service.protocol import SamplerClient, SamplerDown

logger = logging.getLogger(__name__)

T = TypeVar("T")


class NoSamplerLeft(RuntimeError):
    """Every sampler server failed."""


class SamplerRouter:
    def __init__(self, clients: Sequence[SamplerClient]) -> None:
        if not clients:
            raise ValueError("a sampler router needs at least one server")
        self.clients = list(clients)
        self.live = list(clients)
        self.retries = 0  # turns sent again after their server failed
        self._episodes: dict[Hashable, SamplerClient] = {}
        self._lock = threading.Lock()

    def server_for(self, episode: Hashable) -> SamplerClient:
        """The episode's server: the one it started on while that one lives, else the least loaded live one."""
        with self._lock:
            client = self._episodes.get(episode)
            if client is None or client not in self.live:
                if not self.live:
                    raise self._none_left()
                load = {id(c): 0 for c in self.live}
                for assigned in self._episodes.values():
                    if id(assigned) in load:
                        load[id(assigned)] += 1
                client = min(self.live, key=lambda c: load[id(c)])
                self._episodes[episode] = client
            return client

    def forget_episodes(self) -> None:
        """A rollout ended: its episodes' assignments go (the next rollout's episodes spread afresh)."""
        with self._lock:
            self._episodes.clear()

    def failed(self, client: SamplerClient, error: Exception, n_turns: int) -> None:
        """`client` failed a call holding `n_turns` turns: drop it; those turns will be retried elsewhere."""
        with self._lock:
            if client in self.live:
                self.live.remove(client)
                logger.warning(
                    "sampler server %s failed (%s); %d in-flight turns retried on the %d servers left",
                    client.url,
                    error,
                    n_turns,
                    len(self.live),
                )
            self.retries += n_turns
            if not self.live:
                raise self._none_left() from error

    def broadcast(self, call: Callable[[SamplerClient], T]) -> list[T]:
        """`call` on every live server (a weight load, a pause); one that fails is dropped."""
        out = []
        for client in list(self.live):
            try:
                out.append(call(client))
            except SamplerDown as exc:
                self.failed(client, exc, 0)
        return out

    def _none_left(self) -> NoSamplerLeft:
        urls = ", ".join(c.url for c in self.clients)
        return NoSamplerLeft(
            f"every sampler server failed ({urls}); their own logs say why. Restart them (or the run: "
            "python -m agentic_rl.train resume=RUN_DIR continues from the last checkpoint)"
        )

    def health(self) -> list[dict[str, Any]]:
        return [c.health() for c in self.live]
