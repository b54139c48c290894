"""The trainer's side of one environment server: a request in, a JSON object out, or a typed failure.

Whatever goes wrong on the way is one of two things. The server or the link failed (it is gone, it did not answer
in time, it answered something that is not the protocol, it failed on the request, it lost the session): an
`InfraFailure` with its cause, which the caller survives by moving the episode to another server. Or the request
itself was refused (no token, a wrong one, a request the server calls malformed): `ServerRefused`, a clear error,
since every server would refuse it the same way. The HTTP exchange itself is `agentic_rl.serving.JSONClient`'s.
"""

from __future__ import annotations

from typing import ClassVar

from agentic_rl.envs.faults import InfraFailure
from agentic_rl.envs.serve.protocol import PROTOCOL_VERSION
from agentic_rl.serving import JSONClient


class ServerRefused(RuntimeError):
    """The server refused the request (401/403: the token; 400: not the protocol), as it would any retry."""


class EnvClient(JSONClient):
    """Requests to the environment server at `url` (http://host:port), with `token` if it needs one; `timeout_s`
    bounds each request (a step runs a tool: allow for its limit)."""

    what = "environment server"
    protocol = PROTOCOL_VERSION
    token_advice = "Set its token in the variable envs.token_env names (default AGENTIC_RL_ENV_TOKEN)"
    status_causes: ClassVar[dict[int, str]] = {404: "session_lost"}  # the server does not hold the session

    def down(self, cause: str, message: str) -> Exception:
        return InfraFailure(cause, message)

    def refused(self, message: str) -> Exception:
        return ServerRefused(message)


__all__ = ["EnvClient", "ServerRefused"]
