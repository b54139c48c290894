"""What a synthesis run keeps on disk, so that killing it loses nothing and a rerun skips finished problems.

Beside `--out ENVS.jsonl` (the environments, append-only, one per line, the format of agentic_rl/envs/tasks.py):
  - ENVS.status.jsonl: append-only, one line per finished problem (`problem_id`, `status` kept | dropped |
    failed, `stage`, `reason`, `retry`, the per-stage yields); the last line of a problem wins.
  - ENVS.report.json: the run's yields, rebuilt from the status file after each problem (so a resumed run
    reports every problem, not only its own).
A problem is finished when its status line is written, after its environment. On start: a torn last line of
either file (the run was killed while writing it) is cut off, and an environment whose status line is missing is
given one, so it is never written twice. A failure with `retry` (an endpoint timeout, an unreachable or
overloaded endpoint) is tried again by the next run; every other status is final.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from agentic_rl.envs.synthesize.stages import STAGES


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of an append-only file; a torn last line is cut off; a bad line elsewhere is an error."""
    if not path.is_file():
        return []
    text = path.read_text()
    lines = text.split("\n")
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            if n == len(lines):  # no newline after it: the write was cut short
                with path.open("r+b") as f:
                    f.truncate(path.read_bytes().rfind(b"\n") + 1)
                break
            raise ValueError(f"{path}, line {n}: not JSON; this run's files are damaged (remove the line)") from None
    return rows


def append_line(path: Path, row: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())  # the status line must not reach the disk before its environment


class RunStore:
    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.status_path = self.out.with_suffix(".status.jsonl")
        self.report_path = self.out.with_suffix(".report.json")
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.status = {row["problem_id"]: row for row in read_lines(self.status_path)}
        for record in read_lines(self.out):
            problem_id = record.get("source", {}).get("problem_id")
            if problem_id is not None and self.status.get(problem_id, {}).get("status") != "kept":
                self.finish({"problem_id": problem_id, "status": "kept", "stage": None, "reason": "recovered"})

    def done(self, problem_id: str) -> bool:
        row = self.status.get(problem_id)
        return row is not None and not row.get("retry")

    def finish(self, status: dict[str, Any], record: dict[str, Any] | None = None) -> None:
        if record is not None:
            append_line(self.out, record)
        append_line(self.status_path, status)
        self.status[status["problem_id"]] = status

    def write_report(self, problems_in: int, settings: dict[str, Any], **extra: Any) -> dict[str, Any]:
        report = {**build_report(list(self.status.values()), problems_in, settings), **extra}
        self.report_path.write_text(json.dumps(report, indent=2) + "\n")
        return report


def build_report(rows: list[dict[str, Any]], problems_in: int, settings: dict[str, Any]) -> dict[str, Any]:
    """Problems in, environments out, and per stage: problems that reached it, configurations in and out."""
    stages: dict[str, dict[str, int]] = {s: {"problems": 0, "configs_in": 0, "configs_out": 0} for s in STAGES}
    for row in rows:
        for name, counts in (row.get("stages") or {}).items():
            stages[name]["problems"] += 1
            stages[name]["configs_in"] += counts["in"]
            stages[name]["configs_out"] += counts["out"]
    by_status = Counter(row["status"] for row in rows)
    return {
        "problems_in": problems_in,
        "problems_finished": sum(not row.get("retry") for row in rows),
        "environments_out": by_status["kept"],
        "configs_out": sum(row.get("configs_out", 0) for row in rows if row["status"] == "kept"),
        "by_status": dict(by_status),
        "stages": stages,
        "dropped_configs": dict(sum((Counter(row.get("dropped") or {}) for row in rows), Counter())),
        "problems_dropped": dict(Counter(f"{r['stage']}: {r['reason']}" for r in rows if r["status"] == "dropped")),
        "problems_failed": dict(Counter(f"{r['stage']}: {r['reason']}" for r in rows if r["status"] == "failed")),
        "problems": {row["problem_id"]: {k: row.get(k) for k in ("status", "stage", "reason")} for row in rows},
        "settings": settings,
    }
