"""Test hygiene: a task whose tests a trivial candidate passes is dropped, with a report of why.

A held-out task only measures solving if its tests can fail. Two ways they cannot (issue #46):
  - a trivial candidate passes: `return None`, a constant, the identity (returns its first argument), or a
    module that defines nothing;
  - the tests define the function under test themselves (two KodCode held-out rows, the quick-sort pair, define
    `quick_sort_in_place` after `from solution import *`, so any submission, even an empty one, passes).

`check_tasks` runs every candidate of `candidates(task)` against each task's tests in the sandbox (the grader the
policy is judged by, so a verdict here is the verdict a submission gets) and reads the tests' syntax for module-level
definitions of the names under test (`defined_by_tests`). `drop_unhygienic(tasks, sandbox)` is the loader-level
entry: (the tasks no check flagged, the report). Verdicts are cached on disk per task (`verdict_path`, under the
cache root, keyed by the task's harness, tests and names, this module's source and the sandbox interpreter), so
evaluations and training runs do not grade the same trivial candidates again.

The names under test: the task's `entry_point`, the names its tests import from `solution`, and, where the tests
import `*` from it, the reference solution's top-level names the tests use (class-based KodCode rows have no entry
point). A stub candidate defines each of them as a function; the constants are 0, "", [], True and the literal the
tests' assertions expect most often (a test file whose every case expects the same value is passed by it).

CodeGym configurations are not graded by tests: their constant-answer check lives with the environments
(`agentic_rl.envs.verify`); here they are kept unchecked and counted as such in the report.
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentic_rl.paths import cache_root
from agentic_rl.runtime.files import atomic_write_text
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

SOLUTION_MODULE = "solution"  # the pytest harness saves the candidate as solution.py
EMPTY = "empty"  # the candidate that defines nothing
TESTS_DEFINE = "tests_define"  # the static check's name in the report
BASE_CONSTANTS: tuple[Any, ...] = (0, "", [], True)
UNCHECKED_HARNESSES = ("codegym",)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class Grader(Protocol):
    """What this module needs of a sandbox (`agentic_rl.sandbox.Sandbox`), passed at the call site."""

    def run_tests_many(self, jobs: Iterable[dict]) -> list[Any]: ...


@dataclass(frozen=True)
class Candidate:
    """A trivial submission: `returns` is the body's return expression, or None for a module defining nothing."""

    name: str
    returns: str | None

    def source(self, names: Sequence[str]) -> str:
        if self.returns is None:
            return ""
        return "".join(f"def {n}(*args, **kwargs):\n    return {self.returns}\n\n\n" for n in names)


@dataclass
class TaskHygiene:
    """One task's verdict: the candidates whose submission passed, and the names its tests define themselves."""

    task_id: str
    passed_by: list[str] = field(default_factory=list)
    tests_define: list[str] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)

    @property
    def flagged(self) -> bool:
        return bool(self.passed_by or self.tests_define)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "flagged": self.flagged}


# ---------------------------------------------------------------- reading the tests (syntax only, never run here)


def _parse(source: str | None) -> ast.Module | None:
    try:
        return ast.parse(source or "")
    except SyntaxError:
        return None


def _top_level(module: ast.Module) -> list[ast.stmt]:
    """The module's statements, those nested in a top-level if/try/with included (they bind module names too)."""
    out: list[ast.stmt] = []
    for stmt in module.body:
        out.append(stmt)
        if isinstance(stmt, (ast.If, ast.Try, ast.With)):
            nested = ast.Module(body=[*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])])
            out += _top_level(nested)
            for handler in getattr(stmt, "handlers", []):
                out += _top_level(ast.Module(body=handler.body))
    return out


def _from_solution(stmt: ast.stmt) -> list[str] | None:
    """The names `stmt` imports from solution ("*" for a star import), or None when it is no such import."""
    if isinstance(stmt, ast.ImportFrom) and stmt.module == SOLUTION_MODULE and not stmt.level:
        return [a.name for a in stmt.names]
    return None


def _binds(stmt: ast.stmt) -> set[str]:
    """The module-level names `stmt` binds by its own definition (an import from solution binds none of them)."""
    if isinstance(stmt, DEFINITIONS):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return set() if _from_solution(stmt) is not None else {(a.asname or a.name).split(".")[0] for a in stmt.names}
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return {t.id for t in targets if isinstance(t, ast.Name)}


def names_under_test(task: Task) -> list[str]:
    """The names a submission must define (module docstring): entry point first, then the rest sorted."""
    names = {task.entry_point} if task.entry_point else set()
    tests = _parse(task.tests)
    if tests is None:
        return sorted(names)
    imported = [n for stmt in _top_level(tests) for n in (_from_solution(stmt) or [])]
    names |= {n for n in imported if n != "*"}
    reference = _parse(task.reference_solution)
    if "*" in imported and reference is not None:
        used = {node.id for node in ast.walk(tests) if isinstance(node, ast.Name)}
        # its functions and classes only: a library it imports (`np`) is the tests' own too, not the code under test
        defined = [s.name for s in reference.body if isinstance(s, DEFINITIONS)]
        names |= {n for n in defined if n in used and not n.startswith("_")}
    first = [task.entry_point] if task.entry_point else []
    return first + sorted(names - set(first))


def defined_by_tests(tests_source: str, names: Sequence[str]) -> list[str]:
    """The names under test that the test file defines itself after importing them from solution (or anywhere,
    where it never imports from solution: the unittest and humaneval harnesses run the tests beside the
    candidate), so that the tests exercise their own copy instead of the submission."""
    tests = _parse(tests_source)
    if tests is None:
        return []
    statements = _top_level(tests)
    found = []
    for name in names:
        imports = [i for i, s in enumerate(statements) if {name, "*"} & set(_from_solution(s) or [])]
        after = imports[-1] if imports else -1
        if any(name in _binds(s) for s in statements[after + 1 :]):
            found.append(name)
    return found


def expected_literals(tests_source: str) -> Counter[str]:
    """How often each literal is the expected side of an equality in the tests (`assert f(x) == 3`,
    `self.assertEqual(f(x), 3)`), keyed by its source text."""
    tests = _parse(tests_source)
    counts: Counter[str] = Counter()
    if tests is None:
        return counts
    for node in ast.walk(tests):
        sides: list[ast.expr] = []
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.Is)):
            sides = [node.left, node.comparators[0]]
            if any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides):
                continue  # `if __name__ == "__main__":` expects nothing of the candidate
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("assertEqual", "assertIs"):
            sides = list(node.args[:2])
        for side in sides:
            try:
                value = ast.literal_eval(side)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            counts[repr(value)] += 1
    return counts


def candidates(task: Task) -> list[Candidate]:
    """The trivial candidates for `task` (module docstring), each constant once."""
    constants = [repr(c) for c in BASE_CONSTANTS]
    common = expected_literals(task.tests).most_common(1)
    if common and common[0][0] not in constants and common[0][0] != "None":
        constants.append(common[0][0])
    return [
        Candidate(EMPTY, None),
        Candidate("none", "None"),
        Candidate("identity", "args[0] if args else None"),
        *(Candidate(f"constant {c}", c) for c in constants),
    ]


# ---------------------------------------------------------------- grading the candidates in the sandbox


def grading_jobs(task: Task, names: Sequence[str], timeout_s: float) -> list[tuple[str, dict[str, Any]]]:
    """(candidate name, `run_tests` keyword arguments) for each trivial candidate of `task`; stub candidates need
    a name to define, so a task without one (no entry point, only `import *`) gets the empty module alone."""
    chosen = candidates(task) if names else [Candidate(EMPTY, None)]
    return [
        (
            c.name,
            {
                "code": c.source(names),
                "test": task.tests,
                "harness": task.harness,
                "entry_point": task.entry_point,
                "timeout_s": timeout_s,
            },
        )
        for c in chosen
    ]


def grade_task(task: Task, sandbox: Grader, timeout_s: float) -> TaskHygiene:
    """Run the trivial candidates of `task` against its tests and read the tests for their own definitions."""
    names = names_under_test(task)
    jobs = grading_jobs(task, names, timeout_s)
    reports = sandbox.run_tests_many([job for _, job in jobs])
    verdict = TaskHygiene(task.task_id, tests_define=defined_by_tests(task.tests, names))
    for (name, _), report in zip(jobs, reports):
        verdict.statuses[name] = str(report.status)
        if report.passed:
            verdict.passed_by.append(name)
    return verdict


def verdict_path(task: Task, python: str | None = None) -> Path:
    """Where `task`'s verdict is kept: `<cache root>/hygiene/<key>.json`. The key hashes what decides the verdict:
    the task's harness, entry point, tests and reference solution (the names under test come from it), this
    module's source (the candidates) and the sandbox interpreter (its libraries run the tests)."""
    h = hashlib.sha256()
    for part in (task.harness, task.entry_point or "", task.tests, task.reference_solution or "", python or ""):
        h.update(part.encode() + b"\0")
    h.update(Path(__file__).read_bytes())
    return cache_root() / "hygiene" / f"{h.hexdigest()[:24]}.json"


def _read_verdict(path: Path, task_id: str) -> TaskHygiene | None:
    try:
        data = json.loads(path.read_text())
        return TaskHygiene(task_id, list(data["passed_by"]), list(data["tests_define"]), dict(data["statuses"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.warning("hygiene: the cached verdict %s is unreadable (%s); grading the task again", path, exc)
        return None


def _keep_verdict(path: Path, verdict: TaskHygiene) -> None:
    """Cache a verdict; one the sandbox itself failed on ("sandbox_error": nothing was learnt) is not kept."""
    if "sandbox_error" in verdict.statuses.values():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({k: v for k, v in asdict(verdict).items() if k != "task_id"}))
    except OSError as exc:
        logger.warning("hygiene: could not cache a verdict in %s (%s); the next run grades it again", path, exc)


def check_tasks(
    tasks: Sequence[Task], sandbox: Grader, *, timeout_s: float = 10.0, cache: bool = True, progress: bool = True
) -> list[TaskHygiene]:
    """The verdict of each task graded by tests (CodeGym tasks are skipped: see the module docstring)."""
    from tqdm.auto import tqdm

    python = getattr(sandbox, "python", None)
    verdicts = []
    graded = [t for t in tasks if t.harness not in UNCHECKED_HARNESSES]
    for task in tqdm(graded, desc="test hygiene", disable=not progress):
        path = verdict_path(task, python)
        verdict = _read_verdict(path, task.task_id) if cache else None
        if verdict is None:
            verdict = grade_task(task, sandbox, timeout_s)
            if cache:
                _keep_verdict(path, verdict)
        verdicts.append(verdict)
    return verdicts


def summarize(verdicts: Sequence[TaskHygiene], n_tasks: int) -> dict[str, Any]:
    """Counts for the report: tasks in, checked, flagged and kept, and how many tasks each candidate passed."""
    by_candidate: Counter[str] = Counter(name for v in verdicts for name in v.passed_by)
    by_candidate[TESTS_DEFINE] = sum(bool(v.tests_define) for v in verdicts)
    flagged = sum(v.flagged for v in verdicts)
    return {
        "tasks": n_tasks,
        "checked": len(verdicts),
        "unchecked": n_tasks - len(verdicts),
        "flagged": flagged,
        "kept": n_tasks - flagged,
        "by_candidate": dict(sorted(by_candidate.items())),
        "flagged_ids": [v.task_id for v in verdicts if v.flagged],
    }


def drop_unhygienic(
    tasks: Sequence[Task], sandbox: Grader, *, timeout_s: float = 10.0, cache: bool = True, progress: bool = True
) -> tuple[list[Task], dict[str, Any]]:
    """(the tasks no trivial candidate passes and whose tests do not define what they test, in their order; the
    report: `summary` as `summarize` gives it and `flagged`, one record per flagged task). What a loader or an
    evaluation calls before it scores anything."""
    verdicts = check_tasks(tasks, sandbox, timeout_s=timeout_s, cache=cache, progress=progress)
    flagged = {v.task_id for v in verdicts if v.flagged}
    kept = [t for t in tasks if t.task_id not in flagged]
    summary = summarize(verdicts, len(tasks))
    logger.info(
        "hygiene: %d of %d tasks flagged (%s); %d kept",
        summary["flagged"],
        len(tasks),
        ", ".join(f"{k} {n}" for k, n in summary["by_candidate"].items() if n) or "none",
        len(kept),
    )
    return kept, {"summary": summary, "flagged": [v.as_dict() for v in verdicts if v.flagged]}
