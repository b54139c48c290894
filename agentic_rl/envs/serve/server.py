"""An environment server: episodes held by session id, stepped in the server's own sandbox (protocol.py).

    python -m agentic_rl.envs.serve [--host 127.0.0.1] [--port 8765] [--sandbox FILE_OR_JSON]

Code runs here for whoever may send requests, so a server is a door: it listens on loopback unless told
otherwise, and a server for other machines (any other `--host`) refuses to start without a token
(`$AGENTIC_RL_ENV_TOKEN`, or the variable `--token-env` names); with a token, a request without it gets 401.
The environments it builds are those a request's spec names, from this package only (`protocol.check_spec`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentic_rl.envs.base import Environment, Episode
from agentic_rl.envs.serve.protocol import (
    MAX_BODY_BYTES,
    PROTOCOL_VERSION,
    ProtocolError,
    check_spec,
    decode_call,
    decode_task,
    field,
    to_json,
)

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


class _Handler(BaseHTTPRequestHandler):
    server: EnvServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802  (the name http.server dispatches to)
        if self._authorized():
            if self.path == "/health":
                self._reply(200, {"ok": True, "protocol": PROTOCOL_VERSION, "sessions": len(self.server.sessions)})
            else:
                self._reply(404, {"error": f"no such path {self.path!r}; GET /health, POST /open /step /close"})

    def do_POST(self) -> None:  # noqa: N802
        if not self._authorized():
            return
        op = {
            "/open": self.server.sessions.open,
            "/step": self.server.sessions.step,
            "/close": self.server.sessions.close,
        }
        if self.path not in op:
            self._reply(404, {"error": f"no such operation {self.path!r}; POST /open /step /close"})
            return
        try:
            self._reply(200, op[self.path](self._body()))
        except ProtocolError as exc:
            self._reply(400, {"error": str(exc)})
        except UnknownSession as exc:
            self._reply(404, {"error": str(exc)})
        except Exception as exc:  # the server survives a request it fails on; the client retries elsewhere
            logger.exception("environment server: %s failed", self.path)
            self._reply(500, {"error": f"{type(exc).__name__}: {exc}"})

    def _authorized(self) -> bool:
        token = self.server.token
        if token is None or hmac.compare_digest(self.headers.get("Authorization", ""), f"Bearer {token}"):
            return True
        self._reply(401, {"error": "this environment server needs its token (Authorization: Bearer <token>)"})
        return False

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY_BYTES:
            raise ProtocolError(f"a request body of {length} bytes: expected 1 to {MAX_BODY_BYTES}")
        try:
            return json.loads(self.rfile.read(length))
        except ValueError as exc:
            raise ProtocolError(f"the request body is not JSON: {exc}") from None

    def _reply(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (http.server's signature)
        logger.debug("environment server: " + format, *args)


def is_loopback(host: str) -> bool:
    """True when every address `host` resolves to is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


class EnvServer(ThreadingHTTPServer):
    """The HTTP server of `sessions`; `url` is where it listens. Refuses a non-loopback host without a token."""

    daemon_threads = True

    def __init__(self, host: str, port: int, sessions: Sessions, token: str | None) -> None:
        if not is_loopback(host) and not token:
            raise ValueError(
                f"an environment server on {host!r} is reachable from other machines and runs code for whoever "
                "asks: it needs a token. Set one in $AGENTIC_RL_ENV_TOKEN (the clients send the same), or listen "
                "on 127.0.0.1"
            )
        self.sessions, self.token = sessions, token or None
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


__all__ = ["EnvServer", "Sessions", "UnknownSession", "is_loopback"]
