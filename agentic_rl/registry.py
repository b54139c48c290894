"""Name -> callable registries for pure same-signature functions, the one `build()` wrapper, and the two
other readings of a config node: `to_dataclass` (a typed settings object) and `component_name` (its short name).

An unknown name raises an error listing the available names, so a typo in a config says how to fix it.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Callable, Generic, TypeVar

from agentic_rl.errors import ConfigError

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
        where = getattr(cfg, "_get_full_key", lambda _: "")(None) or cfg.get("_target_", "?")
        raise ConfigError(f"{where}: {cause}") from exc


def to_dataclass(node: Any, cls: type) -> Any:
    """A plain dataclass instance from a config node (keys that are not fields, e.g. `toolsets`, are skipped)."""
    from omegaconf import OmegaConf

    names = {f.name for f in fields(cls)}
    values = {k: v for k, v in OmegaConf.to_container(node, resolve=True).items() if k in names}
    return cls(**values)


def component_name(node: Mapping) -> str:
    """A component's short name for tags, titles and summaries: its `name`, else its `_target_`'s last part."""
    if node.get("name"):
        return str(node["name"])
    return str(node.get("_target_", "?")).rsplit(".", 1)[-1]
