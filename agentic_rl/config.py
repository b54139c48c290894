"""Typed config schemas and start-up validation of a composed config.

Every node of a composed config has a schema, found in one of three ways:
  - a node with `_target_`: the target's signature (its parameter names and type hints);
  - a group without `_target_` (`algo`, `rollout`, `evaluator`, `logger`, `tools`, `warmup`): its dataclass below or
    in the module that uses it (`GRPOConfig`, `RolloutConfig`, `EvalConfig`, `LoggerConfig`, `ToolSetSchema`,
    `WarmupConfig`);
  - the root: the keys of the primary config file (`conf/train.yaml`, `conf/evaluate.yaml`) and its groups.
`check_keys` walks the whole config against them, so a key nothing reads — a typo, a `+algo.learning_rate=1e-5`,
an experiment setting a key its group does not have — fails at start with the closest valid keys. Hydra cannot
catch `+` additions itself: they are merged with struct mode off. Value checks with a fix in the message
run in `validate()` before any model is loaded; every failure is a `ConfigError` (the CLI prints it, exit 2).
"""

from __future__ import annotations

import difflib
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Union

import yaml
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from agentic_rl.algo.core import check_training_temperature
from agentic_rl.algo.grpo import GRPOConfig, LoraSchema
from agentic_rl.algo.warmup import WarmupConfig
from agentic_rl.errors import ConfigError
from agentic_rl.evaluation.evaluator import EvalConfig
from agentic_rl.paths import CONF_DIR
from agentic_rl.registry import to_dataclass
from agentic_rl.rollout.agent import RolloutConfig
from agentic_rl.runtime.memory import MemoryConfig
from agentic_rl.tools.base import tool_names
from agentic_rl.tracking.wandb_run import LoggerConfig, logger_config

HYDRA_KEYS = frozenset({"_target_", "_partial_", "_recursive_", "_convert_", "_args_"})


@dataclass
class ToolSetSchema:
    """A tool set (conf/tools/*.yaml, and each `evaluator.toolsets.<mode>`); read by `tools.build_toolset`.

    name: what `tools=` selects.  active: the tools described to the model and parsed from its replies.
    <tool name>: one key per declared tool (`tools.base.tool_names()`: search, execute, submit, answer, and any
        tool a project adds), holding that tool's config (`_target_` + limits); submit grades even when inactive.
    preamble, strategy: the system prompt around the tools' own descriptions ({n_tools} is filled in).
    worked_example, examples: worked exchanges shown as earlier chat turns, when worked_example is true.
    """

    name: str = ""
    active: list[str] = field(default_factory=list)
    preamble: str = ""
    strategy: str | None = None
    worked_example: bool = False
    examples: list[Any] = field(default_factory=list)


# Groups without `_target_`: path in the config -> schema. "*" matches any one key.
PATH_SCHEMAS: dict[str, type] = {
    "algo": GRPOConfig,
    "algo.lora": LoraSchema,
    "rollout": RolloutConfig,
    "evaluator": EvalConfig,
    "evaluator.toolsets.*": ToolSetSchema,
    "logger": LoggerConfig,
    "memory": MemoryConfig,
    "tools": ToolSetSchema,
    "warmup": WarmupConfig,
}
# Keys a group node has besides its dataclass's fields (read by the code that builds from the node).
EXTRA_KEYS: dict[type, dict[str, Any]] = {EvalConfig: {"toolsets": dict}}
# Root keys that are not in the primary file: `run_dir` is set by tests and library callers.
ROOT_EXTRA: dict[str, Any] = {"run_dir": str | None}


def register_configs() -> None:
    cs = ConfigStore.instance()
    cs.store(group="algo", name="grpo_schema", node=GRPOConfig)
    cs.store(group="rollout", name="rollout_schema", node=RolloutConfig)
    cs.store(group="warmup", name="warmup_schema", node=WarmupConfig)


# ---------------------------------------------------------------------------------------------- schemas


def _locate(target: str) -> Any:
    from hydra._internal.utils import _locate as hydra_locate

    return hydra_locate(target)


def _hints(obj: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj)
    except Exception:  # an annotation that does not resolve: names are still checked, types are not
        return {}


def target_schema(target: str, present: Any = ()) -> dict[str, Any] | None:
    """Parameter name -> type hint of a `_target_`; None when it takes **kwargs (any key is read).

    Parameters without a default that the node does not set are runtime arguments passed at the call site
    (`sandbox`, the reward's trajectory), not config keys, and are left out.
    """
    try:
        obj = _locate(target)
    except Exception as exc:
        raise ConfigError(f"_target_ {target!r} cannot be imported ({exc}). Fix the path in the config file.") from None
    fn = obj.__init__ if inspect.isclass(obj) else obj
    params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    hints = _hints(fn)
    return {
        p.name: hints.get(p.name, Any)
        for p in params
        if p.kind is not inspect.Parameter.VAR_POSITIONAL
        and (p.default is not inspect.Parameter.empty or p.name in present)
    }


def dataclass_schema(cls: type) -> dict[str, Any]:
    hints = _hints(cls)
    schema = {**{f.name: hints.get(f.name, Any) for f in fields(cls)}, **EXTRA_KEYS.get(cls, {})}
    if cls is ToolSetSchema:  # a tool's config sits under its name, for every tool the registry declares
        schema.update(dict.fromkeys(tool_names(), Mapping))
    return schema


def _primary(primary: str) -> dict[str, Any]:
    return yaml.safe_load((CONF_DIR / f"{primary}.yaml").read_text()) or {}


def group_dirs(primary: str) -> dict[str, str]:
    """Root key -> its config group folder (`eval_data` -> `data` for `data@eval_data`)."""
    out = {}
    for entry in _primary(primary).get("defaults", []):
        if isinstance(entry, Mapping):
            group = next(iter(entry))
            if group not in ("experiment", "sweep") and not group.startswith(("hydra", "override")):
                out[group.split("@")[-1].split("/")[-1]] = group.split("@")[0]
    return out


def primary_keys(primary: str) -> dict[str, Any]:
    """Root keys of a primary config: its groups (with their `@package` names) and its own settings."""
    keys: dict[str, Any] = {**ROOT_EXTRA, **dict.fromkeys(group_dirs(primary), Mapping)}
    for key, value in _primary(primary).items():
        if key not in ("defaults", "hydra"):
            keys[key] = Any if value is None else type(value)
    return keys


def options_with_key(group: str, key: str) -> list[str]:
    """The options of a config group whose file sets `key` (for `data.path=` on data that has no path)."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml") if key in (yaml.safe_load(p.read_text()) or {}))


def _path_schema(path: str) -> type | None:
    if path in PATH_SCHEMAS:
        return PATH_SCHEMAS[path]
    parent, _, _ = path.rpartition(".")
    return PATH_SCHEMAS.get(f"{parent}.*") if parent else None


def node_schema(node: Mapping, path: str, hint: Any = None) -> tuple[dict[str, Any] | None, str]:
    """(key -> type hint, or None for an open node; what the schema is, for messages)."""
    if "_target_" in node:
        target = str(node["_target_"])
        schema = target_schema(target, present=node)
        return (None if schema is None else {**schema, **dict.fromkeys(HYDRA_KEYS, Any)}), target
    cls = _path_schema(path) or (hint if is_dataclass(hint) else None)
    if cls is not None:
        return dataclass_schema(cls), cls.__name__
    return None, "free-form"


# ---------------------------------------------------------------------------------------------- checks


def _type_ok(value: Any, hint: Any) -> bool:
    """Whether a plain (resolved) config value fits a type hint; unknown hints accept anything."""
    if hint is Any or hint is None:
        return True
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_type_ok(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    base = origin or hint
    if base is bool:
        return isinstance(value, bool)
    if base is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if base is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if base is str:
        return isinstance(value, str)
    if is_dataclass(base) or base in (dict, Mapping) or (inspect.isclass(base) and issubclass(base, Mapping)):
        return isinstance(value, Mapping)
    if base in (list, tuple, Sequence) or (inspect.isclass(base) and issubclass(base, Sequence)):
        return isinstance(value, (list, tuple))
    if inspect.isclass(base) and issubclass(base, Path) or base.__name__ == "PathLike":
        return isinstance(value, str)
    return True


def _type_name(hint: Any) -> str:
    return str(hint).replace("typing.", "").replace("<class '", "").replace("'>", "")


def leaf_paths(node: Any, path: str = "") -> list[str]:
    if isinstance(node, Mapping):
        return [p for k, v in node.items() for p in leaf_paths(v, f"{path}.{k}" if path else str(k))]
    return [path]


def _initials(name: str) -> str:
    return "".join(part[0] for part in name.split("_") if part)


def closest_keys(key: str, valid: Sequence[str]) -> list[str]:
    """Valid keys a typo most likely meant: close spellings, and abbreviations (`learning_rate` -> `lr`)."""
    near = difflib.get_close_matches(key, valid, n=3, cutoff=0.5)
    near += [k for k in valid if k not in near and len(k) > 1 and (k == _initials(key) or key == _initials(k))]
    return near


def unknown_key_message(
    path: str, schema: Mapping[str, Any], what: str, all_paths: Sequence[str] = (), group: str | None = None
) -> str:
    """`path` is not a key of its node: name it, the closest valid keys, and every valid key of the node."""
    parent, _, key = path.rpartition(".")
    valid = sorted(k for k in schema if k not in HYDRA_KEYS)
    near = [f"{parent}.{k}" if parent else k for k in closest_keys(key, valid)]
    near += [p for p in all_paths if p.rpartition(".")[2] == key and p != path and p not in near][:3]
    msg = f"unknown config key '{path}': nothing reads it."
    msg += f" Closest valid keys: {', '.join(near)}." if near else ""
    msg += f" Valid keys of {parent or 'the root'} ({what}): {', '.join(valid)}."
    if group:
        others = options_with_key(group, key)
        if others:
            msg += f" The {group} option(s) {', '.join(others)} take '{key}': choose one, e.g. {parent}={others[0]}."
    return msg


def find_problems(cfg: Any, primary: str) -> list[str]:
    """Every unknown key and every value of the wrong type in a composed config, as messages."""
    plain = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else cfg
    all_paths = leaf_paths(plain)
    groups = group_dirs(primary)
    problems: list[str] = []

    def walk(node: Mapping, path: str, schema: dict[str, Any] | None, what: str) -> None:
        for key, value in node.items():
            sub = f"{path}.{key}" if path else str(key)
            if schema is not None and key not in schema:
                problems.append(unknown_key_message(sub, schema, what, all_paths, groups.get(path)))
                continue
            hint = schema.get(key, Any) if schema else Any
            if schema is not None and not _type_ok(value, hint):
                problems.append(f"{sub}={value!r} has the wrong type: expected {_type_name(hint)}.")
            if isinstance(value, Mapping):
                sub_schema, sub_what = node_schema(value, sub, hint)
                walk(value, sub, sub_schema, sub_what)

    walk(plain, "", primary_keys(primary), f"conf/{primary}.yaml")
    return problems


def check_keys(cfg: Any, primary: str) -> None:
    """Raise one ConfigError listing every unknown key and wrongly typed value of a composed config."""
    problems = find_problems(cfg, primary)
    if problems:
        raise ConfigError("\n".join(problems))


# ---------------------------------------------------------------------------------------------- values


def algo_config(cfg: DictConfig) -> GRPOConfig:
    algo = to_dataclass(cfg.algo, GRPOConfig)
    algo.lora = LoraSchema(**algo.lora) if isinstance(algo.lora, dict) else algo.lora
    return algo.validate()


def warmup_config(cfg: DictConfig) -> WarmupConfig:
    """The run's warm-up stage; a config without a `warmup` node (the default `warmup: null`, and runs saved
    before the stage existed) has none: epochs 0."""
    node = cfg.get("warmup")
    return WarmupConfig() if node is None else to_dataclass(node, WarmupConfig).validate()


def check_kl_reference(algo: GRPOConfig, warm: WarmupConfig) -> None:
    """`algo.kl_reference=warmup` takes the reference from the adapter the warm-up leaves: a run needs one."""
    if algo.kl_to_warmup and not warm.enabled:
        raise ConfigError(
            "algo.kl_reference=warmup takes the KL's reference policy from the adapter the warm-up leaves, and this "
            "run has no warm-up. Fix: add warmup=sft, or set algo.kl_reference=base (the base model)"
        )


def validate(cfg: DictConfig, primary: str = "train") -> None:
    """Fail fast, before loading anything heavy, on keys nothing reads and values that cannot work."""
    check_keys(cfg, primary)
    try:
        algo = algo_config(cfg) if "algo" in cfg else None
        to_dataclass(cfg.rollout, RolloutConfig)
        warm = warmup_config(cfg)
        if algo is not None:
            check_kl_reference(algo, warm)
        if "algo" in cfg:  # the loss scores at the sampling temperature: training needs T > 0
            check_training_temperature(cfg.rollout.temperature)
        to_dataclass(cfg.evaluator, EvalConfig).validate(list(cfg.evaluator.toolsets))
        logger_config(cfg)
        if "memory" in cfg:
            to_dataclass(cfg.memory, MemoryConfig)
    except ConfigError:
        raise
    except (ValueError, KeyError, TypeError) as exc:  # the schemas' own checks say what to fix
        raise ConfigError(exc.args[0] if exc.args else str(exc)) from exc
