"""`python -m agentic_rl.breakdown RUN_DIR [RUN_DIR ...] [--by difficulty] [--before BASE_DIR] [--out FILE]`: pass
rates split by a field of the tasks (a record's own `task_type`; a pipeline task's `difficulty`, a KodCode task's
`subset`, ... from the tasks' metadata), per phase and mode, tasks as the unit.

Each row's pass rate is the mean over its tasks of each task's pass rate (over the runs' seeds and samples), with
the Wilson 95% interval over tasks (`stats.task_rate`); the episodes behind it are counted beside it.

With `--before BASE_DIR` (an evaluation of the untrained model), each RUN_DIR is an evaluation of a trained adapter
on the same tasks, and the table is the paired change per mode and field value: each episode is paired with the base
model's episode of the same mode, task and sample (never the task alone: several samples are several pairs). The
primary test takes the task as the unit (`tables.paired_test`: each task's mean difference over seeds and samples,
a seeded percentile bootstrap over tasks for the 95% interval, an exact sign test on the task means for p), with
Holm's correction across the rows; the pairs pooled as if independent (McNemar, Newcombe) are a secondary column.
Greedy evaluation makes the base episodes the same for every seed, so one base evaluation serves them all.

A field the records carry (`task_type`) is read from them. Otherwise, the per-episode records carrying task ids
only, the tasks are rebuilt from the run's own config (`.hydra/config.yaml`: `data` for an evaluation, `eval_data`
for a training run). It is how a task distribution is chosen from the base model's rates (experiments/transfer/).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentic_rl.reports.run_files import read_eval_records
from agentic_rl.reports.runs import outcomes_of
from agentic_rl.reports.stats import DEFAULT_BOOTSTRAP, Bootstrap, task_rate
from agentic_rl.reports.tables import ALL, Pair, comparison_markdown, paired_test, primary_test_note, with_holm
from agentic_rl.tracking.metrics import scored

PHASES = ("eval", "before", "after")
MISSING = "(none)"


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


def field_reader(run_dir: Path, key: str, data_path: Path | None = None) -> Callable[[dict], str]:
    """record -> its value of `key`: the record's own field (`task_type`) where it has one, else the task's
    metadata, rebuilt from the run's config only when a record lacks the field (`MISSING` where neither has it)."""
    metadata = functools.cache(lambda: task_metadata(run_dir, data_path))

    def value(record: dict) -> str:
        if record.get(key) is not None:
            return str(record[key])
        return str(metadata().get(str(record["task_id"]), {}).get(key, MISSING))

    return value


def breakdown_rows(run_dirs: Sequence[Path], key: str, data_path: Path | None = None) -> list[dict[str, Any]]:
    """One row per (phase, mode, value of `key`): the pass rate with the task as the unit (`stats.task_rate`: tasks,
    rate, Wilson interval over tasks; `n` and `passed` count the episodes), several runs pooled per task."""
    episodes: dict[tuple[str, str, str], list[tuple[str, bool]]] = {}
    for run_dir in run_dirs:
        value = field_reader(run_dir, key, data_path)
        for phase in PHASES:
            for record in scored(read_eval_records(run_dir, phase)):  # the greedy episode is reported apart
                group = (phase, record["mode"], value(record))
                episodes.setdefault(group, []).append((str(record["task_id"]), bool(record["passed"])))
    rows = []
    for (phase, mode, value), outcomes in sorted(
        episodes.items(), key=lambda item: (PHASES.index(item[0][0]), item[0][1], _value_order(item[0][2]))
    ):
        rate = task_rate(outcomes)
        rows.append({"phase": phase, "mode": mode, key: value, "n": rate.pop("episodes"), **rate})
    return rows


def _value_order(value: str) -> tuple[int, float | str]:
    """Numeric values (difficulty 1, 2, 3) in numeric order, then the rest by name."""
    try:
        return 0, float(value)
    except ValueError:
        return 1, value


def keyed_records(run_dir: Path, phase: str) -> dict[tuple[str, str, int], dict]:
    """The records of an evaluation run (results.jsonl), else of a training run's `phase`, by (mode, task, sample):
    the key `runs.outcomes_of` pairs by."""
    records = scored(read_eval_records(run_dir, "eval") or read_eval_records(run_dir, phase))
    return dict(zip(outcomes_of(records), records))


def paired_rows(
    before: Path,
    afters: Sequence[Path],
    key: str,
    data_path: Path | None = None,
    spec: Bootstrap = DEFAULT_BOOTSTRAP,
) -> tuple[list[dict[str, Any]], int]:
    """Per (mode, value of `key`) and per mode over all values ("all"): the paired change from `before`'s episodes
    to each of `afters`' (an evaluation of the adapter, or the training run's own evaluation after), each episode
    matched by (mode, task, sample); the primary test with the task as the unit and its Holm-adjusted p across the
    rows (`tables.paired_test`, `tables.with_holm`). Also returns how many episodes of `afters` had no partner."""
    base = keyed_records(before, "before")
    value = field_reader(before, key, data_path)
    pairs: dict[tuple[str, str], list[Pair]] = {}
    runs_with: dict[tuple[str, str], set[Path]] = {}
    unpaired = 0
    for run in afters:
        for episode, record in keyed_records(run, "after").items():
            if episode not in base:
                unpaired += 1
                continue
            mode, task_id, _ = episode
            pair = (task_id, bool(base[episode]["passed"]), bool(record["passed"]))
            for group in ((mode, value(record if record.get(key) is not None else base[episode])), (mode, ALL)):
                pairs.setdefault(group, []).append(pair)
                runs_with.setdefault(group, set()).add(run)
    rows = [
        {"mode": mode, key: value, "runs": len(runs_with[mode, value]), **paired_test(p, spec)}
        for (mode, value), p in sorted(pairs.items(), key=lambda item: (item[0][0], _value_order(item[0][1])))
    ]
    return with_holm(rows), unpaired


def paired_markdown(rows: list[dict[str, Any]], key: str, before: Path, runs: Sequence[Path], unpaired: int) -> str:
    """The paired table (`rows` of `paired_rows`, at least one) as Markdown."""
    spec = {"resamples": rows[0]["resamples"], "seed": rows[0]["seed"]}
    lines = [
        f"# Paired change by `{key}`",
        "",
        f"Before: {before}. After: {', '.join(str(r) for r in runs)}.",
        "",
        primary_test_note({"bootstrap": spec}),
        f"Episodes of the after runs with no partner in the base run: {unpaired}.",
        "",
        *comparison_markdown(rows, ["mode", key, "runs"], ("before", "after", "after - before"), _name(key)),
    ]
    return "\n".join(lines) + "\n"


def _name(key: str):
    """How a row of the paired table is named in its Holm sentence."""
    return lambda row: f"{row['mode']}, {key} {row[key]}: after - before {row['difference']:+.3f}"


def breakdown_markdown(rows: list[dict[str, Any]], key: str, runs: Sequence[Path]) -> str:
    """The pass-rate table (`rows` of `breakdown_rows`) as Markdown."""
    lines = [
        f"# Pass rate by `{key}`",
        "",
        f"Runs: {', '.join(str(r) for r in runs)}. Tasks as the unit: a row's rate is the mean over its tasks of each "
        "task's pass rate (over the runs' seeds and samples), with the Wilson 95% interval over tasks; episodes and "
        "passed count the episodes behind it.",
        "",
        f"| phase | mode | {key} | tasks | episodes | passed | rate | 95% interval |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['phase']} | {r['mode']} | {r[key]} | {r['tasks']} | {r['n']} | {r['passed']} | {r['rate']:.3f} | "
            f"{r['low']:.3f}-{r['high']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="evaluation or training run dirs")
    parser.add_argument(
        "--by",
        default="difficulty",
        help="the field to split by: a record's own (task_type) or the tasks' metadata (default: difficulty)",
    )
    parser.add_argument(
        "--before", type=Path, help="an evaluation of the untrained model: pair each run's episodes with its own"
    )
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of printing it")
    parser.add_argument(
        "--data-path",
        type=Path,
        help="the task file, for runs whose config names one that is not here (a record's copy: <shared>/...)",
    )
    parser.add_argument("--resamples", type=int, default=DEFAULT_BOOTSTRAP.resamples, help="bootstrap resamples")
    parser.add_argument("--bootstrap-seed", type=int, default=DEFAULT_BOOTSTRAP.seed, help="bootstrap seed")
    args = parser.parse_args(argv)
    try:
        if args.before:
            spec = Bootstrap(args.resamples, args.bootstrap_seed)
            rows, unpaired = paired_rows(args.before, args.runs, args.by, args.data_path, spec)
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
