"""Near-duplicate detection between two task sets (the held-out split against the training split).

A held-out task that is a one-word variant of a training task (max/min of a list, is_odd/is_even) measures
recall of the training set, not generalisation. Two lexical similarities are computed for every
(held-out, train) pair, each an IDF-weighted `difflib` match ratio in [0, 1]:

- questions: the prose words of the statement (code spans in backticks, the function's name and filler
  words removed);
- reference solutions: the Python tokens with local names (the function, its parameters, variables)
  replaced by one placeholder, keeping keywords, operators, literals, builtins, imported modules and
  attribute names (`math.gcd`, `str.isupper`).

The weights are the inverse document frequency of each token over all the tasks compared, so that what
every task shares (`def`, `return`, brackets, "Write a Python function") counts for almost nothing and a
pair is similar only if it shares what is specific to it. A pair is a near-duplicate when its question
similarity is >= QUESTION_THRESHOLD or its solution similarity is >= SOLUTION_THRESHOLD. The thresholds were
calibrated on the built-in tasks (tests/data/test_split_overlap.py says how); the generated pipeline tasks
(`agentic_rl.data.pipelines`) drop every held-out candidate that this check flags.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import functools
import io
import keyword
import math
import re
import tokenize
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from agentic_rl.types import Task

QUESTION_THRESHOLD = 0.40
SOLUTION_THRESHOLD = 0.60

# Words of the question template and grammar: they say nothing about what the problem asks.
FILLER_WORDS = frozenset(
    "a an the of in and or to is are be it its that this with for as by on at from if each every "
    "returns return write python function which example otherwise".split()
)
PLACEHOLDER = "ID"
_BUILTIN_NAMES = frozenset(dir(builtins))
_SKIPPED_TOKENS = (
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
)


@dataclass(frozen=True)
class Text:
    """What the detector compares: the entry point's name, its question and its reference solution."""

    name: str
    question: str
    solution: str


def question_tokens(name: str, question: str) -> list[str]:
    """Lower-cased prose words of `question`, without code spans, the function's name and filler words."""
    prose = re.sub(rf"`[^`]*`|\b{re.escape(name)}\b", " ", question)
    return [w for w in re.findall(r"[a-z]+|\d+", prose.lower()) if w not in FILLER_WORDS]


def solution_tokens(source: str) -> list[str]:
    """Python tokens of `source` with every local name replaced by PLACEHOLDER (docstrings and comments dropped).

    Kept as written: keywords, operators, literals, builtins (`max`, `sum`), imported module names (`math`)
    and attribute names (the name after a dot), which carry what the code does.
    """
    return list(_solution_tokens(source))


# cached: a split built by dropping near-duplicates and checking again tokenizes the same solutions each round
@functools.lru_cache(maxsize=8192)
def _solution_tokens(source: str) -> tuple[str, ...]:
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    out: list[str] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        text = tok.string
        if tok.type in _SKIPPED_TOKENS:
            continue
        if tok.type == tokenize.STRING and text.lstrip("rbuRBU").startswith(('"""', "'''")):
            continue  # a docstring
        if (
            tok.type == tokenize.NAME
            and not keyword.iskeyword(text)
            and text not in _BUILTIN_NAMES
            and text not in modules
            and (not out or out[-1] != ".")
        ):
            text = PLACEHOLDER
        out.append(text)
    return tuple(out)


def idf_weights(documents: Sequence[Sequence[str]]) -> dict[str, float]:
    """Smoothed inverse document frequency, log((N + 1) / (df + 1)): a token in every document weighs ~0."""
    df = Counter(tok for doc in documents for tok in set(doc))
    n = len(documents)
    return {tok: math.log((n + 1) / (count + 1)) for tok, count in df.items()}


def weighted_ratio(a: Sequence[str], b: Sequence[str], weight: dict[str, float]) -> float:
    """`difflib.SequenceMatcher.ratio` with each token counted by its weight: 2 * matched / (total a + total b)."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    matched = sum(
        weight.get(tok, 0.0) for block in matcher.get_matching_blocks() for tok in a[block.a : block.a + block.size]
    )
    total = sum(weight.get(tok, 0.0) for tok in a) + sum(weight.get(tok, 0.0) for tok in b)
    return 2 * matched / total if total else 0.0


@dataclass(frozen=True)
class PairScore:
    held_out: str
    train: str
    question: float
    solution: float

    @property
    def flagged(self) -> bool:
        return self.question >= QUESTION_THRESHOLD or self.solution >= SOLUTION_THRESHOLD


@dataclass(frozen=True)
class TokenizedTexts:
    """Every text's question and solution tokens, with the IDF weights over all of them."""

    question: dict[int, list[str]]
    solution: dict[int, list[str]]
    question_weight: dict[str, float]
    solution_weight: dict[str, float]


def tokenize_texts(everyone: Sequence[Text]) -> TokenizedTexts:
    question = {id(t): question_tokens(t.name, t.question) for t in everyone}
    solution = {id(t): solution_tokens(t.solution) for t in everyone}
    return TokenizedTexts(
        question, solution, idf_weights(list(question.values())), idf_weights(list(solution.values()))
    )


def _score(h: Text, t: Text, tok: TokenizedTexts) -> PairScore:
    return PairScore(
        h.name,
        t.name,
        weighted_ratio(tok.question[id(h)], tok.question[id(t)], tok.question_weight),
        weighted_ratio(tok.solution[id(h)], tok.solution[id(t)], tok.solution_weight),
    )


def cross_split_scores(held_out: Sequence[Text], train: Sequence[Text], corpus: Sequence[Text] = ()) -> list[PairScore]:
    """Both similarities of every (held-out, train) pair; IDF over `held_out`, `train` and `corpus`."""
    tok = tokenize_texts([*held_out, *train, *corpus])
    return [_score(h, t, tok) for h in held_out for t in train]


class TokenBagBound:
    """An upper bound of `weighted_ratio` from token counts alone: the tokens a match pairs up are a sub-multiset
    of both sequences, so the matched weight is at most the weight of the multiset intersection."""

    def __init__(self, tokens: dict[int, list[str]], weight: dict[str, float]) -> None:
        vocabulary = {tok: i for i, tok in enumerate(sorted({tok for seq in tokens.values() for tok in seq}))}
        self.row = {key: i for i, key in enumerate(tokens)}
        self.counts = np.zeros((len(tokens), len(vocabulary)))
        for key, seq in tokens.items():
            for tok in seq:
                self.counts[self.row[key], vocabulary[tok]] += 1
        self.weight = np.array([weight.get(tok, 0.0) for tok in vocabulary])
        self.totals = self.counts @ self.weight

    def matrix(self, rows: Sequence[int], columns: Sequence[int]) -> np.ndarray:
        """The bound of every (row, column) pair of keys, as a len(rows) x len(columns) array."""
        r, c = [self.row[key] for key in rows], [self.row[key] for key in columns]
        b = self.counts[c]
        # one row at a time: memory stays at len(columns) x vocabulary however many rows there are
        common = np.array([np.minimum(counts, b) @ self.weight for counts in self.counts[r]])
        common = common.reshape(len(rows), len(columns))
        total = self.totals[r, None] + self.totals[None, c]
        return np.divide(2 * common, total, out=np.zeros_like(common), where=total > 0)


# the bound and the exact ratio sum the same weights in other orders: a pair is skipped only when its bound is
# below a threshold by more than any rounding of those sums
_BOUND_SLACK = 1e-9


def _flagged(
    held_out: Sequence[Text], train: Sequence[Text], corpus: Sequence[Text] = ()
) -> list[tuple[int, PairScore]]:
    tok = tokenize_texts([*held_out, *train, *corpus])
    rows, columns = [id(h) for h in held_out], [id(t) for t in train]
    reachable = (
        TokenBagBound(tok.question, tok.question_weight).matrix(rows, columns) >= QUESTION_THRESHOLD - _BOUND_SLACK
    ) | (TokenBagBound(tok.solution, tok.solution_weight).matrix(rows, columns) >= SOLUTION_THRESHOLD - _BOUND_SLACK)
    flagged = []
    for i, j in zip(*np.nonzero(reachable)):  # row-major: the order of the full scoring
        score = _score(held_out[i], train[j], tok)
        if score.flagged:
            flagged.append((int(i), score))
    return flagged


def near_duplicate_pairs(
    held_out: Sequence[Text], train: Sequence[Text], corpus: Sequence[Text] = ()
) -> list[PairScore]:
    """The flagged pairs of `cross_split_scores` (same scores, same order), computed only where a cheap bound
    says a pair could reach a threshold: most pairs of unrelated tasks never run the sequence match."""
    return [score for _, score in _flagged(held_out, train, corpus)]


def flagged_positions(held_out: Sequence[Text], train: Sequence[Text]) -> set[int]:
    """The positions in `held_out` of the texts flagged against some training text (names need not be unique)."""
    return {i for i, _ in _flagged(held_out, train)}


def task_text(task: Task) -> Text:
    """What the check compares of a task (a class-based task without an entry point has no name to remove)."""
    return Text(task.entry_point or "", task.prompt, task.reference_solution or "")


Item = TypeVar("Item")


def drop_near_duplicates(
    pool: Sequence[Item], train: Sequence[Item], text: Callable[[Item], Text], wanted: int | None = None
) -> list[Item]:
    """The first `wanted` items of `pool` (all of them when None) with no near-duplicate among `train`; fewer
    when the pool runs out. The IDF weights are over the texts compared, so dropping one item can push a kept
    one over a threshold: the chosen items are checked again after every drop, until none is flagged."""
    train_texts = [text(t) for t in train]
    remaining = list(pool)
    while True:
        chosen = remaining if wanted is None else remaining[:wanted]
        flagged = flagged_positions([text(item) for item in chosen], train_texts)
        if not flagged:
            return chosen
        dropped = {id(chosen[i]) for i in flagged}
        remaining = [item for item in remaining if id(item) not in dropped]
