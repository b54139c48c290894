"""The tasks of a tool world: one distribution in which each of the three tools has a job.

Three task types, each recorded as `metadata["task_type"]`:

- `docs`: compute the *concept* of a list ("return the plimth of nums"), optionally after one plain list step.
  Only the generated library's documentation says what a plimth is and which function computes it, so the
  task needs a search. The statement says what to compute and that the library has it, never which function.
- `plain`: a list pipeline in words (`agentic_rl.data.pipelines`): plain Python, no library, no search.
- `exec`: read a statistic out of a record that a record function of the library returns (a dict under made-up
  codes). The documentation lists the statistics but not their codes, so running the function once is what pays;
  the tests pass records with their keys shuffled and values that change, so neither a constant nor a position
  in the dict passes.

The split deals whole families to one side: concept families (all variants of "weighted position sum modulo m"),
record functions, and the pipelines' step families. A held-out `docs` task therefore needs a function no
training task used, under a name and a concept word never seen in training: a gain there means the policy
learned to search, not that it memorised names. The held-out candidates then go through the near-duplicate
check against the training tasks (`agentic_rl.data.overlap`), as the pipelines do.

Every task carries a demonstration (`metadata["demo"]`: the calls a scripted agent makes from the reference:
search for the need, run the code, submit) for the warm-up stage.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import random
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agentic_rl.data import overlap, pipelines
from agentic_rl.data.overlap import drop_near_duplicates, task_text
from agentic_rl.data.toolworld import library as L
from agentic_rl.data.toolworld.library import world_library
from agentic_rl.paths import cache_root
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

SOURCE = "toolworld"
SPLITS = ("train", "heldout")
TASK_TYPES = ("docs", "plain", "exec")
DEFAULT_MIX = {"docs": 0.5, "plain": 0.35, "exec": 0.15}


def _deal(rng: random.Random, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Names shuffled and cut in two halves (the first half one larger when odd)."""
    names = list(names)
    rng.shuffle(names)
    half = (len(names) + 1) // 2
    return names[:half], names[half:]


def _cases(rng: random.Random, example: list[int], n_tests: int) -> list[list[int]]:
    return [example, [], *([rng.randint(-12, 20) for _ in range(rng.randint(2, 9))] for _ in range(n_tests - 2))]


def _telling_example(rng: random.Random, fn: Any) -> list[int]:
    """A short list whose answer is neither 0 nor the empty list's answer, if one turns up in a few tries."""
    for _ in range(50):
        candidate = [rng.randint(-9, 15) for _ in range(rng.randint(4, 7))]
        if fn(candidate) not in (0, fn([])):
            return candidate
    return [3, 1, 4, 1, 5, 9]


def _varied(outputs: Sequence[Any], inputs: Sequence[list[int]]) -> bool:
    """Tests that no trivial candidate passes: a constant fails (the answers differ between cases) and so does
    the identity (some answer is not its input)."""
    return len({repr(o) for o in outputs}) > 1 and any(o != i for o, i in zip(outputs, inputs))


def _docs_task(
    lib: L.Library, fn: L.LibraryFunction, step: pipelines.Step | None, spec: dict, n_tests: int
) -> Task | None:
    def answer(nums: list[int]) -> Any:
        return lib.call(fn.name, step.apply(list(nums)) if step else list(nums))  # type: ignore[arg-type]

    entry = f"{fn.concept}_of" + (f"_{step.slug}" if step else "")
    rng = random.Random(f"{spec['seed']}/{entry}")
    example = _telling_example(rng, answer)
    cases = _cases(rng, example, n_tests)
    outputs = [answer(c) for c in cases]
    if not _varied(outputs, cases):
        return None
    doing = f"first {step.words}, then return the {fn.concept} of what is left" if step else f"return its {fn.concept}"
    prompt = (
        f"Write a Python function `{entry}(nums: list[int]) -> int` that takes a list of integers `nums` and does "
        f"this: {doing}. Example: `{entry}({example})` returns `{answer(example)!r}`. The `{lib.name}` library "
        f"(`import {lib.name}`) can compute the {fn.concept} of a list; its documentation says how."
    )
    body = ["    result = list(nums)"] + ([f"    result = {step.code}"] if step else [])
    reference = "\n".join(
        [
            "import math",
            f"import {lib.name}",
            "",
            "",
            f"def {entry}(nums):",
            *body,
            f"    return {lib.name}.{fn.name}(result)",
        ]
    )
    demo = [
        {"tool": "search", "content": f"{lib.name} {fn.concept}"},
        {"tool": "execute", "content": f"{reference}\n\n\nprint({entry}({example}))"},
        {"tool": "submit", "content": reference + "\n"},
    ]
    tests = _case_tests(entry, cases, outputs)
    return _make_task(entry, prompt, tests, reference, "docs", spec, fn.family, demo, difficulty=1 + bool(step))


def _record_cases(lib: L.Library, fn: L.LibraryFunction, n_tests: int) -> list[dict]:
    """Records of `fn` for random lists, each with its keys in a shuffled order, so only reading the right code
    passes (not a position in the dict, not a constant: the values change from case to case)."""
    rng = random.Random(f"{lib.name}/{fn.name}/records")
    codes = [code for code, _ in fn.fields]
    for _ in range(100):
        cases = []
        for _ in range(n_tests):
            record = lib.call(fn.name, [rng.randint(-12, 20) for _ in range(rng.randint(2, 9))])
            keys = list(record)
            rng.shuffle(keys)
            cases.append({k: record[k] for k in keys})
        columns = {code: [case[code] for case in cases] for code in codes}
        # every code's values change between cases, and no two codes agree on every case: only the right one passes
        if all(len(set(v)) > 1 for v in columns.values()) and len({tuple(v) for v in columns.values()}) == len(codes):
            return cases
    raise RuntimeError(f"toolworld: no telling test records for {fn.name}; raise n_tests")


def _exec_tasks(lib: L.Library, fn: L.LibraryFunction, spec: dict, n_tests: int) -> list[Task]:
    tasks = []
    cases = _record_cases(lib, fn, n_tests)
    for code, statistic in fn.fields:
        slug = statistic.split(" (")[0].replace(" ", "_")
        entry = f"{fn.concept}_{slug}"
        prompt = (
            f"`{lib.name}.{fn.name}(nums)` (`import {lib.name}`) returns the {fn.concept} record of a list of "
            f"integers: a dict that maps short codes to statistics of the list. Write a Python function "
            f"`{entry}(record: dict) -> int` that takes such a record and returns the value it holds for the "
            f"{statistic}. Run the function on a list of your choice to see which code holds what."
        )
        reference = f'def {entry}(record):\n    return record["{code}"]'
        demo = [
            {"tool": "execute", "content": f"import {lib.name}\nprint({lib.name}.{fn.name}([3, -8, 4, 6, -1]))"},
            {"tool": "submit", "content": reference + "\n"},
        ]
        tests = _case_tests(entry, cases, [case[code] for case in cases])
        tasks.append(_make_task(entry, prompt, tests, reference, "exec", spec, fn.family, demo, difficulty=1))
    return tasks


def _plain_task(p: pipelines.Pipeline, spec: dict, n_tests: int) -> Task | None:
    rng = random.Random(f"{spec['seed']}/{p.name}")
    example = pipelines.example_input(p, rng)
    cases = _cases(rng, example, n_tests)
    if not _varied([p(c) for c in cases], cases):
        return None
    reference = pipelines.reference_source(p).rstrip("\n")
    demo = [
        {"tool": "execute", "content": f"{reference}\n\nprint({p.name}({example}))"},
        {"tool": "submit", "content": reference + "\n"},
    ]
    family = "+".join(s.family for s in p.steps)
    tests = pipelines.test_source(p, cases)
    prompt = pipelines.statement(p, example)
    return _make_task(p.name, prompt, tests, reference, "plain", spec, family, demo, difficulty=len(p.steps))


def _case_tests(entry: str, cases: Sequence[Any], outputs: Sequence[Any]) -> str:
    """A pytest file with one test per case, its expected value computed here."""
    lines = [f"from solution import {entry}", ""]
    for i, (case, out) in enumerate(zip(cases, outputs)):
        lines += ["", f"def test_case_{i}():", f"    assert {entry}({case!r}) == {out!r}", ""]
    return "\n".join(lines)


def _make_task(
    entry: str,
    prompt: str,
    tests: str,
    reference: str,
    task_type: str,
    spec: dict,
    family: str,
    demo: list[dict],
    difficulty: int,
) -> Task:
    return Task(
        task_id=f"{SOURCE}/{spec['seed']}/{task_type}/{entry}",
        prompt=prompt,
        tests=tests,
        harness="pytest",
        entry_point=entry,
        reference_solution=reference + "\n",
        metadata={
            "source": SOURCE,
            "task_type": task_type,
            "family": family,
            "difficulty": difficulty,
            "library": dict(spec),
            "demo": demo,
        },
    )


def _candidates(
    lib: L.Library,
    concept_families: Sequence[str],
    record_families: Sequence[str],
    vocabulary: Sequence[pipelines.Step],
    spec: dict,
    n_tests: int,
    rng: random.Random,
    n_plain: int,
    seen: set[tuple],
) -> dict[str, list[Task]]:
    """Every docs and exec task of one side's families, and `n_plain` plain ones, each list shuffled."""
    list_steps = [s for s in vocabulary if s.kind != "reduce"]
    docs = []
    for fn in (f for f in lib.functions if f.family in concept_families):
        for step in (None, *list_steps):
            task = _docs_task(lib, fn, step, spec, n_tests)
            if task is not None:
                docs.append(task)
    exec_ = [t for fn in lib.functions if fn.family in record_families for t in _exec_tasks(lib, fn, spec, n_tests)]
    plain_pipes = pipelines.distinct_pipelines(rng, n_plain, (1, 2), vocabulary, seen, required=0)
    plain = [t for p in plain_pipes if (t := _plain_task(p, spec, n_tests)) is not None]
    # one-step docs tasks first: every function is reached by a task before any gets a second one
    rng.shuffle(docs)
    docs.sort(key=lambda t: t.metadata["difficulty"])
    rng.shuffle(exec_)
    return {"docs": docs, "plain": plain, "exec": exec_}


def _counts(n: int, mix: dict[str, float]) -> dict[str, int]:
    unknown = set(mix) - set(TASK_TYPES)
    if unknown or any(v < 0 for v in mix.values()) or not sum(mix.values()):
        raise ValueError(f"toolworld: mix must give non-negative shares of {TASK_TYPES}, got {dict(mix)}")
    total = sum(mix.values())
    counts = {t: int(round(n * mix.get(t, 0) / total)) for t in TASK_TYPES}
    counts["docs"] += n - sum(counts.values())  # rounding
    return counts


def _take(pool: dict[str, list[Task]], counts: dict[str, int], split: str) -> list[Task]:
    short = {t: (len(pool[t]), c) for t, c in counts.items() if len(pool[t]) < c}
    if short:
        raise ValueError(
            f"toolworld: the {split} split has too few distinct tasks of type(s) "
            + ", ".join(f"{t} ({have} for {want})" for t, (have, want) in short.items())
            + "; ask for fewer tasks (n_train / n_heldout) or change the mix"
        )
    tasks = [task for t in TASK_TYPES for task in pool[t][: counts[t]]]
    # types interleaved: the first N tasks of a split (an evaluation's `limit`) are a mix like the whole
    random.Random(f"toolworld-order/{split}").shuffle(tasks)
    return tasks


def _generate_world(spec: dict, n_train: int, n_heldout: int, n_tests: int, mix: dict) -> dict[str, list[Task]]:
    lib = world_library(**spec)
    rng = random.Random(f"toolworld-split/{spec['seed']}")
    concept_sides = _deal(rng, lib.families("concept"))
    record_sides = _deal(rng, lib.families("record"))
    vocab_sides = pipelines.split_vocabulary(rng)
    seen: set[tuple] = set()
    counts = {"train": _counts(n_train, mix), "heldout": _counts(n_heldout, mix)}
    pools = {
        split: _candidates(
            lib, concept_sides[i], record_sides[i], vocab_sides[i], spec, n_tests, rng, 4 * counts[split]["plain"], seen
        )
        for i, split in enumerate(SPLITS)
    }
    train = _take(pools["train"], counts["train"], "train")
    heldout_pool = {
        t: drop_near_duplicates(pools["heldout"][t], train, task_text, wanted=counts["heldout"][t])
        for t in ("docs", "plain")
    }
    # Every exec task has the same shape (`return record["<code>"]`), so the lexical check flags them all. What it
    # guards against, an answer remembered from training, cannot happen here: each record function and its codes
    # belong to one split. Checked instead: no held-out answer code is a training answer.
    heldout_pool["exec"] = _unseen_answers(pools["heldout"]["exec"], train)
    return {"train": train, "heldout": _take(heldout_pool, counts["heldout"], "heldout")}


def _unseen_answers(tasks: Sequence[Task], train: Sequence[Task]) -> list[Task]:
    seen = {t.reference_solution for t in train}
    return [t for t in tasks if t.reference_solution not in seen]


def world_cache_path(spec: dict, n_train: int, n_heldout: int, n_tests: int, mix: dict) -> Path:
    """Where a built world is kept; the key covers the parameters and the code that decides the tasks."""
    h = hashlib.sha256(json.dumps([spec, n_train, n_heldout, n_tests, mix], sort_keys=True).encode())
    for module in (Path(__file__), Path(L.__file__), Path(pipelines.__file__), Path(overlap.__file__)):
        h.update(module.read_bytes())
    return cache_root() / "tasks" / f"toolworld-{h.hexdigest()[:16]}.json"


@functools.lru_cache(maxsize=4)
def _world(spec_items: tuple, n_train: int, n_heldout: int, n_tests: int, mix_items: tuple) -> dict[str, tuple]:
    spec, mix = dict(spec_items), dict(mix_items)
    if n_train < 1 or n_heldout < 1:
        raise ValueError(f"toolworld: n_train and n_heldout must be positive, got {n_train}, {n_heldout}")
    if n_tests < 3:
        raise ValueError(
            f"toolworld: n_tests must be at least 3 (the example, the empty list, one more), got {n_tests}"
        )
    path = world_cache_path(spec, n_train, n_heldout, n_tests, mix)
    sizes = {"train": n_train, "heldout": n_heldout}
    world = pipelines.read_family(path, sizes)
    if world is None:
        world = {
            split: tuple(tasks) for split, tasks in _generate_world(spec, n_train, n_heldout, n_tests, mix).items()
        }
        pipelines.write_family(path, world)
    return world


def load_toolworld(
    split: str = "train",
    world_seed: int = 0,
    n_train: int = 160,
    n_heldout: int = 240,
    n_tests: int = 6,
    mix: dict[str, float] | None = None,
    variants: int = 3,
    record_families: int = 24,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int | None = None,
) -> list[Task]:
    """The tasks of `split` ("train" or "heldout") of world `world_seed`; with `shuffle` in the order the run's
    `seed` draws, then the first `limit`. The world (its library and both splits) depends on `world_seed` and the
    sizes only, so every run and evaluation of a study sees the same tasks."""
    if split not in SPLITS:
        raise ValueError(f"toolworld: unknown split {split!r}; valid: {', '.join(SPLITS)}")
    if limit is not None and limit < 0:
        raise ValueError(f"toolworld: limit must be a non-negative integer or null, got {limit!r}")
    spec = {"seed": int(world_seed), "variants": int(variants), "record_families": int(record_families)}
    shares = dict(mix or DEFAULT_MIX)
    world = _world(tuple(sorted(spec.items())), n_train, n_heldout, n_tests, tuple(sorted(shares.items())))
    tasks = list(world[split])
    if shuffle:
        random.Random(seed).shuffle(tasks)
    return tasks if limit is None else tasks[:limit]


def world_summary(tasks: Sequence[Task]) -> dict[str, Any]:
    """Counts per task type and family (for records and tests)."""
    by_type: dict[str, int] = {}
    families: dict[str, set[str]] = {}
    for t in tasks:
        kind = t.metadata.get("task_type", "?")
        by_type[kind] = by_type.get(kind, 0) + 1
        families.setdefault(kind, set()).add(t.metadata.get("family", ""))
    return {"by_type": by_type, "families": {k: sorted(v) for k, v in families.items()}}


def as_rows(tasks: Sequence[Task]) -> list[dict[str, Any]]:
    return [asdict(t) for t in tasks]
