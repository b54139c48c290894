"""The run's environment servers (`envs.servers`): started here or elsewhere, and which one an episode goes to.

    envs.servers=0            no servers: episodes step in the trainer's own process (the default)
    envs.servers=N            N local servers, each a process with its own sandbox, on loopback, stopped at the end
    envs.servers=[URL, ...]   servers started elsewhere (`python -m agentic_rl.envs.serve`), with the token in
                              $AGENTIC_RL_ENV_TOKEN (or the variable envs.token_env names)

Every server builds the run's environment (the `env` group): local servers are started with it (`--env`), and a
server started elsewhere must have been started with the same one (its episodes' requests carry the run's `env`,
which a server started for another refuses, saying with what to start it).

Episodes go to the live servers in turn. A server that died (no connection, no answer in time, garbage) is taken
out of the turn; its episodes move to another server with their state on their next call (served.py). When no
server is left the run stops with an error that says so, since nothing could be scored.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agentic_rl.envs.faults import InfraFailure
from agentic_rl.envs.serve.client import EnvClient
from agentic_rl.envs.serve.protocol import TOKEN_ENV
from agentic_rl.registry import to_dataclass
from agentic_rl.serving import LocalServers

logger = logging.getLogger(__name__)

# failures that say the server itself is gone or broken: it gets no more episodes. A failed request (500) or a
# lost session (the server restarted) leaves it in the turn.
DEAD_CAUSES = ("server_died", "server_timeout", "bad_reply")


@dataclass
class ServersConfig:
    """`envs` (conf/envs/default.yaml).

    servers: 0 (in process), N local server processes, or a list of server URLs started elsewhere.
    token_env: the environment variable that holds the servers' token (local servers get a fresh one).
    timeout_s: one request's limit (a step runs a tool or a CodeGym call: above the tools' own limits).
    retries: servers one call may move to after its server failed, before the episode counts as failed.
    startup_timeout_s: how long a local server may take to start (it imports the package and its sandbox).
    """

    servers: Any = 0
    token_env: str = TOKEN_ENV
    timeout_s: float = 300.0
    retries: int = 2
    startup_timeout_s: float = 300.0

    def __post_init__(self) -> None:
        servers = self.servers
        if isinstance(servers, bool) or not isinstance(servers, (int, list, tuple)):
            raise ValueError(f"envs.servers must be a number of servers or a list of URLs, got {servers!r}")
        if isinstance(servers, int) and servers < 0:
            raise ValueError(f"envs.servers must be >= 0 (0: no servers), got {servers}")
        if isinstance(servers, (list, tuple)) and not (servers and all(isinstance(u, str) for u in servers)):
            raise ValueError(f"envs.servers as a list must hold at least one URL (http://HOST:PORT), got {servers!r}")
        if self.timeout_s <= 0 or self.startup_timeout_s <= 0:
            raise ValueError("envs.timeout_s and envs.startup_timeout_s must be > 0")
        if self.retries < 0:
            raise ValueError(f"envs.retries must be >= 0, got {self.retries}")


@dataclass
class ServerPool:
    """The live servers, handed to episodes in turn; `retries` is how often one call may move on."""

    clients: list[EnvClient]
    retries: int = 2
    env: dict[str, Any] | None = None  # the run's `env` node the servers build (None: the default environment)
    processes: list[subprocess.Popen] = field(default_factory=list)  # the local servers' processes (servers=N)
    _dead: set[str] = field(default_factory=set)
    _turn: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def live(self) -> list[EnvClient]:
        with self._lock:
            return [c for c in self.clients if c.url not in self._dead]

    def mark_failed(self, client: EnvClient, failure: InfraFailure) -> None:
        """Take a server that died out of the turn (a failure of one request leaves it in)."""
        if failure.cause not in DEAD_CAUSES:
            return
        with self._lock:
            if client.url not in self._dead:
                self._dead.add(client.url)
                logger.warning(
                    "environment server %s is out: %s (%d left)",
                    client.url,
                    failure,
                    len(self.clients) - len(self._dead),
                )

    def open(self, body: dict[str, Any], avoid: EnvClient | None = None) -> tuple[EnvClient, dict[str, Any]]:
        """Open an episode (`body` of POST /open) on the next live server, trying each in turn: (its client, the
        reply). Raises the last InfraFailure when every try failed, RuntimeError when no server is left."""
        candidates = self._in_turn(avoid)
        if not candidates:
            raise RuntimeError(
                f"every environment server is down ({', '.join(c.url for c in self.clients)}): nothing could be "
                "scored, so the run stops. Restart the servers (or use envs.servers=N) and resume the run"
            )
        failure: InfraFailure | None = None
        for client in candidates:
            try:
                return client, client.post("open", body)
            except InfraFailure as exc:
                failure = exc
                self.mark_failed(client, exc)
        assert failure is not None
        raise failure

    def _in_turn(self, avoid: EnvClient | None) -> list[EnvClient]:
        """Live servers starting from the next in turn; `avoid` (the one that just failed) last."""
        live = self.live()
        with self._lock:
            self._turn += 1
            start = self._turn % max(len(live), 1)
        ordered = live[start:] + live[:start]
        return [c for c in ordered if c is not avoid] + [c for c in ordered if c is avoid]


def local_servers(
    n: int, sandbox_cfg: dict[str, Any], startup_timeout_s: float, env_cfg: dict[str, Any] | None = None
) -> LocalServers:
    """`n` server processes on loopback, each with its own sandbox (`sandbox_cfg`) and the run's environment
    (`env_cfg`, None: the default), started and stopped here.

    Each watches this process (`--parent-pid`) and stops when it is gone, so a trainer killed without cleaning up
    leaves no server behind either.
    """
    args = [sys.executable, "-m", "agentic_rl.envs.serve", "--sandbox", json.dumps(sandbox_cfg)]
    if env_cfg is not None:
        args += ["--env", json.dumps(env_cfg)]
    return LocalServers.start(args, n, TOKEN_ENV, startup_timeout_s, "environment server")


@contextlib.contextmanager
def environment_servers(envs: Any, sandbox_cfg: Any, env_cfg: Any = None) -> Iterator[ServerPool | None]:
    """The run's servers for its duration (`envs`: the `envs` config node, None or servers=0: none). Local servers
    are started with the run's sandbox config and its environment (`env_cfg`: the `env` node; None, as in a run
    saved before the group existed: the default environment), and stopped on the way out, whatever happened
    inside."""
    from omegaconf import OmegaConf

    cfg = ServersConfig() if envs is None else to_dataclass(envs, ServersConfig)
    if cfg.servers == 0:
        yield None
        return
    env = None if env_cfg is None else OmegaConf.to_container(env_cfg, resolve=True)
    local = None
    if isinstance(cfg.servers, int):
        sandbox = OmegaConf.to_container(sandbox_cfg, resolve=True)
        local = local_servers(cfg.servers, sandbox, cfg.startup_timeout_s, env)
        urls, token = local.urls, local.token
    else:
        urls, token = list(cfg.servers), os.environ.get(cfg.token_env) or None
    try:
        clients = [EnvClient(url, token, cfg.timeout_s) for url in urls]
        for client in clients:  # a wrong token or an old server is an error now, not at the first episode
            client.health()
        yield ServerPool(clients, cfg.retries, env, processes=local.processes if local is not None else [])
    finally:
        if local is not None:
            local.stop()


__all__ = ["DEAD_CAUSES", "ServerPool", "ServersConfig", "environment_servers", "local_servers"]
