"""The record every built-in problem is written as, and the helper that normalises its text."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass

SPLITS = ("train", "eval")
DIFFICULTIES = ("easy", "medium")


@dataclass(frozen=True)
class BuiltinProblem:
    """One original KodCode-format problem.

    `question` is the statement given to the model; `solution` is a reference module defining `name`;
    `test` is a pytest file starting with `from solution import <name>`; `wrong_solution` is a
    plausible-but-wrong module the tests must reject (it never reaches a `Task`). `api` lists the
    fully qualified standard-library names a good solution uses (empty when none is needed).
    """

    name: str
    split: str
    difficulty: str
    question: str
    solution: str
    wrong_solution: str
    test: str
    api: tuple[str, ...] = ()

    @property
    def needs_api(self) -> bool:
        return bool(self.api)

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"problem {self.name}: split {self.split!r} not in {SPLITS}")
        if self.difficulty not in DIFFICULTIES:
            raise ValueError(f"problem {self.name}: difficulty {self.difficulty!r} not in {DIFFICULTIES}")
        if not self.test.startswith(f"from solution import {self.name}\n"):
            raise ValueError(f"problem {self.name}: test must start with 'from solution import {self.name}'")


def problem(
    name: str,
    split: str,
    difficulty: str,
    question: str,
    solution: str,
    wrong: str,
    test: str,
    api: tuple[str, ...] | list[str] = (),
) -> BuiltinProblem:
    """Build a `BuiltinProblem`, dedenting the code blocks and collapsing the question's line breaks."""

    def code(text: str) -> str:
        return textwrap.dedent(text).strip("\n") + "\n"

    return BuiltinProblem(
        name=name,
        split=split,
        difficulty=difficulty,
        question=" ".join(textwrap.dedent(question).split()),
        solution=code(solution),
        wrong_solution=code(wrong),
        test=code(test),
        api=tuple(api),
    )
