"""CodeGym tasks: an environments file (or the built-in set) read as `Task`s, one per configuration of each environment.

File format (JSON Lines, one environment per line; `python -m agentic_rl.envs.verify` checks and filters it):
    {"env_id": "arrays/MaxSubarraySumEnv",      unique name
     "class_name": "MaxSubarraySumEnv",         the gymnasium.Env class in `code`
     "code": "<python source>",                 self-contained: runs in the sandbox with gymnasium importable
     "configs": [{...options...}, ...],         each is passed to reset(options=...): one task configuration
     "description": "...",                      the task statement shown to the model (optional: class doc)
     "oracle": "function_name",                 optional: a scripted tool-only solution `f(call) -> answer`
     "oracle_calls": [n, ...],                  optional: the oracle's calls per configuration (from verify)
     "split": "train" | "heldout",              optional (default train): held-out environments are never trained on
     "t_max": n,                                optional: calls per episode, where data.t_max is null
     "demos": [[action, ...] | null, ...]}      optional: per configuration, the oracle's actions ({"name",
                                                "parameters"}, Done last; envs.verify.oracle_actions), which the
                                                warm-up replays (task.metadata["demo"]); only training tasks get them
The public CodeGym release's format is read too (agentic_rl/envs/release.py; `env_dir`: its environments' code).
Splits of the tasks (`split=`): "train" = the first configurations of each training environment,
"heldout_configs" = the last `heldout_configs` configurations of each training environment (seen tools,
unseen inputs), "heldout_envs" = every configuration of the held-out environments (unseen tools), "heldout" =
both held-out sets (each task's metadata["env_split"] says which), "all".
Which training environments: `envs` (shell patterns of env ids) and a measured-success band (`success`, a
results file such as an evaluation's results.jsonl, with `min_success` < rate <= `max_success`) narrow them;
held-out environments are never filtered (they are never trained on).
`path: null` loads the built-in set (agentic_rl.envs.builtin); a packaged set's name (`PACKAGED_SETS`: builtin,
starter) loads that set (agentic_rl.envs.starter: short workflows with demonstrations); a file of such a name is
named with its folder (./starter).
"""

from __future__ import annotations

import fnmatch
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from agentic_rl.envs.release import is_release_row, read_release
from agentic_rl.types import Task

SPLITS = ("train", "heldout_configs", "heldout_envs", "heldout", "all")
PACKAGED_SETS = ("builtin", "starter")
DEMO_KEY = "demo"  # task.metadata[DEMO_KEY]: the scripted calls the warm-up replays (agentic_rl.warmup.demos reads it)
REQUIRED = {"env_id": str, "class_name": str, "code": str, "configs": list}


def read_environments(path: str | Path, env_dir: str | None = None) -> list[dict[str, Any]]:
    """The records of an environments file, each checked; a wrong line raises ValueError saying how to fix it.

    A file in the public CodeGym release's format (its first row's `ability` starts with "codegym_v1@") is read
    by agentic_rl.envs.release, with the environments' code from the rows or from `env_dir`. A packaged set's name
    (`PACKAGED_SETS`) gives that set's records, so every reader of environments files (the tables' constant-answer
    baseline among them) takes it as a file name."""
    if str(path) in PACKAGED_SETS:
        return packaged_records(str(path))
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no CodeGym environments file at {path} (data.path); write one JSON object "
            "per line, see agentic_rl/envs/tasks.py"
        )
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((n, json.loads(line)))
        except ValueError as exc:
            raise ValueError(
                f"{path}, line {n}: not JSON ({exc}); an environments file has one JSON object per line"
            ) from None
    if not rows:
        raise ValueError(f"{path} holds no environments")
    if is_release_row(rows[0][1]):
        return [check_record(r, f"{path} (environment {r['env_id']})") for r in read_release(path, rows, env_dir)]
    records, seen = [], set()
    for n, record in rows:
        check_record(record, f"{path}, line {n}")
        if record["env_id"] in seen:
            raise ValueError(f"{path}, line {n}: env_id {record['env_id']!r} appears twice; env ids must be unique")
        seen.add(record["env_id"])
        records.append(record)
    return records


def check_record(record: Any, where: str) -> dict[str, Any]:
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
    if record.get("t_max") is not None and (not isinstance(record["t_max"], int) or record["t_max"] < 1):
        raise ValueError(f"{where}: t_max must be a positive integer (calls per episode) or absent")
    demos = record.get("demos")
    if demos is not None and not (
        isinstance(demos, list) and len(demos) == len(record["configs"]) and all(map(is_demo, demos))
    ):
        raise ValueError(
            f"{where}: demos must list, per configuration, null or the oracle's actions "
            '([{"name": ..., "parameters": {...}}, ...]; envs.verify.oracle_actions writes them)'
        )
    return record


def is_demo(actions: Any) -> bool:
    """A configuration's `demos` entry: null (nothing shown) or a list of actions, each an object with a name."""
    return actions is None or (isinstance(actions, list) and all(isinstance(a, dict) and "name" in a for a in actions))


def packaged_records(name: str) -> list[dict[str, Any]]:
    """The records of a set that ships with the package (`PACKAGED_SETS`)."""
    if name == "builtin":
        from agentic_rl.envs.builtin import builtin_records

        return builtin_records()
    if name == "starter":
        from agentic_rl.envs.starter import starter_records

        return starter_records()
    raise ValueError(f"unknown packaged CodeGym set {name!r}; the sets: {', '.join(PACKAGED_SETS)}")


def attach_demos(record: dict[str, Any], tasks: list[Task]) -> list[Task]:
    """`tasks` (training configurations of `record`) with the oracle's actions of their configuration as
    metadata[DEMO_KEY], in the warm-up's form: one {"tool": the action's name, "content": its JSON} per call (the
    content is what the episode's parser reads between <action> tags). Called on training tasks only."""
    demos = record.get("demos") or []
    for task in tasks:
        i = task.metadata["config_index"]
        if i < len(demos) and demos[i]:
            task.metadata[DEMO_KEY] = [{"tool": a["name"], "content": json.dumps(a)} for a in demos[i]]
    return tasks


def environment_tasks(
    record: dict[str, Any], t_max: int | None = None, worked_example: bool = False, calls_left: bool = False
) -> list[Task]:
    """One Task per configuration of `record` (all of them; `load_codegym` picks the split); `worked_example`
    ends each episode's system prompt with a short worked episode (agentic_rl.envs.codegym.WORKED_EXAMPLE);
    `calls_left` ends each observation with the calls the episode has left."""
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
                    "t_max": t_max if t_max is not None else record.get("t_max"),
                    "worked_example": worked_example,
                    "calls_left": calls_left,
                },
            },
        )
        for i, (options, n) in enumerate(zip(record["configs"], calls))
    ]


def read_success(path: str | Path) -> dict[str, list[bool]]:
    """task_id -> pass of each sample, from a results file (one JSON object with task_id and passed per line)."""
    out: dict[str, list[bool]] = defaultdict(list)
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out[str(row["task_id"])].append(bool(row["passed"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}, line {n}: need a JSON object with task_id and passed ({exc})") from None
    return dict(out)


def is_heldout(record: dict[str, Any]) -> bool:
    return record.get("split", "train") == "heldout"


def select_environments(records: list[dict[str, Any]], patterns: list[str]) -> list[dict[str, Any]]:
    """The held-out records and the training records whose env_id matches one of `patterns` (shell patterns)."""
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(r["env_id"], p) for r in records)]
    if unmatched:
        ids = [r["env_id"] for r in records[:3]]
        raise ValueError(
            f"data.envs: {unmatched} match no environment; env ids look like {ids} (shell patterns such as "
            "'strings/*' work)"
        )
    return [r for r in records if is_heldout(r) or any(fnmatch.fnmatchcase(r["env_id"], p) for p in patterns)]


def filter_by_success(
    records: list[dict[str, Any]], path: str, min_success: float, max_success: float
) -> list[dict[str, Any]]:
    """The held-out records and the training records whose measured success rate in the results file `path`
    lies in (min_success, max_success]; a training environment without results there is dropped."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"data.success: no results file at {path} (e.g. an evaluation's results.jsonl)")
    if min_success >= max_success:
        raise ValueError(f"data.min_success ({min_success}) must be below data.max_success ({max_success})")
    passes: dict[str, list[bool]] = {}
    for task_id, passed in read_success(path).items():
        passes.setdefault(task_id.rsplit("/", 1)[0].removeprefix("codegym/"), []).extend(passed)
    kept = [
        r
        for r in records
        if is_heldout(r)
        or (r["env_id"] in passes and min_success < sum(passes[r["env_id"]]) / len(passes[r["env_id"]]) <= max_success)
    ]
    if not any(not is_heldout(r) for r in kept):
        raise ValueError(
            f"data.success: no training environment of {path} has a success rate in ({min_success}, {max_success}]"
        )
    return kept


def load_codegym(
    path: str | None = None,
    split: str = "train",
    heldout_configs: int = 2,
    t_max: int | None = None,
    limit: int | None = None,
    seed: int | None = None,
    shuffle: bool = False,
    envs: list[str] | None = None,
    configs_per_env: int | None = None,
    success: str | None = None,
    min_success: float = -1.0,
    max_success: float = 1.0,
    worked_example: bool = False,
    calls_left: bool = False,
    env_dir: str | None = None,
) -> list[Task]:
    """The tasks of `split` (see the module docstring) from `path`, or from the built-in set when None.

    t_max: calls per episode (null: the runner's default). envs: only the training environments whose env_id
    matches one of these shell patterns (e.g. ["strings/*", "graphs/HasCycleEnv"]); a pattern that matches
    none is an error. success: a results file (task_id and passed per line); only the training environments
    whose share of passed episodes there is in (min_success, max_success] are kept (one not measured is
    dropped). configs_per_env: only the first N configurations of each environment within the split.
    worked_example: end each episode's system prompt with a short worked episode of another task. calls_left:
    end each observation with the calls left (the last but one asks for Done). env_dir: where a file in the public
    release's format finds its environments' code (agentic_rl/envs/release.py). With
    `shuffle` the order is permuted by `random.Random(seed)`; then `limit` keeps the first tasks.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown codegym split {split!r}; valid: {', '.join(SPLITS)}")
    if heldout_configs < 0:
        raise ValueError(f"heldout_configs must be >= 0, got {heldout_configs}")
    if t_max is not None and t_max < 1:
        raise ValueError(f"t_max must be >= 1 or null, got {t_max}")
    if configs_per_env is not None and configs_per_env < 1:
        raise ValueError(f"configs_per_env must be >= 1 or null, got {configs_per_env}")
    records = read_environments(path or "builtin", env_dir)
    if envs is not None:
        records = select_environments(records, list(envs))
    if success is not None:
        records = filter_by_success(records, success, min_success, max_success)
    tasks = []
    for record in records:
        env_tasks = environment_tasks(record, t_max, worked_example=bool(worked_example), calls_left=bool(calls_left))
        if is_heldout(record):
            chosen = env_tasks if split in ("heldout_envs", "heldout", "all") else []
        else:
            cut = max(len(env_tasks) - heldout_configs, 1)
            held = env_tasks[cut:]
            # demonstrations on the training configurations only: a held-out one is never shown to the warm-up
            trained = attach_demos(record, env_tasks[:cut])
            chosen = {"train": trained, "heldout_configs": held, "heldout": held, "all": trained + held}.get(split, [])
        tasks += chosen[:configs_per_env]
    if shuffle:
        random.Random(seed).shuffle(tasks)
    return tasks[:limit] if limit is not None else tasks
