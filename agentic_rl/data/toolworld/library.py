"""The generated library of a tool world: a Python module no pretrained model has seen.

Every name in it is made up from a seed: the module's name, each function's name and the made-up word for what
the function computes (its *concept*, e.g. "the plimth of a list"). What a function does is drawn from a
family of behaviours (`FAMILIES`: a weighted position sum modulo m, a polynomial hash, ...) with constants drawn
from the family's own table, so neither its name nor its concept word tells a model what it computes: only its
documentation does. Two kinds of function:

- *concept* functions (`kind="concept"`, list of ints -> int): documented in words, what the `docs` tasks need;
- *record* functions (`kind="record"`, list of ints -> dict): a dict of three statistics under made-up keys.
  The documentation says which statistics, never which key holds which: the `exec` tasks need a run to see it.

The module carries no docstrings, so `help()` in the sandbox shows nothing: the documentation lives in the
search index only (`Library.doc_entries`). Candidate code imports the module by name; the sandbox gets it from
`sandbox_preamble`, one line put in front of the candidate's code that builds the module from its source.
Expected values of the tests are computed by running that same source in this process (`Library.call`), so
what the documentation says, what the sandbox runs and what the tests expect come from one text.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentic_rl.types import Task

# consonant-vowel syllables that make pronounceable, made-up words
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gl", "kr", "pl", "tr")
_VOWELS = ("a", "e", "i", "o", "u")
_CODAS = ("", "", "n", "r", "l", "m", "th", "x", "sk", "nd")


def made_up_word(rng: random.Random, syllables: int) -> str:
    """A pronounceable word of `syllables` syllables (a coda only on the last one)."""
    parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)]
    return "".join(parts) + rng.choice(_CODAS)


@dataclass(frozen=True)
class Behaviour:
    """One function's behaviour: `body` is its Python (the parameter is `nums`), `words` its definition in
    prose (documentation), `needs` the same need in the words a user would type (search phrases)."""

    body: str
    words: str
    needs: tuple[str, ...]


# A family turns one draw of its constants into a behaviour; a family goes whole to one split of the tasks.
Family = Callable[[random.Random], Behaviour]


def _weighted_mod(rng: random.Random) -> Behaviour:
    m = rng.choice((7, 11, 13, 17, 19))
    return Behaviour(
        f"return sum((i + 1) * x for i, x in enumerate(nums)) % {m}",
        f"each number times its position counted from 1, summed, then taken modulo {m}",
        (f"position weighted sum modulo {m}", "multiply every element by its 1-based index and add them up, remainder"),
    )


def _poly_hash(rng: random.Random) -> Behaviour:
    base, m = rng.choice((3, 5, 7, 31)), rng.choice((97, 101, 103))
    return Behaviour(
        f"h = 0\n    for x in nums:\n        h = (h * {base} + x) % {m}\n    return h",
        f"a rolling hash: start at 0 and for each number multiply by {base}, add the number, keep the remainder "
        f"modulo {m}",
        (f"polynomial rolling hash base {base} mod {m}", "hash a list of integers into one small number"),
    )


def _neighbour_products(rng: random.Random) -> Behaviour:
    m = rng.choice((10, 50, 100))
    return Behaviour(
        f"return sum(a * b for a, b in zip(nums, nums[1:])) % {m}",
        f"the products of each pair of neighbouring numbers, summed, modulo {m}",
        ("sum of products of adjacent pairs", "multiply consecutive elements pairwise and total them"),
    )


def _alternating(rng: random.Random) -> Behaviour:
    k = rng.choice((2, 3, 4))
    return Behaviour(
        f"return sum(nums[::{k}]) - sum(nums[1::{k}])",
        f"the sum of the numbers at positions 0, {k}, {2 * k}, ... minus the sum of those at positions 1, "
        f"{k + 1}, {2 * k + 1}, ...",
        (f"alternating sum with stride {k}", "difference between two interleaved subsequences of the list"),
    )


def _digit_sum_count(rng: random.Random) -> Behaviour:
    d = rng.choice((2, 3, 4, 5))
    return Behaviour(
        f"return sum(1 for x in nums if sum(int(c) for c in str(abs(x))) % {d} == 0)",
        f"how many numbers have a digit sum (of their absolute value) divisible by {d}",
        (f"count numbers whose digits add up to a multiple of {d}", "how many elements have a digit sum divisible"),
    )


def _longest_run(rng: random.Random) -> Behaviour:
    rel, word = rng.choice((("<", "increasing"), (">", "decreasing"), ("==", "constant")))
    return Behaviour(
        f"best = run = 1 if nums else 0\n    for a, b in zip(nums, nums[1:]):\n"
        f"        run = run + 1 if a {rel} b else 1\n        best = max(best, run)\n    return best",
        f"the length of the longest stretch of consecutive numbers that is strictly {word}"
        if rel != "=="
        else "the length of the longest stretch of consecutive equal numbers",
        (f"longest {word} run length", f"size of the longest {word} streak of neighbouring elements"),
    )


def _peaks(rng: random.Random) -> Behaviour:
    rel, word = rng.choice(((">", "peaks"), ("<", "valleys")))
    return Behaviour(
        f"return sum(1 for a, b, c in zip(nums, nums[1:], nums[2:]) if b {rel} a and b {rel} c)",
        f"how many inner numbers are {'greater' if rel == '>' else 'smaller'} than both of their neighbours "
        f"(the {word} of the list)",
        (f"count local {word}", f"number of {word} in a sequence"),
    )


def _clamped_sum(rng: random.Random) -> Behaviour:
    lo = rng.choice((-5, -2, 0, 1))
    hi = lo + rng.choice((4, 6, 9))
    return Behaviour(
        f"return sum(min(max(x, {lo}), {hi}) for x in nums)",
        f"the sum after clamping every number into the range {lo} to {hi}",
        (f"clip values between {lo} and {hi} then sum", "limit each element to a range and add them"),
    )


def _gap_sum(rng: random.Random) -> Behaviour:
    c = rng.choice((2, 3, 5))
    return Behaviour(
        f"return {c} * sum(abs(a - b) for a, b in zip(nums, nums[1:]))",
        f"{c} times the total of the absolute differences between neighbouring numbers",
        ("total variation of a sequence", "sum of absolute gaps between consecutive elements"),
    )


def _reversed_digits(rng: random.Random) -> Behaviour:
    m = rng.choice((100, 1000, 9973))
    return Behaviour(
        f"return sum(int(str(abs(x))[::-1]) for x in nums) % {m}",
        f"the sum of the numbers written backwards (digits of the absolute value reversed), modulo {m}",
        ("reverse the digits of each number and add them", "sum of digit reversals"),
    )


def _buckets(rng: random.Random) -> Behaviour:
    k = rng.choice((3, 4, 5, 10))
    return Behaviour(
        f"return len({{x // {k} for x in nums}})",
        f"how many different buckets of width {k} the numbers fall into (a number x is in bucket x // {k})",
        (f"number of distinct bins of width {k}", "how many histogram buckets are occupied"),
    )


def _records(rng: random.Random) -> Behaviour:
    word = rng.choice(("maximum", "minimum"))
    op = ">" if word == "maximum" else "<"
    return Behaviour(
        f"count, best = 0, None\n    for x in nums:\n        if best is None or x {op} best:\n"
        f"            count, best = count + 1, x\n    return count",
        f"how many numbers set a new running {word} when the list is read from left to right",
        (f"count new running {word} records", f"how many times the running {word} changes"),
    )


def _square_mod(rng: random.Random) -> Behaviour:
    m = rng.choice((9, 12, 16, 25))
    return Behaviour(
        f"return sum(x * x for x in nums) % {m}",
        f"the sum of the squares of the numbers, modulo {m}",
        (f"sum of squares mod {m}", "square every element and add them, remainder"),
    )


def _sign_changes(rng: random.Random) -> Behaviour:
    extra = rng.choice((0, 1, 2))
    return Behaviour(
        f"signs = [x > 0 for x in nums if x != 0]\n    return sum(a != b for a, b in zip(signs, signs[1:])) + {extra}",
        f"the number of sign changes between consecutive nonzero numbers, plus {extra}",
        ("count how often the sign flips", "number of zero crossings in a list of integers"),
    )


def _index_of_extreme(rng: random.Random) -> Behaviour:
    word, fn = rng.choice((("largest", "max"), ("smallest", "min")))
    return Behaviour(
        f"return nums.index({fn}(nums)) if nums else -1",
        f"the position of the first {word} number (-1 for an empty list)",
        (f"index of the {word} element", f"where is the {word} value, arg{fn}"),
    )


CONCEPT_FAMILIES: dict[str, Family] = {
    "weighted_mod": _weighted_mod,
    "poly_hash": _poly_hash,
    "neighbour_products": _neighbour_products,
    "alternating": _alternating,
    "digit_sum_count": _digit_sum_count,
    "longest_run": _longest_run,
    "peaks": _peaks,
    "clamped_sum": _clamped_sum,
    "gap_sum": _gap_sum,
    "reversed_digits": _reversed_digits,
    "buckets": _buckets,
    "records": _records,
    "square_mod": _square_mod,
    "sign_changes": _sign_changes,
    "index_of_extreme": _index_of_extreme,
}

# the statistics a record function reports: (what the documentation and the task call it, its Python)
STATISTICS: dict[str, str] = {
    "count of numbers": "len(nums)",
    "total": "sum(nums)",
    "largest number (0 for none)": "max(nums, default=0)",
    "smallest number (0 for none)": "min(nums, default=0)",
    "count of negative numbers": "sum(1 for x in nums if x < 0)",
    "count of even numbers": "sum(1 for x in nums if x % 2 == 0)",
}


@dataclass(frozen=True)
class LibraryFunction:
    """One function of the library. `family` groups the functions that the task splits deal whole."""

    name: str
    kind: str  # "concept" | "record"
    family: str
    concept: str  # the made-up word for what it computes ("plimth")
    words: str  # its definition in prose
    needs: tuple[str, ...]
    source: str  # its `def`, no docstring
    fields: tuple[tuple[str, str], ...] = ()  # record functions: (key, statistic) pairs, in the dict's order

    @property
    def doc(self) -> str:
        if self.kind == "record":
            stats = ", ".join(sorted(stat for _, stat in self.fields))  # not in the dict's order
            return (
                f"Return the {self.concept} record of a list of integers: a dict that maps short codes to the list's "
                f"{stats}. Which code holds which value is not documented: call it and print the result to see."
            )
        return f"Return the {self.concept} of a list of integers: {self.words}."


@dataclass(frozen=True)
class Library:
    """The generated module: its name, its functions and its source."""

    name: str
    functions: tuple[LibraryFunction, ...]

    @property
    def source(self) -> str:
        return "\n\n".join(f.source for f in self.functions) + "\n"

    def function(self, name: str) -> LibraryFunction:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no function {name!r}")

    def families(self, kind: str) -> list[str]:
        return sorted({f.family for f in self.functions if f.kind == kind})

    def call(self, function: str, nums: list[int]) -> Any:
        """What `<library>.<function>(nums)` returns, computed from the library's own source."""
        return _namespace(self.source)[function](list(nums))

    def doc_entries(self) -> list[dict[str, Any]]:
        """The search index's entries for the library (name, kind, signature, doc, phrases of need)."""
        return [
            {
                "name": f"{self.name}.{f.name}",
                "kind": "function",
                "signature": "(nums)",
                "doc": f.doc,
                "needs": f.needs,
                "module": self.name,
            }
            for f in self.functions
        ]


@functools.lru_cache(maxsize=8)
def _namespace(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<toolworld library>", "exec"), namespace)  # the project's own generated code
    return namespace


def sandbox_preamble(library: Library) -> str:
    """One line that, run before candidate code, makes `import <library>` work in the sandbox: it builds the
    module from its source under the library's name. One line, so a traceback's line numbers in the candidate's
    code are off by exactly one."""
    name = library.name
    return (
        f"exec(compile({library.source!r}, {name + '.py'!r}, 'exec'), "
        f"__import__('sys').modules.setdefault({name!r}, __import__('types').ModuleType({name!r})).__dict__)\n"
    )


_PROBES = ([], [0], [4], [-7], [3, 1, 4, 1, 5, 9, 2, 6], [-3, 8, -2, 7, 7, 0, 12], [10, 21, -5, 14, -9, 3])


def _fingerprint(source: str, name: str) -> tuple:
    fn = _namespace(source)[name]
    return tuple(repr(fn(list(p))) for p in _PROBES)


# names a made-up word must not be: a search for it would find the real thing, and code using it would shadow it
_RESERVED = frozenset(sys.stdlib_module_names) | frozenset(dir(builtins)) | frozenset(keyword.kwlist)


def _unique_word(rng: random.Random, taken: set[str], syllables: int) -> str:
    for _ in range(1000):
        word = made_up_word(rng, syllables)
        if word not in taken and word.isidentifier() and word not in _RESERVED:
            taken.add(word)
            return word
    raise RuntimeError("toolworld: ran out of made-up words; lower the number of functions")


def _concept_function(rng: random.Random, family: str, taken: set[str]) -> LibraryFunction:
    behaviour = CONCEPT_FAMILIES[family](rng)
    name, concept = _unique_word(rng, taken, 2), _unique_word(rng, taken, 2)
    source = f"def {name}(nums):\n    {behaviour.body}\n"
    return LibraryFunction(name, "concept", family, concept, behaviour.words, behaviour.needs, source)


def _record_function(rng: random.Random, family: str, taken: set[str]) -> LibraryFunction:
    name, concept = _unique_word(rng, taken, 2), _unique_word(rng, taken, 2)
    stats = rng.sample(sorted(STATISTICS), 3)
    keys: list[str] = []
    while len(keys) < 3:  # three-letter codes that say nothing of what they hold
        code = made_up_word(rng, 1)[:3]
        if code not in keys and code.isidentifier():
            keys.append(code)
    items = ", ".join(f"{k!r}: {STATISTICS[s]}" for k, s in zip(keys, stats))
    source = f"def {name}(nums):\n    nums = list(nums)\n    return {{{items}}}\n"
    needs = (f"{concept} record of a list", f"summary dict with the {' and '.join(stats)}")
    return LibraryFunction(name, "record", family, concept, "", needs, source, tuple(zip(keys, stats)))


def generate_library(seed: int, variants: int = 3, record_families: int = 8) -> Library:
    """The library of world `seed`: `variants` functions per concept family (distinct behaviours only: a draw
    whose outputs on the probe lists repeat another function's, or never change, is drawn again), and
    `record_families` record functions, each its own family."""
    rng = random.Random(f"toolworld-library/{seed}")
    taken: set[str] = set()
    module = _unique_word(rng, taken, 3)
    functions: list[LibraryFunction] = []
    seen: set[tuple] = set()
    for family in CONCEPT_FAMILIES:
        made = 0
        for _ in range(variants * 20):
            f = _concept_function(rng, family, taken)
            fp = _fingerprint(f.source, f.name)
            if fp in seen or len(set(fp)) == 1:
                continue
            seen.add(fp)
            functions.append(f)
            made += 1
            if made == variants:
                break
    functions += [_record_function(rng, f"record_{i}", taken) for i in range(record_families)]
    return Library(module, tuple(functions))


@functools.lru_cache(maxsize=8)
def world_library(seed: int, variants: int = 3, record_families: int = 24) -> Library:
    """The library of a world, built once per process."""
    return generate_library(seed, variants=variants, record_families=record_families)


def task_library(task: Task) -> Library | None:
    """The generated library a task's code may import (None for tasks of other sources). Kept here, apart from the
    task generator, so that the tools that ask it import nothing heavier than this module."""
    spec = task.metadata.get("library") if isinstance(task.metadata, dict) else None
    return world_library(**spec) if spec else None


def candidate_preamble(task: Task) -> str:
    """What runs before a candidate's code for `task` in the sandbox: the library's module, or nothing."""
    library = task_library(task)
    return sandbox_preamble(library) if library is not None else ""
