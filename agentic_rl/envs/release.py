"""The public CodeGym release's format, read as this project's environments (`data=codegym data.path=FILE`).

The release (StigLidu/CodeGym, CC BY-NC 4.0: its rows stay out of this repository) has two parts:
  - a JSON Lines file of task configurations, one per line: `ability` is
    "codegym_v1@<code_id>__<ClassName>@<options as JSON>", `code_id`, `prompt` (a system message with the tools'
    documentation and a user message ending with "Question:" and the task), `plugin_call_max_round` (the
    episode's T_max), `extra_info` (`solve_fc_round`: the oracle's calls on that configuration; `gym_env`: the
    environment's code, where the file carries it);
  - the environments' code: `extra_info.gym_env`, or a file `<code_id>__<ClassName>.py` in `env_dir` (default:
    the file's folder, then its `envs/` and `example_envs/` subfolders).
A release environment is a `gymnasium.Env` whose `func_mapping` maps tool names to action codes, whose
`step(action)` returns (executed, message), and whose `Done` keeps the reward and the end in `_reward` and
`_done` (read through its `reward` and `finished` properties). `ADAPTER` subclasses it into this project's
format: it builds without options (the release constructor resets with none, which some environments refuse),
`reset(options=...)` returns (observation, info), `step` returns the five-tuple, and the private attributes the
release keeps its state in travel with the JSON state (`release_private`), since the driver keeps public ones only.
Configurations of one environment become one record: `configs` in file order, `oracle_calls` from
`solve_fc_round`, `t_max` from `plugin_call_max_round` (used when data.t_max is null), the task from the prompt.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

PREFIX = "codegym_v1@"
ADAPTER_SUFFIX = "ProjectAdapter"
ADAPTER = '''

import json


def _release_private(env):
    out = dict()
    for key, value in vars(env).items():
        if key.startswith("_") and not key.startswith("__") and not key.startswith("_np_random"):
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                continue
            out[key] = value
    return out


class {adapter}({cls}):
    """{cls} of the public CodeGym release in this project's environment format."""

    def __init__(self):
        try:
            super().__init__()
        except Exception:
            pass  # the release constructor resets with no options; the driver resets or restores the state next

    def reset(self, *, seed=None, options=None):
        first = super().reset(options=dict(options or {{}}))
        self.release_private = _release_private(self)
        return first, {{}}

    def step(self, action):
        for key, value in (getattr(self, "release_private", None) or {{}}).items():
            setattr(self, key, value)
        out = super().step(action)
        self.release_private = _release_private(self)
        if isinstance(out, tuple) and len(out) == 5:
            return out
        message = out[1] if isinstance(out, tuple) and len(out) == 2 else out
        done = bool(getattr(self, "finished", False))
        return str(message), float(getattr(self, "reward", 0.0) or 0.0) if done else 0.0, done, False, {{}}
'''


def is_release_row(row: Any) -> bool:
    return isinstance(row, dict) and str(row.get("ability", "")).startswith(PREFIX)


def parse_ability(row: dict[str, Any], where: str) -> tuple[str, str, dict[str, Any]]:
    """(environment name, class name, options) of one release row."""
    parts = str(row["ability"]).split("@", 2)
    if len(parts) != 3 or "__" not in parts[1]:
        raise ValueError(f"{where}: ability must read 'codegym_v1@<code_id>__<ClassName>@<options>', got {parts[:2]}")
    name, text = parts[1], parts[2]
    try:
        options = json.loads(text)
    except ValueError:
        try:
            options = ast.literal_eval(text)  # the release reads its options as a Python literal too
        except (ValueError, SyntaxError):
            raise ValueError(f"{where}: the options after the last '@' are neither JSON nor a literal") from None
    if not isinstance(options, dict):
        raise ValueError(f"{where}: the options must be an object, got {type(options).__name__}")  # noqa: TRY004
    class_name = name.split("__", 1)[1]
    if not class_name.isidentifier():
        raise ValueError(f"{where}: {class_name!r} (after '__' in the ability) is not a Python class name")
    return name, class_name, options


def environment_code(row: dict[str, Any], name: str, folders: list[Path], where: str) -> str:
    code = (row.get("extra_info") or {}).get("gym_env")
    if isinstance(code, str) and code.strip():
        return code
    for folder in folders:
        if (folder / f"{name}.py").is_file():
            return (folder / f"{name}.py").read_text()
    raise ValueError(
        f"{where}: no code for environment {name}: the row has no extra_info.gym_env and no {name}.py is in "
        f"{[str(f) for f in folders]}; set data.env_dir to the folder of the release's environment files"
    )


def task_text(row: dict[str, Any]) -> str:
    """The task statement: the user message after its last 'Question:' (the whole message without one)."""
    users = [m.get("content", "") for m in row.get("prompt") or [] if isinstance(m, dict) and m.get("role") == "user"]
    text = str(users[-1]) if users else ""
    return text.rsplit("Question:", 1)[-1].strip()


def read_release(path: Path, rows: list[tuple[int, dict[str, Any]]], env_dir: str | None) -> list[dict[str, Any]]:
    """This project's environment records from a release file's (line number, row) pairs."""
    folders = [Path(env_dir)] if env_dir else [path.parent, path.parent / "envs", path.parent / "example_envs"]
    records: dict[str, dict[str, Any]] = {}
    for n, row in rows:
        where = f"{path}, line {n}"
        if not is_release_row(row):
            raise ValueError(f"{where}: not a release row (its 'ability' must start with {PREFIX!r}), unlike line 1")
        name, class_name, options = parse_ability(row, where)
        if name not in records:
            code = environment_code(row, name, folders, where)
            adapter = class_name + ADAPTER_SUFFIX
            records[name] = {
                "env_id": name,
                "class_name": adapter,
                "code": code + ADAPTER.format(adapter=adapter, cls=class_name),
                "configs": [],
                "description": task_text(row),
                "oracle_calls": [],
                "t_max": row.get("plugin_call_max_round"),
            }
        records[name]["configs"].append(options)
        records[name]["oracle_calls"].append((row.get("extra_info") or {}).get("solve_fc_round"))
    for record in records.values():
        if not all(isinstance(c, int) and c > 0 for c in record["oracle_calls"]):
            del record["oracle_calls"]
        if not isinstance(record["t_max"], int) or record["t_max"] < 1:
            del record["t_max"]
    return list(records.values())
