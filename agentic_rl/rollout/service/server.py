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
import hmac
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from agentic_rl.envs.serve.server import is_loopback  # the environment servers' rule, one definition
from agentic_rl.rollout.service.protocol import (
    MAX_BODY_BYTES,
    PROTOCOL_VERSION,
    TOKEN_ENV,
    GenerateTurn,
    ProtocolError,
)

logger = logging.getLogger(__name__)


class Engine(Protocol):
    """What a server serves: per turn the new ids, their log-probs and whether a stop string ended it; and the
    weights of a file loaded in place (returns the bytes read)."""

    name: str

    def generate(self, turns: list[GenerateTurn]) -> list[tuple[list[int], list[float], bool]]: ...

    def load_weights(self, path: str) -> int: ...


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


class SamplerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, port: int, engine: Engine, token: str | None) -> None:
        if not token and not is_loopback(host):
            raise ValueError(
                f"a sampler server listening on {host} (not loopback) needs a token: set {TOKEN_ENV} "
                "(or the variable --token-env names) and give the trainer the same one"
            )
        self.engine, self.token, self.gate = engine, token or None, Gate()
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    def generate(self, body: dict[str, Any]) -> dict[str, Any]:
        turns = body.get("turns")
        if not isinstance(turns, list) or not turns:
            raise ProtocolError('POST /generate takes {"turns": [turn, ...]} with at least one turn')
        parsed = [GenerateTurn.from_json(t) for t in turns]
        with self.gate.call():
            version = self.gate.version  # every token of this call is sampled by this version
            results = self.engine.generate(parsed)
        return {"turns": [{"ids": i, "logprobs": lp, "stopped": s, "version": version} for i, lp, s in results]}

    def load_weights(self, body: dict[str, Any]) -> dict[str, Any]:
        version, path = body.get("version"), body.get("path")
        if not isinstance(version, int) or not isinstance(path, str):
            raise ProtocolError('POST /load_weights takes {"version": int, "path": str}')
        with self.gate.call(pausing=True):
            started = time.perf_counter()
            size = self.engine.load_weights(path)
            self.gate.version = version
        logger.info("weights v%d loaded: %d bytes in %.2f s", version, size, time.perf_counter() - started)
        return {"version": version, "bytes": size}

    def pause(self, body: dict[str, Any], paused: bool = True) -> dict[str, Any]:
        self.gate.set_paused(paused)
        return {"version": self.gate.version, "paused": paused}


class _Handler(BaseHTTPRequestHandler):
    server: SamplerServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802  (the name http.server dispatches to)
        if not self._authorized():
            return
        if self.path != "/health":
            self._reply(404, {"error": f"no such path {self.path!r}; GET /health"})
            return
        gate = self.server.gate
        self._reply(
            200,
            {
                "ok": True,
                "protocol": PROTOCOL_VERSION,
                "engine": self.server.engine.name,
                "version": gate.version,
                "paused": gate.paused,
            },
        )

    def do_POST(self) -> None:  # noqa: N802
        if not self._authorized():
            return
        ops = {
            "/generate": self.server.generate,
            "/load_weights": self.server.load_weights,
            "/pause": self.server.pause,
            "/resume": lambda body: self.server.pause(body, paused=False),
        }
        if self.path not in ops:
            self._reply(404, {"error": f"no such operation {self.path!r}; POST {' '.join(ops)}"})
            return
        try:
            self._reply(200, ops[self.path](self._body()))
        except ValueError as exc:  # not the protocol, or a turn the engine cannot take: any server would refuse it
            self._reply(400, {"error": str(exc)})
        except Exception as exc:  # the server survives a call it fails on; the trainer retries elsewhere
            logger.exception("sampler server: %s failed", self.path)
            self._reply(500, {"error": f"{type(exc).__name__}: {exc}"})

    def _authorized(self) -> bool:
        token = self.server.token
        given = self.headers.get("Authorization", "")
        if token is None or hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return True
        self._reply(401, {"error": "this sampler server needs its token (Authorization: Bearer <token>)"})
        return False

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY_BYTES:
            raise ProtocolError(f"a request body of {length} bytes: expected 1 to {MAX_BODY_BYTES}")
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError as exc:
            raise ProtocolError(f"the request body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise ProtocolError("the request body is a JSON object")
        return body

    def _reply(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (http.server's signature)
        logger.debug("sampler server: " + format, *args)


PR_SET_PDEATHSIG = 1  # Linux prctl option: a signal this process gets when its parent dies


def die_with_parent(pid: int) -> None:
    """This process ends when process `pid` (the run that started it) is gone, however it ended: SIGKILL from the
    kernel at the parent's death where Linux offers it, and a watch on the parent's pid everywhere (it also covers
    a parent that died before the signal was asked for)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    def watch() -> None:
        while os.getppid() == pid:
            time.sleep(0.5)
        logger.warning("the run that started this sampler server (pid %d) is gone: exiting", pid)
        os._exit(0)  # the engine's threads and child processes must not keep the process alive

    threading.Thread(target=watch, daemon=True).start()


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
    if args.parent_pid is not None:
        die_with_parent(args.parent_pid)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s")
    from agentic_rl.rollout.service.engines import build_engine

    engine = build_engine(args.engine, args.model, json.loads(args.settings), seed=args.seed)
    try:
        server = SamplerServer(args.host, args.port, engine, os.environ.get(args.token_env))
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    sys.stdout.write(f"listening on {server.url}\n")  # the line a run that starts local servers waits for
    sys.stdout.flush()
    try:
        server.serve_forever()
    finally:
        server.server_close()
