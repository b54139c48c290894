"""A run dir's files read back, and the Markdown tables the reports write.

What a run dir holds and under which names is `agentic_rl.runtime.files` (the writers use the same names): its
metrics (`read_metrics`; `read_metrics_counted` also says which lines it left out), summary (`read_summary`),
resolved config and command-line overrides (`read_config`, `hydra_overrides`, from `.hydra/`) and per-episode
evaluation records (`read_eval_records`). Every JSON Lines file is read by `read_jsonl`; `find_runs` lists the job
dirs of a sweep and `is_run_dir` tells a run dir from a folder of them. `markdown_header` / `markdown_row` are the
one way the reports write a Markdown table.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from agentic_rl.runtime.files import METRICS_FILE, SUMMARY_FILE, eval_records_path

logger = logging.getLogger(__name__)

EVAL_RECORD_KEYS = frozenset({"task_id", "mode", "passed"})


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a JSON Lines file; the value is None where the line is not
    JSON (the half-written last line of an interrupted run): each reader decides what such a line means. [] when
    there is no file."""
    path = Path(path)
    if not path.is_file():
        return []
    lines = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            lines.append((number, json.loads(line)))
        except json.JSONDecodeError:
            lines.append((number, None))
    return lines


def read_metrics(run_dir: Path) -> list[dict]:
    """The run's logged steps, in order; a line that is not a JSON object (a half-written last line) is left out."""
    return read_metrics_counted(run_dir)[0]


def read_metrics_counted(run_dir: Path) -> tuple[list[dict], list[int]]:
    """`read_metrics`, and the line numbers of the lines it left out (not JSON, or JSON but not an object), for a
    report that says how much of a run it could not read rather than dropping it silently."""
    records, left_out = [], []
    for number, record in read_jsonl(Path(run_dir) / METRICS_FILE):
        if isinstance(record, dict):
            records.append(record)
        else:
            left_out.append(number)
    return records, left_out


def read_summary(run_dir: Path) -> dict:
    path = Path(run_dir) / SUMMARY_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def is_run_dir(path: Path) -> bool:
    """A run dir holds its metrics or, e.g. a record kept without its metrics, its summary."""
    return (Path(path) / METRICS_FILE).is_file() or (Path(path) / SUMMARY_FILE).is_file()


def find_runs(sweep_dir: Path) -> list[Path]:
    """The job dirs of a sweep, in job order (numerically: job 10 after job 9)."""
    runs = [p.parent for p in Path(sweep_dir).glob(f"*/{METRICS_FILE}")]
    return sorted(runs, key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0, p.name))


def hydra_overrides(run_dir: Path) -> list[str]:
    path = Path(run_dir) / ".hydra" / "overrides.yaml"
    return [str(o) for o in yaml.safe_load(path.read_text()) or []] if path.is_file() else []


def read_config(run_dir: Path) -> dict:
    """The run's resolved config (`.hydra/config.yaml`); {} where the run kept none."""
    path = Path(run_dir) / ".hydra" / "config.yaml"
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def is_evaluation_run(run_dir: Path) -> bool:
    """A `python -m agentic_rl.evaluate` run (it keeps its per-task records as results.jsonl): an evaluation of
    one policy, with no training curves (a study's base-model evaluation beside its training runs)."""
    return eval_records_path(run_dir, "eval").is_file()


def read_eval_records(run_dir: Path, phase: str) -> list[dict]:
    """The records of `eval_records_path`; [] when the run kept none (runs written before they were kept). A
    line that is not a JSON object is skipped with a warning."""
    path = eval_records_path(run_dir, phase)
    records = []
    for number, record in read_jsonl(path):
        if not isinstance(record, dict) or not EVAL_RECORD_KEYS <= record.keys():
            logger.warning("%s:%d is not an evaluation record (task_id, mode, passed): skipped", path, number)
            continue
        records.append(record)
    return records


def markdown_header(columns: Sequence[str]) -> list[str]:
    """The header row of a Markdown table and the row under it."""
    return [markdown_row(columns), "|" + "---|" * len(columns)]


def markdown_row(cells: Sequence[object]) -> str:
    """One row of a Markdown table. A None cell is a blank in the row's layout (`| |`: the pairs one run lacks, the
    mean row's empty columns); an empty string is an empty value (`|  |`). The published tables use both
    spellings, and a table must stay byte for byte what it was for the same runs."""
    return "|" + "".join(" |" if cell is None else f" {cell} |" for cell in cells)
