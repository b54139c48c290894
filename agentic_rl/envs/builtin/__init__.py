"""The built-in CodeGym set: environments written for this project, one module per kind of workflow.

`builtin_records()` turns every environment class into a record of the environments-file format
(agentic_rl.envs.tasks): its self-contained source (gym_base.py, then its module without the package
import), class name, oracle name, split and configurations drawn by its module's seeded generator.
Held-out by environment: the last class of each module is never trained on (split "heldout").
To regenerate oracle_calls.json after changing an environment or a generator:
    python -m agentic_rl.envs.verify builtin --out /tmp/builtin.jsonl   (then copy each record's oracle_calls)
"""

from __future__ import annotations

import inspect
import json
import random
from pathlib import Path
from typing import Any

from agentic_rl.envs.builtin import arrays, counting, dp, graphs, simulation, strings

MODULES = (arrays, strings, counting, graphs, dp, simulation)
CONFIGS_PER_ENV = 12
BASE_IMPORT = "from agentic_rl.envs.builtin.gym_base import ToolEnv"
LICENCE = (
    "written for this project (the project's licence); problem types modelled on the KodCode-V1 sample "
    "and the built-in tasks, no text copied"
)


def module_source(module: Any) -> str:
    """gym_base.py and the module, as one program that needs nothing but gymnasium (sent to the sandbox)."""
    base = (Path(__file__).parent / "gym_base.py").read_text()
    own = Path(inspect.getfile(module)).read_text()
    if BASE_IMPORT not in own:
        raise ValueError(f"{module.__name__} must import ToolEnv with `{BASE_IMPORT}`")
    return base + "\n\n" + own.replace(BASE_IMPORT, "", 1)


ORACLE_CALLS = Path(__file__).parent / "oracle_calls.json"


def builtin_records(seed: int = 0, per_env: int = CONFIGS_PER_ENV) -> list[dict[str, Any]]:
    """Every built-in environment as an environments-file record, configurations drawn with `seed`.

    The default configurations carry `oracle_calls`, the oracle's calls on each as measured by
    `python -m agentic_rl.envs.verify builtin` (oracle_calls.json; a CI test checks it is current)."""
    measured = json.loads(ORACLE_CALLS.read_text()) if (seed, per_env) == (0, CONFIGS_PER_ENV) else {}
    records = []
    for module in MODULES:
        code = module_source(module)
        classes = list(module.ORACLES)
        for i, cls in enumerate(classes):
            rng = random.Random(f"{seed}/{cls.__name__}")
            configs = [module.CONFIGS[cls](rng) for _ in range(per_env)]
            records.append(
                {
                    "env_id": f"{module.__name__.rsplit('.', 1)[-1]}/{cls.__name__}",
                    "class_name": cls.__name__,
                    "code": code,
                    "oracle": module.ORACLES[cls].__name__,
                    "description": inspect.getdoc(cls) or "",
                    "configs": configs,
                    "split": "heldout" if i == len(classes) - 1 else "train",
                    "source": LICENCE,
                }
            )
            if records[-1]["env_id"] in measured:
                records[-1]["oracle_calls"] = measured[records[-1]["env_id"]]
    return records
