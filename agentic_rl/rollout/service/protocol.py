"""The sampler service's protocol: HTTP with JSON bodies, token ids in and out (stdlib only on both sides).

    GET  /health        -> {"ok", "protocol", "engine", "version", "paused"}
    POST /generate      {"turns": [Turn...]} -> {"turns": [{"ids", "logprobs", "stopped", "version"}, ...]}
    POST /pause         {} -> {"version"}: waits for the calls in flight, holds new ones until /resume
    POST /resume        {} -> {"version"}
    POST /load_weights  {"version": v, "path": FILE} -> {"version": v, "bytes": n}: the tensors of FILE (safetensors,
                        the trainer's names; only those LoRA changed) replace the engine's, its prefix cache is emptied

A turn is the episode's token ids so far (prompt, earlier turns, observations: never re-rendered text), a token
budget, the sampling temperature and top-p, a seed, and the stop strings (the active tools' closing markers, or
null). What comes back is the new ids, the sampler's log-prob of each at the sampling temperature over the whole
vocabulary (top-p shapes the draw only), whether a stop string ended the turn, and the policy version (the last
`/load_weights`) that sampled every one of its tokens: a call runs under one version, since a weight load waits
for the calls in flight.

A server started by the run listens on loopback; one that listens elsewhere requires a token
(`Authorization: Bearer <token>`) and answers 401 without it.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

PROTOCOL_VERSION = 1
TOKEN_ENV = "AGENTIC_RL_SAMPLER_TOKEN"  # the variable that holds a server's token
MAX_BODY_BYTES = 64 * 1024 * 1024


class ProtocolError(ValueError):
    """A request or reply that is not the protocol (answered 400 by a server)."""


class SamplerDown(RuntimeError):
    """The server is gone or failed on the call: the call may be retried on another server."""


class SamplerRefused(RuntimeError):
    """The server refused the request (its token, or not the protocol), as it would any retry."""


@dataclass(frozen=True)
class GenerateTurn:
    ids: list[int]
    max_tokens: int
    temperature: float
    top_p: float
    seed: int
    stop: list[str] | None = None

    @staticmethod
    def from_json(data: Any) -> GenerateTurn:
        if not isinstance(data, dict):
            raise ProtocolError(f"a turn is a JSON object, got {type(data).__name__}")
        try:
            turn = GenerateTurn(
                ids=[int(t) for t in data["ids"]],
                max_tokens=int(data["max_tokens"]),
                temperature=float(data["temperature"]),
                top_p=float(data["top_p"]),
                seed=int(data["seed"]),
                stop=None if data.get("stop") is None else [str(s) for s in data["stop"]],
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ProtocolError(f"a turn needs ids, max_tokens, temperature, top_p and seed: {exc}") from None
        if not turn.ids or turn.max_tokens < 1:
            raise ProtocolError("a turn needs at least one id and max_tokens >= 1")
        return turn


@dataclass(frozen=True)
class GeneratedTurn:
    ids: list[int]
    logprobs: list[float]
    stopped: bool
    version: int

    @staticmethod
    def from_json(data: Any) -> GeneratedTurn:
        try:
            out = GeneratedTurn(
                [int(t) for t in data["ids"]],
                [float(x) for x in data["logprobs"]],
                bool(data["stopped"]),
                int(data["version"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SamplerDown(f"a reply that is not the protocol: {exc}") from None
        if len(out.logprobs) != len(out.ids):
            raise SamplerDown(f"a reply with {len(out.logprobs)} log-probs for {len(out.ids)} tokens")
        return out


class SamplerClient:
    """Requests to the sampler server at `url` (http://host:port), with `token` where it needs one. A fresh
    connection per request (calls come from several threads); `timeout_s` bounds each."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 600.0) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname or parts.port is None:
            raise ValueError(f"a sampler server URL is http://HOST:PORT, got {url!r}")
        self.url, self.host, self.port = url.rstrip("/"), parts.hostname, parts.port
        self.token, self.timeout_s = token, timeout_s

    def __repr__(self) -> str:
        return f"SamplerClient({self.url})"

    def health(self) -> dict[str, Any]:
        reply = self._request("GET", "/health", None)
        if reply.get("protocol") != PROTOCOL_VERSION:
            raise SamplerRefused(
                f"{self.url} speaks sampler protocol {reply.get('protocol')!r}, this client {PROTOCOL_VERSION}: "
                "run the same version of agentic_rl on both sides"
            )
        return reply

    def generate(self, turns: list[GenerateTurn]) -> list[GeneratedTurn]:
        reply = self._request("POST", "/generate", {"turns": [asdict(t) for t in turns]})
        out = [GeneratedTurn.from_json(t) for t in reply.get("turns") or []]
        if len(out) != len(turns):
            raise SamplerDown(f"{self.url} answered {len(out)} turns for {len(turns)}")
        return out

    def post(self, op: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """`pause`, `resume` or `load_weights`."""
        return self._request("POST", f"/{op}", body or {})

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=headers)
            response = conn.getresponse()
            status, raw = response.status, response.read(MAX_BODY_BYTES + 1)
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out: the server is not there
            raise SamplerDown(f"{self.url}{path}: {type(exc).__name__}: {exc}") from exc
        finally:
            conn.close()
        try:
            reply = json.loads(raw)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise SamplerDown(f"{self.url}{path} answered {status} with a body that is not a JSON object")
        if status in (401, 403):
            raise SamplerRefused(
                f"{self.url}{path} refused the request ({status}): {reply.get('error')}. A server off loopback needs "
                f"its token: set it in the variable rollout.server_token_env names (default {TOKEN_ENV})"
            )
        if status == 400:
            raise SamplerRefused(f"{self.url}{path} refused the request (400): {reply.get('error')}")
        if status != 200:
            raise SamplerDown(f"{self.url}{path} answered {status}: {reply.get('error')}")
        return reply
