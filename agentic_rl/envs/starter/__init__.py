"""The starter CodeGym set: short workflows (3 to 8 oracle calls) whose answer follows from what the tools show.

Why a second set: on the built-in set (agentic_rl.envs.builtin, 10-256 calls as the paper asks) the 135M model
never reads an observation; its only reward came from a constant `Done` answer (experiments/codegym/cpu/README.md).
Here every tool does the arithmetic, so an episode is Observe, one to five lookups whose results are copied into the
next call, then Done: steps a small model can be shown (the warm-up's demonstrations) and learn. The answers of an
environment's configurations are distinct numbers, so no constant `Done` answer solves more than one of them
(`python -m agentic_rl.envs.verify starter --min-calls 3 --constant-answer` drops nothing; a test checks it).

`starter_records()` gives the environments-file records (agentic_rl.envs.tasks) as `builtin_records()` does: each
module's source with gym_base.py, its seeded configurations, the oracle's calls (`oracle_calls`) and, for the
training configurations only, the oracle's actions (`demos`: what the warm-up replays). The last class of each
module is held out (split "heldout": a new task over the tools training used); the last `HELDOUT_CONFIGS`
configurations of each training environment are never demonstrated. Load it with `data=codegym data.path=starter`.
`python -m agentic_rl.envs.oracle_files` measures oracle_calls.json and demos.json again in the sandbox.
"""

from __future__ import annotations

import inspect
import json
import random
from pathlib import Path
from typing import Any

from agentic_rl.envs.builtin import module_source
from agentic_rl.envs.starter import lists, shop

MODULES = (lists, shop)
CONFIGS_PER_ENV = 12
HELDOUT_CONFIGS = 2  # the last configurations of a training environment, as data.heldout_configs holds them out
NAME = "starter"  # data.path=starter loads this set (agentic_rl.envs.tasks.load_codegym)
ORACLE_CALLS = Path(__file__).parent / "oracle_calls.json"
DEMOS = Path(__file__).parent / "demos.json"
LICENCE = "written for this project (the project's licence); no text copied"
MAX_DRAWS = 1000  # draws per configuration before a generator is judged unable to give a new answer


def distinct_configs(cls: Any, generate: Any, rng: random.Random, n: int) -> list[dict[str, Any]]:
    """`n` configurations from `generate(rng)` whose answers (`cls.solve`) all differ: a constant `Done` answer then
    solves at most one configuration of the environment (the constant-answer rule of envs.verify keeps them all)."""
    configs, answers = [], set()
    for _ in range(n * MAX_DRAWS):
        config = generate(rng)
        key = json.dumps(cls.solve(config), sort_keys=True)
        if key not in answers:
            answers.add(key)
            configs.append(config)
            if len(configs) == n:
                return configs
    raise ValueError(f"{cls.__name__}: its generator gave fewer than {n} distinct answers in {n * MAX_DRAWS} draws")


def env_id(module: Any, cls: Any) -> str:
    return f"{module.__name__.rsplit('.', 1)[-1]}/{cls.__name__}"


def starter_records(seed: int = 0, per_env: int = CONFIGS_PER_ENV) -> list[dict[str, Any]]:
    """Every starter environment as an environments-file record, configurations drawn with `seed`.

    The default configurations (seed 0, 12 each) carry the measured `oracle_calls` (oracle_calls.json) and, on the
    training configurations of the training environments, `demos` (demos.json); other seeds carry neither."""
    default = (seed, per_env) == (0, CONFIGS_PER_ENV)
    calls = json.loads(ORACLE_CALLS.read_text()) if default and ORACLE_CALLS.is_file() else {}
    demos = json.loads(DEMOS.read_text()) if default and DEMOS.is_file() else {}
    records = []
    for module in MODULES:
        code = module_source(module)
        classes = list(module.ORACLES)
        for i, cls in enumerate(classes):
            record = {
                "env_id": env_id(module, cls),
                "class_name": cls.__name__,
                "code": code,
                "oracle": module.ORACLES[cls].__name__,
                "description": inspect.getdoc(cls) or "",
                "configs": distinct_configs(cls, module.CONFIGS[cls], random.Random(f"{seed}/{cls.__name__}"), per_env),
                "split": "heldout" if i == len(classes) - 1 else "train",
                "source": LICENCE,
            }
            if record["env_id"] in calls:
                record["oracle_calls"] = calls[record["env_id"]]
            if record["env_id"] in demos:
                record["demos"] = demos[record["env_id"]]
            records.append(record)
    return records


def demonstrable(record: dict[str, Any]) -> list[int]:
    """The configuration indices whose oracle actions may be shown: the training configurations of a training
    environment (never a held-out environment, never the held-out configurations)."""
    if record.get("split", "train") == "heldout":
        return []
    return list(range(max(len(record["configs"]) - HELDOUT_CONFIGS, 1)))
