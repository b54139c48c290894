"""Split hygiene: no held-out built-in problem is a near-duplicate of a training problem.

The detector (`agentic_rl.data.overlap`, whose docstring gives the method) must flag the known one-word
variants of a training problem and nothing on the current splits.

Calibration (2026-11-30): on the held-out set before the clean-up, the detector flags 7 of the 8 known
variants (below, `KNOWN_VARIANTS`); the one it misses is cube/square ("raised to the third power" vs
"multiplied by itself", `n ** 3` vs `n * n`), which shares no specific word or token: meaning, not text,
makes it a variant, so a new problem still needs a reader's check. (sum_of_squares / sum_list, also
replaced, scores 0.41 on questions: flagged, but too close to the threshold to serve as a fixed example.) On the
current splits the highest question similarity is 0.35 (to_sorted_json / parse_json_keys) and the highest
solution similarity 0.57 (index_positions / group_anagrams).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

import pytest

from agentic_rl.data.builtin_tasks import BUILTIN_PROBLEMS
from agentic_rl.data.overlap import (
    QUESTION_THRESHOLD,
    SOLUTION_THRESHOLD,
    PairScore,
    Text,
    TokenBagBound,
    cross_split_scores,
    drop_near_duplicates,
    flagged_positions,
    near_duplicate_pairs,
    question_tokens,
    solution_tokens,
    tokenize_texts,
    weighted_ratio,
)


def split_texts(split: str) -> list[Text]:
    return [Text(p.name, p.question, p.solution) for p in BUILTIN_PROBLEMS if p.split == split]


TRAIN, HELD_OUT = split_texts("train"), split_texts("eval")

# Held-out problems that were one-word variants of a training problem (replaced on 2026-11-30), with
# their training twin: the detector must keep flagging each of them.
KNOWN_VARIANTS = [
    (
        "min_of_list",
        Text(
            "max_in_list",
            "Write a Python function `max_in_list(nums: list[int]) -> int` that returns the largest number in a "
            "non-empty list. Example: `max_in_list([1, 7, 3])` returns `7`.",
            "def max_in_list(nums):\n    return max(nums)\n",
        ),
    ),
    (
        "is_even",
        Text(
            "is_odd",
            "Write a Python function `is_odd(n: int) -> bool` that returns `True` if the integer `n` (possibly "
            "negative) is odd. Example: `is_odd(3)` returns `True`, `is_odd(4)` returns `False`.",
            "def is_odd(n):\n    return n % 2 != 0\n",
        ),
    ),
    (
        "fib_memo",
        Text(
            "climb_stairs",
            "Write a Python function `climb_stairs(n: int) -> int` that returns the number of distinct ways to "
            "climb `n` steps taking 1 or 2 steps at a time (`climb_stairs(0) == 1`). It must be fast for `n` up "
            "to 80 (cache results). Example: `climb_stairs(5)` returns `8`.",
            "from functools import lru_cache\n\n\n@lru_cache(maxsize=None)\ndef climb_stairs(n):\n"
            "    if n <= 1:\n        return 1\n    return climb_stairs(n - 1) + climb_stairs(n - 2)\n",
        ),
    ),
    (
        "gcd_of",
        Text(
            "gcd_list",
            "Write a Python function `gcd_list(nums: list[int]) -> int` that returns the greatest common divisor "
            "of all the positive integers in a non-empty list. Example: `gcd_list([12, 18, 24])` returns `6`.",
            "import math\nfrom functools import reduce\n\n\ndef gcd_list(nums):\n    return reduce(math.gcd, nums)\n",
        ),
    ),
    (
        "count_vowels",
        Text(
            "count_uppercase",
            "Write a Python function `count_uppercase(s: str) -> int` that returns how many upper-case letters "
            'are in `s`. Example: `count_uppercase("Hello World")` returns `2`.',
            "def count_uppercase(s):\n    return sum(1 for ch in s if ch.isupper())\n",
        ),
    ),
    (
        "merge_sorted",
        Text(
            "merge_k_sorted",
            "Write a Python function `merge_k_sorted(lists: list[list[int]]) -> list[int]` that merges any number "
            "of ascending lists into one ascending list, keeping duplicates. Example: "
            "`merge_k_sorted([[1, 4], [2, 3], [0]])` returns `[0, 1, 2, 3, 4]`.",
            "import heapq\n\n\ndef merge_k_sorted(lists):\n    return list(heapq.merge(*lists))\n",
        ),
    ),
    (
        "int_sqrt",
        Text(
            "is_perfect_square",
            "Write a Python function `is_perfect_square(n: int) -> bool` that returns `True` if the non-negative "
            "integer `n` is the square of an integer. It must be exact for very large `n`. Example: "
            "`is_perfect_square(16)` returns `True`, `is_perfect_square(15)` returns `False`.",
            "import math\n\n\ndef is_perfect_square(n):\n    r = math.isqrt(n)\n    return r * r == n\n",
        ),
    ),
]


def describe(pairs: Sequence[PairScore]) -> str:
    return "; ".join(f"{p.held_out} ~ {p.train} (question {p.question:.2f}, solution {p.solution:.2f})" for p in pairs)


@pytest.fixture(scope="module")
def scores() -> list[PairScore]:
    return cross_split_scores(HELD_OUT, TRAIN)


def test_no_held_out_question_is_a_near_duplicate(scores):
    flagged = sorted((p for p in scores if p.question >= QUESTION_THRESHOLD), key=lambda p: -p.question)
    assert not flagged, (
        f"held-out questions too close to training questions (>= {QUESTION_THRESHOLD}): "
        f"{describe(flagged)}. Fix: replace the held-out problem with a different one."
    )


def test_no_held_out_solution_is_a_near_duplicate(scores):
    flagged = sorted((p for p in scores if p.solution >= SOLUTION_THRESHOLD), key=lambda p: -p.solution)
    assert not flagged, (
        f"held-out reference solutions too close to training ones (>= {SOLUTION_THRESHOLD}): "
        f"{describe(flagged)}. Fix: replace the held-out problem with a different one."
    )


def test_every_pair_was_scored(scores):
    assert len(scores) == len(HELD_OUT) * len(TRAIN)
    assert all(0.0 <= p.question <= 1.0 and 0.0 <= p.solution <= 1.0 for p in scores)


@pytest.mark.parametrize("train_name, variant", KNOWN_VARIANTS, ids=[v.name for _, v in KNOWN_VARIANTS])
def test_known_variants_are_flagged(train_name, variant):
    twin = next(t for t in TRAIN if t.name == train_name)
    # IDF over the real splits as well, as it would be had the variant stayed in the held-out set
    [score] = cross_split_scores([variant], [twin], corpus=[*HELD_OUT, *TRAIN])
    assert score.flagged, f"{describe([score])}: a known one-word variant is not flagged"


def test_a_renamed_copy_scores_one():
    train = TRAIN[0]
    source = train.solution
    for i, local in enumerate(
        sorted(
            {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
            | {a.arg for a in ast.walk(ast.parse(source)) if isinstance(a, ast.arg)}
            | {train.name}
        )
    ):
        source = re.sub(rf"\b{local}\b", f"renamed_{i}", source)
    assert source != train.solution
    copy = Text("renamed_copy", train.question.replace(train.name, "renamed_copy"), source)
    [score] = cross_split_scores([copy], [train], corpus=[*HELD_OUT, *TRAIN])
    assert score.question == pytest.approx(1.0)
    assert score.solution == pytest.approx(1.0)
    assert score.flagged


def test_solution_tokens_keep_what_the_code_does():
    tokens = solution_tokens(
        'import math\n\n\ndef f(values):\n    """Doc."""\n'
        "    total = math.prod(values)  # a comment\n    return max(total, 0) ** 2\n"
    )
    assert tokens == [
        "import",
        "math",
        "def",
        "ID",
        "(",
        "ID",
        ")",
        ":",
        "ID",
        "=",
        "math",
        ".",
        "prod",
        "(",
        "ID",
        ")",
        "return",
        "max",
        "(",
        "ID",
        ",",
        "0",
        ")",
        "**",
        "2",
    ]


def test_question_tokens_drop_code_spans_and_filler():
    assert question_tokens("f", "Write a Python function `f(x: int)` that returns the largest value of `x`.") == [
        "largest",
        "value",
    ]


def test_the_bounded_check_flags_exactly_what_every_pair_scored_flags():
    """`near_duplicate_pairs` skips pairs by a bound; with the known variants among the held-out texts it must
    still return the flagged pairs of the full scoring, with the same scores, in the same order."""
    held_out = [*HELD_OUT, *(variant for _, variant in KNOWN_VARIANTS)]
    everything = [s for s in cross_split_scores(held_out, TRAIN) if s.flagged]
    assert len(everything) >= len(KNOWN_VARIANTS) - 1  # cube/square is the known miss (module docstring)
    assert near_duplicate_pairs(held_out, TRAIN) == everything


def test_the_bag_bound_is_never_below_the_exact_ratio():
    texts = [*HELD_OUT, *TRAIN, *(variant for _, variant in KNOWN_VARIANTS)]
    tok = tokenize_texts(texts)
    for tokens, weight in ((tok.question, tok.question_weight), (tok.solution, tok.solution_weight)):
        keys = [id(t) for t in texts]
        bound = TokenBagBound(tokens, weight).matrix(keys, keys)
        gaps = [
            bound[i, j] - weighted_ratio(tokens[id(a)], tokens[id(b)], weight)
            for i, a in enumerate(texts)
            for j, b in enumerate(texts)
        ]
        assert min(gaps) >= -1e-12
        assert max(gaps) > 0.05  # a bound, not the ratio: order matters to the match, not to the bag


def test_flagged_positions_are_those_of_the_flagged_pairs_even_with_repeated_names():
    """Positions, not names, say which held-out text is flagged: a variant renamed to a clean text's name must
    not take the clean one with it."""
    (_, variant), clean = KNOWN_VARIANTS[0], HELD_OUT[0]
    renamed = Text(clean.name, variant.question, variant.solution)
    assert flagged_positions([clean, renamed], TRAIN) == {1}
    held_out = [*HELD_OUT, *(v for _, v in KNOWN_VARIANTS)]
    assert {
        held_out.index(next(h for h in held_out if h.name == s.held_out)) for s in near_duplicate_pairs(held_out, TRAIN)
    } == flagged_positions(held_out, TRAIN)


def test_drop_near_duplicates_keeps_the_pool_order_and_refills_up_to_wanted():
    variants = [v for _, v in KNOWN_VARIANTS]
    pool = [variants[0], HELD_OUT[0], variants[1], HELD_OUT[1], HELD_OUT[2], variants[2]]
    assert flagged_positions(variants[:3], TRAIN) == {0, 1, 2}  # each of these is flagged on its own

    def text(t: Text) -> Text:
        return t

    assert drop_near_duplicates(pool, TRAIN, text) == [HELD_OUT[0], HELD_OUT[1], HELD_OUT[2]]
    assert drop_near_duplicates(pool, TRAIN, text, wanted=2) == [HELD_OUT[0], HELD_OUT[1]]
    assert drop_near_duplicates(pool, TRAIN, text, wanted=5) == [HELD_OUT[0], HELD_OUT[1], HELD_OUT[2]]  # ran out
    assert not flagged_positions(drop_near_duplicates([*HELD_OUT, *variants], TRAIN, text), TRAIN)
