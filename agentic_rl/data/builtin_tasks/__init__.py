"""The built-in task set: original KodCode-format problems written for this project.

Every problem has a question, a reference solution, a pytest test file (`from solution import <name>`)
and a plausible-but-wrong solution the tests reject. The split is fixed per problem. Task ids are
`builtin/<split>/<nnn>_<name>` with `nnn` the problem's position in its split, so new problems must be
appended at the end of a split's list to keep existing ids stable.

`agentic_rl.data.builtin.load_builtin` turns these records into `Task`s.
"""
from __future__ import annotations

from . import eval_extra, eval_set, train_easy, train_medium
from ._schema import DIFFICULTIES, SPLITS, BuiltinProblem, problem

BUILTIN_PROBLEMS: list[BuiltinProblem] = [*train_easy.PROBLEMS, *train_medium.PROBLEMS, *eval_set.PROBLEMS,
                                         *eval_extra.PROBLEMS]


def _check_unique_names(problems: list[BuiltinProblem]) -> None:
    seen: set[str] = set()
    for p in problems:
        if p.name in seen:
            raise ValueError(f"built-in problem name {p.name!r} is used twice")
        seen.add(p.name)


_check_unique_names(BUILTIN_PROBLEMS)

__all__ = ["BUILTIN_PROBLEMS", "BuiltinProblem", "DIFFICULTIES", "SPLITS", "problem"]
