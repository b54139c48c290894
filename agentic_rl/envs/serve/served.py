"""Episodes that step on environment servers, behind the same `Episode` seam as in-process ones.

A served episode lives on a server, by session id; the trainer keeps a copy (`ToolSetEnvironment.resume` of the
server's snapshot) that parses the model's turns, writes the prompt and answers the loop's questions (is this call
capped, graded, final?) without a request per token. Each step goes to the server, and the snapshot that comes
back (the CodeGym environment's committed state: trial-then-overwrite keeps it as JSON) updates the copy. So the
observations, and the rewards computed from them, are those the episode would have had in process.

When the server fails (it died, timed out, answered garbage, lost the session), the episode moves: it is opened on
another server from the copy's snapshot, the state before the failed call, and the call is sent again. Each move is
logged and recorded on the observation (`Observation.retries`). After `retries` moves, or with no server left to
move to, the call is an infrastructure failure (`envs.faults`) and the agent loop ends the episode.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from agentic_rl.envs.base import Episode, FinalAnswer
from agentic_rl.envs.faults import InfraFailure, infra_observation
from agentic_rl.envs.serve.client import EnvClient
from agentic_rl.envs.serve.pool import ServerPool
from agentic_rl.envs.serve.protocol import ProtocolError, decode_observation, field, task_json, to_json
from agentic_rl.types import Observation, Task, ToolCall

logger = logging.getLogger(__name__)


@dataclass
class Served:
    """How an environment's episodes are served: the pool, and the spec a server builds the environment from."""

    pool: ServerPool
    spec: dict[str, Any]

    def open(self, env: Any, task: Task, sample_index: int) -> Episode:
        """The episode, opened on a server; an episode no server could open ends at once (`UnopenedEpisode`)."""
        body = {"spec": self.spec, "task": task_json(task), "sample_index": sample_index, "snapshot": None}
        try:
            client, reply = self.pool.open(body)
            return ServedEpisode(self, env, task, sample_index, client, reply)
        except InfraFailure as failure:
            logger.warning("episode %s/%d could not be opened on any server: %s", task.task_id, sample_index, failure)
            return UnopenedEpisode(task, failure.cause)


def _session(reply: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An /open reply's session id and snapshot; anything else is a server that does not speak the protocol."""
    try:
        return field(reply, "session", str, "the open reply"), field(reply, "snapshot", dict, "the open reply")
    except ProtocolError as exc:
        raise InfraFailure("bad_reply", str(exc)) from None


class ServedEpisode(Episode):
    """One episode on a server (see the module docstring); `face` is the trainer's copy, which never steps."""

    def __init__(
        self, served: Served, env: Any, task: Task, sample_index: int, client: EnvClient, reply: dict[str, Any]
    ) -> None:
        self.served, self.task, self.sample_index, self.client = served, task, sample_index, client
        self.session, snapshot = _session(reply)
        self.face = env.resume(task, sample_index, snapshot)
        self.answers_once, self.nudge_text = self.face.answers_once, self.face.nudge_text  # declared on Episode

    # --- what the loop asks, answered by the copy
    @property
    def tools(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.face.tools

    @property
    def finish_reason(self) -> str | None:  # type: ignore[override]
        return self.face.finish_reason

    def prompt_messages(self, observation_format: str) -> list[dict[str, str]]:
        return self.face.prompt_messages(observation_format)

    def parse(self, text: str) -> ToolCall | None:
        return self.face.parse(text)

    def counts_toward_cap(self, name: str) -> bool:
        return self.face.counts_toward_cap(name)

    def grades(self, name: str) -> bool:
        return self.face.grades(name)

    def final(self, name: str) -> bool:
        return self.face.final(name)

    def final_answer(self) -> FinalAnswer | None:
        return self.face.final_answer()  # what a forced final turn is: the environment's own, served or not

    def counted_tools(self, executed: list[str]) -> tuple[str, ...]:
        return self.face.counted_tools(executed)

    def snapshot(self) -> dict[str, Any]:
        return self.face.snapshot()

    # --- what goes to the server
    def step(self, call: ToolCall) -> Observation:
        failures: list[str] = []
        while True:
            try:
                obs = self._step_once(call)
                obs.retries = tuple(failures)
                return obs
            except InfraFailure as failure:
                failures.append(failure.cause)
                self.served.pool.mark_failed(self.client, failure)
                if len(failures) > self.served.pool.retries or not self._move(failure):
                    return infra_observation(call.name, failure, tuple(failures[:-1]))

    def _step_once(self, call: ToolCall) -> Observation:
        reply = self.client.post("step", {"session": self.session, "call": to_json(call)})
        try:
            obs = decode_observation(field(reply, "observation", dict, "the step reply"))
            snapshot = field(reply, "snapshot", dict, "the step reply")
            self.face.restore(snapshot)
        except (ProtocolError, ValueError, TypeError, KeyError) as exc:
            raise InfraFailure("bad_reply", f"{self.client.url}/step: {exc}") from None
        return obs

    def _move(self, failure: InfraFailure) -> bool:
        """Open this episode on another server from the state before the failed call; False if none would."""
        body = {
            "spec": self.served.spec,
            "task": task_json(self.task),
            "sample_index": self.sample_index,
            "snapshot": self.face.snapshot(),
        }
        old = self.client
        try:
            self.client, reply = self.served.pool.open(body, avoid=old)
            self.session, _ = _session(reply)
        except (InfraFailure, RuntimeError) as exc:
            logger.warning("episode %s/%d: no server took it over (%s)", self.task.task_id, self.sample_index, exc)
            return False
        logger.warning(
            "episode %s/%d moved from %s to %s after %s",
            self.task.task_id,
            self.sample_index,
            old.url,
            self.client.url,
            failure,
        )
        return True

    def close(self) -> None:
        try:
            self.client.post("close", {"session": self.session})
        except InfraFailure:
            pass  # a server that is gone holds nothing to release


class UnopenedEpisode(Episode):
    """An episode no server could open: it carries the cause and ends before its first turn."""

    def __init__(self, task: Task, cause: str) -> None:
        self.task, self.infra_failure = task, cause

    def prompt_messages(self, observation_format: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.task.prompt}]

    def parse(self, text: str) -> ToolCall | None:
        return None

    def step(self, call: ToolCall) -> Observation:
        raise RuntimeError(f"episode {self.task.task_id} was never opened ({self.infra_failure}): it has no steps")


def served(pool: ServerPool | None, tools_cfg: Any) -> Served | None:
    """The serving of the tool set `tools_cfg` (a `conf/tools/*.yaml` node) on `pool`, in the environment its servers
    build (`ServerPool.env`, the run's), which the spec names so that a server started for another one refuses it;
    None without a pool."""
    if pool is None:
        return None
    from omegaconf import OmegaConf

    return Served(pool, {"tools": OmegaConf.to_container(tools_cfg, resolve=True), "env": pool.env})


__all__ = ["Served", "ServedEpisode", "UnopenedEpisode", "served"]
