"""Sampler servers for a run: started here on loopback (`rollout.servers=N`, or the vllm backend's default of one)
from the interpreter that has the engine, or reached at URLs started elsewhere (`rollout.servers=[URL, ...]`).

Local servers get a fresh token, load the policy's merged weights exported to a temporary folder, and are stopped
when the policy is closed or this interpreter exits; each also dies with this process, kill -9 included
(`server.die_with_parent`), so no server outlives its run.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from agentic_rl.rollout.service.protocol import TOKEN_ENV, SamplerClient
from agentic_rl.rollout.service.remote import RemotePolicy
from agentic_rl.rollout.service.router import SamplerRouter

logger = logging.getLogger(__name__)


def start_servers(
    n: int, engine: str, folder: Path, python: str, settings: dict[str, Any], seed: int, timeout_s: float
) -> tuple[list[subprocess.Popen], list[str], str]:
    """`n` servers of `engine` on loopback: their processes, URLs and shared token. Any failure stops them all."""
    token = secrets.token_hex(16)
    args = [python, "-m", "agentic_rl.rollout.service", "--engine", engine, "--model", str(folder)]
    args += ["--host", "127.0.0.1", "--port", "0", "--parent-pid", str(os.getpid())]
    args += ["--settings", json.dumps(settings), "--seed", str(seed), "--token-env", TOKEN_ENV]
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(n):
            procs.append(
                subprocess.Popen(args, stdout=subprocess.PIPE, env={**os.environ, TOKEN_ENV: token}, text=True)
            )
        return procs, [listening_url(p, timeout_s) for p in procs], token
    except BaseException:
        stop_servers(procs)
        raise


def listening_url(proc: subprocess.Popen, timeout_s: float) -> str:
    """The URL a starting server announces on its first line of stdout."""
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    started = time.monotonic()
    reader.start()
    reader.join(timeout_s)
    line = first[0].strip() if first else ""
    if not line.startswith("listening on http://"):
        state = f"exited with {proc.poll()}" if proc.poll() is not None else f"said nothing in {timeout_s:g} s"
        raise RuntimeError(f"a sampler server did not start ({state}; its errors are on stderr above)")
    logger.info("sampler server %s up in %.1f s", line.split()[-1], time.monotonic() - started)
    return line.split()[-1]


def stop_servers(procs: list[subprocess.Popen]) -> None:
    """SIGTERM, then SIGKILL for any server still there after 10 s."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


class ServedPolicy(RemotePolicy):
    """A `RemotePolicy` that owns what it started: the servers and the folder of exported weights."""

    def __init__(self, model: Any, tokenizer: Any, router: SamplerRouter, folder: Path, **kwargs: Any) -> None:
        procs: list[subprocess.Popen] = kwargs.pop("processes", [])
        super().__init__(model, tokenizer, router, **kwargs)
        self.processes = procs
        self._cleanup = weakref.finalize(self, _release, procs, str(folder))  # also at interpreter exit

    def close(self) -> None:
        self._cleanup()


def _release(procs: list[subprocess.Popen], folder: str) -> None:
    stop_servers(procs)
    shutil.rmtree(folder, ignore_errors=True)


def served_policy(
    model: Any,
    tokenizer: Any,
    rollout_cfg: Any,
    servers: int | list[str],
    engine: str,
    python: str,
    settings: dict[str, Any],
    seed: int,
) -> ServedPolicy:
    """The policy on `servers`: N local servers of `engine` run by `python` with the engine's `settings`, or the
    URLs' (then the first rollout sends the trainer's weights, through `rollout.sync_dir`, a folder they read)."""
    from agentic_rl.models.export import export_for_engine

    folder = Path(tempfile.mkdtemp(prefix="agentic_rl-samplers-"))
    procs: list[subprocess.Popen] = []
    token: str | None
    try:
        if isinstance(servers, int):
            export_for_engine(model, tokenizer, folder / "model")
            timeout_s = rollout_cfg.server_startup_timeout_s
            procs, urls, token = start_servers(servers, engine, folder / "model", python, settings, seed, timeout_s)
        else:
            urls, token = list(servers), os.environ.get(rollout_cfg.server_token_env) or None
        clients = [SamplerClient(url, token) for url in urls]
        for client in clients:  # a wrong token or an old server is an error now, not at the first turn
            client.health()
        local = isinstance(servers, int)
        return ServedPolicy(
            model,
            tokenizer,
            SamplerRouter(clients),
            folder,
            processes=procs,
            sync_folder=folder / "sync" if local else Path(rollout_cfg.sync_dir),
            synced=local,  # local servers start from the exported weights; others get them at the first rollout
        )
    except BaseException:
        _release(procs, str(folder))
        raise
