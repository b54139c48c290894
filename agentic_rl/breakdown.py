"""`python -m agentic_rl.breakdown RUN_DIR [RUN_DIR ...] [--by difficulty] [--before BASE_DIR] [--out FILE]`: pass
rates split by a field of the tasks' metadata (a pipeline task's `difficulty`, a KodCode task's `subset`, ...), per
phase and mode, with 95% Wilson intervals.

With `--before BASE_DIR` (an evaluation of the untrained model), each RUN_DIR is an evaluation of a trained adapter
on the same tasks, and the table is the paired change per mode and field value, pooled over the runs (each seed's
episodes paired with the base model's episode of the same task, mode and sample): McNemar's exact test and
Newcombe's paired interval (`tracking/stats.py`, `PairedChange`). Greedy evaluation makes the base episodes the same
for every seed, so one base evaluation serves them all.

The per-episode records (an evaluation's results.jsonl, a training run's eval_before/eval_after.jsonl) carry task
ids only, so the tasks are rebuilt from the run's own config (`.hydra/config.yaml`: `data` for an evaluation,
`eval_data` for a training run). Several run dirs pool their episodes: the same tasks under several seeds count
once per seed. It is how a task distribution is chosen from the base model's rates (experiments/transfer/).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentic_rl.tracking.runs import episode_outcomes, read_eval_records
from agentic_rl.tracking.stats import PairedChange, wilson_interval

PHASES = ("eval", "before", "after")
MISSING = "(none)"
ALL = "all"


def task_metadata(run_dir: Path, data_path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Task id -> metadata of the tasks the run evaluated on, rebuilt from its saved config; `data_path` replaces
    the task file the config names (a record's copy names it by a placeholder, e.g. <shared>/...)."""
    from omegaconf import OmegaConf

    from agentic_rl.registry import build

    # a run dir keeps its config under .hydra/; a record under experiments/ keeps a copy beside its results
    config_path = next((p for p in (run_dir / ".hydra" / "config.yaml", run_dir / "config.yaml") if p.is_file()), None)
    if config_path is None:
        raise ValueError(f"{run_dir}: no .hydra/config.yaml (nor config.yaml), so its tasks cannot be rebuilt")
    cfg = OmegaConf.load(config_path)
    node = cfg.get("eval_data") if "eval_data" in cfg else cfg.get("data")
    if node is None:
        raise ValueError(f"{config_path}: neither eval_data nor data: not a training or evaluation run")
    # the limit only cuts the list; every evaluated task is among the full set
    node = OmegaConf.merge(node, {"limit": None}) if "limit" in node else node
    if data_path is not None:
        if "path" not in node:
            raise ValueError(f"{config_path}: --data-path given, but the tasks ({node.get('_target_')}) read no file")
        node = OmegaConf.merge(node, {"path": str(data_path)})
    return {t.task_id: dict(t.metadata or {}) for t in build(node)}


def breakdown_rows(run_dirs: Sequence[Path], key: str, data_path: Path | None = None) -> list[dict[str, Any]]:
    """One row per (phase, mode, value of `key`): episodes, passed, rate and its Wilson interval."""
    counts: dict[tuple[str, str, str], list[int]] = {}
    for run_dir in run_dirs:
        metadata = task_metadata(run_dir, data_path)
        for phase in PHASES:
            for record in read_eval_records(run_dir, phase):
                value = metadata.get(str(record["task_id"]), {}).get(key, MISSING)
                tally = counts.setdefault((phase, record["mode"], str(value)), [0, 0])
                tally[0] += 1
                tally[1] += bool(record["passed"])
    rows = []
    for (phase, mode, value), (n, passed) in sorted(
        counts.items(), key=lambda item: (PHASES.index(item[0][0]), item[0][1], _value_order(item[0][2]))
    ):
        low, high = wilson_interval(passed, n)
        rows.append(
            {
                "phase": phase,
                "mode": mode,
                key: value,
                "n": n,
                "passed": passed,
                "rate": passed / n,
                "low": low,
                "high": high,
            }
        )
    return rows


def _value_order(value: str) -> tuple[int, float | str]:
    """Numeric values (difficulty 1, 2, 3) in numeric order, then the rest by name."""
    try:
        return 0, float(value)
    except ValueError:
        return 1, value


def paired_rows(
    before: Path, afters: Sequence[Path], key: str, data_path: Path | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Per (mode, value of `key`) and per mode over all values ("all"): the pooled paired change from `before`'s
    episodes to each of `afters`' (an evaluation of the adapter, or the training run's own evaluation after).
    Also returns how many episodes of `afters` had no partner in `before`."""
    metadata = task_metadata(before, data_path)
    base = episode_outcomes(before, "before")
    pairs: dict[tuple[str, str], list[tuple[bool, bool]]] = {}
    runs_with: dict[tuple[str, str], set[Path]] = {}
    unpaired = 0
    for run in afters:
        for episode, passed in episode_outcomes(run, "after").items():
            if episode not in base:
                unpaired += 1
                continue
            mode, task_id, _ = episode
            value = str(metadata.get(task_id, {}).get(key, MISSING))
            for group in ((mode, value), (mode, ALL)):
                pairs.setdefault(group, []).append((base[episode], passed))
                runs_with.setdefault(group, set()).add(run)
    rows = [
        {"mode": mode, key: value, "runs": len(runs_with[mode, value]), **PairedChange.from_pairs(p).as_dict()}
        for (mode, value), p in sorted(pairs.items(), key=lambda item: (item[0][0], _value_order(item[0][1])))
    ]
    return rows, unpaired


def paired_markdown(rows: Iterable[dict[str, Any]], key: str, before: Path, runs: Sequence[Path], unpaired: int) -> str:
    lines = [
        f"# Paired change by `{key}`",
        "",
        f"Before: {before}. After: {', '.join(str(r) for r in runs)}.",
        "",
        "Each pair: one task (mode, sample) before and after, pooled over the after runs. gained: failed before, "
        "passed after; lost: the reverse. 95% interval: Newcombe's hybrid score interval for paired proportions; "
        "p: McNemar's exact test (two-sided); pairs to resolve: pairs a paired test (alpha 0.05, power 0.8) needs "
        f"at the measured change. Episodes of the after runs with no partner in the base run: {unpaired}.",
        "",
        f"| mode | {key} | runs | pairs | before | after | change | 95% interval | gained | lost | p | "
        "pairs to resolve |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['mode']} | {r[key]} | {r['runs']} | {r['n']} | {r['before']:.3f} | {r['after']:.3f} | "
            f"{r['change']:+.3f} | {r['low']:+.3f} to {r['high']:+.3f} | {r['gained']} | {r['lost']} | "
            f"{r['p_value']:.3g} | {r['pairs_needed']} |"
        )
    return "\n".join(lines) + "\n"


def breakdown_markdown(rows: Iterable[dict[str, Any]], key: str, runs: Sequence[Path]) -> str:
    lines = [
        f"# Pass rate by `{key}`",
        "",
        f"Runs: {', '.join(str(r) for r in runs)}. 95% Wilson intervals; episodes of several runs are pooled.",
        "",
        f"| phase | mode | {key} | episodes | passed | rate | 95% interval |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['phase']} | {r['mode']} | {r[key]} | {r['n']} | {r['passed']} | {r['rate']:.3f} | "
            f"{r['low']:.3f}-{r['high']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="evaluation or training run dirs")
    parser.add_argument("--by", default="difficulty", help="the task metadata field to split by (default: difficulty)")
    parser.add_argument(
        "--before", type=Path, help="an evaluation of the untrained model: pair each run's episodes with its own"
    )
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of printing it")
    parser.add_argument(
        "--data-path",
        type=Path,
        help="the task file, for runs whose config names one that is not here (a record's copy: <shared>/...)",
    )
    args = parser.parse_args(argv)
    try:
        if args.before:
            rows, unpaired = paired_rows(args.before, args.runs, args.by, args.data_path)
        else:
            rows = breakdown_rows(args.runs, args.by, args.data_path)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    if not rows:
        where = ", ".join(map(str, args.runs))
        what = (
            f"no episodes of {where} pair with {args.before}'s" if args.before else f"no evaluation records in {where}"
        )
        print(f"error: {what}", file=sys.stderr)  # noqa: T201
        return 2
    if args.before:
        text = paired_markdown(rows, args.by, args.before, args.runs, unpaired)
    else:
        text = breakdown_markdown(rows, args.by, args.runs)
    if args.out:
        args.out.write_text(text)
        print(args.out)  # noqa: T201
    else:
        print(text, end="")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
