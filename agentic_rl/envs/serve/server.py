"""An environment server: episodes held by session id, stepped in the server's own sandbox (protocol.py).

    python -m agentic_rl.envs.serve [--host 127.0.0.1] [--port 8765] [--sandbox FILE_OR_JSON]

Code runs here for whoever may send requests, so a server is a door: it listens on loopback unless told
otherwise, and a server for other machines (any other `--host`) refuses to start without a token
(`$AGENTIC_RL_ENV_TOKEN`, or the variable `--token-env` names); with a token, a request without it gets 401.
The environments it builds are those a request's spec names, from this package only (`protocol.check_spec`).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from typing import Any

from agentic_rl.envs.base import Environment, Episode
from agentic_rl.envs.serve.protocol import (
    PROTOCOL_VERSION,
    ProtocolError,
    check_spec,
    decode_call,
    decode_task,
    field,
    to_json,
)
from agentic_rl.serving import BadRequest, JSONServer, Route

logger = logging.getLogger(__name__)


class UnknownSession(LookupError):
    """A session id the server does not hold (never opened, closed, or the server restarted)."""


class Sessions:
    """The server's episodes by session id, and the environments they were opened from (one per spec).

    `build(spec)` makes the environment of a spec; the server passes one that builds the tool set in its own
    sandbox. Each session has a lock: a client steps an episode one call at a time, and a retried request must not
    run beside the first one.
    """

    def __init__(self, build: Any) -> None:
        self._build = build
        self._envs: dict[str, Environment] = {}
        self._sessions: dict[str, tuple[Episode, threading.Lock]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def environment(self, spec: dict[str, Any]) -> Environment:
        key = json.dumps(check_spec(spec), sort_keys=True)
        with self._lock:  # built once per spec, under the lock: building may load an index
            if key not in self._envs:
                self._envs[key] = self._build(spec)
            return self._envs[key]

    def open(self, body: dict[str, Any]) -> dict[str, Any]:
        env = self.environment(field(body, "spec", dict))
        task, index = decode_task(field(body, "task", dict)), field(body, "sample_index", int)
        snapshot = body.get("snapshot")
        if snapshot is not None and not isinstance(snapshot, dict):
            raise ProtocolError(f"the request's 'snapshot' must be an object or null, got {type(snapshot).__name__}")
        episode = env.open(task, index) if snapshot is None else env.resume(task, index, snapshot)
        sid = secrets.token_hex(16)
        with self._lock:
            self._sessions[sid] = (episode, threading.Lock())
        return {"session": sid, "snapshot": episode.snapshot()}

    def step(self, body: dict[str, Any]) -> dict[str, Any]:
        episode, lock = self._get(field(body, "session", str))
        call = decode_call(field(body, "call", dict))
        with lock:
            obs = episode.step(call)
            return {"observation": to_json(obs), "snapshot": episode.snapshot()}

    def close(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            held = self._sessions.pop(field(body, "session", str), None)
        if held is not None:
            held[0].close()
        return {"closed": held is not None}

    def _get(self, sid: str) -> tuple[Episode, threading.Lock]:
        with self._lock:
            if sid not in self._sessions:
                raise UnknownSession(f"no session {sid[:8]}... on this server")
            return self._sessions[sid]


class EnvServer(JSONServer):
    """The HTTP server of `sessions` (`agentic_rl.serving`); `url` is where it listens. Refuses a non-loopback host
    without a token."""

    what = "environment server"
    token_advice = "It runs code for whoever asks: set a token in $AGENTIC_RL_ENV_TOKEN (the clients send the same)"
    statuses = ((BadRequest, 400), (UnknownSession, 404))

    def __init__(self, host: str, port: int, sessions: Sessions, token: str | None) -> None:
        self.sessions = sessions
        super().__init__(host, port, token)

    def get_routes(self) -> dict[str, Route]:
        return {"/health": lambda: {"ok": True, "protocol": PROTOCOL_VERSION, "sessions": len(self.sessions)}}

    def post_routes(self) -> dict[str, Route]:
        return {"/open": self.sessions.open, "/step": self.sessions.step, "/close": self.sessions.close}


__all__ = ["EnvServer", "Sessions", "UnknownSession"]
