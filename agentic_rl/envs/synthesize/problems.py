"""The input of the synthesis: coding problems with a reference solution, and that solution run in the sandbox.

A problems file is JSON Lines, one problem per line. The default is the KodCode-V1 row (agentic_rl/data/kodcode.py):
`question_id`, `question`, `solution`, and optionally `test_info` (`[{"function_name": ...}]`, the entry point).
Without `test_info` the entry point is the solution's first top-level function. Other columns are ignored. A row
without the fields is an error that names the line; a well-formed row whose solution has no function to call (a
class-based KodCode row) or does not parse is read as an unusable problem, which the run records as dropped.

The unit tests' expected outputs come from the original solution only: `solution_outputs` runs it on every
input in one sandbox call (the trainer never executes it) and reads one result line marked with a nonce.
"""

from __future__ import annotations

import ast
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

REQUIRED = ("question_id", "question", "solution")
HARNESS = """

import json as _json
_RESULTS = []
for _kwargs in _json.loads({inputs!r}):
    try:
        _value = {entry}(**_kwargs)
        _json.dumps(_value)
        _RESULTS.append([True, _value])
    except BaseException as _exc:
        _RESULTS.append([False, type(_exc).__name__ + ": " + str(_exc)[:200]])
print("\\n{nonce}" + _json.dumps(_RESULTS))  # noqa: T201 (the sandboxed script reports on stdout)
"""


@dataclass(frozen=True)
class Problem:
    problem_id: str
    question: str
    solution: str
    entry_point: str
    # why the problem cannot be synthesized though its row is well formed (None: it can): a solution that is not
    # valid Python, or one with no function to call (KodCode has class-based rows); such a problem is a recorded
    # drop of its own, never a stop of the whole run
    unusable: str | None = None


def read_problems(path: str | Path) -> list[Problem]:
    """The problems of a JSON Lines file; a wrong line raises ValueError naming the file, the line and the fix."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no problems file at {path}: give a JSON Lines file of KodCode-style rows")
    problems, seen = [], set()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}, line {n}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{where}: not JSON ({exc}); write one JSON object per line") from None
        problem = row_problem(row, where)
        if problem.problem_id in seen:
            raise ValueError(f"{where}: question_id {problem.problem_id!r} appears twice; ids must be unique")
        seen.add(problem.problem_id)
        problems.append(problem)
    if not problems:
        raise ValueError(f"{path} holds no problems")
    return problems


def row_problem(row: Any, where: str) -> Problem:
    if not isinstance(row, dict):
        raise ValueError(f"{where}: a problem must be a JSON object with {list(REQUIRED)}")  # noqa: TRY004
    for key in REQUIRED:
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise ValueError(f"{where}: field {key!r} must be a non-empty string (fields: {list(REQUIRED)})")
    problem = Problem(str(row["question_id"]), row["question"], row["solution"], "")
    try:
        return replace(problem, entry_point=entry_point(row))
    except UnusableProblem as exc:
        return replace(problem, unusable=str(exc))


class UnusableProblem(ValueError):
    """A well-formed row whose solution the synthesis cannot run on inputs."""


def entry_point(row: dict[str, Any]) -> str:
    """test_info[0].function_name, else the first top-level function of the solution; UnusableProblem when the
    solution does not parse or defines no function."""
    info = row.get("test_info")
    if isinstance(info, list) and info and isinstance(info[0], dict) and info[0].get("function_name"):
        name = str(info[0]["function_name"]).strip()
        if name.isidentifier():
            return name
    try:
        tree = ast.parse(row["solution"])
    except SyntaxError as exc:
        raise UnusableProblem(f"the solution is not valid Python ({exc.msg}, line {exc.lineno})") from None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node.name
    raise UnusableProblem("no entry point: test_info names no function and the solution has no top-level function")


def solution_outputs(
    execute: Callable[..., Any], problem: Problem, inputs: list[dict[str, Any]], timeout_s: float
) -> list[tuple[bool, Any]]:
    """(ok, the solution's output or its error) for each input, from one sandbox call; all failed when the
    program gives no result line (it crashed, timed out or printed too much)."""
    nonce = f"@@synth-{secrets.token_hex(8)}@@"
    program = problem.solution + HARNESS.format(inputs=json.dumps(inputs), entry=problem.entry_point, nonce=nonce)
    result = execute(program, timeout_s=timeout_s)
    for line in reversed(result.stdout.splitlines()):
        if line.startswith(nonce):
            try:
                rows = json.loads(line[len(nonce) :])
            except ValueError:
                break
            if isinstance(rows, list) and len(rows) == len(inputs):
                return [(bool(ok), value) for ok, value in rows]
            break
    detail = (result.stderr.strip().splitlines() or [result.status])[-1]
    return [(False, f"the solution gave no result ({result.status}): {detail}")] * len(inputs)
