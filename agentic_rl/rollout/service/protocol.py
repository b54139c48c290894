"""The sampler service's protocol: HTTP with JSON bodies, token ids in and out (stdlib only on both sides).

    GET  /health        -> {"ok", "protocol", "engine", "version", "paused"}
    POST /generate      {"turns": [Turn...]} -> {"turns": [{"ids", "logprobs", "stopped", "version"}, ...]}
    POST /pause         {} -> {"version"}: waits for the calls in flight, holds new ones until /resume
    POST /resume        {} -> {"version"}
    POST /load_weights  {"version": v, "path": FILE} -> {"version": v, "bytes": n}: the tensors of FILE (safetensors,
                        the trainer's names; only those LoRA changed) replace the engine's, its prefix cache is emptied
    POST /load_adapter  {"version": v, "path": DIR} -> {"version": v, "bytes": n}: the LoRA adapter saved in DIR (peft's
                        adapter_config.json and adapter_model.safetensors: only the layers LoRA changes) is served as
                        `policy-v<v>` over the base weights from the next call on (rollout.vllm.weight_sync=lora)

A turn is the episode's token ids so far (prompt, earlier turns, observations: never re-rendered text), a token
budget, the sampling temperature and top-p, a seed, and the stop strings (the active tools' closing markers, or
null). What comes back is the new ids, the sampler's log-prob of each at the sampling temperature over the whole
vocabulary (top-p shapes the draw only), whether a stop string ended the turn, and the policy version (the last
`/load_weights`) that sampled every one of its tokens: a call runs under one version, since a weight load waits
for the calls in flight.

A server started by the run listens on loopback; one that listens elsewhere requires a token
(`Authorization: Bearer <token>`) and answers 401 without it. HTTP, the token and the body limit are
`agentic_rl.serving`'s, shared with the environment servers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from agentic_rl.serving import BadRequest, JSONClient

PROTOCOL_VERSION = 1
TOKEN_ENV = "AGENTIC_RL_SAMPLER_TOKEN"  # the variable that holds a server's token


class ProtocolError(BadRequest):
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


class SamplerClient(JSONClient):
    """Requests to the sampler server at `url` (http://host:port), with `token` where it needs one. A fresh
    connection per request (calls come from several threads, `agentic_rl.serving.JSONClient`); `timeout_s` bounds
    each."""

    what = "sampler server"
    protocol = PROTOCOL_VERSION
    token_advice = (
        f"A server off loopback needs its token: set it in the variable rollout.server_token_env names (default "
        f"{TOKEN_ENV})"
    )

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 600.0) -> None:
        super().__init__(url, token, timeout_s)

    def down(self, cause: str, message: str) -> Exception:
        return SamplerDown(message)

    def refused(self, message: str) -> Exception:
        return SamplerRefused(message)

    def generate(self, turns: list[GenerateTurn]) -> list[GeneratedTurn]:
        reply = self.request("POST", "/generate", {"turns": [asdict(t) for t in turns]})
        out = [GeneratedTurn.from_json(t) for t in reply.get("turns") or []]
        if len(out) != len(turns):
            raise SamplerDown(f"{self.url} answered {len(out)} turns for {len(turns)}")
        return out
