"""The generated list-pipeline tasks (`agentic_rl.data.pipelines`): every reference passes its own tests and the
tests tell tasks apart, the two splits share no step family and no near-duplicate, a family is the same every
time it is built, and bad arguments get errors that say what to change."""

from __future__ import annotations

import dataclasses
import random
import sys
import types
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from agentic_rl.data import overlap, pipelines
from agentic_rl.data.overlap import Text, cross_split_scores
from agentic_rl.data.pipelines import (
    LIST_STEPS,
    PROBES,
    REDUCTIONS,
    Pipeline,
    build_family,
    draw_pipeline,
    family_digest,
    load_pipelines,
    split_vocabulary,
)
from agentic_rl.types import Task

REPO_ROOT = Path(__file__).resolve().parents[2]
STEP_BY_SLUG = {s.slug: s for s in (*LIST_STEPS, *REDUCTIONS)}
SMALL = {"n_train": 40, "n_heldout": 40, "steps": (1, 2, 3), "n_tests": 5}


def pipeline_of(task: Task) -> Pipeline:
    return Pipeline(tuple(STEP_BY_SLUG[slug] for slug in task.metadata["steps"]))


def run_in_process(solution: str, tests: str) -> tuple[int, int]:
    """(passed, run) of the test functions in `tests`, importing `solution` as the module `solution`."""
    module = types.ModuleType("solution")
    exec(compile(solution, "solution.py", "exec"), module.__dict__)
    previous = sys.modules.get("solution")
    sys.modules["solution"] = module
    try:
        namespace: dict = {}
        exec(compile(tests, "test_solution.py", "exec"), namespace)
    finally:
        if previous is None:
            sys.modules.pop("solution", None)
        else:
            sys.modules["solution"] = previous
    passed = run = 0
    for name, fn in namespace.items():
        if name.startswith("test_") and callable(fn):
            run += 1
            try:
                fn()
            except AssertionError:
                continue
            passed += 1
    return passed, run


@pytest.fixture(scope="module")
def family() -> dict[str, list[Task]]:
    return build_family(family_seed=3, **SMALL)


def all_tasks(family: dict[str, list[Task]]) -> list[Task]:
    return family["train"] + family["heldout"]


# ---------------------------------------------------------------- the tasks


def test_sizes_ids_and_names(family):
    assert len(family["train"]) == SMALL["n_train"]
    assert len(family["heldout"]) == SMALL["n_heldout"]
    tasks = all_tasks(family)
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert len({t.entry_point for t in tasks}) == len(tasks)
    for t in tasks:
        assert t.harness == "pytest"
        assert t.metadata["source"] == "pipelines"
        assert t.metadata["difficulty"] == len(t.metadata["steps"]) in SMALL["steps"]
        assert f"`{t.entry_point}(nums: list[int]) ->" in t.prompt, "the statement gives the exact signature"
        assert t.tests.startswith(f"from solution import {t.entry_point}\n")
        assert t.tests.count("def test_case_") == SMALL["n_tests"]
        assert f"{t.entry_point}([])" in t.tests, "the empty list is always a case"


def test_no_two_tasks_are_the_same_function(family):
    fingerprints = [pipeline_of(t).fingerprint() for t in all_tasks(family)]
    assert len(set(fingerprints)) == len(fingerprints)
    # and none is a constant function of the list
    assert all(len(set(fp)) > 1 for fp in fingerprints)


def test_every_reference_passes_its_own_tests(family):
    for t in all_tasks(family):
        passed, run = run_in_process(t.reference_solution, t.tests)
        assert run == SMALL["n_tests"] and passed == run, t.task_id


def test_statement_example_is_what_the_reference_returns(family):
    for t in all_tasks(family):
        example = t.prompt.split("Example: `", 1)[1].split("` returns `")
        call, expected = example[0], example[1].rstrip("`.")
        namespace: dict = {}
        exec(t.reference_solution, namespace)
        assert repr(eval(call, namespace)) == expected, t.task_id


def test_tests_tell_the_tasks_apart(family):
    """Another task's reference, renamed to this task's entry point, fails this task's tests in most pairs:
    the tests check the function asked for, not any list function."""
    tasks = all_tasks(family)
    rng = random.Random(0)
    fooled = 0
    pairs = 0
    for t in tasks:
        for other in rng.sample([o for o in tasks if o is not t], 8):
            impostor = other.reference_solution.replace(f"def {other.entry_point}(", f"def {t.entry_point}(")
            passed, run = run_in_process(impostor, t.tests)
            pairs += 1
            fooled += passed == run
    assert fooled / pairs < 0.02, f"{fooled} of {pairs} other tasks' references pass"


def test_a_stub_fails(family):
    for t in all_tasks(family):
        stub = f"def {t.entry_point}(nums):\n    return None\n"
        assert run_in_process(stub, t.tests)[0] < SMALL["n_tests"]


def test_references_pass_and_stubs_fail_in_the_sandbox(family):
    """The sandbox that grades the policy gives the same verdicts as running the tests here: references pass,
    and `return nums` passes exactly where it passes in process (a sample of each split)."""
    from agentic_rl.sandbox import run_tests

    sample = family["train"][:6] + family["heldout"][:6]
    jobs = [(t.reference_solution, t) for t in sample]
    jobs += [(f"def {t.entry_point}(nums):\n    return nums\n", t) for t in sample]

    def grade(job):
        code, t = job
        return run_tests(code, t.tests, harness="pytest", entry_point=t.entry_point)

    with ThreadPoolExecutor(4) as pool:
        reports = list(pool.map(grade, jobs))
    for (code, t), report in zip(jobs, reports):
        if code == t.reference_solution:
            assert report.passed and report.n_tests == SMALL["n_tests"], (t.task_id, report.detail)
        else:
            passed, run = run_in_process(code, t.tests)
            assert report.passed == (passed == run), (t.task_id, report.detail)


# ---------------------------------------------------------------- the split


def test_splits_share_no_step_family(family):
    def families(tasks):
        return {STEP_BY_SLUG[slug].family for t in tasks for slug in t.metadata["steps"]}

    assert families(family["train"]).isdisjoint(families(family["heldout"]))


def test_vocabulary_halves_cover_every_step_with_whole_families():
    train, heldout = split_vocabulary(random.Random(11))
    assert set(train) | set(heldout) == set(LIST_STEPS) | set(REDUCTIONS)
    assert not set(train) & set(heldout)
    assert {s.family for s in train}.isdisjoint({s.family for s in heldout})
    for kind in ("filter", "map", "order", "reduce"):
        n_train = sum(s.kind == kind for s in train)
        n_heldout = sum(s.kind == kind for s in heldout)
        assert n_train >= 1 and n_heldout >= 1, kind
        assert abs(n_train - n_heldout) <= 3, (kind, n_train, n_heldout)


def test_no_heldout_task_is_a_near_duplicate_of_a_training_task(family):
    def texts(tasks):
        return [Text(t.entry_point, t.prompt, t.reference_solution) for t in tasks]

    scores = cross_split_scores(texts(family["heldout"]), texts(family["train"]))
    assert scores, "every held-out task was scored"
    assert not [s for s in scores if s.flagged]


def test_flagged_candidates_are_dropped(monkeypatch):
    """A candidate the check flags never reaches the held-out split (here: the candidates whose name hashes to an
    even number, flagged whenever they are among the tasks checked), and the check is repeated on the first
    n_heldout until the kept tasks pass it."""
    dropped: set[str] = set()
    calls = []

    def flag_even_hashes(held_out, train):
        calls.append(len(held_out))
        flagged = {i for i, text in enumerate(held_out) if zlib.crc32(text.name.encode()) % 2 == 0}
        dropped.update(held_out[i].name for i in flagged)
        return flagged

    monkeypatch.setattr(overlap, "flagged_positions", flag_even_hashes)
    heldout = pipelines._generate_family(5, 10, 10, (1, 2, 3), 4)["heldout"]
    assert len(heldout) == 10
    assert dropped and not dropped & {t.entry_point for t in heldout}
    assert len(calls) > 2 and calls == [10] * len(calls)  # re-checked until the chosen ten pass


# ---------------------------------------------------------------- the same every time


def test_a_family_is_the_same_every_time_and_differs_by_seed():
    params = (SMALL["n_train"], SMALL["n_heldout"], SMALL["steps"], SMALL["n_tests"])
    first = pipelines._generate_family(7, *params)  # built, not read back from any cache
    again = pipelines._generate_family(7, *params)
    other = pipelines._generate_family(8, *params)
    for split in ("train", "heldout"):
        assert family_digest(first[split]) == family_digest(again[split])
        assert family_digest(first[split]) != family_digest(other[split])


# ---------------------------------------------------------------- kept on disk


@pytest.fixture
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTIC_RL_CACHE_DIR", str(tmp_path))
    pipelines._family.cache_clear()  # each test starts as a new process would
    yield tmp_path
    pipelines._family.cache_clear()


def forbid_building(monkeypatch):
    def build(*args):
        raise AssertionError("the family was built again although it is on disk")

    monkeypatch.setattr(pipelines, "_generate_family", build)


def test_the_next_process_reads_the_family_from_disk_instead_of_building_it(cache_dir, monkeypatch):
    built = build_family(family_seed=11, **SMALL)
    path = pipelines.family_cache_path(11, **SMALL)
    assert path.is_file() and path.parent.parent == cache_dir
    pipelines._family.cache_clear()
    forbid_building(monkeypatch)
    assert build_family(family_seed=11, **SMALL) == built  # every field of every task, in order
    assert load_pipelines("heldout", family_seed=11, limit=3, **SMALL) == built["heldout"][:3]


def test_each_parameter_and_the_generator_source_have_their_own_cache_file(monkeypatch):
    base = {"family_seed": 11, **SMALL}
    original = pipelines.family_cache_path(**base)
    changed = [{"family_seed": 12}, {"n_train": 41}, {"n_heldout": 39}, {"steps": (1, 2)}, {"n_tests": 6}]
    paths = {pipelines.family_cache_path(**{**base, **change}) for change in changed}
    assert original not in paths and len(paths) == len(changed)
    real_read_bytes = Path.read_bytes

    def edited_overlap(self: Path) -> bytes:  # the near-duplicate check changed: its tasks may differ
        data = real_read_bytes(self)
        return data + b"\n# edited\n" if self.name == "overlap.py" else data

    monkeypatch.setattr(Path, "read_bytes", edited_overlap)
    assert pipelines.family_cache_path(**base) != original


@pytest.mark.parametrize(
    "damage",
    [
        "{not json",
        '{"train": []}',  # a split missing
        '{"train": [{"bogus": 1}], "heldout": []}',  # not a task
        '{"train": [], "heldout": []}',  # well formed, but not the family asked for
    ],
)
def test_a_damaged_cache_file_is_built_again_and_rewritten(cache_dir, caplog, damage):
    built = build_family(family_seed=11, **SMALL)
    path = pipelines.family_cache_path(11, **SMALL)
    path.write_text(damage)
    pipelines._family.cache_clear()
    with caplog.at_level("WARNING", logger=pipelines.__name__):
        assert build_family(family_seed=11, **SMALL) == built
    assert "unreadable" in caplog.text and str(path) in caplog.text
    sizes = {"train": SMALL["n_train"], "heldout": SMALL["n_heldout"]}
    assert pipelines.read_family(path, sizes) == {split: tuple(tasks) for split, tasks in built.items()}


def test_a_cache_that_cannot_be_written_costs_only_the_next_build(monkeypatch, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("AGENTIC_RL_CACHE_DIR", str(blocker))  # its tasks/ folder cannot be made
    pipelines._family.cache_clear()
    try:
        with caplog.at_level("WARNING", logger=pipelines.__name__):
            tasks = load_pipelines("train", family_seed=11, **SMALL)
    finally:
        pipelines._family.cache_clear()
    assert len(tasks) == SMALL["n_train"]
    assert "could not keep the family" in caplog.text


def test_shuffle_orders_by_the_run_seed_and_limit_cuts_after():
    kw = {"family_seed": 3, **SMALL}
    plain = load_pipelines("train", **kw)
    a = load_pipelines("train", shuffle=True, seed=1, **kw)
    b = load_pipelines("train", shuffle=True, seed=1, **kw)
    c = load_pipelines("train", shuffle=True, seed=2, **kw)
    assert [t.task_id for t in a] == [t.task_id for t in b]
    assert [t.task_id for t in a] != [t.task_id for t in c]
    assert sorted(t.task_id for t in a) == sorted(t.task_id for t in plain)
    assert load_pipelines("train", shuffle=True, seed=1, limit=5, **kw) == a[:5]
    assert load_pipelines("heldout", limit=0, **kw) == []
    # shuffling a copy: the cached family keeps its order
    assert load_pipelines("train", **kw) == plain


def test_pipelines_that_return_the_same_value_for_every_list_are_never_drawn():
    # "last digit, then keep those above 5" is [] for every list: a task no test can tell from a stub
    by_slug = {s.slug: s for s in (*LIST_STEPS, *REDUCTIONS)}
    vocabulary = [by_slug["mod_5"], by_slug["above_5"], by_slug["sorted"], by_slug["count"]]
    constant = Pipeline((by_slug["mod_5"], by_slug["above_5"]))
    assert len(set(constant.fingerprint())) == 1
    found = pipelines.distinct_pipelines(random.Random(0), 10, [2], vocabulary, set(), required=0)
    assert found, "the other orders and reductions are not constant"
    assert all(len(set(p.fingerprint())) > 1 for p in found)
    assert constant.fingerprint() not in {p.fingerprint() for p in found}


def test_the_vocabulary_check_rejects_shared_families_and_repeated_slugs():
    by_slug = {s.slug: s for s in (*LIST_STEPS, *REDUCTIONS)}
    pipelines._check_vocabulary((*LIST_STEPS, *REDUCTIONS))
    even, squared = by_slug["even"], by_slug["squared"]
    clash = dataclasses.replace(squared, family=even.family)  # a map in the filters' "parity" family
    with pytest.raises(ValueError, match=r"families of several kinds \['parity'\]"):
        pipelines._check_vocabulary((even, clash))
    with pytest.raises(ValueError, match=r"repeated step slugs \['even'\]"):
        pipelines._check_vocabulary((even, even))


def test_draw_pipeline_puts_a_reduction_last_only():
    rng = random.Random(0)
    for _ in range(300):
        p = draw_pipeline(rng, rng.choice([1, 2, 3, 4]), (*LIST_STEPS, *REDUCTIONS))
        assert all(s.kind != "reduce" for s in p.steps[:-1])
        assert len({s.slug for s in p.steps}) == len(p.steps)
        result = p(list(PROBES[5]))
        assert isinstance(result, list) == p.returns_list


# ---------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"steps": []}, "steps must be counts between 1 and 4"),
        ({"steps": [0, 2]}, "steps must be counts between 1 and 4"),
        ({"steps": [5]}, "steps must be counts between 1 and 4"),
        ({"n_train": 0}, "n_train and n_heldout must be positive"),
        ({"n_heldout": -1}, "n_train and n_heldout must be positive"),
        ({"n_tests": 1}, "n_tests must be at least 2"),
        ({"split": "eval"}, "unknown split 'eval'; valid: train, heldout"),
        ({"limit": -2}, "limit must be a non-negative integer"),
        ({"steps": [1], "n_train": 400}, "ask for fewer tasks"),
    ],
)
def test_bad_arguments_say_what_to_change(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        load_pipelines(**{"n_train": 20, "n_heldout": 20, **kwargs})


# ---------------------------------------------------------------- the config group


@pytest.mark.parametrize(("name", "split"), [("pipelines", "train"), ("pipelines-heldout", "heldout")])
def test_config_group_builds_its_split(name, split):
    cfg = OmegaConf.load(REPO_ROOT / "conf" / "data" / f"{name}.yaml")
    if "defaults" in cfg:
        base = OmegaConf.load(REPO_ROOT / "conf" / "data" / "pipelines.yaml")
        cfg = OmegaConf.merge(base, {k: v for k, v in cfg.items() if k != "defaults"})
    cfg = OmegaConf.merge(cfg, {"seed": 4, "n_train": 24, "n_heldout": 24, "limit": 10})
    tasks = instantiate(cfg)
    assert len(tasks) == 10
    assert {t.metadata["split"] for t in tasks} == {split}
