"""The starter set's oracle calls and constant-answer baseline per split, as experiment=codegym-learn reads it.

    python experiments/codegym/set_summary.py [--out FILE.json]

For the training configurations and each held-out set (held-out configurations of the training environments: seen
tools, unseen inputs; held-out environments: a new task), the oracle's calls (min, mean, max) and the constant
`Done` answer that solves most of that set's tasks with its rate: agentic_rl.envs.verify's baseline
(`constant_metrics`), each constant run as Done in the sandbox, as `python -m agentic_rl.evaluate` reports it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.tasks import load_codegym
from agentic_rl.envs.verify import constant_metrics

SETS = {
    "train": "train",
    "heldout_configs (seen environments)": "heldout_configs",
    "heldout_envs (unseen environments)": "heldout_envs",
    "heldout (both, as the run evaluates them)": "heldout",
}


def summary(runner: CodeGymRunner) -> dict[str, dict]:
    out = {}
    for name, split in SETS.items():
        tasks = load_codegym(path="starter", split=split)
        calls = [t.metadata["oracle_calls"] for t in tasks]
        answer, rates = constant_metrics(tasks, runner)
        out[name] = {
            "tasks": len(tasks),
            "environments": len({t.metadata["env_id"] for t in tasks}),
            "oracle_calls": {"min": min(calls), "mean": round(sum(calls) / len(calls), 2), "max": max(calls)},
            "best_constant": answer,
            "constant_success_rate": round(rates["env/constant_success_rate"], 4),
            "constant_solved": round(rates["env/constant_success_rate"] * len(tasks)),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="also write the summary here (JSON)")
    args = parser.parse_args()
    text = json.dumps(summary(CodeGymRunner()), indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
