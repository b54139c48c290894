"""BigCodeBench-Hard helpers shared by `bench` and `check_bcb`: where the data and interpreter are,
and how the official evaluation builds a candidate program."""

from __future__ import annotations

import ast
import json
import os

from agentic_rl.data.shared_data import BIGCODEBENCH_HARD, shared_data_file
from agentic_rl.sandbox.client import PYTHON_ENV_VAR, REPO_ROOT

BCB_VENV_PYTHON = REPO_ROOT / ".venv-bcb" / "bin" / "python"
# Verdicts of the official bigcodebench harness on this machine: 143/148 canonical
# solutions pass; these fail for environmental reasons.
REFERENCE_FAILURES = {
    "BigCodeBench/101": "network",
    "BigCodeBench/590": "network",
    "BigCodeBench/1012": "network",
    "BigCodeBench/177": "NLTK data",
    "BigCodeBench/655": "NLTK data",
}


def load_bcb_hard() -> list[dict]:
    """The raw rows of bigcodebench_hard.jsonl in the shared data dir ($AGENTIC_RL_DATA_DIR)."""
    with open(shared_data_file(BIGCODEBENCH_HARD)) as f:
        return [json.loads(line) for line in f if line.strip()]


def canonical_program(task: dict) -> str:
    """The candidate as bigcodebench's evaluate builds it: complete_prompt + "\\n" + canonical_solution."""
    return task["complete_prompt"] + "\n" + task["canonical_solution"]


def pass_body_program(task: dict) -> str:
    """The task's prompt with the entry point's body replaced by `pass` (imports kept)."""
    prompt = task["complete_prompt"]
    tree = ast.parse(prompt)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == task["entry_point"]:
            node.body = [ast.Pass()]
            return ast.unparse(tree)
    raise ValueError(f"{task['task_id']}: entry point {task['entry_point']!r} not found in the prompt")


def bcb_python(explicit: str | None = None) -> str | None:
    """Interpreter for BigCodeBench runs: explicit, else $AGENTIC_RL_SANDBOX_PYTHON, else .venv-bcb if
    `make setup-bcb` made it, else None (the sandbox's own default, the current interpreter)."""
    if explicit:
        return explicit
    if os.environ.get(PYTHON_ENV_VAR):
        return os.environ[PYTHON_ENV_VAR]
    return str(BCB_VENV_PYTHON) if BCB_VENV_PYTHON.exists() else None


def task_number(task_id: str) -> int:
    return int(task_id.rsplit("/", 1)[-1])
