"""How the command line runs an entry point's `@hydra.main`, and how a config error is reported there.

`train.py` and `evaluate.py` each hold their own console script (`agentic-rl-train` is `agentic_rl.train:cli`,
`agentic-rl-eval` is `agentic_rl.evaluate:cli`) and hand their `main` to `run_cli`; this module imports neither.

A config error — an unknown key or group option, a value of the wrong type or out of range — is printed as
one message and the process exits with code 2, without a traceback. `--verbose` (taken out of the
arguments before Hydra sees them) or `HYDRA_FULL_ERROR=1` shows the traceback instead. Any other error
keeps its traceback (exit 1): it is a bug or an environment problem, not a typo.

Tab completion works with the console scripts (Hydra's completion cannot follow `python -m`):
    eval "$(agentic-rl-train -sc install=bash)"
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from typing import Any

from hydra.errors import ConfigCompositionException
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from agentic_rl.config import CONF_DIR, ConfigError, group_dirs, leaf_paths, node_schema, unknown_key_message
from agentic_rl.runtime.allocator import allow_restart

CONFIG_ERRORS = (ConfigError, ConfigCompositionException, OmegaConfBaseException)
EXIT_CONFIG_ERROR = 2
_OVERRIDE_FAILED = re.compile(r"Could not override '([^']+)'")


def config_error_message(exc: BaseException, config_name: str, overrides: list[str]) -> str:
    """The message to print for a config error; unknown keys get the closest valid ones."""
    text = str(exc).strip()
    if isinstance(exc, ConfigCompositionException):
        match = _OVERRIDE_FAILED.search(text)
        cause = exc.__cause__
        if match and isinstance(cause, (ConfigAttributeError, ConfigKeyError)):
            better = _explain_unknown_override(match.group(1), config_name, overrides)
            if better:
                return better
        if cause is not None and str(cause) not in text:
            text += f"\n{cause}"
        # Hydra's hint for a missing key is to add it with `+`; here that only moves the failure to the
        # key check, so drop it.
        text = re.sub(r"\nTo append to your config use \+\S+", "", text)
        text = text.split("\nConfig search path:")[0]  # where Hydra looked: noise next to the options list
    return text


def _explain_unknown_override(key: str, config_name: str, overrides: list[str]) -> str | None:
    """Compose again without the failing override and name the valid keys of the node it aimed at."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    others = [
        o for o in overrides if not o.startswith(("-", "hydra.", "hydra/")) and o.split("=", 1)[0].lstrip("+~") != key
    ]
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = OmegaConf.to_container(compose(config_name, overrides=others), resolve=True)
    except Exception:  # e.g. sweep syntax in the other overrides: keep Hydra's own message
        return None
    parent, _, _ = key.rpartition(".")
    node: Any = cfg
    for part in filter(None, parent.split(".")):
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None
    schema, what = node_schema(node, parent)
    return unknown_key_message(
        key, schema if schema is not None else node, what, leaf_paths(cfg), group_dirs(config_name).get(parent)
    )


class _HeldJobLine:
    """stderr that holds back Hydra's "Error executing job with overrides: [...]" line, so a config error
    prints as one message (the line is written back for any other error)."""

    PREFIX = "Error executing job with overrides:"

    def __init__(self, stream: Any) -> None:
        self.stream, self.held = stream, ""

    def write(self, text: str) -> int:
        if text.startswith(self.PREFIX):
            self.held = text.strip()
            return len(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def run_cli(hydra_main: Callable[[], Any], config_name: str) -> None:
    """Run a `@hydra.main` function, reporting config errors as one message with exit code 2. The process is a
    command of its own, so it may start itself again on the malloc `memory.allocator` asks for
    (agentic_rl.runtime.allocator)."""
    allow_restart()
    verbose = "--verbose" in sys.argv[1:] or os.environ.get("HYDRA_FULL_ERROR") == "1"
    sys.argv = [sys.argv[0]] + [a for a in sys.argv[1:] if a != "--verbose"]
    os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra re-raises instead of printing; this function reports
    stderr = sys.stderr
    sys.stderr = held = _HeldJobLine(stderr)
    try:
        hydra_main()
    except CONFIG_ERRORS as exc:
        sys.stderr = stderr
        if verbose:
            raise
        message = config_error_message(exc, config_name, sys.argv[1:])
        where = f" in the job {held.held[len(held.PREFIX) :].strip()}" if "-m" in sys.argv[1:] and held.held else ""
        stderr.write(f"config error{where}: {message}\n(--verbose or HYDRA_FULL_ERROR=1 shows the traceback)\n")
        sys.exit(EXIT_CONFIG_ERROR)
    except BaseException:
        sys.stderr = stderr
        if held.held:
            stderr.write(held.held + "\n")
        raise
    finally:
        sys.stderr = stderr
