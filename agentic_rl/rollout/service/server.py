"""A sampler server: the protocol of `protocol.py` around one engine (`engines.py`), stdlib HTTP.

    python -m agentic_rl.rollout.service --engine hf|vllm --model DIR [--host 127.0.0.1] [--port 0]
        [--token-env AGENTIC_RL_SAMPLER_TOKEN] [--parent-pid PID] [--dtype auto] [--max-model-len N] [--seed 0]

`--model` is a transformers folder (the run exports the policy's merged weights there). `--engine vllm` imports
vLLM in this process only, so the server runs from the interpreter that has it (`.venv-vllm/bin/python`) while the
trainer stays in its own; `--engine hf` is the stand-in that speaks the same protocol around the HF reference
engine (tests, and machines without vLLM).

One engine call at a time (engines are not thread-safe); `/pause` and `/load_weights` wait for it. A server started
by a run gets `--parent-pid`: it dies with the run, kill -9 included (Linux's parent-death signal, and a watch on
the parent's pid where that signal is not there), so no server outlives its trainer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol

from agentic_rl.rollout.service.protocol import PROTOCOL_VERSION, TOKEN_ENV, GenerateTurn, ProtocolError
from agentic_rl.serving import JSONServer, Route, die_with_parent, reserve_stdout, serve_until_stopped

logger = logging.getLogger(__name__)


class Engine(Protocol):
    """What a server serves: per turn the new ids, their log-probs and whether a stop string ended it; the weights
    of a file loaded in place, or a LoRA adapter's folder served under the version's name (each returns the bytes
    read)."""

    name: str

    def generate(self, turns: list[GenerateTurn]) -> list[tuple[list[int], list[float], bool]]: ...

    def load_weights(self, path: str) -> int: ...

    def load_adapter(self, path: str, version: int) -> int: ...


class Gate:
    """One engine call at a time, a version that changes only between calls, and a pause that holds new calls."""

    def __init__(self) -> None:
        self.version = 0
        self.paused = False
        self._cond = threading.Condition()
        self._busy = False

    @contextlib.contextmanager
    def call(self, *, pausing: bool = False) -> Iterator[None]:
        """The engine to oneself: a generate call waits out a pause, a weight load (`pausing`) does not."""
        with self._cond:
            self._cond.wait_for(lambda: not self._busy and (pausing or not self.paused))
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def set_paused(self, paused: bool) -> None:
        with self._cond:
            if paused:
                self._cond.wait_for(lambda: not self._busy)
            self.paused = paused
            self._cond.notify_all()


class SamplerServer(JSONServer):
    """The protocol's routes around `engine` (`agentic_rl.serving` does HTTP, the token and the loopback rule)."""

    what = "sampler server"
    token_advice = f"Set {TOKEN_ENV} (or the variable --token-env names) and give the trainer the same one"
    statuses = ((ValueError, 400),)  # not the protocol, or a turn the engine cannot take: any server would refuse it

    def __init__(self, host: str, port: int, engine: Engine, token: str | None) -> None:
        self.engine, self.gate = engine, Gate()
        super().__init__(host, port, token)

    def get_routes(self) -> dict[str, Route]:
        return {"/health": self.health}

    def post_routes(self) -> dict[str, Route]:
        return {
            "/generate": self.generate,
            "/load_weights": self.load_weights,
            "/load_adapter": lambda body: self.load_weights(body, adapter=True),
            "/pause": self.pause,
            "/resume": lambda body: self.pause(body, paused=False),
        }

    def health(self) -> dict[str, Any]:
        gate = self.gate
        return {
            "ok": True,
            "protocol": PROTOCOL_VERSION,
            "engine": self.engine.name,
            "version": gate.version,
            "paused": gate.paused,
        }

    def generate(self, body: dict[str, Any]) -> dict[str, Any]:
        turns = body.get("turns")
        if not isinstance(turns, list) or not turns:
            raise ProtocolError('POST /generate takes {"turns": [turn, ...]} with at least one turn')
        parsed = [GenerateTurn.from_json(t) for t in turns]
        with self.gate.call():
            version = self.gate.version  # every token of this call is sampled by this version
            results = self.engine.generate(parsed)
        return {"turns": [{"ids": i, "logprobs": lp, "stopped": s, "version": version} for i, lp, s in results]}

    def load_weights(self, body: dict[str, Any], adapter: bool = False) -> dict[str, Any]:
        """A new version: merged weights (a safetensors file) or, `adapter`, a LoRA adapter (a folder)."""
        version, path = body.get("version"), body.get("path")
        if not isinstance(version, int) or isinstance(version, bool) or version < 0 or not isinstance(path, str):
            op = "load_adapter" if adapter else "load_weights"
            raise ProtocolError(f'POST /{op} takes {{"version": int >= 0, "path": str}}')
        with self.gate.call(pausing=True):
            started = time.perf_counter()
            size = self.engine.load_adapter(path, version) if adapter else self.engine.load_weights(path)
            self.gate.version = version
        what = "adapter" if adapter else "weights"
        logger.info("%s v%d loaded: %d bytes in %.2f s", what, version, size, time.perf_counter() - started)
        return {"version": version, "bytes": size}

    def pause(self, body: dict[str, Any], paused: bool = True) -> dict[str, Any]:
        self.gate.set_paused(paused)
        return {"version": self.gate.version, "paused": paused}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.rollout.service", description=__doc__.split("\n")[0])
    parser.add_argument("--engine", choices=("hf", "vllm"), required=True)
    parser.add_argument("--model", required=True, help="a transformers folder (weights and tokenizer)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    parser.add_argument("--port", type=int, default=0, help="port (0: any free one)")
    parser.add_argument("--token-env", default=TOKEN_ENV, help="variable holding the token (needed off loopback)")
    parser.add_argument("--parent-pid", type=int, default=None, help="exit when this process is gone")
    parser.add_argument("--settings", default="{}", help="the engine's settings, JSON (rollout.vllm for vllm)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.parent_pid is not None:  # no orphan: the engine's threads and processes must not outlive the run
        die_with_parent(args.parent_pid, SamplerServer.what)
    announce = reserve_stdout()  # vLLM logs to stdout: the run reads this server's URL there
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s")
    from agentic_rl.rollout.service.engines import build_engine

    engine = build_engine(args.engine, args.model, json.loads(args.settings), seed=args.seed)
    try:
        server = SamplerServer(args.host, args.port, engine, os.environ.get(args.token_env))
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    serve_until_stopped(server, announce)
