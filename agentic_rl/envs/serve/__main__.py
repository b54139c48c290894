"""`python -m agentic_rl.envs.serve`: run an environment server (see agentic_rl/envs/serve/server.py).

    python -m agentic_rl.envs.serve --host 0.0.0.0 --port 8765 [--sandbox conf/sandbox/default.yaml]

It prints `listening on http://HOST:PORT` on its first line (a run that starts local servers reads it), then
serves until SIGTERM or SIGINT, and closes its sandbox on the way out.
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


def sandbox_config(text: str | None) -> Any:
    """The sandbox config: JSON, a YAML file, or (None) the project's default, conf/sandbox/default.yaml."""
    from omegaconf import OmegaConf

    if text is None:
        return OmegaConf.load(CONF_DIR / "sandbox" / "default.yaml")
    if text.lstrip().startswith("{"):
        return OmegaConf.create(json.loads(text))
    if not Path(text).is_file():
        raise SystemExit(f"--sandbox {text!r}: not JSON and no such file")
    return OmegaConf.load(text)


def environment_builder(sandbox: Any) -> Any:
    """Build a spec's environment: its tool set, stepping in this server's sandbox."""
    from omegaconf import OmegaConf

    from agentic_rl.envs.toolset import build_environment
    from agentic_rl.tools import build_toolset

    return lambda spec: build_environment(build_toolset(OmegaConf.create(spec["tools"]), sandbox), sandbox)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.envs.serve", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free one)")
    parser.add_argument("--token-env", default=TOKEN_ENV, help="variable holding the token (needed off loopback)")
    parser.add_argument("--sandbox", default=None, help="sandbox config: JSON or a YAML file (default: the project's)")
    parser.add_argument("--parent-pid", type=int, default=None, help="stop when this process is gone")
    args = parser.parse_args(argv)
    announce = reserve_stdout()  # the sandbox's and tools' output must not come before the URL or fill the pipe
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s")
    from agentic_rl.registry import build

    sandbox = build(sandbox_config(args.sandbox))
    try:
        server = EnvServer(args.host, args.port, Sessions(environment_builder(sandbox)), os.environ.get(args.token_env))
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
