"""Measure the starter set's oracle files again in the sandbox: `python -m agentic_rl.envs.oracle_files`.

(Outside the starter package, which envs.tasks imports: this module imports envs.verify, which imports envs.tasks.)

Runs the paper's checks with this set's call range and the constant-answer rule (envs.verify), refuses to write
when any configuration is dropped (the set is meant to pass them whole), then writes oracle_calls.json (the oracle's
calls on every configuration) and demos.json (the oracle's actions on the demonstrable configurations: training
configurations of training environments; null elsewhere). A test checks both files are current.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.starter import DEMOS, ORACLE_CALLS, demonstrable, starter_records
from agentic_rl.envs.verify import Rules, oracle_actions, verify_records

logger = logging.getLogger(__name__)
RULES = Rules(min_calls=3, max_calls=40, constant_answer=True)  # short workflows; every answer distinct


def measure(runner: CodeGymRunner) -> tuple[dict[str, list[int]], dict[str, list[Any]], dict[str, Any]]:
    """(oracle calls per environment, demos per environment, verify's report) of the default configurations."""
    records = starter_records()
    kept, report = verify_records(records, runner, RULES)
    calls = {r["env_id"]: r["oracle_calls"] for r in kept}
    demos = {}
    for record in records:
        shown = demonstrable(record)
        if shown:
            actions = dict(zip(shown, oracle_actions(runner, record, shown)))
            demos[record["env_id"]] = [actions.get(i) for i in range(len(record["configs"]))]
    return calls, demos, report


def one_line_each(table: dict[str, Any]) -> str:
    """A JSON object with one environment per line, so a change to one environment is one line of the diff."""
    return "{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in table.items()) + "\n}\n"


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    calls, demos, report = measure(CodeGymRunner())
    if report["dropped_configs"] or report["dropped_environments"]:
        logger.error("the checks dropped configurations; fix the generators: %s", report["dropped_reasons"])
        return 1
    ORACLE_CALLS.write_text(one_line_each(calls))
    DEMOS.write_text(one_line_each(demos))
    logger.info("wrote %s and %s (%d environments)", ORACLE_CALLS, DEMOS, len(calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
