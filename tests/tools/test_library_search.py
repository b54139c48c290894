"""Search over a tool world's library: every function found by its concept and by its need described in words;
a task with a library searches it, any other task the configured backend."""

from __future__ import annotations

import pytest

from agentic_rl.data.toolworld import world_library
from agentic_rl.data.toolworld.tasks import load_toolworld
from agentic_rl.tools.search import SearchTool
from agentic_rl.tools.search.library import LibraryBackend
from agentic_rl.types import Task, ToolCall

# needs described as a user would, written for this test without looking at the library's phrases: one per
# concept family (the variants of a family differ only by a constant, so a family-level hit is the right unit)
DESCRIBED = {
    "weighted_mod": "weight each element by its index starting at one, add them, take the remainder",
    "poly_hash": "hash of a list of numbers built like a number in some base",
    "neighbour_products": "add up the product of every two adjacent numbers",
    "alternating": "sum of every other element minus the sum of the rest",
    "digit_sum_count": "how many numbers have digits that add up to a multiple of something",
    "longest_run": "length of the longest streak",
    "peaks": "count elements bigger or smaller than both neighbours",
    "clamped_sum": "clip each value into a range and total them",
    "gap_sum": "sum of absolute differences between neighbours",
    "reversed_digits": "reverse each number's digits and add them",
    "buckets": "how many distinct buckets the numbers fall into",
    "records": "how many times a new running max or min appears",
    "square_mod": "sum of squares with a modulus",
    "sign_changes": "count how often consecutive numbers change sign",
    "index_of_extreme": "position of the biggest or smallest element",
}


@pytest.fixture(scope="module")
def library():
    return world_library(0, 3, 24)


@pytest.fixture(scope="module")
def backend(library):
    return LibraryBackend(library)  # with the packaged embedding model (`make setup` installs it)


@pytest.fixture(scope="module")
def lexical(library):
    return LibraryBackend(library, dense=None)


def top(backend, query: str, k: int = 3) -> list[str]:
    return [hit.name for hit in backend.search(query, k)]


def test_every_function_is_found_by_its_concept(library, backend):
    for fn in library.functions:
        assert top(backend, fn.concept, 1) == [f"{library.name}.{fn.name}"], fn.concept
        assert f"{library.name}.{fn.name}" in top(backend, f"{library.name} {fn.concept}")


def family_hits(library, backend) -> list[str]:
    hits = []
    for family, query in DESCRIBED.items():
        found = [n.split(".", 1)[1] for n in top(backend, query) if n.startswith(library.name + ".")]
        hits += [family] if any(library.function(n).family == family for n in found) else []
    return hits


def test_concept_functions_are_found_by_their_need_in_words(library, backend, lexical):
    assert family_hits(library, backend) == list(DESCRIBED)
    # without the embedding model the ranking is lexical: most needs still land in the top 3
    assert len(family_hits(library, lexical)) >= 0.8 * len(DESCRIBED)


def test_standard_library_notes_are_searchable_beside_the_library(backend):
    assert any(name.startswith("collections.") for name in top(backend, "count occurrences collections Counter", 5))


def test_search_tool_routes_by_the_task(library):
    tool = SearchTool(backend="docstore", k=2)
    world_task = next(t for t in load_toolworld("train") if t.metadata["task_type"] == "docs")
    concept = world_task.prompt.split("return its ")[1].split(".")[0] if "return its " in world_task.prompt else ""
    assert concept
    shown = tool(ToolCall("search", concept, 0, 0), world_task).text
    assert f"[{library.name}." in shown
    other = Task("x/1", "p", "", "pytest")
    assert f"{library.name}." not in tool(ToolCall("search", concept, 0, 0), other).text
    assert "collections.Counter" in tool(ToolCall("search", "collections Counter", 0, 0), other).text
