"""`python -m agentic_rl.envs.serve`: run an environment server (see agentic_rl/envs/serve/server.py).

    python -m agentic_rl.envs.serve --host 0.0.0.0 --port 8765 [--sandbox conf/sandbox/default.yaml] [--env FILE]

`--env` is the run's environment (its `env` node as JSON or a YAML file; default conf/env/toolset.yaml), built as
training builds it (`envs.toolset.environment_from_config`) with each request's tool set; a request for another
environment is refused. It prints `listening on http://HOST:PORT` on its first line (a run that starts local
servers reads it), then serves until SIGTERM or SIGINT, and closes its sandbox on the way out.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from agentic_rl.envs.serve.protocol import TOKEN_ENV
from agentic_rl.envs.serve.server import EnvServer, Sessions
from agentic_rl.paths import CONF_DIR
from agentic_rl.serving import reserve_stdout, serve_until_stopped, watch_parent

logger = logging.getLogger("agentic_rl.envs.serve")


def config_node(text: str | None, group: str, default: str, option: str) -> Any:
    """A config node given on the command line: JSON, a YAML file, or (None) the project's `conf/<group>/<default>`."""
    from omegaconf import OmegaConf

    if text is None:
        return OmegaConf.load(CONF_DIR / group / default)
    if text.lstrip().startswith("{"):
        return OmegaConf.create(json.loads(text))
    if not Path(text).is_file():
        raise SystemExit(f"{option} {text!r}: not JSON and no such file")
    return OmegaConf.load(text)


def sandbox_config(text: str | None) -> Any:
    """The sandbox config: JSON, a YAML file, or (None) the project's default, conf/sandbox/default.yaml."""
    return config_node(text, "sandbox", "default.yaml", "--sandbox")


def env_config(text: str | None) -> Any:
    """The environment the server builds (an `env` node): JSON, a YAML file, or (None) the default environment,
    conf/env/toolset.yaml, which is also what a request without an "env" asks for."""
    return config_node(text, "env", "toolset.yaml", "--env")


def environment_builder(sandbox: Any, env_cfg: Any = None) -> Any:
    """Build a spec's environment: the run's environment `env_cfg` (an `env` node; None: the default) with the spec's
    tool set, stepping in this server's sandbox, as training builds it. A spec that names another environment is
    refused (a ProtocolError, answered 400) with the option that starts a server for it."""
    from omegaconf import OmegaConf

    from agentic_rl.envs.serve.protocol import ProtocolError
    from agentic_rl.envs.toolset import environment_from_config
    from agentic_rl.tools import build_toolset

    default = OmegaConf.to_container(env_config(None), resolve=True)
    own = default if env_cfg is None else OmegaConf.to_container(env_cfg, resolve=True)

    def build(spec: dict[str, Any]) -> Any:
        asked = spec.get("env") or default  # a run saved before the `env` group has the default environment
        if json.dumps(asked, sort_keys=True) != json.dumps(own, sort_keys=True):
            raise ProtocolError(
                f"this environment server builds the environment {json.dumps(own)}, and the run's is "
                f"{json.dumps(asked)}: start a server for the run with --env '{json.dumps(asked)}'"
            )
        return environment_from_config(
            OmegaConf.create(own), build_toolset(OmegaConf.create(spec["tools"]), sandbox), sandbox
        )

    return build


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.envs.serve", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free one)")
    parser.add_argument("--token-env", default=TOKEN_ENV, help="variable holding the token (needed off loopback)")
    parser.add_argument("--sandbox", default=None, help="sandbox config: JSON or a YAML file (default: the project's)")
    parser.add_argument(
        "--env",
        default=None,
        help="the run's environment (`env`): JSON or a YAML file (default: conf/env/toolset.yaml)",
    )
    parser.add_argument("--parent-pid", type=int, default=None, help="stop when this process is gone")
    args = parser.parse_args(argv)
    announce = reserve_stdout()  # the sandbox's and tools' output must not come before the URL or fill the pipe
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s")
    from agentic_rl.registry import build

    sandbox = build(sandbox_config(args.sandbox))
    sessions = Sessions(environment_builder(sandbox, env_config(args.env)))
    try:
        server = EnvServer(args.host, args.port, sessions, os.environ.get(args.token_env))
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    if args.parent_pid is not None:  # no orphaned servers: stop (closing the sandbox) once the run is gone
        watch_parent(args.parent_pid, server.shutdown, EnvServer.what)
    try:
        serve_until_stopped(server, announce)
    finally:
        if hasattr(sandbox, "close"):
            sandbox.close()


if __name__ == "__main__":
    main()
