"""CodeGym tasks: an environments file (or the built-in set) read as `Task`s, one per configuration of each environment.

File format (JSON Lines, one environment per line; `python -m agentic_rl.envs.verify` checks and filters it):
    {"env_id": "arrays/MaxSubarraySumEnv",      unique name
     "class_name": "MaxSubarraySumEnv",         the gymnasium.Env class in `code`
     "code": "<python source>",                 self-contained: runs in the sandbox with gymnasium importable
     "configs": [{...options...}, ...],         each is passed to reset(options=...): one task configuration
     "description": "...",                      the task statement shown to the model (optional: class doc)
     "oracle": "function_name",                 optional: a scripted tool-only solution `f(call) -> answer`
     "oracle_calls": [n, ...],                  optional: the oracle's calls per configuration (from verify)
     "split": "train" | "heldout"}              optional (default train): held-out environments are never trained on
Splits of the tasks (`split=`): "train" = the first configurations of each training environment,
"heldout_configs" = the last `heldout_configs` configurations of each training environment (seen tools,
unseen inputs), "heldout_envs" = every configuration of the held-out environments (unseen tools), "all".
`path: null` loads the built-in set (agentic_rl.envs.builtin).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from agentic_rl.types import Task

SPLITS = ("train", "heldout_configs", "heldout_envs", "all")
REQUIRED = {"env_id": str, "class_name": str, "code": str, "configs": list}


def read_environments(path: str | Path) -> list[dict[str, Any]]:
    """The records of an environments file, each checked; a wrong line raises ValueError saying how to fix it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no CodeGym environments file at {path} (data.path); write one JSON object "
            "per line, see agentic_rl/envs/tasks.py"
        )
    records, seen = [], set()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ValueError(
                f"{path}, line {n}: not JSON ({exc}); an environments file has one JSON object per line"
            ) from None
        check_record(record, f"{path}, line {n}")
        if record["env_id"] in seen:
            raise ValueError(f"{path}, line {n}: env_id {record['env_id']!r} appears twice; env ids must be unique")
        seen.add(record["env_id"])
        records.append(record)
    if not records:
        raise ValueError(f"{path} holds no environments")
    return records


def check_record(record: Any, where: str) -> None:
    if not isinstance(record, dict):
        # ValueError, not TypeError: a bad data file is a config-level error (registry.build reports it)
        raise ValueError(f"{where}: an environment must be a JSON object, got {type(record).__name__}")  # noqa: TRY004
    for key, kind in REQUIRED.items():
        if not isinstance(record.get(key), kind):
            fields = f"fields: {sorted(REQUIRED)}, optional description, oracle, oracle_calls, split"
            raise ValueError(f"{where}: field {key!r} must be a {kind.__name__} ({fields})")  # noqa: TRY004
    if not all(isinstance(c, dict) for c in record["configs"]) or not record["configs"]:
        raise ValueError(f"{where}: 'configs' must be a non-empty list of JSON objects (the reset options)")
    if record.get("split", "train") not in ("train", "heldout"):
        raise ValueError(f"{where}: split must be 'train' or 'heldout', got {record.get('split')!r}")
    calls = record.get("oracle_calls")
    if calls is not None and (not isinstance(calls, list) or len(calls) != len(record["configs"])):
        raise ValueError(f"{where}: oracle_calls must list one number per configuration")


def environment_tasks(record: dict[str, Any], t_max: int | None = None) -> list[Task]:
    """One Task per configuration of `record` (all of them; `load_codegym` picks the split)."""
    calls = record.get("oracle_calls") or [None] * len(record["configs"])
    return [
        Task(
            task_id=f"codegym/{record['env_id']}/{i:03d}",
            prompt=record.get("description") or "",
            tests="",
            harness="codegym",
            metadata={
                "source": "codegym",
                "env_id": record["env_id"],
                "env_split": record.get("split", "train"),
                "config_index": i,
                "oracle_calls": n,
                "codegym": {
                    "code": record["code"],
                    "class_name": record["class_name"],
                    "options": options,
                    "t_max": t_max,
                },
            },
        )
        for i, (options, n) in enumerate(zip(record["configs"], calls))
    ]


def load_codegym(
    path: str | None = None,
    split: str = "train",
    heldout_configs: int = 2,
    t_max: int | None = None,
    limit: int | None = None,
    seed: int | None = None,
    shuffle: bool = False,
) -> list[Task]:
    """The tasks of `split` (see the module docstring) from `path`, or from the built-in set when None.

    t_max: calls per episode (null: the runner's default). With `shuffle` the order is permuted by
    `random.Random(seed)`; then `limit` keeps the first tasks.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown codegym split {split!r}; valid: {', '.join(SPLITS)}")
    if heldout_configs < 0:
        raise ValueError(f"heldout_configs must be >= 0, got {heldout_configs}")
    if t_max is not None and t_max < 1:
        raise ValueError(f"t_max must be >= 1 or null, got {t_max}")
    if path is None:
        from agentic_rl.envs.builtin import builtin_records

        records = builtin_records()
    else:
        records = read_environments(path)
    tasks = []
    for record in records:
        env_tasks = environment_tasks(record, t_max)
        if record.get("split", "train") == "heldout":
            tasks += env_tasks if split in ("heldout_envs", "all") else []
            continue
        cut = max(len(env_tasks) - heldout_configs, 1)
        tasks += {"train": env_tasks[:cut], "heldout_configs": env_tasks[cut:], "all": env_tasks}.get(split, [])
    if shuffle:
        random.Random(seed).shuffle(tasks)
    return tasks[:limit] if limit is not None else tasks
