"""Generated list-pipeline tasks: one task distribution with as many distinct tasks as a study needs.

A task asks for a function of a list of integers that applies one to three list steps (keep some numbers,
change every number, reorder or cut the list) and then, or not, one reduction (sum, count, largest ...).
Every part is a `Step` below: its words for the statement, its Python for the reference solution and
its behaviour for the tests. A family of tasks is drawn from a fixed seed (`family_seed`, not the run's
seed), so every run and every evaluation sees the same tasks:

1. deal the step families (`Step.family`: greater than 3 / 5 / 8 is one family, even / odd another) into a
   training half and a held-out half of about equal size per kind (`split_vocabulary`), so no held-out task
   uses an operation a training task uses;
2. draw `n_train` distinct training pipelines from the training half. Two pipelines are the same task when they
   give the same outputs on a fixed set of probe lists (`sort, reverse` and `sort descending` are one task), and
   a pipeline whose output is the same for every probe is dropped;
3. draw up to 4 x `n_heldout` distinct held-out candidates from the held-out half and keep the first
   `n_heldout` that the near-duplicate check (`agentic_rl.data.overlap`) does not flag against a training task
   (checked again after each drop, until the kept set has no flagged task).

Each task's tests are computed by running its reference solution (this module's own code) on the example
and on `n_tests` random lists, with the empty list among them. The statement gives one example.
Difficulty is the number of steps (1-4); `steps` chooses which counts are drawn.

A built family is kept on disk (`family_cache_path`, under the cache root) as well as in the process: the
near-duplicate check takes seconds, and every run, sweep job and evaluation would otherwise repeat it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from agentic_rl.data import overlap
from agentic_rl.data.overlap import drop_near_duplicates, task_text
from agentic_rl.paths import cache_root
from agentic_rl.runtime.files import atomic_write_text
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

SOURCE = "pipelines"
SPLITS = ("train", "heldout")
PROBES = (
    [],
    [0],
    [5],
    [-3],
    [1, 2, 3, 4, 5, 6],
    [7, -2, 7, 10, -5, 3, 3, 0],
    [12, 9, -8, 4, 4, 15, -1, 6, 2],
    [-6, -4, 11, 8, 1, 13, -9],
)


@dataclass(frozen=True)
class Step:
    """One stage of a pipeline.

    kind: "filter", "map" or "order" (list -> list) or "reduce" (list -> int), the last stage only.
    slug: its part of the function's name. words: the clause of the statement.
    code: the reference's line, an expression of `result` (the list so far).
    apply: the same, in this process, to compute the tests.
    family: steps that differ by a constant or one word (greater than 3 / 5, even / odd, largest /
        smallest) are one family, and a family goes whole to one split (`split_vocabulary`).
    """

    kind: str
    slug: str
    words: str
    code: str
    apply: Callable[[list[int]], object]
    family: str = ""

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.slug)


def _per_constant(
    kind: str, family: str, constants: Sequence[int], slug: str, words: str, code: str, apply: Callable[..., object]
) -> list[Step]:
    """One step per constant `k` of a family: `slug`, `words` and `code` are templates of `{k}`, `apply(xs, k)`.

    Constants widen a family: more distinct tasks, while the family still goes whole to one split.
    """
    return [
        Step(kind, slug.format(k=k), words.format(k=k), code.format(k=k), functools.partial(apply, k=k), family)
        for k in constants
    ]


def _plain_filters() -> list[Step]:
    """The filters with no constant: parity, sign, zeros, repeats, positions."""
    return [
        Step(
            "filter",
            "even",
            "keep only the even numbers",
            "[x for x in result if x % 2 == 0]",
            lambda xs: [x for x in xs if x % 2 == 0],
            "parity",
        ),
        Step(
            "filter",
            "odd",
            "keep only the odd numbers",
            "[x for x in result if x % 2 != 0]",
            lambda xs: [x for x in xs if x % 2 != 0],
            "parity",
        ),
        Step(
            "filter",
            "positive",
            "keep only the numbers above zero",
            "[x for x in result if x > 0]",
            lambda xs: [x for x in xs if x > 0],
            "sign",
        ),
        Step(
            "filter",
            "negative",
            "keep only the numbers below zero",
            "[x for x in result if x < 0]",
            lambda xs: [x for x in xs if x < 0],
            "sign",
        ),
        Step(
            "filter",
            "nonzero",
            "drop every zero",
            "[x for x in result if x != 0]",
            lambda xs: [x for x in xs if x != 0],
        ),
        Step(
            "filter",
            "unique",
            "drop repeated numbers, keeping each number's first occurrence",
            "list(dict.fromkeys(result))",
            lambda xs: list(dict.fromkeys(xs)),
        ),
        Step(
            "filter",
            "even_positions",
            "keep only the numbers at even positions (0, 2, 4, ...)",
            "result[::2]",
            lambda xs: xs[::2],
            "positions",
        ),
        Step(
            "filter",
            "odd_positions",
            "keep only the numbers at odd positions (1, 3, 5, ...)",
            "result[1::2]",
            lambda xs: xs[1::2],
            "positions",
        ),
    ]


def _filters() -> list[Step]:
    return [
        *_plain_filters(),
        *_per_constant(
            "filter",
            "above",
            (1, 2, 3, 4, 5, 6, 8),
            "above_{k}",
            "keep only the numbers greater than {k}",
            "[x for x in result if x > {k}]",
            lambda xs, k: [x for x in xs if x > k],
        ),
        *_per_constant(
            "filter",
            "below",
            (1, 2, 3, 4, 6),
            "below_{k}",
            "keep only the numbers smaller than {k}",
            "[x for x in result if x < {k}]",
            lambda xs, k: [x for x in xs if x < k],
        ),
        *_per_constant(
            "filter",
            "multiples",
            (3, 4, 5),
            "multiples_{k}",
            "keep only the multiples of {k}",
            "[x for x in result if x % {k} == 0]",
            lambda xs, k: [x for x in xs if x % k == 0],
        ),
        *_per_constant(
            "filter",
            "within",
            (2, 3, 5),
            "within_{k}",
            "keep only the numbers between -{k} and {k} (both included)",
            "[x for x in result if -{k} <= x <= {k}]",
            lambda xs, k: [x for x in xs if -k <= x <= k],
        ),
    ]


def _maps() -> list[Step]:
    return [
        Step("map", "squared", "square every number", "[x * x for x in result]", lambda xs: [x * x for x in xs]),
        Step("map", "negated", "negate every number", "[-x for x in result]", lambda xs: [-x for x in xs]),
        Step(
            "map",
            "absolute",
            "replace every number by its absolute value",
            "[abs(x) for x in result]",
            lambda xs: [abs(x) for x in xs],
            "absolute",
        ),
        Step(
            "map",
            "halved",
            "halve every number, rounding down",
            "[x // 2 for x in result]",
            lambda xs: [x // 2 for x in xs],
        ),
        Step(
            "map",
            "last_digit",
            "replace every number by its last digit (of its absolute value)",
            "[abs(x) % 10 for x in result]",
            lambda xs: [abs(x) % 10 for x in xs],
            "absolute",
        ),
        *_per_constant(
            "map",
            "times",
            (2, 3, 4, 5),
            "times_{k}",
            "multiply every number by {k}",
            "[x * {k} for x in result]",
            lambda xs, k: [x * k for x in xs],
        ),
        *_per_constant(
            "map",
            "shift",
            (1, 2, 5, 10),
            "plus_{k}",
            "add {k} to every number",
            "[x + {k} for x in result]",
            lambda xs, k: [x + k for x in xs],
        ),
        *_per_constant(
            "map",
            "shift",
            (1, 3, 4),
            "minus_{k}",
            "subtract {k} from every number",
            "[x - {k} for x in result]",
            lambda xs, k: [x - k for x in xs],
        ),
        *_per_constant(
            "map",
            "mod",
            (3, 4, 5, 7),
            "mod_{k}",
            "replace every number by its remainder modulo {k} (Python's %)",
            "[x % {k} for x in result]",
            lambda xs, k: [x % k for x in xs],
        ),
        *_per_constant(
            "map",
            "capped",
            (0, 3, 5),
            "capped_{k}",
            "replace every number greater than {k} by {k}",
            "[min(x, {k}) for x in result]",
            lambda xs, k: [min(x, k) for x in xs],
        ),
        Step(
            "map",
            "signum",
            "replace every number by its sign (-1, 0 or 1)",
            "[(x > 0) - (x < 0) for x in result]",
            lambda xs: [(x > 0) - (x < 0) for x in xs],
        ),
    ]


def _orders() -> list[Step]:
    return [
        Step("order", "sorted", "sort the numbers in ascending order", "sorted(result)", lambda xs: sorted(xs), "sort"),
        Step(
            "order",
            "sorted_desc",
            "sort the numbers in descending order",
            "sorted(result, reverse=True)",
            lambda xs: sorted(xs, reverse=True),
            "sort",
        ),
        Step("order", "reversed", "reverse the order of the numbers", "result[::-1]", lambda xs: xs[::-1]),
        Step("order", "first_2", "keep only the first two numbers", "result[:2]", lambda xs: xs[:2], "first"),
        Step("order", "first_3", "keep only the first three numbers", "result[:3]", lambda xs: xs[:3], "first"),
        Step("order", "last_2", "keep only the last two numbers", "result[-2:]", lambda xs: xs[-2:], "last"),
        Step("order", "last_3", "keep only the last three numbers", "result[-3:]", lambda xs: xs[-3:], "last"),
        Step("order", "drop_first", "drop the first number", "result[1:]", lambda xs: xs[1:], "drop"),
        Step("order", "drop_last", "drop the last number", "result[:-1]", lambda xs: xs[:-1], "drop"),
        Step(
            "order",
            "rotated",
            "move the first number to the end",
            "result[1:] + result[:1]",
            lambda xs: xs[1:] + xs[:1],
        ),
    ]


def _reductions() -> list[Step]:
    return [
        Step("reduce", "sum", "return their sum (0 for none)", "sum(result)", sum, "total"),
        Step("reduce", "count", "return how many numbers are left", "len(result)", len, "count"),
        Step(
            "reduce",
            "max",
            "return the largest of them (0 if there are none)",
            "max(result, default=0)",
            lambda xs: max(xs, default=0),
            "extreme",
        ),
        Step(
            "reduce",
            "min",
            "return the smallest of them (0 if there are none)",
            "min(result, default=0)",
            lambda xs: min(xs, default=0),
            "extreme",
        ),
        Step(
            "reduce",
            "distinct",
            "return how many different numbers there are",
            "len(set(result))",
            lambda xs: len(set(xs)),
            "count",
        ),
        Step(
            "reduce",
            "product",
            "return their product (1 for none)",
            "math.prod(result)",
            lambda xs: _product(xs),
            "total",
        ),
        Step(
            "reduce",
            "first",
            "return the first of them (0 if there are none)",
            "result[0] if result else 0",
            lambda xs: xs[0] if xs else 0,
            "extreme",
        ),
        Step(
            "reduce",
            "spread",
            "return the largest minus the smallest (0 if there are none)",
            "max(result) - min(result) if result else 0",
            lambda xs: max(xs) - min(xs) if xs else 0,
        ),
        Step(
            "reduce",
            "evens",
            "return how many of them are even",
            "sum(1 for x in result if x % 2 == 0)",
            lambda xs: sum(1 for x in xs if x % 2 == 0),
            "count",
        ),
    ]


def _product(xs: list[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


LIST_STEPS: tuple[Step, ...] = (*_filters(), *_maps(), *_orders())
REDUCTIONS: tuple[Step, ...] = tuple(_reductions())


def _check_vocabulary(steps: Sequence[Step]) -> None:
    """Slugs name tasks and families are dealt per kind: a repeated slug, or a family name that two kinds share
    (its halves could land on both splits), is a mistake in the tables above."""
    slugs = [s.slug for s in steps]
    repeated = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    kinds_of: dict[str, set[str]] = {}
    for s in steps:
        kinds_of.setdefault(s.family, set()).add(s.kind)
    shared = sorted(f for f, kinds in kinds_of.items() if len(kinds) > 1)
    if repeated or shared:
        raise ValueError(f"pipelines: repeated step slugs {repeated}, families of several kinds {shared}")


_check_vocabulary((*LIST_STEPS, *REDUCTIONS))


@dataclass(frozen=True)
class Pipeline:
    steps: tuple[Step, ...]

    @property
    def name(self) -> str:
        # prefixed: a one-step name would otherwise be a word of the statement ("even"), which the
        # near-duplicate check strips from the prose as the function's name
        return "apply_" + "_".join(s.slug for s in self.steps)

    @property
    def returns_list(self) -> bool:
        return self.steps[-1].kind != "reduce"

    def __call__(self, nums: Sequence[int]) -> object:
        value: object = list(nums)
        for step in self.steps:
            value = step.apply(value)  # type: ignore[arg-type]
        return value

    def fingerprint(self) -> tuple:
        return tuple(_frozen(self(p)) for p in PROBES)


def _frozen(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def draw_pipeline(rng: random.Random, n_steps: int, vocabulary: Sequence[Step]) -> Pipeline:
    """`n_steps` steps: list steps of different kinds where possible, then a reduction half of the time (a
    one-step pipeline is a list step or a reduction)."""
    reduce = rng.random() < 0.5
    n_list = n_steps - 1 if reduce else n_steps
    kinds = ["filter", "map", "order"]
    rng.shuffle(kinds)
    chosen: list[Step] = []
    for i in range(n_list):
        kind = kinds[i % len(kinds)]
        options = [s for s in vocabulary if s.kind == kind and s not in chosen]
        chosen.append(rng.choice(options))
    rng.shuffle(chosen)
    if reduce:
        chosen.append(rng.choice([s for s in vocabulary if s.kind == "reduce"]))
    return Pipeline(tuple(chosen))


def reference_source(p: Pipeline) -> str:
    lines = ["import math", "", "", f"def {p.name}(nums):", "    result = list(nums)"]
    for step in p.steps[:-1]:
        lines.append(f"    result = {step.code}")
    lines.append(f"    return {p.steps[-1].code}")
    return "\n".join(lines) + "\n"


def _clauses(p: Pipeline) -> str:
    parts = [s.words for s in p.steps]
    if p.returns_list:
        parts.append("return the resulting list")
    if len(parts) == 1:
        return parts[0]
    return ", then ".join(parts[:-1]) + ", and finally " + parts[-1]


def example_input(p: Pipeline, rng: random.Random) -> list[int]:
    """A short list on which every step does something visible, if one is found in a few tries."""
    best = PROBES[6]
    for _ in range(50):
        candidate = [rng.randint(-9, 15) for _ in range(rng.randint(4, 7))]
        if p(candidate) not in ([], 0, p([])):
            return candidate
    return list(best)


def statement(p: Pipeline, example: list[int]) -> str:
    ret = "list[int]" if p.returns_list else "int"
    return (
        f"Write a Python function `{p.name}(nums: list[int]) -> {ret}` that takes a list of integers `nums`, "
        f"and does this: {_clauses(p)}. Example: `{p.name}({example})` returns `{p(example)!r}`."
    )


def test_source(p: Pipeline, cases: Sequence[list[int]]) -> str:
    lines = [f"from solution import {p.name}", ""]
    for i, case in enumerate(cases):
        lines += ["", f"def test_case_{i}():", f"    assert {p.name}({case!r}) == {p(case)!r}", ""]
    return "\n".join(lines)


def to_task(p: Pipeline, split: str, index: int, family_seed: int, n_tests: int) -> Task:
    rng = random.Random(f"{family_seed}/{p.name}")
    example = example_input(p, rng)
    cases = [example, [], *([rng.randint(-12, 20) for _ in range(rng.randint(1, 9))] for _ in range(n_tests - 2))]
    return Task(
        task_id=f"{SOURCE}/{family_seed}/{split}/{index:04d}_{p.name}",
        prompt=statement(p, example),
        tests=test_source(p, cases),
        harness="pytest",
        entry_point=p.name,
        reference_solution=reference_source(p),
        metadata={"source": SOURCE, "split": split, "difficulty": len(p.steps), "steps": [s.slug for s in p.steps]},
    )


def split_vocabulary(rng: random.Random) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
    """The step families of each kind dealt at random into two halves, the training split's and the held-out
    split's: a held-out task is made of operations no training task uses (every family whole on one side)."""
    train: list[Step] = []
    heldout: list[Step] = []
    for kind in ("filter", "map", "order", "reduce"):
        of_kind = [s for s in (*LIST_STEPS, *REDUCTIONS) if s.kind == kind]
        families = sorted({s.family for s in of_kind})
        rng.shuffle(families)
        # largest families first, each to the side with fewer steps so far (ties at random): halves of about
        # equal size
        families.sort(key=lambda f: -sum(s.family == f for s in of_kind))
        sides: tuple[list[Step], list[Step]] = ([], [])
        for family in families:
            side = (
                sides[0]
                if len(sides[0]) < len(sides[1]) or (len(sides[0]) == len(sides[1]) and rng.random() < 0.5)
                else sides[1]
            )
            side.extend(s for s in of_kind if s.family == family)
        train += sides[0]
        heldout += sides[1]
    return tuple(train), tuple(heldout)


def distinct_pipelines(
    rng: random.Random,
    count: int,
    steps: Sequence[int],
    vocabulary: Sequence[Step],
    seen: set[tuple],
    required: int | None = None,
) -> list[Pipeline]:
    """Up to `count` pipelines over `vocabulary` whose fingerprints are not in `seen` (which they join); fewer
    than `required` (default: `count`) is an error."""
    found: list[Pipeline] = []
    drawn: set[Pipeline] = set()
    for _ in range(count * 200):
        p = draw_pipeline(rng, rng.choice(list(steps)), vocabulary)
        if p in drawn:  # most draws repeat one: it was kept (its fingerprint is in `seen`) or rejected, as now
            continue
        drawn.add(p)
        fp = p.fingerprint()
        if fp in seen or len(set(fp)) == 1:
            continue
        seen.add(fp)
        found.append(p)
        if len(found) == count:
            break
    if len(found) >= (count if required is None else required):
        return found
    raise ValueError(
        f"pipelines: only {len(found)} distinct tasks with steps={list(steps)} from half of the steps; ask for "
        f"fewer tasks or allow more steps"
    )


@functools.lru_cache(maxsize=4)
def _family(
    family_seed: int, n_train: int, n_heldout: int, steps: tuple[int, ...], n_tests: int
) -> dict[str, tuple[Task, ...]]:
    if not steps or any(n < 1 or n > 4 for n in steps):
        raise ValueError(f"pipelines: steps must be counts between 1 and 4, got {list(steps)}")
    if n_train < 1 or n_heldout < 1:
        raise ValueError(f"pipelines: n_train and n_heldout must be positive, got {n_train}, {n_heldout}")
    if n_tests < 2:
        raise ValueError(f"pipelines: n_tests must be at least 2 (the example and the empty list), got {n_tests}")
    path = family_cache_path(family_seed, n_train, n_heldout, steps, n_tests)
    family = read_family(path, {"train": n_train, "heldout": n_heldout})
    if family is None:
        family = _generate_family(family_seed, n_train, n_heldout, steps, n_tests)
        write_family(path, family)
    return family


def family_cache_path(family_seed: int, n_train: int, n_heldout: int, steps: Sequence[int], n_tests: int) -> Path:
    """Where a built family is kept: `<cache root>/tasks/pipelines-<key>.json`. The key hashes the parameters and
    the source of the modules that decide the tasks (this one and the near-duplicate check), so a change to
    either builds afresh instead of reading tasks an older generator made."""
    h = hashlib.sha256(repr((family_seed, n_train, n_heldout, tuple(steps), n_tests)).encode())
    for module in (Path(__file__), Path(overlap.__file__)):
        h.update(module.read_bytes())
    return cache_root() / "tasks" / f"pipelines-{h.hexdigest()[:16]}.json"


def read_family(path: Path, sizes: dict[str, int]) -> dict[str, tuple[Task, ...]] | None:
    """The family kept at `path`, or None when there is none or it cannot be read back whole with `sizes` tasks
    per split (a damaged file is built again and rewritten)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        family = {split: tuple(Task(**row) for row in data[split]) for split in SPLITS}
        if {split: len(tasks) for split, tasks in family.items()} != sizes:
            raise ValueError(f"{[len(family[s]) for s in SPLITS]} tasks where {list(sizes.values())} belong")
        return family
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.warning("pipelines: the cached family %s is unreadable (%s); building it again", path, exc)
        return None


def write_family(path: Path, family: dict[str, tuple[Task, ...]]) -> None:
    """Keep a built family for the next process; a cache that cannot be written costs only the next build."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({split: [asdict(t) for t in tasks] for split, tasks in family.items()}))
    except OSError as exc:
        logger.warning("pipelines: could not keep the family in %s (%s); the next run builds it again", path, exc)


def _generate_family(
    family_seed: int, n_train: int, n_heldout: int, steps: tuple[int, ...], n_tests: int
) -> dict[str, tuple[Task, ...]]:
    rng = random.Random(family_seed)
    train_vocabulary, heldout_vocabulary = split_vocabulary(rng)
    seen: set[tuple] = set()
    train_pipelines = distinct_pipelines(rng, n_train, steps, train_vocabulary, seen)
    train = [to_task(p, "train", i, family_seed, n_tests) for i, p in enumerate(train_pipelines)]
    # up to four times as many candidates as wanted: the near-duplicate check drops some (about half of the
    # two-step candidates of the default family: they share the statement's wording with some training task)
    candidates = distinct_pipelines(rng, 4 * n_heldout, steps, heldout_vocabulary, seen, required=n_heldout)
    pool = [to_task(p, "heldout", i, family_seed, n_tests) for i, p in enumerate(candidates)]
    heldout = drop_near_duplicates(pool, train, task_text, wanted=n_heldout)
    if len(heldout) < n_heldout:
        raise ValueError(
            f"pipelines: only {len(heldout)} of {len(candidates)} held-out candidates are not near-duplicates of "
            f"a training task; ask for fewer (n_heldout) or fewer training tasks"
        )
    return {"train": tuple(train), "heldout": tuple(heldout)}


def build_family(
    family_seed: int = 0,
    n_train: int = 200,
    n_heldout: int = 300,
    steps: Sequence[int] = (1, 2, 3),
    n_tests: int = 6,
) -> dict[str, list[Task]]:
    """Both splits of one family (module docstring): {"train": [...], "heldout": [...]}."""
    family = _family(family_seed, n_train, n_heldout, tuple(steps), n_tests)
    return {split: list(tasks) for split, tasks in family.items()}


def load_pipelines(
    split: str = "train",
    family_seed: int = 0,
    n_train: int = 200,
    n_heldout: int = 300,
    steps: Sequence[int] = (1, 2, 3),
    n_tests: int = 6,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int | None = None,
) -> list[Task]:
    """The tasks of `split` ("train" or "heldout") of the family; with `shuffle` in the order
    `random.Random(seed)` draws (the run's seed: which training tasks a run sees first), then the first `limit`."""
    if split not in SPLITS:
        raise ValueError(f"pipelines: unknown split {split!r}; valid: {', '.join(SPLITS)}")
    if limit is not None and limit < 0:
        raise ValueError(f"pipelines: limit must be a non-negative integer or null, got {limit!r}")
    tasks = build_family(family_seed, n_train, n_heldout, steps, n_tests)[split]
    if shuffle:
        random.Random(seed).shuffle(tasks)
    return tasks if limit is None else tasks[:limit]


def family_digest(tasks: Sequence[Task]) -> str:
    """A short hash of the tasks' ids, statements and tests (records say which tasks a run saw)."""
    h = hashlib.sha256()
    for t in tasks:
        h.update(f"{t.task_id}\0{t.prompt}\0{t.tests}\0".encode())
    return h.hexdigest()[:12]
