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

Side by side (`run_figures`, `side_by_side_markdown`), any number of runs (made for the same recipe on two
sampler backends) are read for where the time went rather than judged: wall time and peak RSS from a
`/usr/bin/time -v` report when given one per run (a run done in chunks, e.g. stopped by a timeout and resumed,
gives its chunks' reports joined by `+`: the walls add up, the peak is the largest); the training steps' `time/*`
summed; generated tokens/s and prefill/context tokens of the training rollouts; `train/reward_mean` per quarter
of the steps; the evaluations' pass@1 and rollout seconds per mode, before and after; the means of
`rollout_correction/*` over the steps that logged them. With two runs the last column is the second over the
first where a ratio means something.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_rl.reports.run_files import (
    markdown_header,
    markdown_row,
    read_config,
    read_eval_records,
    read_metrics,
    read_summary,
)
from agentic_rl.reports.runs import TRAIN_REWARD

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


def _pairs_markdown(first: str, rows: list[tuple[Any, Any, Any]]) -> list[str]:
    """A table of (name, first run's value, second run's value) rows under the column `first`."""
    return [*markdown_header([first, "first", "second"]), *(markdown_row([k, _fmt(a), _fmt(b)]) for k, a, b in rows)]


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
        lines += ["## What differs", "", *_pairs_markdown("where", result.differ)]
        lines += [markdown_row([where, None, None]) for where in result.only_one]
        lines.append("")
    if result.rewards:  # an evaluation run has no training steps
        lines += [f"## `{TRAIN_REWARD}` per training step", "", *_pairs_markdown("step", result.rewards), ""]
    lines += ["## Evaluations (summary.json)", "", *_pairs_markdown("phase/mode/metric", result.evals)]
    lines += ["", "## Costs", "", *_pairs_markdown("cost", result.costs)]
    return "\n".join(lines) + "\n"


SIDE_BY_SIDE_TIME_KEYS = ("time/rollout_s", "time/tools_s", "time/sync_s", "time/update_s", "time/step_s")


def time_v(path: Path) -> dict[str, float]:
    """Wall seconds and peak RSS (GiB) from a `/usr/bin/time -v` report."""
    text = path.read_text()
    out: dict[str, float] = {}
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    if wall:
        seconds = 0.0
        for part in wall.group(1).split(":"):
            seconds = seconds * 60 + float(part)
        out["wall_s"] = seconds
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if rss:
        out["peak_rss_gib"] = int(rss.group(1)) / 2**20
    return out


def time_v_chunks(spec: str) -> dict[str, float]:
    """`time_v` of one report, or of a run's chunks given as `A+B+...`: summed wall seconds, the largest peak RSS."""
    parts = [time_v(Path(part)) for part in spec.split("+")]
    out: dict[str, float] = {}
    walls = [p["wall_s"] for p in parts if "wall_s" in p]
    if walls:
        out["wall_s"] = sum(walls)
    peaks = [p["peak_rss_gib"] for p in parts if "peak_rss_gib" in p]
    if peaks:
        out["peak_rss_gib"] = max(peaks)
    if len(parts) > 1:
        out["time -v chunks"] = float(len(parts))
    return out


def run_figures(run: Path, time_report: str | None) -> dict[str, Any]:
    """One run's column of the side-by-side table (see the module doc), in row order."""
    summary = read_summary(run)
    steps = [r for r in read_metrics(run) if TRAIN_REWARD in r]
    backend = (read_config(run).get("rollout") or {}).get("backend")
    figures: dict[str, Any] = {"rollout.backend": backend, "train_steps": len(steps)}
    if time_report is not None:
        figures.update(time_v_chunks(time_report))
    figures["summary peak_rss_gib"] = summary.get("peak_rss_gib")
    figures["train_seconds"] = summary.get("train_seconds")
    for key in SIDE_BY_SIDE_TIME_KEYS:
        figures[f"sum {key}"] = sum(r.get(key, 0.0) for r in steps)
    generated = sum(r.get("rollout/tokens_per_s", 0.0) * r.get("time/rollout_s", 0.0) for r in steps)
    rollout_s = figures["sum time/rollout_s"]
    figures["train rollout tok/s"] = generated / rollout_s if rollout_s else None
    prefill = sum(r.get("rollout/prefill_tokens", 0.0) for r in steps)
    context = sum(r.get("rollout/context_tokens", 0.0) for r in steps)
    figures["train prefill/context"] = prefill / context if context else None
    n = len(steps)
    for q in range(4):
        part = steps[q * n // 4 : (q + 1) * n // 4]
        if part:
            figures[f"reward_mean quarter {q + 1}"] = sum(r[TRAIN_REWARD] for r in part) / len(part)
    for when, modes in (summary.get("eval") or {}).items():
        for mode, values in modes.items():
            figures[f"eval {when} {mode} pass@1"] = values.get("pass@1")
            figures[f"eval {when} {mode} rollout_s"] = values.get("time/rollout_s")
    gap_keys = sorted({k for r in steps for k in r if k.startswith("rollout_correction/")})
    for key in gap_keys:
        values = [r[key] for r in steps if key in r]
        figures[f"mean {key}"] = sum(values) / len(values)
    return figures


def _ratio(key: str, a: Any, b: Any) -> str | None:
    """The second run's value over the first's, where a ratio means something (a count of steps is not a cost)."""
    numeric = isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
    return f"{b / a:.3f}" if numeric and a and key != "train_steps" else None


def side_by_side_markdown(names: list[str], runs: list[dict[str, Any]]) -> str:
    """The runs' `run_figures` as one table, a row per quantity; with two runs, the last column is the ratio."""
    keys = list(dict.fromkeys(k for r in runs for k in r))
    ratio = len(runs) == 2
    lines = markdown_header(["quantity", *names, *(["second / first"] if ratio else [])])
    for key in keys:
        values = [r.get(key) for r in runs]
        cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in values]
        lines.append(markdown_row([key, *cells, *([_ratio(key, *values)] if ratio else [])]))
    return "\n".join(lines)
