"""Two runs side by side: did a change alter what a run computes, and what did it cost?

A refactor should leave a seeded run's numbers as they were. `compare_runs` pairs two runs' metrics.jsonl
records by step, their summary.json evaluations by phase and mode, and their per-episode evaluation records
(a training run's eval_before/eval_after.jsonl, an evaluation run's results.jsonl) by task, mode and sample,
and splits what it compares into two kinds:

- outcomes (rewards, pass rates, tool rates, token counts, losses ...): equal up to `tolerance` or not;
- costs (`time/*`, `memory/*`, tokens per second, latencies, wall time): they differ between any two sittings,
  so they are shown side by side, never judged.

`compare_markdown` writes the verdict first (how many outcomes were compared, which differ), then the per-step
training reward, the evaluations and the costs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_rl.tracking.runs import TRAIN_REWARD, read_eval_records, read_metrics, read_summary

# metric names (or the last part of one) that measure cost, not outcome
COST_PREFIXES = ("time/", "memory/")
COST_SUFFIXES = ("tokens_per_s", "latency_ms", "_seconds", "_s", "peak_rss_gib")
SUMMARY_COSTS = ("train_seconds", "checkpoint_seconds", "peak_rss_gib")
# what an episode's evaluation record holds that is an outcome (its latencies are costs)
RECORD_OUTCOMES = (
    "passed",
    "status",
    "turns",
    "tool_calls",
    "tool_errors",
    "model_tokens",
    "finish_reason",
    "submitted_code",
    "detail",
)
RECORD_PHASES = ("before", "after", "eval")


def is_cost(name: str) -> bool:
    last = name.rsplit("/", 1)[-1]
    return name.startswith(COST_PREFIXES) or "/time/" in name or last.endswith(COST_SUFFIXES)


@dataclass
class Comparison:
    compared: int = 0  # outcome values present in both runs
    differ: list[tuple[str, Any, Any]] = field(default_factory=list)  # (where, a, b)
    only_one: list[str] = field(default_factory=list)  # outcomes one run has and the other lacks
    rewards: list[tuple[int, Any, Any]] = field(default_factory=list)  # (step, a, b) of the training reward
    evals: list[tuple[str, Any, Any]] = field(default_factory=list)  # (phase/mode/metric, a, b), outcomes
    costs: list[tuple[str, Any, Any]] = field(default_factory=list)  # (name, a, b)

    @property
    def equal(self) -> bool:
        return not self.differ and not self.only_one


def _same(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))
    return a == b


def _check(result: Comparison, where: str, a: Any, b: Any, tolerance: float) -> None:
    result.compared += 1
    if not _same(a, b, tolerance):
        result.differ.append((where, a, b))


def _by_step(records: list[dict]) -> dict[tuple[int, str], dict]:
    """(step, kind) -> the step's record; kind tells a training step from an evaluation logged at the same step."""
    return {(r["step"], "train" if "train/epoch" in r else "eval"): r for r in records if "step" in r}


def compare_runs(run_a: Path, run_b: Path, tolerance: float = 0.0) -> Comparison:
    """Compare run `run_a` (e.g. before a change) with `run_b` (after); `tolerance` is relative."""
    result = Comparison()
    a_steps, b_steps = _by_step(read_metrics(run_a)), _by_step(read_metrics(run_b))
    time_sums: dict[str, list[float]] = {}
    for key in sorted(a_steps.keys() | b_steps.keys()):
        a, b = a_steps.get(key), b_steps.get(key)
        if a is None or b is None:
            result.only_one.append(f"step {key[0]} ({key[1]}) in {'the first' if b is None else 'the second'} only")
            continue
        for name in sorted((a.keys() | b.keys()) - {"step"}):
            where = f"step {key[0]} {name}"
            if is_cost(name):
                if name.startswith("time/") and key[1] == "train":
                    sums = time_sums.setdefault(name, [0.0, 0.0])
                    sums[0] += a.get(name) or 0.0
                    sums[1] += b.get(name) or 0.0
                continue
            if name not in a or name not in b:
                result.only_one.append(where + f" in {'the first' if name in a else 'the second'} only")
                continue
            _check(result, where, a[name], b[name], tolerance)
        if key[1] == "train" and (TRAIN_REWARD in a or TRAIN_REWARD in b):
            result.rewards.append((key[0], a.get(TRAIN_REWARD), b.get(TRAIN_REWARD)))
    summary_a, summary_b = read_summary(run_a), read_summary(run_b)
    evals_a, evals_b = _eval_phases(summary_a), _eval_phases(summary_b)
    for phase in sorted(evals_a.keys() | evals_b.keys()):
        modes_a, modes_b = evals_a.get(phase) or {}, evals_b.get(phase) or {}
        for mode in sorted(modes_a.keys() | modes_b.keys()):
            ma, mb = modes_a.get(mode) or {}, modes_b.get(mode) or {}
            for name in sorted(ma.keys() | mb.keys()):
                where = f"{phase}/{mode}/{name}"
                if is_cost(name):
                    continue
                if name not in ma or name not in mb:
                    result.only_one.append(f"eval {where} in {'the first' if name in ma else 'the second'} only")
                    continue
                result.evals.append((where, ma[name], mb[name]))
                _check(result, f"eval {where}", ma[name], mb[name], tolerance)
    for phase in RECORD_PHASES:
        _compare_records(result, phase, read_eval_records(run_a, phase), read_eval_records(run_b, phase))
    result.costs = [(f"sum of {name} over training steps", *sums) for name, sums in sorted(time_sums.items())]
    result.costs += [(name, summary_a.get(name), summary_b.get(name)) for name in SUMMARY_COSTS]
    return result


def _eval_phases(summary: dict) -> dict:
    """phase -> mode -> metrics. A training run's summary holds its evaluations by phase ("before", "after");
    an evaluation run's holds one evaluation by mode, taken here as the phase "eval"."""
    evals = summary.get("eval") or {}
    by_phase = all(
        isinstance(modes, dict) and all(isinstance(m, dict) for m in modes.values()) for modes in evals.values()
    )
    return evals if by_phase else {"eval": evals}


def _compare_records(result: Comparison, phase: str, records_a: list[dict], records_b: list[dict]) -> None:
    """Each episode's outcomes, paired by (task, mode, sample)."""

    def keyed(records: list[dict]) -> dict[tuple, dict]:
        return {(r["task_id"], r["mode"], r.get("sample", 0)): r for r in records}

    a, b = keyed(records_a), keyed(records_b)
    for key in sorted(a.keys() | b.keys(), key=str):
        where = f"{phase} {key[0]} ({key[1]}, sample {key[2]})"
        if key not in a or key not in b:
            result.only_one.append(f"{where} in {'the first' if key in a else 'the second'} only")
            continue
        for name in RECORD_OUTCOMES:
            _check(result, f"{where} {name}", a[key].get(name), b[key].get(name), 0.0)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if value is None:
        return "–"
    text = str(value).replace("\n", "\\n").replace("|", "\\|")  # one table cell
    return text if len(text) <= 160 else text[:157] + "..."


def compare_markdown(result: Comparison, label_a: str, label_b: str) -> str:
    verdict = "**equal**" if result.equal else "**different**"
    lines = [
        f"# `{label_a}` against `{label_b}`",
        "",
        f"Outcomes compared: {result.compared} values; {verdict}: {len(result.differ)} differ, "
        f"{len(result.only_one)} present in one run only. Costs (time, memory, throughput) are listed, not judged.",
        "",
    ]
    if result.differ or result.only_one:
        lines += ["## What differs", "", "| where | first | second |", "|---|---|---|"]
        lines += [f"| {where} | {_fmt(a)} | {_fmt(b)} |" for where, a, b in result.differ]
        lines += [f"| {where} | | |" for where in result.only_one]
        lines.append("")
    if result.rewards:  # an evaluation run has no training steps
        lines += [f"## `{TRAIN_REWARD}` per training step", "", "| step | first | second |", "|---|---|---|"]
        lines += [f"| {step} | {_fmt(a)} | {_fmt(b)} |" for step, a, b in result.rewards]
        lines.append("")
    lines += ["## Evaluations (summary.json)", "", "| phase/mode/metric | first | second |", "|---|---|---|"]
    lines += [f"| {where} | {_fmt(a)} | {_fmt(b)} |" for where, a, b in result.evals]
    lines += ["", "## Costs", "", "| cost | first | second |", "|---|---|---|"]
    lines += [f"| {name} | {_fmt(a)} | {_fmt(b)} |" for name, a, b in result.costs]
    return "\n".join(lines) + "\n"
