"""Name -> callable registries for pure same-signature functions, and the one `build()` wrapper.

An unknown name raises an error listing the available names, so a typo in a config says how to fix it.
"""
from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            return obj

        return deco

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(
                f"unknown {self.kind} {name!r}; available: {', '.join(sorted(self._items))}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: str) -> bool:
        return name in self._items


def build(cfg: Any, **runtime: Any) -> Any:
    """Instantiate a component from its `_target_` config; runtime objects are passed as kwargs.

    A constructor that rejects a config value (ValueError, or FileNotFoundError for a path) becomes a
    `ConfigError` naming the config node, so the CLI reports it as one message (exit 2), not a traceback.
    """
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    try:
        return instantiate(cfg, _recursive_=False, **runtime)
    except InstantiationException as exc:
        cause = exc.__cause__
        if not isinstance(cause, (ValueError, FileNotFoundError)):
            raise
        from agentic_rl.config import ConfigError

        where = getattr(cfg, "_get_full_key", lambda _: "")(None) or cfg.get("_target_", "?")
        raise ConfigError(f"{where}: {cause}") from exc
