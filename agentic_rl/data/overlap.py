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
import io
import keyword
import math
import re
import tokenize
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

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
    return out


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


def cross_split_scores(held_out: Sequence[Text], train: Sequence[Text], corpus: Sequence[Text] = ()) -> list[PairScore]:
    """Both similarities of every (held-out, train) pair; IDF over `held_out`, `train` and `corpus`."""
    everyone = [*held_out, *train, *corpus]
    q_tokens = {id(t): question_tokens(t.name, t.question) for t in everyone}
    s_tokens = {id(t): solution_tokens(t.solution) for t in everyone}
    q_weight = idf_weights(list(q_tokens.values()))
    s_weight = idf_weights(list(s_tokens.values()))
    return [
        PairScore(
            h.name,
            t.name,
            weighted_ratio(q_tokens[id(h)], q_tokens[id(t)], q_weight),
            weighted_ratio(s_tokens[id(h)], s_tokens[id(t)], s_weight),
        )
        for h in held_out
        for t in train
    ]
