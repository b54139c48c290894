"""Error types that every layer may raise, kept at the bottom so that raising one imports nothing else.

`ConfigError` is a config that cannot work (an unknown key, a value out of range, a constructor refusing a
value); its message says which key and how to fix it. The console entry points print it as one message and
exit with code 2 (`agentic_rl.hydra_main.run_cli`).
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A config that cannot work; the message says which key and how to fix it."""
