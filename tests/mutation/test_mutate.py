"""The mutation tool itself: which sites it mutates, that each mutant is the one edit, and the test map."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.mutation.mutate import TEST_MAP, find_mutants, mapped_tests, mutated_tree

TOY = '''"""Module doc with 1 < 2 in it."""
import logging

logger = logging.getLogger(__name__)
LIMIT: int = 3


def clip(x: int = 0, factor: float = 0.5) -> float:
    """Doc: x + 1."""
    if x > LIMIT and not x == 7:
        logger.warning("x %d > %d", x, x - 1)
        raise ValueError(f"too big: {x + 1}")
    return -x * factor
'''


def toy_file(tmp_path: Path) -> Path:
    path = tmp_path / "toy.py"
    path.write_text(TOY)
    return path


def test_sites_skip_docstrings_annotations_and_messages(tmp_path: Path) -> None:
    found = [(m.line, m.what) for m in find_mutants(toy_file(tmp_path))]
    assert found == [
        (5, "3 -> 4"),  # the constant, not the annotation
        (8, "0 -> 1"),
        (8, "0.5 -> 1.5"),  # defaults
        (10, "and -> or"),
        (10, "> -> >="),
        (10, "not x -> x"),
        (10, "== -> !="),
        (10, "7 -> 8"),
        (13, "* -> /"),
        (13, "-x -> x"),
    ]  # nothing from the docstrings, the logging call or the raise


def test_each_mutant_changes_only_its_site(tmp_path: Path) -> None:
    path = toy_file(tmp_path)
    original = ast.dump(ast.parse(TOY))
    seen = set()
    for m in find_mutants(path):
        tree = mutated_tree(path, m.index)
        dumped = ast.dump(tree)
        assert dumped != original and dumped not in seen, m
        seen.add(dumped)
        namespace: dict = {"__name__": "toy"}
        exec(compile(tree, str(path), "exec"), namespace)  # every mutant still compiles and loads
    # one of them for real: `x > LIMIT` -> `x >= LIMIT` lets 3 through the guard
    compare = next(m for m in find_mutants(path) if m.what == "> -> >=")
    namespace = {"__name__": "toy"}
    exec(compile(mutated_tree(path, compare.index), str(path), "exec"), namespace)
    try:
        namespace["clip"](3)
        raised = False
    except ValueError:
        raised = True
    assert raised


def test_negative_literal_is_one_site(tmp_path: Path) -> None:
    path = tmp_path / "neg.py"
    path.write_text("A = -1\nB = x[-2]\n")
    assert [m.what for m in find_mutants(path)] == ["-1 -> 1", "-2 -> 2"]


def test_test_map_takes_the_most_specific_prefix() -> None:
    assert mapped_tests("agentic_rl/rewards/__init__.py", TEST_MAP) == ["tests/rewards"]
    assert mapped_tests("agentic_rl/algo/core.py", TEST_MAP)[0] == "tests/algo/test_core.py"
    assert mapped_tests("agentic_rl/algo/grpo.py", TEST_MAP) == ["tests/algo"]
    assert mapped_tests("agentic_rl/tools/search/dense.py", TEST_MAP) == ["tests/tools"]
    assert mapped_tests("agentic_rl/tools/search/text.py", TEST_MAP)[0] == "tests/tools/test_search_text.py"
    for rel in ("agentic_rl/algo/grpo.py", "agentic_rl/rollout/policy.py", "agentic_rl/tools/code.py"):
        assert mapped_tests(rel, TEST_MAP), rel
