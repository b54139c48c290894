"""Environment servers (`envs.servers`): episodes opened, stepped and closed by session id over HTTP, in server
processes with their own sandboxes, so environment and tool execution leave the trainer's machine.

- `protocol.py`: the messages; `server.py`: the server (`python -m agentic_rl.envs.serve`); `client.py`: one
  server seen from the trainer; `pool.py`: the run's servers (`envs.servers=N | [URL, ...]`) and their lifetime;
  `served.py`: the episodes that step on them, moving to another server with their state when one dies.
"""

from agentic_rl.envs.serve.client import EnvClient, ServerRefused
from agentic_rl.envs.serve.pool import ServerPool, ServersConfig, environment_servers
from agentic_rl.envs.serve.served import Served, ServedEpisode, served
from agentic_rl.envs.serve.server import EnvServer, Sessions

__all__ = [
    "EnvClient",
    "EnvServer",
    "Served",
    "ServedEpisode",
    "ServerPool",
    "ServerRefused",
    "ServersConfig",
    "Sessions",
    "environment_servers",
    "served",
]
