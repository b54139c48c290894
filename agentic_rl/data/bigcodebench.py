"""BigCodeBench-Hard (evaluation set, hub `bigcode/bigcodebench-hard`, split v0.1.4, 148 tasks) -> `Task`.

Task fields: prompt = `instruct_prompt` (default, the benchmark's "instruct" split) or `complete_prompt`
(`prompt_field`, the "complete" split); harness "unittest" (`test` defines `class TestCases`, appended to the
candidate); reference_solution = `complete_prompt + "\\n" + canonical_solution`, the runnable module the
official `bigcodebench/evaluate.py` checks; metadata keeps `libs` parsed to a list, `code_prompt`,
`complete_prompt` and `doc_struct` (the raw JSON string).

Some tasks cannot pass in every environment. Two helpers report them, and nothing is dropped unless the user
names it in `exclude`:
  - `network_task_ids(tasks)`: tests or reference solution reach the network (heuristic);
  - `missing_lib_tasks(tasks, python)`: libraries that `python` cannot import.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from agentic_rl.data.records import check_unique_ids, describe_source, load_records, req_str, row_error
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

HUB_ID = "bigcode/bigcodebench-hard"
SPLIT = "v0.1.4"
ID_PREFIX = "BigCodeBench/"
PROMPT_FIELDS = ("instruct_prompt", "complete_prompt")
REQUIRED_COLUMNS = (
    "task_id",
    "complete_prompt",
    "instruct_prompt",
    "canonical_solution",
    "code_prompt",
    "test",
    "entry_point",
    "doc_struct",
    "libs",
)

# Import name -> pip distribution, for the names that differ (used in the fix hint of missing libs).
PIP_NAMES = {
    "sklearn": "scikit-learn",
    "bs4": "beautifulsoup4",
    "cv2": "opencv-python",
    "PIL": "Pillow",
    "Crypto": "pycryptodome",
    "docx": "python-docx",
    "Levenshtein": "python-Levenshtein",
    "flask_login": "Flask-Login",
    "flask_wtf": "Flask-WTF",
    "flask_mail": "Flask-Mail",
    "wtforms": "WTForms",
    "yaml": "PyYAML",
    "dateutil": "python-dateutil",
    "skimage": "scikit-image",
    "faker": "Faker",
}


def load_bigcodebench(
    path: str | os.PathLike[str] | None = None,
    hub_id: str = HUB_ID,
    split: str = SPLIT,
    prompt_field: str = "instruct_prompt",
    exclude: Sequence[str | int] = (),
    seed: int = 0,
    limit: int | None = None,
    cache_dir: str | None = None,
) -> list[Task]:
    """BigCodeBench(-Hard) tasks in dataset order.

    `exclude`: task ids to drop (`"BigCodeBench/101"` or just `101`); an id not in the data is an error.
    `seed` is accepted so every data config has the same keys; an evaluation set keeps its order.
    `limit` keeps the first `limit` tasks (after `exclude`).
    """
    del seed
    if prompt_field not in PROMPT_FIELDS:
        raise ValueError(f"data.prompt_field={prompt_field!r}: must be one of {list(PROMPT_FIELDS)}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"data.limit={limit!r}: must be null or an integer >= 0")
    source = describe_source(path, hub_id, split)
    rows = load_records(path, hub_id, split, required=REQUIRED_COLUMNS, cache_dir=cache_dir)
    tasks = [row_to_task(row, i, source, prompt_field) for i, row in enumerate(rows)]

    check_unique_ids(tasks, source)

    dropped = {_normalize_id(x) for x in exclude}
    unknown = sorted(dropped - {t.task_id for t in tasks})
    if unknown:
        raise ValueError(f"data.exclude names ids not in {source}: {unknown}. Fix: use ids like '{ID_PREFIX}101'.")
    if dropped:
        tasks = [t for t in tasks if t.task_id not in dropped]
        logger.info("bigcodebench: excluded %d tasks on request: %s", len(dropped), sorted(dropped))

    network = network_task_ids(tasks)
    if network:
        logger.info(
            "bigcodebench: %d tasks may need the network (kept; exclude them with data.exclude): %s",
            len(network),
            network,
        )
    if limit is not None:
        tasks = tasks[:limit]
    logger.info("bigcodebench: %d tasks from %s, prompt field %s", len(tasks), source, prompt_field)
    return tasks


def row_to_task(row: dict[str, Any], index: int, source: str, prompt_field: str = "instruct_prompt") -> Task:
    """Validate one BigCodeBench row and map it to a unittest `Task` (DatasetError names the row and column)."""
    task_id = req_str(row, index, "task_id", source).strip()
    complete_prompt = req_str(row, index, "complete_prompt", source)
    instruct_prompt = req_str(row, index, "instruct_prompt", source)
    canonical_solution = req_str(row, index, "canonical_solution", source)
    code_prompt = req_str(row, index, "code_prompt", source)
    test = req_str(row, index, "test", source)
    entry_point = req_str(row, index, "entry_point", source).strip()
    doc_struct = req_str(row, index, "doc_struct", source, allow_empty=True)
    if "TestCases" not in test:
        raise row_error(
            source,
            index,
            "test",
            "no `TestCases` class in the test code",
            "the test must define `class TestCases(unittest.TestCase)`, as BigCodeBench does",
        )
    prompt = instruct_prompt if prompt_field == "instruct_prompt" else complete_prompt
    return Task(
        task_id=task_id,
        prompt=prompt,
        tests=test,
        harness="unittest",
        entry_point=entry_point,
        reference_solution=complete_prompt + "\n" + canonical_solution,
        metadata={
            "libs": parse_libs(row.get("libs"), index, source),
            "code_prompt": code_prompt,
            "complete_prompt": complete_prompt,
            "doc_struct": doc_struct,
            "prompt_field": prompt_field,
            "source_row": index,
        },
    )


def parse_libs(value: Any, index: int, source: str) -> list[str]:
    """`libs` is a Python list literal string (`"['os', 'pandas']"`); a list is accepted as is."""
    fix = "libs must be a list of module names, e.g. \"['os', 'pandas']\""
    parsed = value
    if isinstance(value, str):
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError) as err:
            raise row_error(source, index, "libs", f"cannot parse {value[:80]!r} ({type(err).__name__})", fix) from err
    if not isinstance(parsed, (list, tuple)) or not all(isinstance(x, str) and x.strip() for x in parsed):
        raise row_error(source, index, "libs", f"expected a list of non-empty strings, got {parsed!r:.80}", fix)
    return [x.strip() for x in parsed]


def _normalize_id(task_id: str | int) -> str:
    text = str(task_id).strip()
    return text if text.startswith(ID_PREFIX) else ID_PREFIX + text


# ------------------------------------------------------------------------------------------------ reports

# Network use: a networking module imported or called, or a literal http(s)/ftp URL. Many such tasks mock
# the network in their tests; this is a report of tasks that *may* need it, not a verdict.
_NETWORK_PATTERNS = (
    re.compile(
        r"^\s*(?:import|from)\s+(?:requests|urllib\d?|socket|smtplib|ftplib|http|httpx|aiohttp|"
        r"paramiko|telnetlib|poplib|imaplib|wget|mechanize)\b",
        re.MULTILINE,
    ),
    re.compile(r"\b(?:requests|urllib\d?(?:\.request)?|socket|smtplib|ftplib|httpx)\.\w+\("),
    re.compile(r"\burlopen\s*\("),
    re.compile(r"\b(?:https?|ftp)://[^\s'\"]+"),
)


def needs_network(task: Task) -> bool:
    """True when the task's tests or reference solution look like they use the network (heuristic)."""
    text = "\n".join(x for x in (task.tests, task.reference_solution or "") if x)
    return any(p.search(text) for p in _NETWORK_PATTERNS)


def network_task_ids(tasks: Iterable[Task]) -> list[str]:
    """Ids of tasks that may need the network (see `needs_network`); e.g. 101, 590, 1012 on the hard set."""
    return [t.task_id for t in tasks if needs_network(t)]


def task_modules(task: Task) -> list[str]:
    """Top-level modules a task needs: its `libs` plus what its tests and reference solution import."""
    names = {lib.split(".")[0] for lib in task.metadata.get("libs", [])}
    for code in (task.tests, task.reference_solution or ""):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return sorted(names)


_FIND_SPEC_SCRIPT = """
import importlib.util, json, sys
missing = []
for name in json.load(sys.stdin):
    try:
        if importlib.util.find_spec(name) is None:
            missing.append(name)
    except Exception:
        missing.append(name)
json.dump(missing, sys.stdout)
"""


def importable(
    modules: Iterable[str], python: str | os.PathLike[str] = sys.executable, timeout: float = 120.0
) -> dict[str, bool]:
    """Whether each top-level module can be found by `python` (`importlib.util.find_spec`, in a subprocess)."""
    names = sorted(set(modules))
    try:
        proc = subprocess.run(
            [os.fspath(python), "-c", _FIND_SPEC_SCRIPT],
            input=json.dumps(names),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as err:
        raise ValueError(
            f"interpreter {os.fspath(python)!r} not found. Fix: pass the path of a Python executable."
        ) from err
    if proc.returncode != 0:
        raise RuntimeError(
            f"checking imports with {os.fspath(python)} failed (exit {proc.returncode}): {proc.stderr[-2000:]}"
        )
    missing = set(json.loads(proc.stdout))
    return {name: name not in missing for name in names}


def missing_lib_tasks(tasks: Sequence[Task], python: str | os.PathLike[str] = sys.executable) -> dict[str, list[str]]:
    """Task id -> modules `python` cannot import (only tasks with at least one); one subprocess in all.

    Logs each missing module with the pip package that provides it (`pip_name`). The tasks are kept:
    drop them explicitly with `data.exclude` if wanted.
    """
    needs = {t.task_id: task_modules(t) for t in tasks}
    found = importable({m for mods in needs.values() for m in mods}, python)
    missing = {tid: [m for m in mods if not found[m]] for tid, mods in needs.items()}
    missing = {tid: mods for tid, mods in missing.items() if mods}
    absent = sorted({m for mods in missing.values() for m in mods})
    if absent:
        logger.warning(
            "%d tasks need modules %s cannot import: %s (pip install %s)",
            len(missing),
            os.fspath(python),
            absent,
            " ".join(pip_name(m) for m in absent),
        )
    return missing


def pip_name(module: str) -> str:
    """The pip distribution that provides a top-level import name (`sklearn` -> `scikit-learn`)."""
    return PIP_NAMES.get(module, module)
