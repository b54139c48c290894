"""The environment-server protocol: JSON over HTTP, one POST per operation, a session id per episode.

    POST /open   {"spec": SPEC, "task": TASK, "sample_index": i, "snapshot": SNAPSHOT | null}
                 -> {"session": SID, "snapshot": SNAPSHOT}
    POST /step   {"session": SID, "call": CALL}  -> {"observation": OBSERVATION, "snapshot": SNAPSHOT}
    POST /close  {"session": SID}                -> {"closed": bool}
    GET  /health                                 -> {"ok": true, "protocol": PROTOCOL_VERSION, "sessions": n}

SPEC is the environment to build: {"tools": a resolved `conf/tools/*.yaml` node, "env": the run's resolved `env` node
or null (the default environment)}. Every `_target_` in "tools" must name something of this package (a server builds
it, so it must not be a way to call any function of the server's Python). "env" is never built from the request: a
server builds the environment it was started with (`--env`) and refuses a spec that names another (400, saying
with what to start it), so a run never steps episodes in an environment it did not configure.
TASK, CALL and OBSERVATION are the `agentic_rl.types` records as JSON objects of their fields; SNAPSHOT is the
episode's `Episode.snapshot()`. A server with a token answers only requests that carry it
(`Authorization: Bearer <token>`); others get 401. Errors: 400 for a request that is not the protocol (its
`error` says what), 401 without the token, 404 for a session the server does not hold, 500 when handling failed.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from agentic_rl.serving import MAX_BODY_BYTES, BadRequest
from agentic_rl.types import Observation, Task, ToolCall

PROTOCOL_VERSION = 2  # 2: the spec names the run's environment ("env"); a version-1 server built the default one
TARGET_PREFIX = "agentic_rl."
TOKEN_ENV = "AGENTIC_RL_ENV_TOKEN"


class ProtocolError(BadRequest):
    """A message that is not the protocol: what is wrong with it, in words (answered 400)."""


def to_json(record: Any) -> dict[str, Any]:
    """A `types` record (Task, ToolCall, Observation) as a JSON object of its fields (tuples become lists)."""
    return dataclasses.asdict(record)


def from_json(cls: type, data: Any, what: str) -> Any:
    """`cls` rebuilt from `to_json`'s object; a missing or unknown field, or a wrong type, is a ProtocolError."""
    if not isinstance(data, dict):
        raise ProtocolError(f"{what} must be a JSON object, got {type(data).__name__}")
    known = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ProtocolError(f"{what} has unknown fields {unknown}; its fields are {sorted(known)}")
    values = {k: tuple(v) if isinstance(v, list) and "tuple" in str(known[k].type) else v for k, v in data.items()}
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"{what} is not a {cls.__name__}: {exc}") from None


def task_json(task: Task) -> dict[str, Any]:
    """The task as JSON; a task whose metadata JSON cannot hold is an error that names it."""
    data = to_json(task)
    try:
        json.dumps(data)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"task {task.task_id} cannot be sent to an environment server: {exc}") from None
    return data


def decode_task(data: Any) -> Task:
    return from_json(Task, data, "task")


def decode_call(data: Any) -> ToolCall:
    call = from_json(ToolCall, data, "call")
    if not (isinstance(call.name, str) and isinstance(call.content, str)):
        raise ProtocolError("call.name and call.content must be strings")
    return call


def decode_observation(data: Any) -> Observation:
    obs = from_json(Observation, data, "observation")
    if not (isinstance(obs.text, str) and isinstance(obs.status, str) and isinstance(obs.ok, bool)):
        raise ProtocolError("observation.text and .status must be strings and .ok a boolean")
    return obs


def field(body: Any, key: str, kind: type | tuple[type, ...], what: str = "the request") -> Any:
    """`body[key]`, checked to be a `kind`; otherwise a ProtocolError that names the field."""
    if not isinstance(body, dict):
        raise ProtocolError(f"{what} must be a JSON object, got {type(body).__name__}")
    if key not in body:
        raise ProtocolError(f"{what} has no {key!r}")
    value = body[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise ProtocolError(f"{what}'s {key!r} must be {getattr(kind, '__name__', kind)}, got {type(value).__name__}")
    return value


def check_spec(spec: Any) -> dict[str, Any]:
    """An environment spec a server may build: {"tools": {...}, "env": {...} | null} whose every tool `_target_` is
    this package's."""
    tools = field(spec, "tools", dict, "spec")
    if spec.get("env") is not None and not isinstance(spec["env"], dict):
        raise ProtocolError(f"spec's 'env' must be an object or null, got {type(spec['env']).__name__}")

    def targets(node: Any) -> list[str]:
        if isinstance(node, dict):
            own = [str(node["_target_"])] if "_target_" in node else []
            return own + [t for value in node.values() for t in targets(value)]
        return [t for value in node for t in targets(value)] if isinstance(node, list) else []

    foreign = [t for t in targets(tools) if not t.startswith(TARGET_PREFIX)]
    if foreign:
        raise ProtocolError(f"spec names {foreign}: an environment server builds only {TARGET_PREFIX}* targets")
    return spec


__all__ = [
    "MAX_BODY_BYTES",
    "PROTOCOL_VERSION",
    "TOKEN_ENV",
    "ProtocolError",
    "check_spec",
    "decode_call",
    "decode_observation",
    "decode_task",
    "field",
    "task_json",
    "to_json",
]
