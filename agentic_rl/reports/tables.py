"""The result tables of a study: per arm, its seeds' numbers with 95% intervals (`table.md` + `table.json`), written
as Markdown through `run_files.markdown_header` / `markdown_row`.

For a sweep dir (its job dirs) or any list of run dirs (e.g. experiments/cpu-default/seed-1..3), grouped into
arms by `runs.group_by_arm` (overrides without the seed):

- held-out pass@1 per evaluation mode, before and after training: the mean over seeds ± 95% t interval, never
  clipped to [0, 1] (one seed: the Wilson interval over its tasks), and, as a secondary column, the pooled pass@1
  with a Wilson interval over every seed's episodes together (k/N; the seeds are evaluated on the same tasks, so
  they are not independent and this interval is too narrow); runs that skipped their evaluation before training
  take the base evaluation of `--before` as their "before", counted once (`phase_sections`);
- the submission, no-call and refused-by-cap rates (`tools/submit_rate`, `tools/none_rate`, `tools/capped_rate`
  of summary.json's eval sections) and the share of execute calls whose code failed (`tools/execute/error_rate`)
  in the same form, for the modes that report tool rates (the no-tools mode has none);
- training: per seed the mean `train/reward_mean` over the first and the last quarter of the logged training
  steps (ceil(n/4) steps each) and their difference, with the mean difference ± 95% t interval;
- training tool use: per arm, each training tool-call rate's (and tool error rate's) first- and last-quarter
  mean, across seeds;
- held-out change, paired: per arm and mode, the same tasks before and after training (from the runs'
  `eval_before.jsonl` / `eval_after.jsonl`, or the base evaluation of `--before`), each episode paired with the
  episode of the same (mode, task, sample) before (`before_after_pairs`). The primary test takes the task as the
  unit (`paired_test`, `stats.TaskDifference`): each task's pass rate is its mean over seeds and samples, the
  difference is the mean of the task differences with a seeded percentile bootstrap 95% interval over tasks, and
  p is the exact sign test on the tasks whose mean rose against those whose mean fell; Holm's correction across
  the rows of the table says which changes hold at 0.05 (`with_holm`). The same pairs counted as independent
  (Newcombe's interval, McNemar's p, `stats.PairedChange`) stay as a secondary column, labelled so: the seeds share
  the tasks and often one base evaluation, which inflates that column's evidence by the design effect;
- arms compared, paired: per mode, each pair of arms after training on the same held-out episodes of the same
  seed (same seed, task and sample; only the seeds both arms ran), with the same primary test, its own Holm family,
  and the same secondary column (`arm_pair_rows`). Pairing takes out how hard each task is, so it tells arms apart
  with fewer tasks than the two-proportion test below when both arms pass and fail mostly the same tasks;
- modes compared after training (`mode_ladder_rows`): per arm, its trained policy in each mode against the mode
  with one tool fewer (multi_tool - code_only, code_only - no_tools) and multi_tool - no_tools, on the same tasks
  after training, with the primary test; the rows of every arm are one Holm family. The notebook's "multi-tool
  beats code-only and no tools" is read here, tasks as the unit;
- after RL vs the base's best mode and its format baselines (`baseline_section`): per arm, its trained policy in
  its own tool set's mode (`tool_sets.own_mode`: multi_tool for the default, code_only for `tools=code`; multi_tool
  where the runs' configs do not say) after training against, task by task, the base before training in its best
  mode (the highest mean pass rate over tasks among every mode evaluated before, format baselines included) and in
  each format baseline (`last_block`, `forced_submit`), with the primary test; its rows are one Holm family. An arm
  with nothing to compare (no evaluation before, its own mode not evaluated after, a baseline not evaluated) gets a
  note, never a made-up row.
  Every task-level figure averages the episodes pass@1 describes (`tracking.metrics.scored`: the sampled ones,
  not the greedy);
- by task_type, when the records carry one (`docs`, `plain`, `exec`, ...): per arm, mode and type the pass rate
  before and after (tasks as the unit, bootstrap interval) and both paired tests per type, each a Holm family of
  its own (`task_type_tables`). Modes are read from the records and summaries, whatever their names (`no_tools`,
  `code_only`, `multi_tool`, the format baselines `last_block` and `forced_submit`, ...);
- CodeGym held-out success by set (`env/seen_envs/...`: held-out configurations of the training environments,
  `env/unseen_envs/...`: held-out environments), before and after, in the held-out pass@1's form; only for runs
  whose evaluation mixed both sets (`data=codegym-heldout`);
- CodeGym beside the constant-answer baseline (`constant_section`, `reports/constant.py`): per arm, the one `Done`
  answer that solves most of its evaluated CodeGym tasks, computed in the sandbox as `envs.verify` computes it, its
  rate over those tasks and per held-out set (also a column of the success-by-set table), and each mode's success
  before and after training against it on the same tasks with the primary test (one Holm family); its per-task
  results go to constant.jsonl;
- CodeGym calls against the oracle's over training (`reports.oracle_course`, only for runs that logged
  `env/calls_vs_oracle`): per seed its mean over the first and the last ceil(n/4) training steps, the distance
  |1 - ratio| of each and its change, with the calls per episode and oracle calls behind them; across seeds the mean
  ± 95% t interval;
- power: for each pair of arms (and each arm before vs after), the held-out tasks per arm a two-proportion test
  (alpha 0.05, power 0.8) needs to tell the measured pass rates apart (`stats.tasks_to_separate`).
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
from pathlib import Path
from typing import Any

from agentic_rl.reports.constant import ConstantBaselines, constant_rows, set_rates
from agentic_rl.reports.oracle_course import ORACLE_SECTION, RATIO, oracle_section
from agentic_rl.reports.run_files import (
    find_runs,
    hydra_overrides,
    is_run_dir,
    markdown_header,
    markdown_row,
    read_eval_records,
    read_metrics,
    read_summary,
)
from agentic_rl.reports.runs import (
    TRAIN_REWARD,
    across_seeds,
    arms_with_overrides,
    episode_outcomes,
    eval_sections,
    pass_at_1_estimate,
    per_step,
    quarter_means,
    run_seed,
    scored_outcomes,
    task_types_of,
    tasks_scored,
)
from agentic_rl.reports.stats import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    PairedChange,
    TaskDifference,
    holm_adjust,
    task_rate,
    task_sums,
    tasks_to_separate,
    wilson_interval,
)
from agentic_rl.reports.tool_sets import own_mode, tool_set_pairs
from agentic_rl.runtime.files import SUMMARY_FILE

logger = logging.getLogger(__name__)

PHASES = ("before", "after")
RATES = {
    "tools/submit_rate": "submit rate",
    "tools/none_rate": "no-call rate",
    "tools/capped_rate": "refused-by-cap rate",
    "tools/execute/error_rate": "execute error rate",  # per execute call: what the execution penalty acts on
}


def reward_quarters(run: Path) -> dict[str, Any] | None:
    """`quarter_means` of train/reward_mean over the run's logged training steps."""
    return quarter_means(per_step(read_metrics(run), TRAIN_REWARD)[1])


def _modes(sections: list[dict]) -> list[str]:
    return list(dict.fromkeys(mode for section in sections for mode in section))


def base_eval_section(base: Path) -> dict:
    """The base model's evaluation as one phase's section (mode -> metrics): an evaluate run's `eval`, or a
    training run's evaluation before training."""
    evaluated = read_summary(base).get("eval") or {}
    if "before" in evaluated or "after" in evaluated:
        evaluated = evaluated.get("before") or {}
    # a mode its records hold but its summary does not (an evaluation run a mode at a time, each run rewriting
    # summary.json): pass@1 is the share of its episodes that passed, what the summary would have said
    by_mode: dict[str, list[bool]] = {}
    for (mode, _, _), passed in episode_outcomes(base, "before").items():
        by_mode.setdefault(mode, []).append(passed)
    missing = {
        mode: {"pass@1": sum(passed) / len(passed), "rollout/episodes": float(len(passed))}
        for mode, passed in by_mode.items()
        if mode not in evaluated
    }
    return {**evaluated, **missing}


def phase_sections(runs: list[Path], phase: str, base: Path | None = None) -> list[tuple[dict, Path]]:
    """(section, run dir) of each run that evaluated in `phase`. Before training, runs that skipped their own
    evaluation (eval_before=false) stand on `base`, counted once: it is one evaluation, whatever the seeds."""
    pairs = [(section, run) for section, run in zip(eval_sections(runs, phase), runs) if section]
    if phase == "before" and base is not None and len(pairs) < len(runs):
        evaluated = {mode for p in PHASES for section in eval_sections(runs, p) for mode in section}
        section = {mode: m for mode, m in base_eval_section(base).items() if mode in evaluated}  # the arm's modes
        if section:
            pairs.append((section, base))
    return pairs


def pass_at_1_rows(label: str, runs: list[Path], base: Path | None = None) -> list[dict[str, Any]]:
    by_phase = {phase: phase_sections(runs, phase, base) for phase in PHASES}
    rows = []
    for mode in _modes([s for pairs in by_phase.values() for s, _ in pairs]):
        row: dict[str, Any] = {"arm": label, "mode": mode}
        for phase, pairs in by_phase.items():
            measured = [
                (s[mode]["pass@1"], tasks_scored(run, s[mode])) for s, run in pairs if "pass@1" in s.get(mode, {})
            ]
            if not measured:
                row[phase] = row[f"{phase}_pooled"] = None
                continue
            row[phase] = pass_at_1_estimate([p for p, _ in measured], [n for _, n in measured]).as_dict()
            if all(n for _, n in measured):
                # pass@1 x tasks is the number of passed tasks (with n_samples > 1, the expected number)
                k, total = round(sum(p * n for p, n in measured), 6), sum(n for _, n in measured)
                low, high = wilson_interval(k, total)
                row[f"{phase}_pooled"] = {"k": k, "n": total, "rate": k / total, "low": low, "high": high}
            else:
                row[f"{phase}_pooled"] = None
        rows.append(row)
    return rows


def tool_rate_rows(label: str, runs: list[Path], base: Path | None = None) -> list[dict[str, Any]]:
    by_phase = {phase: [s for s, _ in phase_sections(runs, phase, base)] for phase in PHASES}
    rows = []
    for mode in _modes(by_phase["before"] + by_phase["after"]):
        row: dict[str, Any] = {"arm": label, "mode": mode}
        for metric in RATES:
            for phase, sections in by_phase.items():
                values = [s[mode][metric] for s in sections if metric in s.get(mode, {})]
                row[f"{metric}/{phase}"] = across_seeds(values).as_dict() if values else None
        if any(row[f"{m}/{p}"] for m in RATES for p in PHASES):  # a mode without tools reports no rates
            rows.append(row)
    return rows


ENV_SETS = {"seen_envs": "held-out configurations of seen environments", "unseen_envs": "held-out environments"}


def env_set_rows(label: str, runs: list[Path], base: Path | None = None) -> list[dict[str, Any]]:
    """Per evaluation mode and CodeGym held-out set: success before and after (mean over seeds with the t
    interval, one seed: Wilson), and pooled over the seeds (Wilson over every episode)."""
    by_phase = {phase: [s for s, _ in phase_sections(runs, phase, base)] for phase in PHASES}
    rows = []
    for mode in _modes(by_phase["before"] + by_phase["after"]):
        for group, name in ENV_SETS.items():
            row: dict[str, Any] = {"arm": label, "mode": mode, "set": name}
            for phase, sections in by_phase.items():
                measured = [
                    (s[mode][f"env/{group}/success_rate"], int(s[mode][f"env/{group}/episodes"]))
                    for s in sections
                    if f"env/{group}/success_rate" in s.get(mode, {})
                ]
                if not measured:
                    row[phase] = row[f"{phase}_pooled"] = None
                    continue
                row[phase] = pass_at_1_estimate([r for r, _ in measured], [n for _, n in measured]).as_dict()
                k, total = round(sum(r * n for r, n in measured)), sum(n for _, n in measured)
                low, high = wilson_interval(k, total)
                row[f"{phase}_pooled"] = {"k": k, "n": total, "rate": k / total, "low": low, "high": high}
            if row["before"] or row["after"]:
                rows.append(row)
    return rows


def training_row(label: str, runs: list[Path]) -> dict[str, Any]:
    seeds = [{"run": str(run), "seed": run_seed(run), **(reward_quarters(run) or {})} for run in runs]
    differences = [s["difference"] for s in seeds if "difference" in s]
    return {"arm": label, "runs": seeds, "difference": across_seeds(differences).as_dict() if differences else None}


def training_rate_rows(label: str, runs: list[Path]) -> list[dict[str, Any]]:
    """Per training tool rate the arm logged (`tools/<name>_rate`, no-call, refused-by-cap, and the error rates
    `tools/<name>/error_rate`): its first- and last-quarter means over the training steps, each as mean ± 95% t
    interval over the seeds."""
    records = [read_metrics(run) for run in runs]
    logged = {
        key
        for run_records in records
        for record in run_records
        if "train/epoch" in record
        for key in record
        if key.startswith("tools/")
        and ((key.endswith("_rate") and key.count("/") == 1) or (key.endswith("/error_rate") and key.count("/") == 2))
    }
    rows = []
    for metric in sorted(logged):
        quarters = [q for run_records in records if (q := quarter_means(per_step(run_records, metric)[1]))]
        rows.append(
            {
                "arm": label,
                "metric": metric,
                "seeds": len(quarters),
                **{
                    part: across_seeds([q[part] for q in quarters]).as_dict()
                    for part in ("first_quarter", "last_quarter")
                },
            }
        )
    return rows


Pair = tuple[str, bool, bool]  # (task id, passed on side a, passed on side b): one seed and sample of the task
ALL = "all"  # the task_type group of every task


def before_after_pairs(
    runs: list[Path], base_outcomes: dict[tuple[str, str, int], bool] | None = None
) -> tuple[dict[str, list[Pair]], dict[str, int]]:
    """Per mode, the (task, before, after) pairs of the runs that kept both phases' records, each run's episode
    matched to its own episode before training by (mode, task, sample), never by the task alone: several samples of
    a task are several pairs. A run without records before training is paired with `base_outcomes`
    (`episode_outcomes` of the base model's evaluation). Also: per mode, how many runs paired anything."""
    pairs: dict[str, list[Pair]] = {}
    runs_with: dict[str, int] = {}
    for run in runs:
        before, after = run_outcomes(run, base_outcomes)
        for mode in sorted({key[0] for key in before.keys() & after.keys()}):
            runs_with[mode] = runs_with.get(mode, 0) + 1
            pairs.setdefault(mode, []).extend(mode_pairs(before, after, mode, mode))
    return pairs, runs_with


Outcomes = dict[tuple[str, str, int], bool]  # (mode, task id, sample) -> passed


def run_outcomes(run: Path, base_outcomes: Outcomes | None = None) -> tuple[Outcomes, Outcomes]:
    """A run's scored episodes (`runs.scored_outcomes`) before and after training; before, when the run kept no
    records of its own, the base model's (`base_outcomes`, or none)."""
    before = scored_outcomes(read_eval_records(run, "before")) or base_outcomes or {}
    return before, scored_outcomes(read_eval_records(run, "after"))


def mode_pairs(before: Outcomes, after: Outcomes, before_mode: str, after_mode: str) -> list[Pair]:
    """(task, passed before in `before_mode`, passed after in `after_mode`) for each episode after training whose
    (task, sample) was also evaluated before, in key order. With the same mode on both sides the pair is one episode
    before and after; across modes (the trained multi-tool mode against a baseline mode) it lines up the samples of
    one task, which is all the task-level test uses (each side's task mean)."""
    return [
        (task, before[(before_mode, task, sample)], passed)
        for (mode, task, sample), passed in sorted(after.items())
        if mode == after_mode and (before_mode, task, sample) in before
    ]


def arm_pairs(arms: dict[str, list[Path]]) -> list[tuple[str, str, str, int, list[Pair]]]:
    """(arm a, arm b, mode, seeds, pairs) for each pair of arms and mode: arm a's outcome after training (side a)
    against arm b's on the same (seed, task, sample); runs whose seed is unknown, and seeds only one arm ran, pair
    nothing."""
    outcomes: dict[str, dict[tuple[int, str, str, int], bool]] = {}
    for label, arm_runs in arms.items():
        outcomes[label] = {
            (seed, *key): passed
            for run in arm_runs
            if (seed := run_seed(run)) is not None
            for key, passed in scored_outcomes(read_eval_records(run, "after")).items()
        }
    found = []
    for a, b in itertools.combinations(arms, 2):
        matched = sorted(outcomes[a].keys() & outcomes[b].keys())
        for mode in sorted({key[1] for key in matched}):
            keys = [key for key in matched if key[1] == mode]
            pairs = [(key[2], outcomes[a][key], outcomes[b][key]) for key in keys]
            found.append((a, b, mode, len({key[0] for key in keys}), pairs))
    return found


def by_task_type(pairs: list[Pair], task_types: dict[str, str] | None) -> dict[str, list[Pair]]:
    """The pairs of every task (`ALL`), or, with `task_types`, the pairs split by their task's type (a task the
    records give no type is `(none)`)."""
    if task_types is None:
        return {ALL: pairs}
    split: dict[str, list[Pair]] = {}
    for pair in pairs:
        split.setdefault(task_types.get(pair[0], "(none)"), []).append(pair)
    return dict(sorted(split.items()))


def paired_test(pairs: list[Pair], spec: Bootstrap) -> dict[str, Any]:
    """The primary task-level test of `pairs` (`stats.TaskDifference`), and beside it, under "pooled", the same
    pairs counted as independent (`stats.PairedChange`: Newcombe's interval, McNemar's p), a secondary figure: the
    seeds and samples of a task are not independent."""
    return {
        **TaskDifference.from_sums(task_sums(pairs), spec).as_dict(),
        "pooled": PairedChange.from_pairs((a, b) for _, a, b in pairs).as_dict(),
    }


def with_holm(rows: list[dict[str, Any]], alpha: float = 0.05) -> list[dict[str, Any]]:
    """The rows of one family of comparisons, each with its Holm-adjusted p (`p_holm`) and whether it holds at
    `alpha` after the correction (`holds`)."""
    adjusted = holm_adjust([row["p_value"] for row in rows])
    return [{**row, "p_holm": p, "holds": p <= alpha} for row, p in zip(rows, adjusted)]


def paired_rows(
    label: str,
    runs: list[Path],
    base_outcomes: dict[tuple[str, str, int], bool] | None = None,
    spec: Bootstrap = DEFAULT_BOOTSTRAP,
    task_types: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Per mode (and, with `task_types`, per task type), the arm's held-out change before -> after training, tasks
    as the unit (`paired_test` of `before_after_pairs`)."""
    pairs, runs_with = before_after_pairs(runs, base_outcomes)
    return [
        {"arm": label, "mode": mode, "task_type": kind, "runs": runs_with[mode], **paired_test(typed, spec)}
        for mode, mode_pairs in pairs.items()
        for kind, typed in by_task_type(mode_pairs, task_types).items()
    ]


def arm_pair_rows(
    arms: dict[str, list[Path]], spec: Bootstrap = DEFAULT_BOOTSTRAP, task_types: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Per mode, pair of arms (and, with `task_types`, task type): arm b - arm a after training on the same seeds'
    episodes, tasks as the unit (`paired_test` of `arm_pairs`)."""
    return [
        {"mode": mode, "a": a, "b": b, "task_type": kind, "seeds": seeds, **paired_test(typed, spec)}
        for a, b, mode, seeds, pairs in arm_pairs(arms)
        for kind, typed in by_task_type(pairs, task_types).items()
    ]


# (mode a, mode b) pairs of `mode_ladder_rows`: each tool mode against the one with a tool fewer, then the ends
MODE_LADDER = (("code_only", "multi_tool"), ("no_tools", "code_only"), ("no_tools", "multi_tool"))
MODES_SECTION = "Modes compared after training, paired (the same policy and tasks)"


def mode_ladder_rows(label: str, runs: list[Path], spec: Bootstrap = DEFAULT_BOOTSTRAP) -> list[dict[str, Any]]:
    """Per pair of `MODE_LADDER` that the arm evaluated after training: mode b's pass rate minus mode a's, each
    run's episodes of the two modes lined up by (task, sample) (`mode_pairs`), tasks as the unit (`paired_test`:
    each side is a task's mean over seeds and samples, so the pairing within a task does not matter)."""
    after = [scored_outcomes(read_eval_records(run, "after")) for run in runs]
    rows = []
    for a, b in MODE_LADDER:
        by_run = [mode_pairs(outcomes, outcomes, a, b) for outcomes in after]
        pairs = [pair for run_pairs in by_run for pair in run_pairs]
        if pairs:
            runs_with = sum(bool(run_pairs) for run_pairs in by_run)
            rows.append({"arm": label, "a": a, "b": b, "runs": runs_with, **paired_test(pairs, spec)})
    return rows


def phase_outcomes(runs: list[Path], phase: str, base: Path | None = None) -> list[dict[tuple[str, str, int], bool]]:
    """Per run, its `phase` episodes (mode, task, sample) -> passed; before training, runs without records of
    their own stand on `base`'s episodes, counted once (as `phase_sections`)."""
    own = [outcomes for run in runs if (outcomes := scored_outcomes(read_eval_records(run, phase)))]
    if phase == "before" and base is not None and len(own) < len(runs):
        own.append(episode_outcomes(base, "before"))
    return own


def task_type_rate_rows(
    label: str,
    runs: list[Path],
    task_types: dict[str, str],
    base: Path | None = None,
) -> list[dict[str, Any]]:
    """Per mode and task type, the arm's held-out pass rate before and after training with the task as the unit
    (`stats.task_rate`: each task's mean over seeds and samples, Wilson interval over tasks)."""
    episodes: dict[tuple[str, str], dict[str, list[tuple[str, bool]]]] = {}
    for phase in PHASES:
        for outcomes in phase_outcomes(runs, phase, base):
            for (mode, task, _), passed in outcomes.items():
                kind = task_types.get(task, "(none)")
                episodes.setdefault((mode, kind), {}).setdefault(phase, []).append((task, passed))
    return [
        {
            "arm": label,
            "mode": mode,
            "task_type": kind,
            **{phase: task_rate(by_phase[phase]) if phase in by_phase else None for phase in PHASES},
        }
        for (mode, kind), by_phase in sorted(episodes.items())
    ]


def record_task_types(runs: list[Path], bases: list[Path]) -> dict[str, str] | None:
    """Task id -> task_type over every evaluation record of the runs and the base evaluations; None when no record
    carries one (records written before the field)."""
    types: dict[str, str] = {}
    for run in [*runs, *bases]:
        for phase in ("eval", *PHASES):
            types.update(task_types_of(read_eval_records(run, phase)))
    return types or None


def power_rows(pass_rows: list[dict[str, Any]], n_tasks: int | None) -> list[dict[str, Any]]:
    """Tasks per arm to tell two measured pass rates apart: each pair of arms per mode (after training, else
    before), and each arm's before vs after per mode."""

    def pooled_rate(row: dict, phase: str) -> float | None:
        return (row.get(f"{phase}_pooled") or {}).get("rate", (row.get(phase) or {}).get("mean"))

    rows = []
    by_mode: dict[str, list[dict]] = {}
    for row in pass_rows:
        by_mode.setdefault(row["mode"], []).append(row)
    for mode, mode_rows in by_mode.items():
        phase = "after" if any(pooled_rate(r, "after") is not None for r in mode_rows) else "before"
        for a, b in itertools.combinations(mode_rows, 2):
            pa, pb = pooled_rate(a, phase), pooled_rate(b, phase)
            if pa is not None and pb is not None:
                rows.append(
                    {
                        "mode": mode,
                        "a": f"{a['arm']} ({phase})",
                        "b": f"{b['arm']} ({phase})",
                        "p_a": pa,
                        "p_b": pb,
                        "tasks_per_arm": tasks_to_separate(pa, pb),
                        "tasks_now": n_tasks,
                    }
                )
        for row in mode_rows:
            pa, pb = pooled_rate(row, "before"), pooled_rate(row, "after")
            if pa is not None and pb is not None:
                rows.append(
                    {
                        "mode": mode,
                        "a": f"{row['arm']} (before)",
                        "b": f"{row['arm']} (after)",
                        "p_a": pa,
                        "p_b": pb,
                        "tasks_per_arm": tasks_to_separate(pa, pb),
                        "tasks_now": n_tasks,
                    }
                )
    return rows


def arm_bases(arms: dict[str, tuple[frozenset[str], list[Path]]], bases: list[Path]) -> dict[str, Path | None]:
    """Each arm's base evaluation among `bases`: the one base for every arm, or, of several, the base whose
    overrides hold all of the arm's own (an arm `rollout.max_tool_calls=2` takes the base evaluated with
    `rollout.max_tool_calls=2`); an arm none fits has none (warned), one that two fit is an error."""
    if len(bases) <= 1:
        return {label: bases[0] if bases else None for label in arms}
    chosen: dict[str, Path | None] = {}
    for label, (overrides, _) in arms.items():
        matching = [base for base in bases if overrides <= set(hydra_overrides(base))]
        if len(matching) > 1:
            raise ValueError(
                f"--before: the arm `{label}` needs the one base evaluation run with its overrides; it matches "
                f"{', '.join(map(str, matching))}. Give one base per arm, each evaluated with its arm's overrides "
                "(.hydra/overrides.yaml)"
            )
        if not matching:  # its base is not run yet: the arm is shown after training only
            logger.warning("--before: no base evaluation has the overrides of the arm `%s`: it has no 'before'", label)
        chosen[label] = matching[0] if matching else None
    return chosen


def base_outcomes_of(base: Path) -> dict[tuple[str, str, int], bool]:
    outcomes = episode_outcomes(base, "before")
    if not outcomes:
        raise ValueError(
            f"--before {base}: no per-task evaluation records there (results.jsonl of python -m agentic_rl.evaluate, "
            "or a training run's eval_before.jsonl). Pass the run dir of the base model's evaluation"
        )
    return outcomes


def task_type_tables(
    arms: dict[str, list[Path]],
    base_of: dict[str, Path | None],
    arm_outcomes: dict[str, dict | None],
    task_types: dict[str, str] | None,
    spec: Bootstrap,
) -> dict[str, list[dict[str, Any]]] | None:
    """The breakdown by task_type (None when no record carries one): per arm, mode and type the pass rates before
    and after, the change before -> after and the arms compared, each comparison family Holm-corrected apart from
    the overall tables'."""
    if task_types is None:
        return None
    return {
        "rates": [
            row
            for label, arm_runs in arms.items()
            for row in task_type_rate_rows(label, arm_runs, task_types, base_of[label])
        ],
        "paired": with_holm(
            [
                row
                for label, arm_runs in arms.items()
                for row in paired_rows(label, arm_runs, arm_outcomes[label], spec, task_types)
            ]
        ),
        "arm_pairs": with_holm(arm_pair_rows(arms, spec, task_types)),
    }


TRAINED_MODE = "multi_tool"  # the mode a claim about RL is made in: the trained policy with every tool
FORMAT_BASELINES = ("last_block", "forced_submit")  # evaluation.baselines.FORMAT_BASELINES' names (a lower layer)


def before_mode_rates(before: list[Outcomes]) -> dict[str, dict[str, float | int]]:
    """Mode -> its task-level pass rate before training (`stats.task_rate`) over the arm's episodes before, for
    every mode evaluated then, the format baselines included."""
    episodes: dict[str, list[tuple[str, bool]]] = {}
    for outcomes in before:
        for (mode, task, _), passed in outcomes.items():
            episodes.setdefault(mode, []).append((task, passed))
    return {mode: task_rate(eps) for mode, eps in sorted(episodes.items())}


def best_mode(rates: dict[str, dict[str, float | int]]) -> str | None:
    """The base's best mode: the highest mean pass rate over tasks before training; a tie goes to the mode first in
    name order, so the choice does not depend on the order of the records. None when nothing was evaluated."""
    return min(rates, key=lambda mode: (-rates[mode]["rate"], mode)) if rates else None


def baseline_roles(best: str | None) -> dict[str, str]:
    """Baseline mode -> its role in the section: the base's best mode, then each format baseline (one row, not two,
    when the best mode is a format baseline: the same test twice would only cost Holm power)."""
    roles = {best: "base's best mode"} if best else {}
    for mode in FORMAT_BASELINES:
        roles[mode] = "base's best mode, format baseline" if mode == best else "format baseline"
    return roles


def trained_mode(runs: list[Path]) -> str:
    """The mode an arm's trained policy is read in: the mode of the tool set it trained with, when its runs' configs
    agree on one (a `tools=code` arm read in multi_tool would be asked to use tools it never had, a row that can
    only be null yet still costs the Holm family), else `TRAINED_MODE` (records without a config)."""
    found = {own_mode(run, FORMAT_BASELINES) for run in runs}
    return found.pop()[1] if len(found) == 1 and None not in found else TRAINED_MODE


def baseline_arm(
    label: str, runs: list[Path], base: Path | None, base_outcomes: Outcomes | None, spec: Bootstrap
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One arm's part of the baseline section: (what the base did before training: each mode's task-level rate,
    the best mode, the mode its policy is read in after, and notes on what could not be compared), and its
    comparison rows, that mode after against each baseline mode before (`mode_pairs`, `paired_test`). No row is
    invented: an arm without an evaluation before training, or without its mode after, or a baseline not evaluated
    before, gets a note instead."""
    rates = before_mode_rates(phase_outcomes(runs, "before", base))
    best = best_mode(rates)
    trained = trained_mode(runs)
    arm: dict[str, Any] = {"arm": label, "before_rates": rates, "best_mode": best, "mode": trained, "notes": []}
    outcomes = [run_outcomes(run, base_outcomes) for run in runs]
    if not rates:
        arm["notes"].append("no evaluation before training (no eval_before.jsonl, no --before): no baseline")
        return arm, []
    if not any(key[0] == trained for _, after in outcomes for key in after):
        arm["notes"].append(f"no {trained} evaluation after training: nothing to set against the baselines")
        return arm, []
    rows = []
    for mode, role in baseline_roles(best).items():
        by_run = [mode_pairs(before, after, mode, trained) for before, after in outcomes]
        pairs = [pair for run_pairs in by_run for pair in run_pairs]
        if not pairs:
            arm["notes"].append(f"{mode}: not evaluated before training on the tasks and samples evaluated after")
            continue
        runs_with = sum(bool(run_pairs) for run_pairs in by_run)
        row = {"arm": label, "mode": trained, "baseline": mode, "role": role, "runs": runs_with}
        rows.append({**row, **paired_test(pairs, spec)})
    return arm, rows


def baseline_section(
    arms: dict[str, list[Path]],
    base_of: dict[str, Path | None],
    arm_outcomes: dict[str, Outcomes | None],
    spec: Bootstrap,
) -> dict[str, Any]:
    """The section `BASELINE_SECTION`: per arm, its trained policy's pass rate after training (in its own tool set's
    mode, `trained_mode`) against, task by
    task, the base's best mode before training (whichever of no_tools, code_only, multi_tool, last_block,
    forced_submit scored highest) and each format baseline before training, with the primary task-level test; the
    rows of every arm are one Holm family. A gain over the multi-tool mode before can be the model learning to submit
    (formatting); a gain over these is what the policy solves that the base, with its format fixed or in its best
    mode, did not."""
    parts = [baseline_arm(label, runs, base_of[label], arm_outcomes[label], spec) for label, runs in arms.items()]
    return {"arms": [arm for arm, _ in parts], "rows": with_holm([row for _, rows in parts for row in rows])}


def constant_section(
    arms: dict[str, list[Path]], base_of: dict[str, Path | None], spec: Bootstrap, constants: ConstantBaselines
) -> dict[str, Any] | None:
    """The section `CONSTANT_SECTION` (None when no arm evaluated CodeGym tasks): per arm, the constant that solves
    most of its evaluated CodeGym tasks (`reports.constant`) with its rate over all of them and per held-out set and
    its per-task results, and per phase and mode the policy's success against it, task by task; the rows of every
    arm are one Holm family."""
    arm_parts, rows = [], []
    for label, arm_runs in arms.items():
        base = base_of[label]
        by_phase = {phase: phase_outcomes(arm_runs, phase, base) for phase in PHASES}
        task_ids = {key[1] for outcomes in by_phase.values() for run in outcomes for key in run}
        baseline = constants.of(task_ids, [*arm_runs, *([base] if base else [])])
        if baseline is None:
            continue
        arm_parts.append(
            {"arm": label, "answer": baseline.answer, "rates": set_rates(baseline), "tasks": baseline.rows()}
        )
        rows += constant_rows(label, by_phase, baseline, lambda pairs: paired_test(pairs, spec))
    return {"arms": arm_parts, "rows": with_holm(rows)} if arm_parts else None


def build_table(
    runs: list[Path],
    base: Path | list[Path] | None = None,
    spec: Bootstrap = DEFAULT_BOOTSTRAP,
    constants: ConstantBaselines | None = None,
) -> dict[str, Any]:
    """Every table of the module doc, as JSON-ready data, for runs grouped into arms; `base`: the base model's
    evaluation, to pair the runs that kept no records before training (`paired_rows`), one for all arms or one
    per arm (`arm_bases`); `spec`: the bootstrap of the task-level intervals; `constants`: where the CodeGym
    tasks' constant-answer baseline is computed (default: each arm's own environments, the default sandbox)."""
    if not runs:
        raise ValueError("no runs to tabulate: pass a sweep dir with job dirs or run dirs holding metrics.jsonl")
    bases = [] if base is None else [base] if isinstance(base, Path) else list(base)
    outcomes = {b: base_outcomes_of(b) for b in bases}
    grouped = arms_with_overrides(runs)
    arms = {label: arm_runs for label, (_, arm_runs) in grouped.items()}
    base_of = arm_bases(grouped, bases)
    arm_outcomes = {label: None if b is None else outcomes[b] for label, b in base_of.items()}
    n_tasks = sorted(
        {
            n
            for phase in PHASES
            for run, section in zip(runs, eval_sections(runs, phase))
            for metrics in section.values()
            if (n := tasks_scored(run, metrics))
        }
    )
    pass_rows = [row for label, arm_runs in arms.items() for row in pass_at_1_rows(label, arm_runs, base_of[label])]
    constant = constant_section(arms, base_of, spec, constants or ConstantBaselines())
    return {
        "codegym_constant": constant,
        "arms": {
            label: [
                {"run": str(run), "seed": run_seed(run), "finished": (run / SUMMARY_FILE).is_file()} for run in arm_runs
            ]
            for label, arm_runs in arms.items()
        },
        "n_eval_tasks": n_tasks,
        "pass_at_1": pass_rows,
        "tool_rates": [
            row for label, arm_runs in arms.items() for row in tool_rate_rows(label, arm_runs, base_of[label])
        ],
        "bootstrap": {"resamples": spec.resamples, "seed": spec.seed},
        "paired": with_holm(
            [row for label, arm_runs in arms.items() for row in paired_rows(label, arm_runs, arm_outcomes[label], spec)]
        ),
        "arm_pairs": with_holm(arm_pair_rows(arms, spec)),
        "mode_ladder": [
            row for label, arm_runs in arms.items() for row in with_holm(mode_ladder_rows(label, arm_runs, spec))
        ],
        "tool_sets": with_holm(
            [{**keys, **paired_test(pairs, spec)} for keys, pairs in tool_set_pairs(arms, FORMAT_BASELINES)]
        ),
        "task_types": task_type_tables(arms, base_of, arm_outcomes, record_task_types(runs, bases), spec),
        "vs_baselines": baseline_section(arms, base_of, arm_outcomes, spec),
        "paired_base": (
            str(bases[0]) if len(bases) == 1 else {label: None if b is None else str(b) for label, b in base_of.items()}
        )
        if bases
        else None,
        "training": [training_row(label, arm_runs) for label, arm_runs in arms.items()],
        "training_rates": [row for label, arm_runs in arms.items() for row in training_rate_rows(label, arm_runs)],
        "calls_vs_oracle": oracle_section(arms),
        "env_sets": [row for label, arm_runs in arms.items() for row in env_set_rows(label, arm_runs, base_of[label])],
        "power": power_rows(pass_rows, n_tasks[0] if len(n_tasks) == 1 else None),
    }


def _bases(table: dict[str, Any]) -> str:
    base = table["paired_base"]
    if isinstance(base, str):
        return f"the base evaluation `{base}`"
    named = (f"`{arm}`: " + (f"`{path}`" if path else "none yet") for arm, path in base.items())
    return "each arm's base evaluation (" + "; ".join(named) + ")"


def _estimate(e: dict | None) -> str:
    if not e:
        return "–"
    if e["method"] == "point":
        return f"{e['mean']:.3f}"
    return f"{e['mean']:.3f} [{e['low']:.3f}, {e['high']:.3f}]" + (" (Wilson)" if e["method"] == "wilson" else "")


def _pooled(p: dict | None) -> str:
    return "–" if not p else f"{p['rate']:.3f} [{p['low']:.3f}, {p['high']:.3f}] ({p['k']:g}/{p['n']})"


def _tasks(n: float | None) -> str:
    return "never (equal rates)" if n is None or math.isinf(n) else f"{n:.0f}"


def _p(p: float) -> str:
    return f"{p:.3g}"


def _secondary(pooled: dict[str, Any]) -> str:
    """The pooled-pairs cell: every (seed, task, sample) counted as an independent pair, which they are not."""
    return (
        f"{pooled['change']:+.3f} [{pooled['low']:+.3f}, {pooled['high']:+.3f}], {pooled['gained']} / "
        f"{pooled['lost']} of {pooled['n']}, McNemar p {_p(pooled['p_value'])}"
    )


def test_cells(row: dict[str, Any]) -> list[str]:
    """The cells of a `paired_test` row after `with_holm`: tasks, the two task-level rates, the difference with its
    bootstrap interval (unclipped), tasks up / down / tied, the sign test's p raw and Holm-adjusted, whether it
    holds at 0.05 after Holm, and the pooled pairs' secondary figure."""
    return [
        str(row["tasks"]),
        f"{row['rate_a']:.3f}",
        f"{row['rate_b']:.3f}",
        f"{row['difference']:+.3f} [{row['low']:+.3f}, {row['high']:+.3f}]",
        f"{row['up']} / {row['down']} / {row['tied']}",
        _p(row["p_value"]),
        _p(row["p_holm"]),
        "yes" if row["holds"] else "no",
        _secondary(row["pooled"]),
    ]


def test_header(first: list[str], a: str, b: str, diff: str) -> list[str]:
    """The header rows of a `test_cells` table: the `first` columns, then the test's under the sides' names."""
    test_columns = ["tasks", a, b, f"{diff} [95% CI]", "tasks up / down / tied", "sign p", "Holm p"]
    return markdown_header([*first, *test_columns, "holds (Holm, 0.05)", "pooled pairs (secondary, not independent)"])


def primary_test_note(table: dict[str, Any]) -> str:
    """What the primary columns are, in words (the same for every paired section)."""
    spec = table["bootstrap"]
    return (
        "Primary test, tasks as the unit: each task's pass rate on each side is its mean over its pairs (seeds and "
        "samples; each episode is paired with the same task and sample), the difference is the mean over tasks of "
        f"the task differences, its 95% interval the percentile bootstrap over tasks ({spec['resamples']:,} "
        f"resamples, seed {spec['seed']}), printed unclipped; p: exact two-sided sign test on the tasks whose mean "
        "went up against those whose mean went down (ties left out); Holm p: Holm's adjustment across every row of "
        "this table. Pooled pairs (secondary, not independent): every (seed, task, sample) counted as one "
        "independent pair, Newcombe's interval and McNemar's p; the seeds share tasks (and a base evaluation), so "
        "this column overstates the evidence and no claim rests on it."
    )


def holding(rows: list[dict[str, Any]], name) -> str:
    """One sentence: which rows of a Holm family hold at 0.05 after the correction."""
    held = [name(row) for row in rows if row["holds"]]
    return "Holds at 0.05 after Holm: " + ("; ".join(held) if held else "none") + "."


def _before_after_name(row: dict[str, Any]) -> str:
    kind = "" if row["task_type"] == ALL else f", {row['task_type']}"
    return f"`{row['arm']}` {row['mode']}{kind} after - before {row['difference']:+.3f}"


def _arms_name(row: dict[str, Any]) -> str:
    kind = "" if row["task_type"] == ALL else f", {row['task_type']}"
    return f"{row['mode']}{kind}: `{row['b']}` - `{row['a']}` {row['difference']:+.3f}"


def comparison_markdown(rows: list[dict[str, Any]], keys: list[str], sides: tuple[str, str, str], name) -> list[str]:
    """One Holm family of `paired_test` rows as a Markdown table: the row's `keys` (its arm, mode, ...), then
    `test_cells` under the `sides` (side a, side b, what the difference is), then the Holm sentence (`name`: how a
    row is named in it)."""
    lines = test_header(keys, *sides)
    lines += [markdown_row([*(str(row[key]) for key in keys), *test_cells(row)]) for row in rows]
    return [*lines, "", holding(rows, name)]


def paired_markdown(rows: list[dict[str, Any]], typed: bool = False) -> list[str]:
    """The before -> after section's table (`typed`: with a task_type column) and its Holm sentence."""
    keys = ["arm", "mode", *(["task_type"] if typed else []), "runs"]
    return comparison_markdown(rows, keys, ("before", "after", "after - before"), _before_after_name)


def arm_pairs_markdown(rows: list[dict[str, Any]], typed: bool = False) -> list[str]:
    """The arms-compared section's table (`typed`: with a task_type column) and its Holm sentence."""
    keys = ["mode", *(["task_type"] if typed else []), "a", "b", "seeds"]
    return comparison_markdown(rows, keys, ("pass@1 a", "pass@1 b", "b - a"), _arms_name)


def _rate(r: dict | None) -> str:
    return "–" if not r else f"{r['rate']:.3f} [{r['low']:.3f}, {r['high']:.3f}] ({r['tasks']} tasks)"


def task_type_markdown(table: dict[str, Any]) -> list[str]:
    """The breakdown by task_type: pass rates (tasks as the unit) and the primary tests per type."""
    typed = table.get("task_types")
    if not typed:
        return []
    lines = [
        "",
        "## By task_type (tasks as the unit)",
        "",
        "Pass rate: the mean over the type's tasks of each task's pass rate (over seeds and samples), with the "
        "Wilson 95% interval over tasks. The tests below are the primary test per type; each of the two "
        "tables is its own Holm family.",
        "",
        *markdown_header(["arm", "mode", "task_type", "before", "after"]),
    ]
    for row in typed["rates"]:
        lines.append(
            markdown_row([row["arm"], row["mode"], row["task_type"], _rate(row["before"]), _rate(row["after"])])
        )
    if typed["paired"]:
        lines += ["", "### Change before -> after, by task_type", "", *paired_markdown(typed["paired"], True)]
    if typed["arm_pairs"]:
        lines += [
            "",
            "### Arms compared after training, by task_type",
            "",
            *arm_pairs_markdown(typed["arm_pairs"], True),
        ]
    return lines


def header_markdown(table: dict[str, Any]) -> list[str]:
    """The title, the runs of each arm and the held-out tasks per run."""
    lines = [
        "# Results with 95% confidence intervals",
        "",
        "`mean [low, high]`: mean over seeds with the 95% Student-t interval, unclipped (one seed: the Wilson "
        "interval over its tasks, marked). Pooled over seeds (secondary, not independent): every seed's scored "
        "tasks together, Wilson 95% interval, passed/scored, where a task counts its pass@1 over its samples (so "
        "with several samples the passed count can be fractional). Claims rest on the paired sections' primary "
        "test, with the task as the unit.",
        "",
        "Runs per arm:",
        "",
    ]
    lines += [
        f"- `{arm}`: "
        + ", ".join(
            f"{r['run']}"
            + (f" (seed {r['seed']})" if r["seed"] is not None else "")
            + ("" if r["finished"] else " (unfinished: no summary.json)")
            for r in runs
        )
        for arm, runs in table["arms"].items()
    ]
    return [*lines, "", f"Held-out tasks per run: {', '.join(map(str, table['n_eval_tasks'])) or 'unknown'}."]


def pass_at_1_markdown(table: dict[str, Any]) -> list[str]:
    """Held-out pass@1 per arm and mode, and CodeGym's success by held-out set."""
    lines = ["", "## Held-out pass@1", ""]
    if table.get("paired_base"):
        lines += [
            f"Before, for arms whose runs skipped their own evaluation before training: {_bases(table)}, one "
            "evaluation (its Wilson interval), whatever the seeds.",
            "",
        ]
    pooled = ["pooled over seeds before (secondary)", "pooled over seeds after (secondary)"]
    lines += markdown_header(["arm", "mode", "seeds", "before", "after", *pooled])
    for row in table["pass_at_1"]:
        seeds = max((row[p] or {}).get("n", 0) for p in PHASES)
        lines.append(markdown_row([row["arm"], row["mode"], seeds, *_before_after_cells(row)]))
    if table.get("env_sets"):
        constant = {arm["arm"]: arm["rates"] for arm in (table.get("codegym_constant") or {}).get("arms", [])}
        beside = ["constant answer, same tasks"] if constant else []
        lines += [
            "",
            "## CodeGym held-out success by set (episodes, not tasks, for the pooled interval)",
            "",
            *markdown_header(["arm", "mode", "set", "before", "after", "pooled before", "pooled after", *beside]),
        ]
        group_of = {name: group for group, name in ENV_SETS.items()}
        for row in table["env_sets"]:
            cells = [row["arm"], row["mode"], row["set"], *_before_after_cells(row)]
            if constant:
                cells.append(_rate(constant.get(row["arm"], {}).get(group_of[row["set"]])))
            lines.append(markdown_row(cells))
    return lines + constant_markdown(table)


CONSTANT_SECTION = "CodeGym success beside the constant-answer baseline"
CONSTANT_SETS = {"all": "every evaluated task", **ENV_SETS}


def _constant_name(row: dict[str, Any]) -> str:
    """How the Holm sentence names a row of `constant_markdown` (its `set` already the set's printed name)."""
    where = "" if row["set"] == CONSTANT_SETS["all"] else f" ({row['set']})"
    return f"`{row['arm']}` {row['mode']} {row['phase']}{where} - constant {row['difference']:+.3f}"


def constant_markdown(table: dict[str, Any]) -> list[str]:
    """The section `CONSTANT_SECTION`: each arm's constant and its rate per set, then the policy against it."""
    section = table.get("codegym_constant")
    if not section:
        return []
    lines = [
        "",
        f"## {CONSTANT_SECTION}",
        "",
        "The constant-answer baseline: the one `Done` answer that solves most of the arm's evaluated CodeGym tasks, "
        "run in the sandbox on each task's own configuration (`agentic_rl.envs.verify`); a policy that always "
        "answers it scores this without reading anything. Rates with the task as the unit [Wilson 95% CI].",
        "",
        *markdown_header(["arm", "constant", "set", "constant answer"]),
    ]
    for arm in section["arms"]:
        for key, rate in arm["rates"].items():
            lines.append(markdown_row([arm["arm"], f"`{json.dumps(arm['answer'])}`", CONSTANT_SETS[key], _rate(rate)]))
    if section["rows"]:
        sides = ("constant answer", "policy", "policy - constant")
        lines += [
            "",
            "Each mode's success before and after training against the constant on the same tasks, over every "
            "evaluated task and over each held-out set alone, with the primary test of the paired sections; the rows "
            "of this table are one Holm family.",
            "",
            *comparison_markdown(
                [{**row, "set": CONSTANT_SETS[row["set"]]} for row in section["rows"]],
                ["arm", "phase", "mode", "set", "runs"],
                sides,
                _constant_name,
            ),
        ]
    return lines


def _before_after_cells(row: dict[str, Any]) -> list[str]:
    """A row's estimates before and after, then its pooled figures before and after."""
    return [
        _estimate(row["before"]),
        _estimate(row["after"]),
        _pooled(row["before_pooled"]),
        _pooled(row["after_pooled"]),
    ]


def changes_markdown(table: dict[str, Any]) -> list[str]:
    """The paired sections: each arm before -> after, and the arms compared after training."""
    lines = ["", "## Held-out change, paired (the same tasks before and after training)", "", primary_test_note(table)]
    if table.get("paired_base"):
        lines += [
            "",
            f"Before, for runs that kept no records of their own evaluation before training: {_bases(table)}.",
        ]
    lines.append("")
    if table["paired"]:
        lines += paired_markdown(table["paired"])
    else:
        lines.append(
            "No run kept per-task records of both evaluations (eval_before.jsonl and eval_after.jsonl); for runs "
            "evaluated after training only, pass the base model's evaluation: python -m agentic_rl.table RUNS "
            "--before BASE_EVAL_DIR."
        )
    if table.get("arm_pairs"):
        lines += [
            "",
            "## Arms compared, paired (the same seed and held-out task in both arms, after training)",
            "",
            "b - a: arm b's pass rate minus arm a's on the episodes both arms evaluated (same seed, task and sample), "
            "with the primary test of the section above, its Holm family being the rows of this table.",
            "",
            *arm_pairs_markdown(table["arm_pairs"]),
        ]
    return lines + task_type_markdown(table)


def _modes_name(row: dict[str, Any]) -> str:
    return f"`{row['arm']}` {row['b']} - {row['a']} {row['difference']:+.3f}"


def comparison_section(rows: list[dict[str, Any]] | None, title: str, intro: str, keys: list[str], name) -> list[str]:
    """A paired section with one comparison table (`comparison_markdown`, b - a), or nothing without rows."""
    if not rows:
        return []
    return ["", f"## {title}", "", intro, "", *comparison_markdown(rows, keys, ("pass@1 a", "pass@1 b", "b - a"), name)]


def modes_markdown(table: dict[str, Any]) -> list[str]:
    """The modes-compared section (`mode_ladder_rows`): one table, each arm's rows its own Holm family."""
    intro = (
        "b - a: the trained policy's pass rate in mode b minus mode a, after training, on the same held-out tasks "
        "(each task's mean over seeds and samples on each side), with the primary test of the sections above; each "
        "arm's rows are one Holm family. Multi-tool above code-only and code-only above no tools is the notebook's "
        "second result."
    )
    return comparison_section(table.get("mode_ladder"), MODES_SECTION, intro, ["arm", "a", "b", "runs"], _modes_name)


TOOL_SETS_SECTION = "Tool sets compared, each arm in its own tool set's mode (the tools ablation)"


def _tool_sets_name(row: dict[str, Any]) -> str:
    return f"`{row['b']}` {row['mode_b']} - `{row['a']}` {row['mode_a']} {row['difference']:+.3f}"


def tool_sets_markdown(table: dict[str, Any]) -> list[str]:
    """The tools ablation's section (`reports.tool_sets`): one Holm family over every pair of tool sets."""
    intro = (
        "b - a: arm b's trained policy in the mode of the tool set it trained with, minus arm a's in its own, on the "
        "same seeds, held-out tasks and samples (side a has fewer tools), with the primary test of the sections "
        "above; the rows are one Holm family. Unlike the modes-compared section, no policy is asked in a mode it "
        "did not train in."
    )
    keys = ["a", "mode_a", "b", "mode_b", "seeds"]
    return comparison_section(table.get("tool_sets"), TOOL_SETS_SECTION, intro, keys, _tool_sets_name)


BASELINE_SECTION = "After RL vs the base's best mode and its format baselines"


def _baseline_name(row: dict[str, Any]) -> str:
    return f"`{row['arm']}` {row.get('mode', TRAINED_MODE)} after - {row['baseline']} before {row['difference']:+.3f}"


def baselines_markdown(table: dict[str, Any]) -> list[str]:
    """The baseline section: the base's modes before training (the best marked), what could not be compared, and
    each arm's trained policy in its own mode against the best mode and each format baseline, one Holm family."""
    section = table.get("vs_baselines")
    if not section:
        return []
    lines = [
        "",
        f"## {BASELINE_SECTION}",
        "",
        "Each arm's trained policy, read in the mode of the tool set it trained with (the runs' own config: "
        f"`{TRAINED_MODE}` for the default, `code_only` for `tools=code`; `{TRAINED_MODE}` where no config says), "
        "its pass rate after training against, task by task, the base model before training: its best mode (the "
        "highest mean pass rate over tasks among every mode evaluated before, the format baselines included) and "
        "each format baseline (`last_block`: the last code block graded as the submission; `forced_submit`: a "
        "forced final submit turn). A gain over multi_tool before can be the model learning the format; a gain "
        "here is over the best the base did, its format fixed. The primary test of the sections above, intervals "
        "unclipped; the rows of this table are one Holm family.",
        "",
        *markdown_header(["arm", "mode before training", "pass rate, tasks as the unit [Wilson 95% CI]", "best"]),
    ]
    for arm in section["arms"]:
        for mode, rate in arm["before_rates"].items():
            best = "yes" if mode == arm["best_mode"] else ""
            lines.append(markdown_row([arm["arm"], mode, _rate(rate), best]))
    notes = [f"- `{arm['arm']}`: {note}." for arm in section["arms"] for note in arm["notes"]]
    lines += ["", *notes] if notes else []
    if section["rows"]:
        keys = ["arm", "mode", "baseline", "role", "runs"]
        sides = ("baseline before", "mode after", "after - baseline")
        lines += ["", *comparison_markdown(section["rows"], keys, sides, _baseline_name)]
    return lines


def tool_rates_markdown(table: dict[str, Any]) -> list[str]:
    """The tool rates at evaluation."""
    lines = [
        "",
        "## Tool rates at evaluation (tool modes): submission, no call, refused by the cap (shares of turns), "
        "execute errors (share of execute calls)",
        "",
        *markdown_header(["arm", "mode", *(f"{name} {p}" for name in RATES.values() for p in PHASES)]),
    ]
    for row in table["tool_rates"]:
        lines.append(
            markdown_row([row["arm"], row["mode"], *(_estimate(row[f"{m}/{p}"]) for m in RATES for p in PHASES)])
        )
    return lines


def training_markdown(table: dict[str, Any]) -> list[str]:
    """The training reward's first and last quarter per run, and the training tool rates."""
    lines = [
        "",
        f"## Training: `{TRAIN_REWARD}`, first vs last quarter of the logged training steps",
        "",
        *markdown_header(["arm", "run", "seed", "steps", "first quarter", "last quarter", "last - first"]),
    ]
    for row in table["training"]:
        lines += [markdown_row([row["arm"], *_training_run_cells(run)]) for run in row["runs"]]
        lines.append(markdown_row([row["arm"], "**mean over seeds**", *[None] * 4, _estimate(row["difference"])]))
    lines += [
        "",
        "## Training: tool-call rates (shares of turns) and tool error rates (shares of that tool's calls), first vs "
        "last quarter of the training steps",
        "",
        *markdown_header(["arm", "rate", "seeds", "first quarter", "last quarter"]),
    ]
    for row in table["training_rates"]:
        quarters = [_estimate(row["first_quarter"]), _estimate(row["last_quarter"])]
        lines.append(markdown_row([row["arm"], f"`{row['metric']}`", row["seeds"], *quarters]))
    return lines


def _training_run_cells(run: dict[str, Any]) -> list[Any]:
    """One run's row of the training reward table, after its arm: run, seed, steps, the quarters, their difference."""
    seed = "–" if run["seed"] is None else run["seed"]
    if "difference" not in run:
        return [run["run"], seed, 0, "–", "–", "–"]
    steps = f"{run['n_steps']} (quarter: {run['quarter_steps']})"
    quarters = [f"{run['first_quarter']:.3f}", f"{run['last_quarter']:.3f}", f"{run['difference']:+.3f}"]
    return [run["run"], seed, steps, *quarters]


def oracle_markdown(table: dict[str, Any]) -> list[str]:
    """`env/calls_vs_oracle` over training (`reports.oracle_course`), first vs last window per seed and across
    seeds; nothing for runs that did not log it."""
    rows = table.get("calls_vs_oracle")
    if not rows:
        return []
    lines = [
        "",
        f"## {ORACLE_SECTION}",
        "",
        f"`{RATIO}` = calls per episode / the oracle's calls, per training step (1.0: the oracle's length). Per seed "
        "its mean over the first and the last k logged training steps (k = ceil(steps / 4)), the distance from the "
        "oracle (|1 - ratio|) of each and its change (negative: closer to the oracle), and over the same steps the "
        "calls per episode and the oracle's calls (a step's oracle count is that of the tasks drawn for it). Across "
        "seeds: mean [95% t interval]. Skipped: training steps without the ratio, lines not a JSON object.",
        "",
        *markdown_header(
            ["arm", "run", "seed", "steps (k)", "ratio first k", "ratio last k", "distance first", "distance last"]
            + ["distance change", "calls/episode first, last", "oracle calls first, last", "skipped"]
        ),
    ]
    for row in rows:
        lines += [markdown_row([row["arm"], *_oracle_run_cells(run)]) for run in row["runs"]]
        means = [_estimate(row[key]) for key in ("first_quarter", "last_quarter")]
        change = _estimate(row["gap_change"])
        lines.append(
            markdown_row([row["arm"], "**mean over seeds**", None, None, *means, None, None, change, *[None] * 3])
        )
    return lines


def _oracle_run_cells(run: dict[str, Any]) -> list[Any]:
    """One run's row of the calls-vs-oracle table, after its arm (dashes for a run that did not log the ratio)."""
    seed = "–" if run["seed"] is None else run["seed"]
    if "first_quarter" not in run:
        return [run["run"], seed, 0, *["–"] * 9]
    pairs = [", ".join(f"{v:.2f}" for v in pair) if pair else "–" for pair in (run["calls"], run["oracle"])]
    skipped = [f"{len(run['missing_steps'])} steps", f"{len(run['bad_lines'])} lines"]
    return [
        run["run"],
        seed,
        f"{run['n_steps']} ({run['quarter_steps']})",
        *(f"{run[key]:.3f}" for key in ("first_quarter", "last_quarter", "gap_first", "gap_last")),
        f"{run['gap_change']:+.3f}",
        *pairs,
        ", ".join(skipped) if run["missing_steps"] or run["bad_lines"] else "0",
    ]


def power_markdown(table: dict[str, Any]) -> list[str]:
    """Tasks per arm a two-proportion test needs at the measured rates."""
    lines = [
        "",
        "## Tasks needed to tell pass rates apart",
        "",
        "Held-out tasks per arm for a two-sided two-proportion test at alpha 0.05 with power 0.8, at the "
        "measured (pooled) pass rates; each task counted as an independent trial.",
        "",
        *markdown_header(["mode", "a", "b", "pass@1 a", "pass@1 b", "tasks per arm needed", "tasks per run now"]),
    ]
    for row in table["power"]:
        rates = [f"{row['p_a']:.3f}", f"{row['p_b']:.3f}"]
        needed = [_tasks(row["tasks_per_arm"]), row["tasks_now"] or "?"]
        lines.append(markdown_row([row["mode"], row["a"], row["b"], *rates, *needed]))
    return lines


def table_markdown(table: dict[str, Any]) -> str:
    """The tables as Markdown, section by section: `mean [low, high]` are 95% intervals (t across seeds unless
    marked Wilson), the paired sections' primary test has the task as its unit."""
    sections = (
        header_markdown,
        pass_at_1_markdown,
        changes_markdown,
        modes_markdown,
        tool_sets_markdown,
        baselines_markdown,
        tool_rates_markdown,
        training_markdown,
        oracle_markdown,
        power_markdown,
    )
    return "\n".join(line for section in sections for line in section(table)) + "\n"


def resolve_runs(paths: list[Path]) -> list[Path]:
    """A single sweep dir -> its job dirs; otherwise each path must be a run dir (it holds metrics.jsonl or, e.g. a
    record kept without its metrics, summary.json)."""
    paths = [Path(p) for p in paths]
    if len(paths) == 1 and not is_run_dir(paths[0]):
        runs = find_runs(paths[0])
        if not runs:
            raise ValueError(
                f"{paths[0]} holds no metrics.jsonl and no job dirs with one: pass a sweep dir "
                "(outputs/multiruns/<date>/<time>) or run dirs"
            )
        return runs
    missing = [str(p) for p in paths if not is_run_dir(p)]
    if missing:
        raise ValueError(
            f"not run dirs (no metrics.jsonl or summary.json): {', '.join(missing)}. Pass run dirs, or one sweep dir"
        )
    return paths


def write_table(
    paths: list[Path],
    out_dir: Path | None = None,
    base: Path | list[Path] | None = None,
    spec: Bootstrap = DEFAULT_BOOTSTRAP,
    constants: ConstantBaselines | None = None,
) -> tuple[Path, ...]:
    """table.md and table.json for a sweep dir or a list of run dirs, written to `out_dir` (default: the sweep
    dir, or the run dirs' common parent), constant.jsonl there when the runs evaluated CodeGym tasks
    (`write_constant`), and figures/paired_changes.png there when the runs kept per-task records to pair
    (`plots.plot_paired_changes`); `base`: the evaluation before training to pair runs without their own (one, or
    one per arm: `arm_bases`); `spec`: the bootstrap of the task-level intervals; `constants`: where CodeGym's
    constant-answer baseline is computed (`build_table`)."""
    runs = resolve_runs(paths)
    if out_dir is None:
        is_sweep = runs != [Path(p) for p in paths]
        out_dir = Path(paths[0]) if is_sweep else Path(os.path.commonpath([str(r.resolve().parent) for r in runs]))
    table = build_table(runs, base, spec, constants)
    out_dir.mkdir(parents=True, exist_ok=True)
    md, js = out_dir / "table.md", out_dir / "table.json"
    md.write_text(table_markdown(table))
    # inf (equal pass rates need infinitely many tasks) is written as null: JSON has no infinity
    js.write_text(json.dumps(_finite(table), indent=2) + "\n")
    written = (md, js, *write_constant(table, out_dir))
    if not (table["paired"] or table["arm_pairs"]):
        return written
    from agentic_rl.reports.plots import plot_paired_changes  # matplotlib only where there is a figure to draw

    return (*written, plot_paired_changes(table, out_dir / "figures" / "paired_changes.png"))


CONSTANT_FILE = "constant.jsonl"


def write_constant(table: dict[str, Any], out_dir: Path) -> tuple[Path, ...]:
    """constant.jsonl: the CodeGym constant-answer baseline per task (task_id, passed, answer), when the arms share
    one (the same evaluated tasks: a study's seeds); arms with different tasks have theirs in table.json only."""
    arms = (table.get("codegym_constant") or {}).get("arms", [])
    if not arms or any(arm["tasks"] != arms[0]["tasks"] for arm in arms):
        return ()
    path = out_dir / CONSTANT_FILE
    path.write_text("".join(json.dumps(row) + "\n" for row in arms[0]["tasks"]))
    return (path,)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
