"""Sampler servers for a run: started here on loopback (`rollout.servers=N`, or the vllm backend's default of one)
from the interpreter that has the engine, or reached at URLs started elsewhere (`rollout.servers=[URL, ...]`).

Local servers get a fresh token, load the policy's merged weights exported to a temporary folder, and are stopped
when the policy is closed or this interpreter exits; each also dies with this process, kill -9 included
(`agentic_rl.serving.die_with_parent`), so no server outlives its run.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import Any

from agentic_rl.rollout.service.protocol import TOKEN_ENV, SamplerClient
from agentic_rl.rollout.service.remote import RemotePolicy
from agentic_rl.rollout.service.router import SamplerRouter
from agentic_rl.serving import LocalServers, stop_processes

logger = logging.getLogger(__name__)


def start_servers(
    n: int, engine: str, folder: Path, python: str, settings: dict[str, Any], seed: int, timeout_s: float
) -> tuple[list[subprocess.Popen], list[str], str]:
    """`n` servers of `engine` on loopback: their processes, URLs and shared token. Any failure stops them all."""
    args = [python, "-m", "agentic_rl.rollout.service", "--engine", engine, "--model", str(folder)]
    args += ["--settings", json.dumps(settings), "--seed", str(seed)]
    servers = LocalServers.start(args, n, TOKEN_ENV, timeout_s, "sampler server")
    return servers.processes, servers.urls, servers.token


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
    stop_processes(procs)
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
    URLs' (then the first rollout sends the trainer's weights, through `rollout.sync_dir`, a folder they read).

    `settings["weight_sync"]` lora (rollout.vllm.weight_sync): local servers start from the base weights, and the
    adapter goes to them as version 1 at the first rollout; merged (the default): from the merged weights, version 0.
    """
    from agentic_rl.models.export import export_for_engine

    weight_sync = settings.get("weight_sync", "merged")
    folder = Path(tempfile.mkdtemp(prefix="agentic_rl-samplers-"))
    procs: list[subprocess.Popen] = []
    token: str | None
    try:
        if isinstance(servers, int):
            export_for_engine(model, tokenizer, folder / "model", merge=weight_sync != "lora")
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
            # local servers start from the exported merged weights; others, and the adapter, go at the first rollout
            synced=local and weight_sync != "lora",
            weight_sync=weight_sync,
        )
    except BaseException:
        _release(procs, str(folder))
        raise
