"""The trainer's side of one environment server: a request in, a JSON object out, or a typed failure.

Whatever goes wrong on the way is one of two things. The server or the link failed (it is gone, it did not answer
in time, it answered something that is not the protocol, it failed on the request, it lost the session): an
`InfraFailure` with its cause, which the caller survives by moving the episode to another server. Or the request
itself was refused (no token, a wrong one, a request the server calls malformed): `ServerRefused`, a clear error,
since every server would refuse it the same way.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from agentic_rl.envs.faults import InfraFailure
from agentic_rl.envs.serve.protocol import MAX_BODY_BYTES, PROTOCOL_VERSION


class ServerRefused(RuntimeError):
    """The server refused the request (401/403: the token; 400: not the protocol), as it would any retry."""


class EnvClient:
    """Requests to the environment server at `url` (http://host:port), with `token` if it needs one.

    A fresh connection per request: episodes step from several threads, and a connection the server dropped never
    has to be noticed and reopened. `timeout_s` bounds each request (a step runs a tool: allow for its limit).
    """

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 300.0) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname or parts.port is None:
            raise ValueError(f"an environment server URL is http://HOST:PORT, got {url!r}")
        self.url, self.host, self.port = url.rstrip("/"), parts.hostname, parts.port
        self.token, self.timeout_s = token, timeout_s

    def __repr__(self) -> str:
        return f"EnvClient({self.url})"

    def health(self) -> dict[str, Any]:
        """The server's health reply; a server of another protocol version is refused."""
        reply = self.request("GET", "/health")
        if reply.get("protocol") != PROTOCOL_VERSION:
            raise ServerRefused(
                f"{self.url} speaks environment protocol {reply.get('protocol')!r}, this client {PROTOCOL_VERSION}: "
                "run the same version of agentic_rl on both sides"
            )
        return reply

    def post(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", f"/{op}", body)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None if body is None else json.dumps(body).encode()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read(MAX_BODY_BYTES + 1)
        except TimeoutError as exc:
            raise InfraFailure("server_timeout", f"{self.url}{path}: no answer in {self.timeout_s:g} s") from exc
        except http.client.HTTPException as exc:  # a status line or headers that are not HTTP
            raise InfraFailure("bad_reply", f"{self.url}{path}: {type(exc).__name__}: {exc}") from exc
        except OSError as exc:  # refused, reset, closed: the server is not there (any more)
            raise InfraFailure("server_died", f"{self.url}{path}: {type(exc).__name__}: {exc}") from exc
        finally:
            conn.close()
        return self._decode(response.status, raw, path)

    def _decode(self, status: int, raw: bytes, path: str) -> dict[str, Any]:
        where = f"{self.url}{path}"
        try:
            reply = json.loads(raw) if len(raw) <= MAX_BODY_BYTES else None
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise InfraFailure("bad_reply", f"{where} answered {status} with a body that is not a JSON object")
        error = str(reply.get("error", ""))
        if status in (401, 403):
            raise ServerRefused(
                f"{where} refused the request ({status}): {error}. Set its token in the variable "
                "envs.token_env names (default AGENTIC_RL_ENV_TOKEN)"
            )
        if status == 400:
            raise ServerRefused(f"{where} says the request is not the protocol: {error}")
        if status == 404:
            raise InfraFailure("session_lost", f"{where}: {error}")
        if status != 200:
            raise InfraFailure("server_error", f"{where} answered {status}: {error}")
        return reply


__all__ = ["EnvClient", "ServerRefused"]
