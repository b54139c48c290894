"""Mutation testing: change one operator or constant of a module at a time and see whether its tests notice.

Usage (from the repository root; `make mutation ARGS="..."` runs the same):

    python -m tests.mutation.mutate agentic_rl/rewards agentic_rl/algo/core.py   # the given files / packages
    python -m tests.mutation.mutate --list agentic_rl/algo/core.py                # print the mutants only
    python -m tests.mutation.mutate --budget-s 1800 --out outputs/mutation        # every mapped package
    python -m tests.mutation.mutate --sample 40 --seed 1 agentic_rl/rollout        # 40 mutants per file

A mutant is one of these single edits, found by walking the module's syntax tree (docstrings, annotations
and the arguments of logging / raise calls are left alone: changing a message is not a behaviour a unit
test should pin):

- comparison:  == <-> !=,  < <-> <=,  > <-> >=,  in <-> not in,  is <-> is not
- arithmetic:  + <-> -,  * <-> /,  // -> /,  % -> *,  ** -> *   (also in augmented assignments, +=  ...)
- boolean:     and <-> or,  `not x` -> `x`,  `-x` -> `x` (a negative literal: its sign only, -1 -> 1)
- constants:   True <-> False,  a number n -> n + 1 (0 -> 1, 1 -> 2, 0.5 -> 1.5 ...), None is left alone

Each module's mapped tests (`TEST_MAP`, most specific prefix wins) first run unmutated under coverage.py,
which records, for each line of the module, the tests that ran it (their body, or a fixture's setup). A
mutant in a function body then runs only those tests, quickest first, with `-x`; a mutant that no test
reaches survives without a run (the tests cannot see it); a mutant that runs at import (module level, a
default value, a class attribute) or on a line that also ran outside the tests runs every mapped test, and
so does every mutant with `--all-tests` or without coverage.py. A line run by a fixture's setup selects every
test of that file, since a module fixture's value reaches them all; a session fixture's value used from other
files is the one case the selection can miss (`--all-tests` rechecks a survivor). `--sample N` runs N mutants
per file, drawn with `--seed`.

Each run is in a child process forked from a parent that has already imported the third-party libraries the
unmutated run imported (torch, transformers, matplotlib ...), so a mutant costs its tests' run time, not their
imports. The child loads the mutated module through an import hook ahead of the normal path finder; the file
on disk is never changed. Code that tests run in a separate interpreter (the sandbox's workers, a CLI
subprocess) sees the original module, so a mutant only reached that way survives: read survivors with that in
mind.

A mutant is killed when its tests fail, error, or run past the time-out (`--timeout-factor` times the
unmutated time of the tests it runs plus the run's fixed cost, at least `--min-timeout-s`). The unmutated run
must pass first, else the module is skipped and said so. The summary (killed/total per module, then each
survivor with its line) is printed as Markdown and, with `--out`, written with a JSON record per mutant.
"""

from __future__ import annotations

import argparse
import ast
import importlib.abc
import importlib.util
import json
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Package (or file) prefix -> the test files or directories its mutants run. The most specific prefix wins.
TEST_MAP: dict[str, tuple[str, ...]] = {
    "agentic_rl/rewards": ("tests/rewards",),
    # core.py's own unit tests only: the GRPO-step tests of the directory take minutes per run on a small CPU
    "agentic_rl/algo/core.py": (
        "tests/algo/test_core.py",
        "tests/algo/test_core_head.py",
        "tests/algo/test_core_edges.py",
    ),
    "agentic_rl/algo": ("tests/algo",),
    "agentic_rl/rollout/agent.py": (
        "tests/rollout/test_agent.py",
        "tests/rollout/test_agent_contracts.py",
        "tests/rollout/test_feedback_mask.py",
        "tests/rollout/test_infra_failures.py",
        "tests/rollout/test_continuous_loop.py",
        "tests/e2e/test_task_groups.py",
        "tests/tools/test_submit_verdicts.py",
    ),
    "agentic_rl/rollout/tokenizer.py": ("tests/rollout/test_tokenizer.py", "tests/rollout/test_agent.py"),
    # the settings' own tests and the backend file that reads them: the rest of tests/rollout only builds the defaults
    "agentic_rl/rollout/vllm_settings.py": ("tests/rollout/test_vllm_settings.py", "tests/rollout/test_backends.py"),
    # the engine's tests skip without vLLM; the pure helpers are tested in test_backends.py either way, and the
    # policy's own code against a stand-in engine in test_vllm_policy_logic.py (which the record's block 51 ran)
    "agentic_rl/rollout/vllm_policy.py": (
        "tests/rollout/test_backends.py",
        "tests/rollout/test_vllm_policy_logic.py",
        "tests/rollout/test_vllm_engine.py",
    ),
    "agentic_rl/rollout": ("tests/rollout",),
    # its unit tests first; test_search.py reaches it through index builds (the ranking pins too, at a minute a run)
    "agentic_rl/tools/search/text.py": ("tests/tools/test_search_text.py", "tests/tools/test_search.py"),
    "agentic_rl/tools/search": ("tests/tools",),
    "agentic_rl/tools/code.py": (
        "tests/tools/test_code_tools.py",
        "tests/tools/test_submit_verdicts.py",
        "tests/rollout/test_agent.py",
    ),
    "agentic_rl/tools": (
        "tests/tools/test_toy_tool.py",
        "tests/tools/test_tool_spec.py",
        "tests/tools/test_tool_base.py",
        "tests/tools/test_build_toolset.py",
        "tests/tools/test_code_tools.py",
        "tests/tools/test_submit_verdicts.py",
        "tests/rollout/test_agent.py",
        "tests/config/test_compose.py",
    ),
}
# Benchmark scripts are not library behaviour (they move to their own package); they are not mutated.
SKIP_FILES = ("bench.py", "bench_trainer.py")
# Imported once in the parent, so that each forked child starts with them loaded.
PRELOAD = ("torch", "numpy", "transformers", "peft", "omegaconf", "hydra", "datasets", "tqdm", "pytest")

COMPARE_SWAPS = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
BINOP_SWAPS = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.Mult,
    ast.Pow: ast.Mult,
}
BOOLOP_SWAPS = {ast.And: ast.Or, ast.Or: ast.And}
SYMBOLS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.And: "and",
    ast.Or: "or",
}
# Calls whose arguments are messages: logger.x(...), raise X(...), warnings.warn(...)
MESSAGE_CALLS = ("debug", "info", "warning", "error", "exception", "critical", "warn")


@dataclass
class Mutant:
    file: str  # repository-relative path
    index: int  # position among the file's mutation sites, in tree-walk order
    line: int
    what: str  # "a < b -> a <= b" style description
    source_line: str  # the original line, stripped
    status: str = ""  # killed (tests failed, or the mutated module did not load) | timeout (a kill) | survived
    seconds: float = 0.0
    # the lines whose execution runs this site: from its statement's first line to the site's last line
    first_line: int = 0
    last_line: int = 0
    in_function: bool = False  # in a function body (runs when called), not at import (module level, defaults)
    tests: str = ""  # which tests ran it: "all mapped", "N selected", or "none reached it" (not run)


class _Sites(ast.NodeVisitor):
    """Walks a tree in a fixed order and calls `on_site(node, kind, detail)` for each mutation site."""

    def __init__(self, on_site) -> None:
        self.on_site = on_site
        self.skip: set[int] = set()

    def visit_Module(self, node: ast.Module) -> None:
        self._skip_docstring(node)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._skip_docstring(node)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg):
            if arg is not None and arg.annotation is not None:
                self._skip_tree(arg.annotation)
        if node.returns is not None:
            self._skip_tree(node.returns)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._skip_docstring(node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._skip_tree(node.annotation)
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        if node.exc is not None:
            self._skip_tree(node.exc)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr in MESSAGE_CALLS:
            for arg in (*node.args, *(k.value for k in node.keywords)):
                self._skip_tree(arg)
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._skip_tree(node)  # f-strings are messages too

    def visit_Compare(self, node: ast.Compare) -> None:
        if id(node) not in self.skip:
            for i, op in enumerate(node.ops):
                if type(op) in COMPARE_SWAPS:
                    self.on_site(node, "compare", i)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if id(node) not in self.skip and type(node.op) in BINOP_SWAPS:
            self.on_site(node, "binop", None)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if id(node) not in self.skip and type(node.op) in BINOP_SWAPS:
            self.on_site(node, "augassign", None)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        if id(node) not in self.skip:
            self.on_site(node, "boolop", None)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if id(node) in self.skip:
            return self.generic_visit(node)
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            self.skip.add(id(node.operand))  # a negative literal is one site: its sign, not also its digits
        if isinstance(node.op, (ast.Not, ast.USub)):
            self.on_site(node, "unary", None)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self.skip:
            return
        value = node.value
        if isinstance(value, bool) or (isinstance(value, (int, float)) and not isinstance(value, complex)):
            self.on_site(node, "constant", None)

    def _skip_tree(self, tree: ast.AST) -> None:
        self.skip.update(id(n) for n in ast.walk(tree))

    def _skip_docstring(self, node: ast.AST) -> None:
        body = getattr(node, "body", [])
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            self._skip_tree(body[0])


def _describe(node: ast.AST, kind: str, detail: int | None) -> str:
    if kind == "compare":
        op = type(node.ops[detail])
        return f"{SYMBOLS[op]} -> {SYMBOLS[COMPARE_SWAPS[op]]}"
    if kind in ("binop", "augassign"):
        op = type(node.op)
        suffix = "=" if kind == "augassign" else ""
        return f"{SYMBOLS[op]}{suffix} -> {SYMBOLS[BINOP_SWAPS[op]]}{suffix}"
    if kind == "boolop":
        op = type(node.op)
        return f"{SYMBOLS[op]} -> {SYMBOLS[BOOLOP_SWAPS[op]]}"
    if kind == "unary":
        if isinstance(node.op, ast.Not):
            return "not x -> x"
        return (
            f"-{node.operand.value!r} -> {node.operand.value!r}"
            if isinstance(node.operand, ast.Constant)
            else "-x -> x"
        )
    return f"{node.value!r} -> {_new_constant(node.value)!r}"


def _new_constant(value: bool | int | float) -> bool | int | float:
    return (not value) if isinstance(value, bool) else value + 1


def _apply(node: ast.AST, kind: str, detail: int | None) -> ast.AST:
    """Mutate `node` in place (or return its replacement, for `unary`)."""
    if kind == "compare":
        node.ops[detail] = COMPARE_SWAPS[type(node.ops[detail])]()
    elif kind in ("binop", "augassign"):
        node.op = BINOP_SWAPS[type(node.op)]()
    elif kind == "boolop":
        node.op = BOOLOP_SWAPS[type(node.op)]()
    elif kind == "unary":
        return node.operand
    elif kind == "constant":
        node.value = _new_constant(node.value)
    return node


def find_mutants(path: Path) -> list[Mutant]:
    """Every mutation site of the file, in tree-walk order."""
    source = path.read_text()
    lines = source.splitlines()
    found: list[Mutant] = []
    rel = _relative(path)
    tree = ast.parse(source)
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}

    def on_site(node: ast.AST, kind: str, detail: int | None) -> None:
        first, in_function = _placement(node, parents)
        found.append(
            Mutant(
                rel,
                len(found),
                node.lineno,
                _describe(node, kind, detail),
                lines[node.lineno - 1].strip(),
                first_line=min(first, node.lineno),
                last_line=node.end_lineno or node.lineno,
                in_function=in_function,
            )
        )

    _Sites(on_site).visit(tree)
    return found


def _placement(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> tuple[int, bool]:
    """The first line of the site's innermost statement, and whether the site is in a function's body.

    A site outside every function body (module level, class level, a default value, a decorator) runs at
    import, so any test may depend on it; a site in a body runs when the function is called."""
    first = node.lineno if isinstance(node, ast.stmt) else 0  # an augmented assignment is its own statement
    in_function = False
    child, parent = node, parents.get(node)
    while parent is not None and not (first and in_function):
        if not first and isinstance(parent, ast.stmt):
            first = parent.lineno
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and child in parent.body:
            in_function = True
        if isinstance(parent, ast.Lambda) and child is parent.body:
            in_function = True
        child, parent = parent, parents.get(parent)
    return first or node.lineno, in_function


def mutated_tree(path: Path, index: int) -> ast.Module:
    """The file's tree with mutation site `index` applied."""
    tree = ast.parse(path.read_text())
    sites: list[tuple[ast.AST, str, int | None]] = []
    _Sites(lambda node, kind, detail: sites.append((node, kind, detail))).visit(tree)
    node, kind, detail = sites[index]
    if kind == "unary":
        # swap the UnaryOp for its operand wherever it hangs in the tree
        replacement = node.operand
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, replacement)
                elif isinstance(value, list):
                    for i, item in enumerate(value):
                        if item is node:
                            value[i] = replacement
    else:
        _apply(node, kind, detail)
    return ast.fix_missing_locations(tree)


def _relative(path: Path) -> str:
    """Repository-relative when the file is in the repository, else as given."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def module_name(path: Path) -> str:
    parts = list(path.resolve().relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module from a mutated tree; every other import goes to the normal finders."""

    def __init__(self, name: str, path: Path, tree: ast.Module) -> None:
        self.name, self.path, self.tree = name, path, tree

    def find_spec(self, fullname, target_path=None, target=None):
        if fullname != self.name:
            return None
        package_dir = [str(self.path.parent)] if self.path.name == "__init__.py" else None
        return importlib.util.spec_from_file_location(
            fullname, self.path, loader=self, submodule_search_locations=package_dir
        )

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        exec(compile(self.tree, str(self.path), "exec"), module.__dict__)


def mapped_tests(rel: str, test_map: dict[str, tuple[str, ...]]) -> list[str]:
    """The mapped tests of a repository-relative file (most specific prefix), duplicates dropped."""
    matches = [prefix for prefix in test_map if rel == prefix or rel.startswith(prefix.rstrip("/") + "/")]
    if not matches:
        raise SystemExit(f"no tests mapped for {rel}: add its package to TEST_MAP in {Path(__file__).name}")
    chosen = test_map[max(matches, key=len)]
    out: list[str] = []
    for item in chosen:  # a file listed before its directory runs first; pytest would run it twice
        if not any(item == kept or item.startswith(kept.rstrip("/") + "/") for kept in out):
            out.append(item)
    return out


def _child(
    path: Path | None,
    index: int | None,
    tests: list[str],
    quiet: bool,
    modules_out: Path | None,
    trace: tuple[tuple[Path, ...], Path] | None = None,
) -> None:
    """In the forked child: install the mutant (if any) and run the tests; exit with pytest's code.

    With `modules_out`, the third-party modules the run imported are written there, one per line (the parent
    imports them before the mutants, so that each child starts with them loaded). With `trace` (files, out),
    for the unmutated run, the lines of those files each test ran are written to out (see `record_lines`)."""
    import pytest

    if path is not None and index is not None:
        sys.meta_path.insert(0, _MutantFinder(module_name(path), path, mutated_tree(path, index)))
    if quiet:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    args = ["-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests]
    if trace is not None:
        code = record_lines(trace[0], args, trace[1])
    else:
        code = pytest.main(args)
    if modules_out is not None:
        own = ("agentic_rl", "tests", "conftest", "__main__", "__mp_main__")
        names = sorted(n for n in list(sys.modules) if n.split(".")[0] not in own and "conftest" not in n)
        modules_out.write_text("\n".join(names))
    os._exit(int(code))


OUTSIDE = "outside"  # the coverage context of code run outside every test (collection, imports)


def record_lines(paths: tuple[Path, ...], pytest_args: list[str], out: Path) -> int:
    """Run pytest under coverage with one context per test phase; write which tests ran each line of `paths`.

    `out` gets {"lines": {file: {line: [context, ...]}}, "durations": {node id: seconds}, "wall": seconds}, where
    a file is repository-relative and a
    context is "call <node id>" (the test body), "fixture <node id>" (its setup or teardown, where a module
    or session fixture may compute what later tests of the file use) or OUTSIDE. Returns pytest's code."""
    import coverage
    import pytest

    cov = coverage.Coverage(data_file=None, include=[str(p) for p in paths], config_file=False)
    durations: dict[str, float] = {}

    class Contexts:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_setup(self, item):
            cov.switch_context(f"fixture {item.nodeid}")
            yield
            cov.switch_context(OUTSIDE)

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item):
            cov.switch_context(f"call {item.nodeid}")
            yield
            cov.switch_context(OUTSIDE)

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_teardown(self, item):
            cov.switch_context(f"fixture {item.nodeid}")
            yield
            cov.switch_context(OUTSIDE)

        def pytest_runtest_logreport(self, report):
            durations[report.nodeid] = durations.get(report.nodeid, 0.0) + report.duration

    started = time.perf_counter()
    cov.start()
    cov.switch_context(OUTSIDE)
    try:
        code = pytest.main(pytest_args, plugins=[Contexts()])
    finally:
        cov.stop()
    data = cov.get_data()
    lines: dict[str, dict[str, list[str]]] = {}
    for measured in data.measured_files():
        by_line = data.contexts_by_lineno(measured)
        lines[_relative(Path(measured))] = {
            str(line): sorted(ctx or OUTSIDE for ctx in contexts) for line, contexts in by_line.items()
        }
    record = {
        "lines": lines,
        "durations": durations,
        "wall": time.perf_counter() - started,
    }
    out.write_text(json.dumps(record))
    return int(code)


def select_tests(m: Mutant, record: dict | None) -> list[str] | None:
    """The node ids of the unmutated run that ran the mutant's lines, quickest first.

    None: run every mapped test (no record, a site that runs at import, or a line that also ran outside the
    tests). An empty list: no test reached the lines, so the mutant cannot change what the tests see."""
    if record is None or not m.in_function:
        return None
    contexts: set[str] = set()
    for line in range(m.first_line, m.last_line + 1):
        contexts.update(record["lines"].get(m.file, {}).get(str(line), ()))
    if OUTSIDE in contexts:
        return None
    durations: dict[str, float] = record["durations"]
    chosen: set[str] = set()
    for context in contexts:
        phase, node_id = context.split(" ", 1)
        if phase == "call":
            chosen.add(node_id)
        else:  # a fixture's work may be used by every test of its file
            test_file = node_id.split("::", 1)[0]
            chosen.update(n for n in durations if n.split("::", 1)[0] == test_file)
    return sorted(chosen, key=lambda n: (durations.get(n, 0.0), n))


def preload(names: list[str]) -> int:
    """Import what the unmutated run imported (third-party only); returns how many loaded."""
    loaded = 0
    for name in names:
        if name in sys.modules:
            continue
        try:
            __import__(name)
            loaded += 1
        except BaseException:  # an optional backend that fails to import is simply left to the child
            pass
    return loaded


def run_forked(
    path: Path | None,
    index: int | None,
    tests: list[str],
    timeout_s: float,
    quiet: bool = True,
    modules_out: Path | None = None,
    trace: tuple[tuple[Path, ...], Path] | None = None,
) -> tuple[str, float]:
    """Run the tests in a forked child; returns (outcome, seconds): passed | failed | timeout."""
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.setpgid(0, 0)  # its own group: a time-out ends the tests' own subprocesses too
            _child(path, index, tests, quiet, modules_out, trace)
        finally:
            os._exit(70)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.perf_counter() - started
            if done:
                code = os.waitstatus_to_exitcode(status)
                return ("passed" if code == 0 else "failed"), elapsed
            if elapsed > timeout_s:
                _kill_group(pid)
                return "timeout", elapsed
            time.sleep(0.05)
    except KeyboardInterrupt:
        _kill_group(pid)
        raise


def _kill_group(pid: int) -> None:
    """End the child and everything it started (its own process group), and reap it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def collect_files(targets: list[str]) -> list[Path]:
    files: list[Path] = []
    for target in targets:
        path = (REPO / target).resolve()
        if path.is_dir():
            files += sorted(p for p in path.rglob("*.py") if p.name not in SKIP_FILES)
        elif path.is_file():
            files.append(path)
        else:
            raise SystemExit(f"{target} is neither a file nor a directory under {REPO}")
    return files


def summary_markdown(results: dict[str, list[Mutant]], skipped: dict[str, str], budget_left: bool) -> str:
    rows = ["| module | killed | total | share killed |", "| --- | ---: | ---: | ---: |"]
    all_killed = all_total = 0
    for rel, mutants in results.items():
        ran = [m for m in mutants if m.status]
        killed = sum(m.status != "survived" for m in ran)
        all_killed, all_total = all_killed + killed, all_total + len(ran)
        note = "" if len(ran) == len(mutants) else f" (of {len(mutants)} found)"
        share = f"{100 * killed / len(ran):.1f}%" if ran else "-"
        rows.append(f"| `{rel}` | {killed} | {len(ran)}{note} | {share} |")
    if all_total:
        rows.append(f"| **all** | {all_killed} | {all_total} | {100 * all_killed / all_total:.1f}% |")
    out = rows
    if skipped:
        out += ["", "Skipped modules:"] + [f"- `{rel}`: {why}" for rel, why in skipped.items()]
    survivors = [m for mutants in results.values() for m in mutants if m.status == "survived"]
    out += ["", f"Survivors ({len(survivors)}):"]
    out += [
        f"- `{m.file}:{m.line}` #{m.index} `{m.what}` in `{m.source_line}`"
        + (" (no test reached it)" if m.tests == "none reached it" else "")
        for m in survivors
    ]
    if not budget_left:
        out += ["", "The time budget ran out before every mutant ran (see the totals above)."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="files or packages (default: every TEST_MAP package)")
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument("--only", type=int, nargs="*", help="run only these mutant indices (one file)")
    parser.add_argument("--budget-s", type=float, default=1800.0, help="stop starting mutants after this")
    parser.add_argument("--timeout-factor", type=float, default=4.0)
    parser.add_argument("--min-timeout-s", type=float, default=60.0)
    parser.add_argument("--out", type=Path, help="write summary.md and mutants.jsonl here")
    parser.add_argument("--sample", type=int, help="run this many mutants per file, drawn at random (--seed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--tests", nargs="+", help="run these test files instead of the mapped ones (to see one new test kill)"
    )
    parser.add_argument(
        "--all-tests",
        action="store_true",
        help="run every mapped test for each mutant, not only the tests that ran its lines unmutated",
    )
    args = parser.parse_args(argv)

    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    targets = args.targets or sorted({p for p in TEST_MAP if not p.endswith(".py")})
    files = collect_files(targets)
    per_file = {str(f.relative_to(REPO)): find_mutants(f) for f in files}
    if args.list:
        for mutants in per_file.values():
            for m in mutants:
                print(f"{m.file}:{m.line} #{m.index} {m.what}  | {m.source_line}")
        return 0
    preload(list(PRELOAD))

    deadline = time.perf_counter() + args.budget_s
    results: dict[str, list[Mutant]] = {}
    skipped: dict[str, str] = {}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "mutants.jsonl").write_text("")
    # a terminated run still prints the summary of the mutants it finished
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        _run_all(per_file, args, deadline, results, skipped)
    except KeyboardInterrupt:
        skipped["(run)"] = "interrupted: the totals count the mutants that finished"
    text = summary_markdown(results, skipped, time.perf_counter() <= deadline)
    print(text)
    if args.out:
        (args.out / "summary.md").write_text(text + "\n")
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _run_all(
    per_file: dict[str, list[Mutant]],
    args: argparse.Namespace,
    deadline: float,
    results: dict[str, list[Mutant]],
    skipped: dict[str, str],
) -> None:
    baselines: dict[tuple[str, ...], tuple[float, dict | None] | str] = {}
    for rel, mutants in per_file.items():
        if not mutants:
            continue
        tests = args.tests or mapped_tests(rel, TEST_MAP)
        if time.perf_counter() > deadline:
            skipped[rel] = "time budget spent before it started"
            continue
        key = tuple(tests)
        if key not in baselines:  # one unmutated run for every file that maps to the same tests
            group = tuple(
                REPO / r for r, ms in per_file.items() if ms and tuple(args.tests or mapped_tests(r, TEST_MAP)) == key
            )
            baselines[key] = _baseline(group, tests, args)
        baseline = baselines[key]
        if isinstance(baseline, str):
            skipped[rel] = baseline
            continue
        base_s, record = baseline
        timeout_s = max(args.min_timeout_s, args.timeout_factor * base_s)
        chosen = set(m.index for m in mutants if args.only is None or m.index in args.only)
        if args.sample is not None and args.sample < len(chosen):
            chosen = set(random.Random(f"{args.seed} {rel}").sample(sorted(chosen), args.sample))
        print(
            f"{rel}: {len(mutants)} mutants ({len(chosen)} to run), tests {' '.join(tests)} ({base_s:.0f} s "
            f"unmutated, time-out {timeout_s:.0f} s, {'per-mutant selection' if record else 'all tests'})",
            file=sys.stderr,
            flush=True,
        )
        results[rel] = mutants
        for m in mutants:
            if m.index not in chosen:
                continue
            if time.perf_counter() > deadline:
                break
            selected = select_tests(m, record)
            if selected == []:
                m.status, m.tests = "survived", "none reached it"
            else:
                run_tests, m_timeout = tests, timeout_s
                m.tests = "all mapped"
                if selected is None and record is not None:  # every test that ran, quickest first: kills come sooner
                    run_tests = sorted(record["durations"], key=lambda n: (record["durations"][n], n))
                if selected is not None and record is not None:
                    run_tests, m.tests = selected, f"{len(selected)} selected"
                    # the selected tests' own time plus the run's fixed cost (collection), times the factor
                    fixed = max(0.0, record["wall"] - sum(record["durations"].values()))
                    own = sum(record["durations"].get(n, 0.0) for n in selected)
                    m_timeout = min(timeout_s, max(args.min_timeout_s, args.timeout_factor * (fixed + own)))
                outcome, m.seconds = run_forked(REPO / rel, m.index, run_tests, m_timeout)
                m.status = {"passed": "survived", "failed": "killed", "timeout": "timeout"}[outcome]
            print(
                f"  #{m.index} line {m.line} {m.what}: {m.status} ({m.seconds:.1f} s, {m.tests})",
                file=sys.stderr,
                flush=True,
            )
            if args.out:
                with (args.out / "mutants.jsonl").open("a") as fh:
                    fh.write(json.dumps(asdict(m)) + "\n")


def _baseline(files: tuple[Path, ...], tests: list[str], args: argparse.Namespace) -> tuple[float, dict | None] | str:
    """The unmutated run of `tests`: (seconds, line record or None), or why the files are skipped.

    It must pass; its time (imports included, so an upper bound) sets the time-out. It records the lines of
    all `files` at once, and the parent then imports the third-party modules it used."""
    modules_file = Path(tempfile.mkstemp(suffix=".txt")[1])
    trace_file = None if args.all_tests or not _have_coverage() else Path(tempfile.mkstemp(suffix=".json")[1])
    outcome, base_s = run_forked(
        None,
        None,
        tests,
        timeout_s=max(args.budget_s, 600.0),
        modules_out=modules_file,
        trace=None if trace_file is None else (files, trace_file),
    )
    if outcome != "passed":
        return f"its tests ({' '.join(tests)}) do not pass unmutated ({outcome})"
    preload(modules_file.read_text().split())
    modules_file.unlink()
    if trace_file is None:
        return base_s, None
    record = json.loads(trace_file.read_text())
    trace_file.unlink()
    return base_s, record


def _have_coverage() -> bool:
    """Per-mutant test selection needs coverage.py; without it every mutant runs all its mapped tests."""
    return importlib.util.find_spec("coverage") is not None


if __name__ == "__main__":
    sys.exit(main())
