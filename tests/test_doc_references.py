"""Every `file:line` and path reference in the docs and the package's docstrings resolves (issue #48).

Read: `docs/*.md`, `README.md`, the docstrings (module, class, function) of every module of the package, and the
comments of every config in `conf/`. A reference is
- a Markdown link `[text](target)` to a local target: it must exist, relative to the Markdown file;
- a path with a slash whose first part is a top-level entry of the checkout (`agentic_rl/`, `conf/`, `tests/`, ...)
  or a subpackage of `agentic_rl` (`sandbox/wire.py`, as a docstring writes it): it must exist, from the checkout,
  from the package, or from the citing file's folder or one above it;
- a bare file name with a line, `grpo.py:345`: some file of that name must exist;
- with `:N` or `:N-M` after a file, the file must have at least that many lines.
A path that names no file (a glob, a placeholder such as `<runs>/`, a metric name such as `rollout/turns_mean`, a
run dir under `outputs/`) is not a reference and is skipped.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentic_rl"
# a file reference ends in one of these
EXTENSIONS = ("py", "md", "yaml", "yml", "json", "jsonl", "sh", "toml", "txt", "png", "csv", "cfg", "ini", "patch")
_EXT = "|".join(EXTENSIONS)
# a path: parts joined by slashes, optionally a line or a line range
PATH_RE = re.compile(rf"(?<![\w./<>*{{$~-])((?:[\w.-]+/)+(?:[\w.-]+\.(?:{_EXT})\b|[\w.-]*))(?::(\d+)(?:-(\d+))?)?")
BARE_RE = re.compile(rf"(?<![\w./<>*{{$~-])([\w-]+(?:\.[\w-]+)*\.(?:{_EXT})):(\d+)(?:-(\d+))?\b")
LINK_RE = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
SKIPPED_DIRS = {"outputs", "__pycache__", "node_modules"}  # run outputs (git-ignored) and caches

# (citing file, reference as written) pairs the check lets pass, each with its reason. Two kinds only:
ALLOWED: set[tuple[str, str]] = {
    # not a path of the checkout: the installed package's copy of conf/, and the candidate's file in the sandbox
    ("agentic_rl/paths.py", "agentic_rl/conf"),
    ("agentic_rl/sandbox/wording.py", "solution.py:3"),
}


@dataclass(frozen=True)
class Reference:
    source: str  # the citing file, relative to the checkout
    target: str  # as written, with its line part
    problem: str

    def __str__(self) -> str:
        return f"{self.source}: {self.target} ({self.problem})"


@cache
def roots() -> frozenset[str]:
    """First parts that make a slashed word a path: the checkout's top-level entries and the package's folders at any
    depth (a docstring writes `sandbox/wire.py`, or `search/ranking.py` inside `tools/`)."""
    # hidden entries (caches, local venvs) differ between machines; .ci is the one of the repository
    top = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") and not p.name.endswith(".egg-info")}
    return frozenset(top - SKIPPED_DIRS | {".ci"} | set(package_folders()))


@cache
def package_folders() -> dict[str, list[Path]]:
    """The package's folders at any depth, by name."""
    found: dict[str, list[Path]] = {}
    for folder in sorted(PACKAGE.rglob("*")):
        if folder.is_dir() and not folder.name.startswith("_"):
            found.setdefault(folder.name, []).append(folder)
    return found


@cache
def files_by_name() -> dict[str, list[Path]]:
    """Every file of the checkout by its name (bare `name.py:N` references), outputs and hidden folders left out."""
    found: dict[str, list[Path]] = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".") and not d.endswith(".egg-info")]
        for name in files:
            found.setdefault(name, []).append(Path(folder) / name)
    return found


@cache
def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8", errors="replace").splitlines())


def bases(source: Path, first: str) -> list[Path]:
    """Where a relative path whose first part is `first` is looked for: the checkout, the package, the citing file's
    folder and those above it, and the parent of each package folder named `first` (`service/router.py` is
    `rollout/service/router.py`)."""
    out = [ROOT, PACKAGE]
    folder = source.parent
    while folder != ROOT and ROOT in folder.parents:
        out.append(folder)
        folder = folder.parent
    return out + [folder.parent for folder in package_folders().get(first, [])]


def check_lines(path: Path, first: str | None, last: str | None) -> str | None:
    if first is None or not path.is_file():
        return None
    end = max(int(first), int(last or first))
    n = line_count(path)
    return f"line {end} beyond the file's {n} lines" if end > n else None


def check_path(source: Path, path: str, first: str | None, last: str | None) -> str | None:
    """None when `path` (with its lines) resolves, else what is wrong."""
    parts = path.split("/")
    if parts[0] not in roots() or parts[0] in SKIPPED_DIRS:
        return None  # not a reference to this checkout (a metric name, another package's path)
    is_file = bool(re.search(rf"\.(?:{_EXT})$", path))
    if not is_file and not path.endswith("/"):
        if parts[0] not in {"agentic_rl", "conf", "docs", "tests", "experiments"}:
            return None  # `rollout/turns_mean`, `tools/search_rate`: a metric, not a folder
        candidates = [path, path + ".py", path + ".yaml", path + ".md"]
    else:
        candidates = [path]
    for base in bases(source, parts[0]):
        for candidate in candidates:
            if (base / candidate).exists():
                return check_lines(base / candidate, first, last)
    return "no such file or folder"


def check_bare(name: str, first: str, last: str | None) -> str | None:
    matches = files_by_name().get(name, [])
    if not matches:
        return "no file of that name"
    problems = [check_lines(path, first, last) for path in matches]
    return None if None in problems else problems[0]


def check_link(source: Path, target: str) -> str | None:
    if re.match(r"^[a-z]+:", target) or target.startswith("#"):
        return None  # a URL, or an anchor of the same page
    local = target.split("#", 1)[0]
    return None if (source.parent / local).exists() else "link target missing"


def placeholder(text: str, m: re.Match[str]) -> bool:
    """A path that stands for several (`seed-*/`, `seed-<n>/`, `seed-{1,2,3}`, `seed-1..3`): not one reference."""
    follows = text[m.end() : m.end() + 1]
    return follows in ("*", "<", "{", "[") or any(".." in part and part != ".." for part in m.group(1).split("/"))


def references_in(text: str, source: Path, markdown: bool) -> list[Reference]:
    """Every unresolved reference of one text (a Markdown file, or one docstring) cited from `source`."""
    rel = source.relative_to(ROOT).as_posix()
    found: list[Reference] = []
    if markdown:
        for m in LINK_RE.finditer(text):
            problem = check_link(source, m.group(1))
            if problem:
                found.append(Reference(rel, m.group(1), problem))
        text = LINK_RE.sub("", text)  # a link's target is checked once, as a link
    for m in PATH_RE.finditer(text):
        if placeholder(text, m):
            continue
        problem = check_path(source, m.group(1), m.group(2), m.group(3))
        if problem:
            found.append(Reference(rel, m.group(0), problem))
    for m in BARE_RE.finditer(text):
        problem = check_bare(m.group(1), m.group(2), m.group(3))
        if problem:
            found.append(Reference(rel, m.group(0), problem))
    return found


def docstrings(source: str) -> list[str]:
    """The module's docstring and those of its classes and functions."""
    tree = ast.parse(source)
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)))]
    return [doc for node in nodes if (doc := ast.get_docstring(node, clean=False))]


def yaml_comments(source: str) -> str:
    """The comments of a YAML file (what follows a `#` that starts a line or follows a space), one per line."""
    return "\n".join(m.group(1) for m in re.finditer(r"(?:^|\s)#(.*)$", source, re.MULTILINE))


def all_stale() -> list[Reference]:
    found: list[Reference] = []
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found += references_in(md.read_text(encoding="utf-8"), md, markdown=True)
    for module in sorted(PACKAGE.rglob("*.py")):
        for doc in docstrings(module.read_text(encoding="utf-8")):
            found += references_in(doc, module, markdown=False)
    for config in sorted((ROOT / "conf").rglob("*.yaml")):
        found += references_in(yaml_comments(config.read_text(encoding="utf-8")), config, markdown=False)
    return found


def test_every_reference_in_the_docs_and_docstrings_resolves():
    stale = [r for r in all_stale() if (r.source, r.target) not in ALLOWED]
    assert not stale, "stale references (fix the reference, or the line it cites):\n" + "\n".join(map(str, stale))


def test_the_allow_list_holds_only_references_still_stale():
    still = {(r.source, r.target) for r in all_stale()}
    # a citing file another helper has not committed yet is not there in a fresh clone: nothing to drop then
    fixed = {(source, target) for source, target in ALLOWED - still if (ROOT / source).exists()}
    assert not fixed, f"these allowed references resolve now: drop them from ALLOWED: {sorted(fixed)}"


def test_the_checker_finds_a_missing_file_a_line_past_the_end_and_a_dead_link(tmp_path):
    source = PACKAGE / "train.py"
    n = line_count(source)
    text = (
        f"see agentic_rl/train.py:{n} and `train.py:{n}`, agentic_rl/train.py:{n + 1}, conf/train.yaml,"
        " agentic_rl/nothing_here.py, nothing_here.py:3, agentic_rl/train.py:2-99999, rollout/turns_mean,"
        " outputs/runs/x.json, `seed-<n>/metrics.jsonl`, conf/tool/*.yaml, experiments/tool-choice/seed-{1,2},"
        " experiments/tool-choice/seed-1..3, tools/submit/tampered/<kind>"
    )
    found = [(r.target, r.problem) for r in references_in(text, source, markdown=False)]
    assert found == [
        (f"agentic_rl/train.py:{n + 1}", f"line {n + 1} beyond the file's {n} lines"),
        ("agentic_rl/nothing_here.py", "no such file or folder"),
        ("agentic_rl/train.py:2-99999", f"line 99999 beyond the file's {n} lines"),
        ("nothing_here.py:3", "no file of that name"),
    ]
    page = ROOT / "docs" / "x.md"  # a link resolves from the page's folder
    links = "[a](training.md) [b](../README.md#layout) [c](missing.md) [d](https://example.org/x.md) [e](#top)"
    assert [(r.target, r.problem) for r in references_in(links, page, markdown=True)] == [
        ("missing.md", "link target missing")
    ]


def test_a_package_relative_path_resolves_from_the_package_or_the_citing_folder():
    source = PACKAGE / "tools" / "search" / "pydoc_index.py"
    assert references_in("sandbox/wire.py, search/ranking.py, ranking.py:1, pydoc_store.py", source, False) == []
    assert [r.target for r in references_in("search/nothing.py", source, False)] == ["search/nothing.py"]
    page = ROOT / "docs" / "scaling.md"  # a nested package folder named alone, from a page outside the package
    assert references_in("service/router.py and serve/pool.py", page, True) == []
    assert [r.target for r in references_in("service/pool.py", page, True)] == ["service/pool.py"]
