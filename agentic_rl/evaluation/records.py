"""Per-episode evaluation records, the append-only `results.jsonl` that holds them, and metrics from them.

One record per (task_id, mode, sample) triple, a plain JSON object:

    {"task_id": "HumanEval/0", "mode": "no_tools", "sample": 0, "greedy": true, "task_type": null,
     "passed": true, "status": "passed",
     "finish_reason": "passed", "turns": 1, "tool_calls": {"search": 0, "execute": 0, "submit": 0, "none": 1},
     "tool_errors": {...}, "tool_latency_ms": {...}, "model_tokens": 87, "submitted_code": "def ...",
     "detail": "PASS: 7 tests passed"}

`greedy` says whether the episode was the greedy one (temperature 0) or a sample (the evaluation's sampling);
`task_type` is the task's `metadata["task_type"]` (`docs` for tasks that need the generated library), null when
the task has none. `status` is the verdict of the last graded submission ("passed", "failed", "tampered", "error",
"timeout", "memory", "killed", "output_limit", "sandbox_error", "tool_error"), or "no_submission" (nothing was
submitted: see `finish_reason`), or "no_sample" (a replay file had no sample for this task).
`tampered_submissions` counts the episode's submissions the sandbox graded `tampered` (a detected attempt to forge
the verdict). `detail` is the grader's own text from the submit observation (e.g. "FAIL: 1/3 tests failed: ..."),
so a failure can be read without re-running it.

Metrics are computed from records rather than from trajectories so that a resumed evaluation (whose
earlier episodes exist only as records) reports the same numbers as an uninterrupted one; the names are
those of `agentic_rl.tracking.metrics.episode_metrics`.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentic_rl.envs.base import Environment, HarnessEnvironments
from agentic_rl.runtime.files import RESULTS_FILE
from agentic_rl.tools.base import counted_tools
from agentic_rl.tracking.metrics import aggregate_metrics, episode_counts
from agentic_rl.types import Observation, Task, Trajectory

logger = logging.getLogger(__name__)

Key = tuple[str, str, int]  # (task_id, mode, sample index)

# Statuses counted as "errors" in the summary (the program or the grader broke, as opposed to a wrong answer).
ERROR_STATUSES = ("error", "memory", "killed", "output_limit", "sandbox_error", "tool_error")
_TAG = re.compile(r"^\s*<(\w+)>\s*(.*?)\s*</\1>\s*$", re.DOTALL)


def observation_detail(obs: Observation | None) -> str:
    """The text inside an observation's tags (`<test_result>FAIL: ...</test_result>` -> `FAIL: ...`)."""
    if obs is None:
        return ""
    m = _TAG.match(obs.text)
    return m.group(2) if m else obs.text.strip()


def task_type(task: Task | None) -> str | None:
    """The kind of task a record is scored under (`metadata["task_type"]`), None when it has none."""
    return task.metadata.get("task_type") if task is not None else None


def record_from_trajectory(
    traj: Trajectory,
    mode: str,
    task: Task | None = None,
    *,
    greedy: bool = False,
    environment: Environment | HarnessEnvironments | None = None,
) -> dict[str, Any]:
    """The record of one finished episode; the verdict is the grader's observation of its last submission.

    The record also holds what the episode's environment counts for its own metrics (`Environment.episode_counts`,
    field "env"; CodeGym's, agentic_rl.envs.metrics), where it counts anything. `environment`: the mode's
    environment; None: the harness environments' hooks (envs.base.HarnessEnvironments), as the default
    environment has them."""
    obs = traj.grade
    if traj.passed:
        status = "passed"
    elif obs is not None:
        status = obs.status if obs.status != "passed" else "failed"
    else:
        status = "no_submission"
    return {
        "task_id": traj.task_id,
        "mode": mode,
        "sample": traj.sample_index,
        "greedy": greedy,
        "task_type": task_type(task),
        "passed": bool(traj.passed),
        "status": status,
        **episode_counts(traj),  # turns, tool calls / errors / latency, model tokens, finish reason
        "submitted_code": traj.submitted_code,
        "detail": observation_detail(obs) if obs is not None else _no_submission_detail(traj),
        **({"env": counts} if task is not None and (counts := env_counts(environment, traj, task)) is not None else {}),
    }


def _no_submission_detail(traj: Trajectory) -> str:
    # worded for any environment: a code task's missing block and a CodeGym turn without an action read alike
    return {
        "no_call": "no tool call or answer in any reply"
        if not any(t.call for t in traj.turns)
        else "stopped on a reply without a tool call",
        "max_turns": "out of turns before a submission",
        "length": "context limit reached before a submission",
    }.get(traj.finish_reason, f"no submission ({traj.finish_reason})")


def missing_sample_record(
    task_id: str, mode: str, sample: int, source: str, *, task_type: str | None = None, greedy: bool = False
) -> dict[str, Any]:
    """A failed record for a task that a replay file has no sample for (nothing is rolled out)."""
    return {
        "task_id": task_id,
        "mode": mode,
        "sample": sample,
        "greedy": greedy,
        "task_type": task_type,
        "passed": False,
        "status": "no_sample",
        "finish_reason": "no_sample",
        "turns": 0,
        "tool_calls": {name: 0 for name in (*counted_tools(), "none")},
        "tool_errors": {name: 0 for name in counted_tools()},
        "tool_latency_ms": {name: 0.0 for name in counted_tools()},
        "tampered_submissions": 0,
        "in_process_submissions": 0,
        "model_tokens": 0,
        "submitted_code": None,
        "detail": f"no sample {sample} for this task in {source}",
    }


def record_key(record: dict[str, Any]) -> Key:
    return (str(record["task_id"]), str(record["mode"]), int(record["sample"]))


class ResultStore:
    """`results.jsonl` of a run dir: append-only, one record per line, one line per (task, mode, sample).

    Opening an existing file loads what it holds, so a rerun in the same dir skips those triples. A
    truncated last line (the process was killed while writing it) is dropped with a warning and
    overwritten; a malformed line elsewhere is an error naming the file and line, since it means the file
    was edited or mixed up. When a triple appears twice the later line wins.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.records: dict[Key, dict[str, Any]] = {}
        self._lock = threading.Lock()
        if self.path.is_file():
            self._load()

    @classmethod
    def in_dir(cls, run_dir: str | Path) -> ResultStore:
        return cls(Path(run_dir) / RESULTS_FILE)

    def _load(self) -> None:
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        keep = len(raw)  # bytes of the file that hold whole records
        offset = 0
        for i, line in enumerate(lines):
            start, offset = offset, offset + len(line) + 1
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise TypeError("not a JSON object")
                key = record_key(record)
            except (ValueError, KeyError, TypeError) as exc:
                if i == last:  # killed while writing it: drop it, the triple is evaluated again
                    logger.warning(
                        "%s: dropping a truncated last line (%d bytes) left by an interrupted run", self.path, len(line)
                    )
                    keep = start
                    break
                raise ValueError(
                    f"{self.path}, line {i + 1}: not a valid result record ({exc}). Fix: remove "
                    "that line, or evaluate into a new run dir."
                ) from exc
            self.records[key] = record
        if keep < len(raw):  # cut the partial line so the next append starts on a fresh line
            with self.path.open("r+b") as f:
                f.truncate(keep)
        elif raw and not raw.endswith(b"\n"):
            with self.path.open("ab") as f:
                f.write(b"\n")

    def __contains__(self, key: Key) -> bool:
        return key in self.records

    def __len__(self) -> int:
        return len(self.records)

    def get(self, key: Key) -> dict[str, Any] | None:
        return self.records.get(key)

    def append(self, records: Iterable[dict[str, Any]]) -> None:
        records = list(records)
        if not records:
            return
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as f:
                for record in records:
                    f.write(json.dumps(record) + "\n")
                f.flush()
            for record in records:
                self.records[record_key(record)] = record


def metrics_from_records(
    records: Iterable[dict[str, Any]], environment: Environment | HarnessEnvironments | None = None
) -> dict[str, float]:
    """Tool-usage and rollout metrics of a set of records: the same functions training uses
    (`tracking.metrics.aggregate_metrics`; records hold each episode's `episode_counts`), and the environment's
    own metrics of their `env` counts (`Environment.metrics`; `environment` as in `record_from_trajectory`)."""
    records = list(records)
    return {**aggregate_metrics(records), **hooks(environment).metrics(r.get("env") for r in records)}


def env_counts(environment: Environment | HarnessEnvironments | None, traj: Trajectory, task: Task) -> Any:
    return hooks(environment).episode_counts(traj, task)


def hooks(environment: Environment | HarnessEnvironments | None) -> Environment | HarnessEnvironments:
    """Whose `episode_counts` and `metrics` a record is made and read with: `environment`, else the harness
    environments' (what the default environment delegates to)."""
    return environment if environment is not None else HarnessEnvironments()
