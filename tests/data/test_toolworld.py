"""The tool world: a generated library, three task types, whole families per split, demonstrations that pass."""

from __future__ import annotations

import re

import pytest

from agentic_rl.data.toolworld import candidate_preamble, generate_library, task_library, world_library
from agentic_rl.data.toolworld.library import CONCEPT_FAMILIES
from agentic_rl.data.toolworld.tasks import TASK_TYPES, load_toolworld
from agentic_rl.sandbox import Sandbox
from agentic_rl.tools.code import ExecuteTool, SubmitTool
from agentic_rl.types import Task, ToolCall

# a small world keeps the tests fast; the default's sizes are checked once below
SMALL = {"n_train": 40, "n_heldout": 40, "world_seed": 3}


@pytest.fixture(scope="module")
def world() -> dict[str, list[Task]]:
    return {split: load_toolworld(split, **SMALL) for split in ("train", "heldout")}


@pytest.fixture(scope="module")
def sandbox():
    box = Sandbox(workers=2)
    yield box
    box.close()


def library_calls(task: Task) -> set[str]:
    lib = task_library(task)
    assert lib is not None
    return set(re.findall(rf"\b{lib.name}\.(\w+)\(", task.reference_solution or ""))


def test_the_library_is_made_up_and_deterministic():
    a, b = generate_library(5), generate_library(5)
    assert a == b and a.source == b.source
    assert generate_library(6).name != a.name
    names = [f.name for f in a.functions]
    assert len(set(names)) == len(names)
    assert {f.family for f in a.functions if f.kind == "concept"} == set(CONCEPT_FAMILIES)
    # no docstrings in the module: the documentation is in the search index only
    assert '"""' not in a.source and "'''" not in a.source


def test_task_types_match_what_each_task_needs(world):
    """A flipped label fails here: docs tasks call a concept function, exec tasks answer a record's code, plain
    tasks import no library."""
    lib = world_library(SMALL["world_seed"], 3, 24)
    for task in world["train"] + world["heldout"]:
        kind = task.metadata["task_type"]
        assert kind in TASK_TYPES
        calls = library_calls(task)
        if kind == "docs":
            assert len(calls) == 1 and lib.function(calls.pop()).kind == "concept"
            assert lib.name in task.prompt and not any(f.name in task.prompt for f in lib.functions)
        elif kind == "exec":
            code = re.search(r'return record\["(\w+)"\]', task.reference_solution)
            assert not calls and code
            record = next(f for f in lib.functions if f"{lib.name}.{f.name}(" in task.prompt)
            assert record.kind == "record" and code.group(1) in dict(record.fields)
        else:
            assert not calls and lib.name not in task.reference_solution


def test_families_are_dealt_whole_to_one_split(world):
    """A leaked family fails here: no held-out task uses a library function or a step family of training."""
    train_functions = {c for t in world["train"] for c in library_calls(t)}
    heldout_functions = {c for t in world["heldout"] for c in library_calls(t)}
    assert heldout_functions and not train_functions & heldout_functions
    lib = world_library(SMALL["world_seed"], 3, 24)
    assert not {lib.function(n).family for n in train_functions} & {lib.function(n).family for n in heldout_functions}
    train_codes = {t.reference_solution for t in world["train"] if t.metadata["task_type"] == "exec"}
    assert not train_codes & {t.reference_solution for t in world["heldout"] if t.metadata["task_type"] == "exec"}
    train_steps = {s for t in world["train"] for s in t.metadata["family"].split("+")}
    heldout_plain = [t for t in world["heldout"] if t.metadata["task_type"] == "plain"]
    assert heldout_plain and not any(set(t.metadata["family"].split("+")) & train_steps for t in heldout_plain)


def test_the_default_world_has_the_configured_mix():
    train, heldout = load_toolworld("train"), load_toolworld("heldout")
    assert (len(train), len(heldout)) == (160, 240)
    counts = {k: sum(t.metadata["task_type"] == k for t in heldout) for k in TASK_TYPES}
    assert counts == {"docs": 120, "plain": 84, "exec": 36}
    first = {t.metadata["task_type"] for t in heldout[:30]}
    assert first == set(TASK_TYPES), "the first tasks of the held-out split (an evaluation's limit) mix the types"


def test_bad_sizes_say_how_to_fix_them():
    with pytest.raises(ValueError, match="too few distinct tasks"):
        load_toolworld("heldout", n_train=10, n_heldout=2000)
    with pytest.raises(ValueError, match="mix"):
        load_toolworld("train", mix={"docs": 1.0, "maths": 1.0})
    with pytest.raises(ValueError, match="unknown split"):
        load_toolworld("test")


def run_call(tool, name: str, content: str, task: Task):
    return tool(ToolCall(name, content, 0, len(content)), task)


def test_demonstrations_pass_and_trivial_candidates_fail(world, sandbox):
    execute, submit = ExecuteTool(sandbox), SubmitTool(sandbox)
    sample = [next(t for t in world["heldout"] if t.metadata["task_type"] == k) for k in TASK_TYPES]
    for task in sample:
        for call in task.metadata["demo"]:
            if call["tool"] == "execute":
                assert run_call(execute, "execute", call["content"], task).ok
            elif call["tool"] == "submit":
                assert run_call(submit, "submit", call["content"], task).passed, task.task_id
        entry = task.entry_point
        arg = "record" if task.metadata["task_type"] == "exec" else "nums"
        trivial = ("return None", "return 0", 'return ""', "return []", f"return {arg}")
        if arg == "record":  # neither a constant code's value nor a position in the dict
            trivial += ("return list(record.values())[0]", "return list(record.values())[-1]")
        for body in trivial:
            verdict = run_call(submit, "submit", f"def {entry}({arg}):\n    {body}\n", task)
            assert not verdict.passed, (task.task_id, body)


def test_the_library_imports_in_the_sandbox_and_only_for_its_tasks(world, sandbox):
    task = next(t for t in world["train"] if t.metadata["task_type"] == "docs")
    lib = task_library(task)
    fn = lib.function(library_calls(task).pop())
    code = f"import {lib.name}\nprint({lib.name}.{fn.name}([3, 1, 4, 1, 5]))\nprint({lib.name}.{fn.name}.__doc__)"
    out = run_call(ExecuteTool(sandbox), "execute", code, task)
    assert out.ok and out.text.split("\n")[1:3] == [str(lib.call(fn.name, [3, 1, 4, 1, 5])), "None"]
    plain = Task("plain/1", "p", "", "pytest")
    assert candidate_preamble(plain) == ""
    missing = run_call(ExecuteTool(sandbox), "execute", f"import {lib.name}", plain)
    assert not missing.ok and "ModuleNotFoundError" in missing.text
