"""How a config builds a component: `build()` for `_target_` nodes, and named tables for everything chosen by name;
also the two other readings of a config node, `to_dataclass` (a typed settings object) and `component_name`.

There is one way to build each kind of part:
  - a component with parameters (data, model, sandbox, tools, rewards, the optimizer) is a config node with a
    `_target_`; `build(node, **runtime)` instantiates it, passing the runtime objects (sandbox, model
    parameters) at the call site;
  - a part chosen by a short name (`rollout.backend=hf`, `policy=replay`, `algo.objective=gspo`,
    `tools.search.backend=pydoc`, and the tools' declarations) is looked up in a `Registry` of its kind.

A registry finds its entries in three places, none of which depends on what was imported before:
  1. `BUILTINS` below: the package's own parts, as `"module:attribute"` strings imported on first use;
  2. the `agentic_rl.components` entry-point group of every installed distribution, with names
     `<kind>.<name>`; this is how another package adds a part without an edit here, e.g. in its pyproject.toml:
         [project.entry-points."agentic_rl.components"]
         "tool.calc" = "my_tools.calc:CalcTool"
         "policy_objective.my_clip" = "my_algos:my_clip"
  3. entries added with `Registry.register` by the module that defines a table of pure functions next to it
     (algo/core.py: advantages, KL estimators, loss aggregations, policy objectives).
Names are listed in a declared order (built-ins as written, then entry points by name), so report columns and
figure curves never follow import order. An unknown name raises an error listing the available names.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import fields
from importlib import metadata
from typing import Any, Generic, TypeVar

from agentic_rl.errors import ConfigError

T = TypeVar("T")

ENTRY_POINT_GROUP = "agentic_rl.components"

# The package's own named parts: kind -> name -> "module:attribute", in the order they are listed in reports.
# A new built-in part is one line here; a part of another package is one entry point (see the module doc).
BUILTINS: dict[str, dict[str, str]] = {
    # Tool classes (each declares its `spec`); the order is the order of tool columns and curves.
    "tool": {
        "search": "agentic_rl.tools.search:SearchTool",
        "execute": "agentic_rl.tools.code:ExecuteTool",
        "submit": "agentic_rl.tools.code:SubmitTool",
        "answer": "agentic_rl.tools.code:AnswerTool",
    },
    # Sampler backends (`rollout.backend`): callables (model, tokenizer, rollout_cfg=..., seed=...) -> Policy.
    "sampler": {
        "hf": "agentic_rl.rollout.backends:hf_sampler",
        "vllm": "agentic_rl.rollout.backends:vllm_sampler",
        "auto": "agentic_rl.rollout.backends:auto_sampler",  # hf or vllm, by this machine's CPU flags and vLLM
    },
    # What `python -m agentic_rl.evaluate policy=NAME` evaluates: classes with describe(cfg) and load(cfg).
    "policy": {
        "model": "agentic_rl.evaluation.policies:ModelPolicy",
        "replay": "agentic_rl.evaluation.policies:ReplayPolicySource",
    },
    # Evaluators (`evaluator.name`): functions with `evaluation.evaluator.evaluate`'s signature.
    "evaluator": {
        "pass_at_k": "agentic_rl.evaluation.evaluator:evaluate",
    },
    # Environments that own the tasks of one harness (`Task.harness`): a tool-set environment opens such a task with
    # it (agentic_rl.envs.base.HarnessEnvironments); classes built with `sandbox=`.
    "harness_env": {
        "codegym": "agentic_rl.envs.codegym:CodeGymEnvironment",
    },
    # Reports of a task set in an evaluation's summary (agentic_rl.envs.reports): each answers None for other tasks.
    "task_report": {
        "bigcodebench": "agentic_rl.envs.reports:bigcodebench_report",
    },
    # Search backends (`tools.search.backend`): factories called with `tools.search.backend_options`.
    "search_backend": {
        "pydoc": "agentic_rl.tools.search.pydoc_backend:PydocBackend",
        "docstore": "agentic_rl.tools.search.docstore:DocstoreBackend",
    },
}


def _load(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    obj = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


_ENTRY_POINTS: dict[tuple[str, ...], dict[str, dict[str, Any]]] = {}


def entry_points(key: str) -> dict[str, Any]:
    """name -> entry point of the installed distributions for one kind (`<key>.<name>` in the group).

    Read once per `sys.path` (a package put on the path later is found: tests do that)."""
    path = tuple(sys.path)
    if path not in _ENTRY_POINTS:
        found: dict[str, dict[str, Any]] = {}
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            kind, dot, name = ep.name.partition(".")
            if dot and name:
                found.setdefault(kind, {}).setdefault(name, ep)
        _ENTRY_POINTS.clear()  # only the current path's view is kept
        _ENTRY_POINTS[path] = found
    return dict(sorted(_ENTRY_POINTS[path].get(key, {}).items()))


class Registry(Generic[T]):
    """The parts of one kind, by name: built-ins, entry points, and entries registered next to their table.

    kind: what the parts are, for messages ("search backend"); key: the kind's name in `BUILTINS` and in entry
    point names (default: `kind` with spaces as underscores, e.g. "policy_objective").
    """

    def __init__(self, kind: str, key: str | None = None) -> None:
        self.kind = kind
        self.key = key or kind.replace(" ", "_").lower()
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items or name in BUILTINS.get(self.key, {}):
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            return obj

        return deco

    def _refs(self) -> dict[str, Any]:
        """name -> where it comes from (an object, a "module:attr" string, or an entry point), in declared order."""
        refs: dict[str, Any] = dict(self._items)
        for name, ref in BUILTINS.get(self.key, {}).items():
            refs.setdefault(name, ref)
        for name, ep in entry_points(self.key).items():
            refs.setdefault(name, ep)  # a package cannot replace a built-in of the same name
        return refs

    def get(self, name: str) -> T:
        ref = self._refs().get(name)
        if ref is None:
            raise KeyError(
                f"unknown {self.kind} {name!r}; available: {', '.join(self.names())}. A new one is "
                f"declared in agentic_rl/registry.py BUILTINS[{self.key!r}] or as the entry point "
                f"'{self.key}.{name}' of group {ENTRY_POINT_GROUP!r}"
            )
        if isinstance(ref, str):
            try:
                return _load(ref)
            except ImportError as exc:  # an optional dependency of this part (e.g. vllm) is not installed
                raise ImportError(
                    f"{self.kind} {name!r} cannot be loaded ({exc}); install what it needs, or choose "
                    f"another of: {', '.join(n for n in self.names() if n != name)}"
                ) from exc
        if isinstance(ref, metadata.EntryPoint):
            try:
                return ref.load()
            except (ImportError, AttributeError) as exc:
                raise KeyError(
                    f"{self.kind} {name!r}: its entry point {ref.value!r} cannot be loaded ({exc}); "
                    "fix or uninstall the package that declares it"
                ) from exc
        return ref

    def names(self) -> list[str]:
        """Every available name: registered entries, then built-ins as listed, then entry points by name."""
        return list(self._refs())

    def load_all(self) -> dict[str, T]:
        """name -> part for every available name, in `names()` order (imports each one)."""
        return {name: self.get(name) for name in self.names()}

    def __contains__(self, name: str) -> bool:
        return name in self._refs()


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
