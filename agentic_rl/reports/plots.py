"""Figures from a run dir (metrics.jsonl, summary.json, eval_before/after.jsonl), a folder of seeds, or a sweep dir.

The notebook's three-panel figure, `figures/training_summary.png` (`summary_data` computes what it draws,
`draw_summary` draws it), for one run at the end of each run (`plot_run`) and over seeds for a folder of runs
(`plot_seeds`: a record's seed-*/ folders, or a sweep, one figure per arm):
  left   held-out pass@1 per mode (format baselines included) before and after training, with 95% intervals over
         tasks (from the per-episode records: each task's mean over seeds and samples, Wilson over tasks; runs
         without records: summary.json, the t interval over seeds);
  middle training pass rate (left axis) and mean reward (right axis), each seed's rolling mean;
  right  tool rates over training, search drawn apart for `docs` tasks and for the other tasks (a step logs only
         its own task's type, so each is a moving average over the steps of its kind), with the other tools.
Over several seeds each curve is the mean with a 95% t band. Numbers are never clipped; a share's band is clipped
to [0, 1] in the drawing only, with a note on the axes (`draw_band`).

CodeGym runs that logged `env/calls_vs_oracle` get `figures/calls_vs_oracle.png` beside it (`plot_calls_vs_oracle`,
from `plot_seeds` per arm and from `python -m agentic_rl.plot RUN_DIR`): the ratio per training step, each seed and
their mean with a 95% t band, against the oracle's 1.0, and the calls per episode and oracle calls behind it; runs
that did not log it get no such figure.

Sweep (`plot_sweep`): the dashboard's panels (`tracking.panels`), one colour per arm, its seeds as mean and band,
and pass@1 per mode before/after as the mean over seeds ± 95% t CI (one seed: Wilson over its tasks).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures are files
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from agentic_rl.reports.oracle_course import CALLS, ORACLE, RATIO, RunCourse, reading, run_course  # noqa: E402
from agentic_rl.reports.run_files import find_runs, is_evaluation_run, read_eval_records, read_metrics, read_summary  # noqa: E402
from agentic_rl.reports.runs import (  # noqa: E402
    TRAIN_REWARD,
    Estimate,
    across_seeds,
    eval_sections,
    group_by_arm,
    pass_at_1_estimate,
    per_step,
    scored_outcomes,
    tasks_scored,
)
from agentic_rl.reports.stats import task_rate  # noqa: E402

logger = logging.getLogger(__name__)


def rolling_mean(values: list[float], window: int | None = None) -> list[float]:
    """Trailing mean over about a tenth of the run, so single noisy groups do not hide the trend."""
    window = window or max(1, len(values) // 10)
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def run_title(summary: dict, run_dir: Path) -> str:
    """model / tools / reward / run, as far as summary.json knows them."""
    parts = [f"{key} {summary[key]}" for key in ("model", "tools", "reward") if summary.get(key)]
    return " | ".join(parts + [f"run {Path(run_dir).resolve().parent.name}/{Path(run_dir).name}"])


PHASES = ("before", "after")
PHASE_COLORS = {"before": "#90a4ae", "after": "#43a047"}
MODE_ORDER = ("no_tools", "code_only", "multi_tool", "last_block", "forced_submit")  # the rest after, by name
DOCS = "docs"  # the task type of tasks that need the generated library: its search is drawn apart
# per-type search metrics (metrics.task_type_metrics), the share of turns first: the unit of the other tool rates
SEARCH_KEYS = {"tools/search_rate": "share of turns", "tools/search_episodes": "share of episodes"}


@dataclass(frozen=True)
class Curve:
    """One line of the figure: per training step the mean over seeds and its 95% t interval (unclipped); `share`:
    a rate in [0, 1], whose band the drawing clips (and says so)."""

    label: str
    steps: list[int]
    estimates: list[Estimate]
    share: bool = True

    @property
    def means(self) -> list[float]:
        return [e.mean for e in self.estimates]


@dataclass(frozen=True)
class SummaryData:
    """What the three-panel figure draws, computed from the runs' own files before anything is drawn (so tests
    read the numbers, not the pixels): pass@1 per phase and mode with its 95% interval, the learning curves, the
    tool-rate curves, and how many seeds stand behind them."""

    pass_at_1: dict[str, dict[str, Estimate]]
    learning: list[Curve]
    tools: list[Curve]
    seeds: int


def ordered_modes(modes) -> list[str]:
    """The evaluation modes in `MODE_ORDER`, the format baselines after the modes they grade, others by name."""
    modes = set(modes)
    return [m for m in MODE_ORDER if m in modes] + sorted(modes - set(MODE_ORDER))


def records_pass_at_1(runs: list[Path], phase: str) -> dict[str, Estimate]:
    """Mode -> pass@1 with the task as the unit, from the runs' per-episode records of `phase`: each task's mean
    over seeds and samples (the scored episodes, `runs.scored`), the mean over tasks, and the Wilson 95% interval
    over tasks (`stats.task_rate`, method "tasks"). {} when no run kept records."""
    episodes: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for run in runs:
        for (mode, task, _), passed in scored_outcomes(read_eval_records(run, phase)).items():
            episodes[mode].append((task, passed))
    rates = {mode: task_rate(eps) for mode, eps in episodes.items()}
    return {mode: Estimate(r["rate"], r["low"], r["high"], int(r["tasks"]), "tasks") for mode, r in rates.items()}


def summary_pass_at_1(runs: list[Path], phase: str) -> dict[str, Estimate]:
    """Mode -> pass@1 from summary.json, for runs that kept no records: the mean over seeds with its 95% t
    interval, unclipped (one seed: the Wilson interval over its tasks; `runs.pass_at_1_estimate`)."""
    measured: dict[str, list[tuple[float, int | None]]] = defaultdict(list)
    for run, section in zip(runs, eval_sections(runs, phase)):
        for mode, metrics in section.items():
            if "pass@1" in metrics:
                measured[mode].append((metrics["pass@1"], tasks_scored(run, metrics)))
    return {mode: pass_at_1_estimate([p for p, _ in rows], [n for _, n in rows]) for mode, rows in measured.items()}


def typed_steps(records: list[dict], prefix: str, docs: bool) -> tuple[list[int], list[float]]:
    """(steps, values) of `<prefix>/<type>` over the training steps whose task is a `docs` task (`docs`) or of any
    other type. A step logs only its own task's type (`metrics.task_type_metrics`), so each kind has its own steps."""
    rows = []
    for record in records:
        if "train/epoch" not in record:
            continue
        for key, value in record.items():
            kind = key[len(prefix) + 1 :] if key.startswith(prefix + "/") else None
            if kind and "/" not in kind and value is not None and (kind == DOCS) == docs:
                rows.append((record["step"], value))
    return [s for s, _ in rows], [v for _, v in rows]


def search_curves(runs_records: list[list[dict]]) -> list[Curve]:
    """Search on `docs` tasks and on the other tasks, each a moving average over the steps of its kind (carried
    to the next step of that kind across seeds, `seed_band`), from the first of `SEARCH_KEYS` the runs logged;
    [] when they logged no per-type search metric (runs written before it, or tasks without a type)."""
    logged = {key for records in runs_records for record in records for key in record}
    prefix = next((p for p in SEARCH_KEYS if any(key.startswith(p + "/") for key in logged)), None)
    if prefix is None:
        return []
    curves = []
    for docs, kind in ((True, f"{DOCS} tasks"), (False, "other tasks")):
        series = [smoothed(typed_steps(records, prefix, docs)) for records in runs_records]
        curves.append(Curve(f"search, {kind} ({SEARCH_KEYS[prefix]})", *seed_band(series, carry=True)))
    return curves


def tool_curves(runs_records: list[list[dict]]) -> list[Curve]:
    """The tool-rate panel's lines: every tool the runs' episodes declared (`tool_rate_curves`: execute, submit, an
    environment's own), search split into `docs` and other tasks where the runs logged it per type."""
    logged = [record for records in runs_records for record in records]
    split = search_curves(runs_records)
    curves = []
    for metric, name in tool_rate_curves(logged):
        if name == "search" and split:
            curves += split
        else:
            curves.append(Curve(f"{name} (share of turns)", *arm_curve(runs_records, metric)))
    return curves


def summary_data(runs: list[Path]) -> SummaryData:
    """The three-panel figure's data for one arm's runs (one run, or its seeds): pass@1 per mode before and after
    from the per-episode records (else summary.json), the training pass rate and reward, and the tool rates."""
    runs_records = [read_metrics(run) for run in runs]
    pass_at_1 = {phase: records_pass_at_1(runs, phase) or summary_pass_at_1(runs, phase) for phase in PHASES}
    learning = [
        Curve("training pass rate", *arm_curve(runs_records, "train/pass_rate")),
        Curve("mean reward", *arm_curve(runs_records, TRAIN_REWARD), share=False),
    ]
    return SummaryData(pass_at_1, learning, tool_curves(runs_records), len(runs))


def draw_pass_at_1(ax, pass_at_1: dict[str, dict[str, Estimate]]) -> None:
    """Panel 1: pass@1 per mode, before and after training side by side, with their 95% intervals (unclipped:
    the axis makes room for them)."""
    modes = ordered_modes(m for by_mode in pass_at_1.values() for m in by_mode)
    phases = [p for p in PHASES if pass_at_1.get(p)]
    width = 0.8 / max(len(phases), 1)
    for j, phase in enumerate(phases):
        shown = [(i, pass_at_1[phase][m]) for i, m in enumerate(modes) if m in pass_at_1[phase]]
        bars = ax.bar(
            [i + (j - (len(phases) - 1) / 2) * width for i, _ in shown],
            [e.mean for _, e in shown],
            width=width,
            color=PHASE_COLORS[phase],
            edgecolor="#333",
            yerr=[[e.mean - e.low for _, e in shown], [e.high - e.mean for _, e in shown]],
            capsize=3,
            label=f"{phase} training",
        )
        for bar, (_, e) in zip(bars, shown):
            ax.text(bar.get_x() + bar.get_width() / 2, e.mean / 2, f"{e.mean:.0%}", ha="center", fontsize=7)
    ax.set_xticks(range(len(modes)), modes, fontsize=8, rotation=15)
    ax.set_xlabel("evaluation mode (last_block, forced_submit: format baselines)")
    ax.set_ylabel("pass@1 (share of tasks)")
    methods = {e.method for by_mode in pass_at_1.values() for e in by_mode.values()}
    how = "Wilson over tasks" if methods <= {"tasks", "wilson"} else "t over seeds"
    ax.set_title(f"held-out pass@1, 95% CI ({how})", fontsize=10)
    if phases:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no evaluation in these runs", ha="center", va="center", transform=ax.transAxes)


def draw_curves(ax, curves: list[Curve], ylabel: str) -> bool:
    """Lines with their bands; returns whether a band was clipped in the drawing."""
    clipped = False
    for curve in curves:
        if curve.steps:
            clipped |= draw_band(ax, curve.steps, curve.estimates, curve.share, label=curve.label)
    ax.set_xlabel("training step (one task group each)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return clipped


def draw_learning(ax, learning: list[Curve]) -> None:
    """Panel 2: the training pass rate (share of episodes, left axis) and mean reward (right axis)."""
    rate, reward = learning
    clipped = draw_curves(ax, [rate], "pass rate (share of episodes)")
    ax.set_ylim(-0.02, 1.02)
    twin = ax.twinx()
    twin.set_prop_cycle(color=["#ff7f0e"])  # the second colour of the default cycle: not the pass rate's
    draw_curves(twin, [reward], "mean episode reward")
    handles = [h for a in (ax, twin) for h in a.get_legend_handles_labels()[0]]
    if handles:
        ax.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="upper left")
    else:
        ax.text(0.5, 0.5, "no training steps logged", ha="center", va="center", transform=ax.transAxes)
    ax.set_title("training pass rate and reward (rolling mean)", fontsize=10)
    note_clipped(ax, clipped)


def draw_tools(ax, tools: list[Curve]) -> None:
    """Panel 3: tool rates over training, search apart on `docs` tasks and on the others."""
    clipped = draw_curves(ax, tools, "rate")
    ax.set_ylim(-0.02, 1.02)  # rates on their full scale, so a flat 0.02 does not look like a swing
    split = any(curve.label.startswith("search, ") for curve in tools)  # runs that logged search per task type
    ax.set_title("tool rates over training (moving average" + ("; search by task type)" if split else ")"), fontsize=10)
    if ax.lines:
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no tool rates logged", ha="center", va="center", transform=ax.transAxes)
    note_clipped(ax, clipped)


def draw_summary(data: SummaryData, title: str, out: Path) -> Path:
    """The notebook's three-panel figure at `out`: pass@1 per mode, learning curves, tool rates."""
    fig, axes = plt.subplots(1, 3, figsize=(19, 5.2))
    draw_pass_at_1(axes[0], data.pass_at_1)
    draw_learning(axes[1], data.learning)
    draw_tools(axes[2], data.tools)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def tool_rate_curves(records: list[dict]) -> tuple[tuple[str, str], ...]:
    """(metric, label) of every tool-call rate the run logged: the tools its episodes declared, in that order."""
    from agentic_rl.tracking.panels import logged_tools

    return tuple((f"tools/{n}_rate", n) for n in logged_tools(records))


def plot_run(run_dir: Path) -> Path:
    """figures/training_summary.png: the three-panel figure of one run (`summary_data`, `draw_summary`)."""
    run_dir = Path(run_dir)
    title = run_title(read_summary(run_dir), run_dir)
    return draw_summary(summary_data([run_dir]), title, run_dir / "figures" / "training_summary.png")


def training_runs(found: list[Path]) -> list[Path]:
    """The training runs among a folder's run dirs: a base-model evaluation kept beside them (known by its
    results.jsonl) is not an arm, unless there is nothing else."""
    runs = [run for run in found if not is_evaluation_run(run)] or found
    if len(runs) < len(found):
        logger.info("left out the evaluation-only runs %s", sorted(run.name for run in set(found) - set(runs)))
    return runs


def plot_seeds(folder: Path) -> list[Path]:
    """The three-panel figure over seeds for a folder of runs (a record's seed-*/ folders, or a sweep): per arm
    (`runs.group_by_arm`), curves as the mean over its seeds with a 95% t band, bars with task-level intervals over
    its seeds' episodes. One arm: figures/training_summary.png in the folder; several:
    figures/training_summary-<arm>.png each."""
    folder = Path(folder)
    arms = group_by_arm(training_runs(find_runs(folder)))
    written = []
    for label, runs in arms.items():
        suffix = "" if len(arms) == 1 else "-" + _slug(label)
        seeds = f"{label}, {len(runs)} seed{'s' * (len(runs) > 1)}"
        title = f"{folder.resolve().name}: {seeds}. Curves: mean over seeds, band 95% t interval"
        written.append(draw_summary(summary_data(runs), title, folder / "figures" / f"training_summary{suffix}.png"))
        oracle_title = f"{folder.resolve().name}: {seeds}"
        oracle = plot_calls_vs_oracle(runs, oracle_title, folder / "figures" / f"{ORACLE_FIGURE}{suffix}.png")
        written += [oracle] if oracle else []
    return written


ORACLE_FIGURE = "calls_vs_oracle"  # figures/<this>.png, per arm figures/<this>-<arm>.png (`plot_seeds`)


def plot_calls_vs_oracle(runs: list[Path], title: str, out: Path) -> Path | None:
    """`out`: `env/calls_vs_oracle` over training for one arm's runs (`draw_calls_vs_oracle`), or None, drawing
    nothing, when none of them logged it on a training step (code-task runs)."""
    courses = [course for course in map(run_course, runs) if course.steps]
    return draw_calls_vs_oracle(courses, title, out) if courses else None


def _course_series(course: RunCourse, values: list) -> tuple[list[int], list[float]]:
    """(steps, rolling mean) of one of a course's per-step lists, over the steps where it has a value."""
    kept = [(step, value) for step, value in zip(course.steps, values) if value is not None]
    return smoothed(([step for step, _ in kept], [value for _, value in kept]))


def _seed_label(course: RunCourse) -> str:
    """A seed's legend entry: its first- and last-window means of the ratio, the numbers of the table's section."""
    read = reading(course)
    if read is None:
        return course.run.name
    window = read["quarter_steps"]
    return f"{course.run.name}: {read['first_quarter']:.3f} -> {read['last_quarter']:.3f} (first/last {window} steps)"


def draw_calls_vs_oracle(courses: list[RunCourse], title: str, out: Path) -> Path:
    """Left: the ratio per training step, one thin line per seed (its rolling mean, labelled by `_seed_label`) and
    the mean over seeds with its 95% t band, against the oracle's length (1.0). Right: the calls per episode and
    the oracle's calls behind the ratio, mean and band; a step's oracle count is that of the tasks drawn for it,
    so this panel says which side moved."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5))
    for course in courses:
        left.plot(*_course_series(course, course.ratios), linewidth=0.9, alpha=0.6, label=_seed_label(course))
    steps, estimates = seed_band([_course_series(course, course.ratios) for course in courses])
    draw_band(left, steps, estimates, share=False, color="#222", linewidth=2.0, label="mean over seeds, 95% t band")
    left.axhline(1.0, color="#b22222", linestyle="--", linewidth=1.0, label="the oracle's calls (1.0)")
    # the reference line stays in view however far below it the policy is (the distance is the reading), and so
    # does a band's unclipped lower end
    left.set_ylim(min(0.0, *(e.low for e in estimates)), max(1.1, 1.1 * max(e.high for e in estimates)))
    left.set_xlabel("training step (one task group each)")
    left.set_ylabel(f"{RATIO} (calls / oracle calls)")
    left.set_title("calls against the oracle's (rolling mean)", fontsize=10)
    left.grid(alpha=0.3)
    left.legend(fontsize=7)
    side = [
        Curve("calls per episode (policy)", *seed_band([_course_series(c, c.calls) for c in courses]), share=False),
        Curve(
            "the oracle's calls, same tasks", *seed_band([_course_series(c, c.oracle) for c in courses]), share=False
        ),
    ]
    draw_curves(right, side, "calls per episode")
    for ax in (left, right):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_title(f"{CALLS} and {ORACLE} (rolling mean, 95% t band)", fontsize=10)
    right.legend(fontsize=7)
    fig.suptitle(f"{title}: {RATIO} over training", fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _slug(label: str) -> str:
    """An arm label as a file name part: `tools=code seed_x` -> `tools=code_seed_x`."""
    return "".join(c if c.isalnum() or c in "=.-" else "_" for c in label)[:80]


def arm_curve(runs_records: list[list[dict]], metric: str) -> tuple[list[int], list[Estimate]]:
    """An arm's curve of `metric`: each seed's rolling mean, then per step the mean over the seeds that logged
    that step with its 95% t interval, unclipped (no band where only one seed has the step)."""
    return seed_band([smoothed(per_step(records, metric)) for records in runs_records])


def smoothed(series: tuple[list[int], list[float]]) -> tuple[list[int], list[float]]:
    """(steps, values) -> (steps, their `rolling_mean`)."""
    steps, values = series
    return steps, rolling_mean(values)


def seed_band(series: list[tuple[list[int], list[float]]], carry: bool = False) -> tuple[list[int], list[Estimate]]:
    """Per step, the mean over seeds of their (smoothed) series and its 95% t interval (`across_seeds`, never
    clipped). `carry`: a seed's value at a step it did not log is its last value before it (a series drawn only on
    the steps of one task type falls on different steps in each seed, whose task order differs); without it, a
    step counts only the seeds that logged it."""
    by_step: dict[int, list[float]] = defaultdict(list)
    grid = sorted({step for steps, _ in series for step in steps})
    for steps, values in series:
        known = dict(zip(steps, values))
        last = None
        for step in grid:
            last = known.get(step, last if carry else None)
            if last is not None:
                by_step[step].append(last)
    steps = sorted(by_step)
    return steps, [across_seeds(by_step[s]) for s in steps]


CLIP_NOTE = "band drawn clipped to [0, 1]; its numbers are not"


def draw_band(ax, steps: list[int], estimates: list[Estimate], share: bool, **style) -> bool:
    """A mean line with its 95% band (where more than one seed has the step). A share's band is clipped to [0, 1]
    in the drawing only, and the return value says whether that changed anything, so the axes can say so: the
    estimates stay as they are."""
    lows, highs = [e.low for e in estimates], [e.high for e in estimates]
    clipped = share and (min(lows, default=0.0) < 0.0 or max(highs, default=1.0) > 1.0)
    if share:
        lows, highs = [max(0.0, v) for v in lows], [min(1.0, v) for v in highs]
    (line,) = ax.plot(steps, [e.mean for e in estimates], **style)
    if any(e.n > 1 for e in estimates):
        ax.fill_between(steps, lows, highs, color=line.get_color(), alpha=0.2, linewidth=0)
    return clipped


def note_clipped(ax, clipped: bool) -> None:
    """Say on the axes that a band was clipped for the drawing (`draw_band`)."""
    if clipped:
        ax.text(0.01, 0.01, CLIP_NOTE, transform=ax.transAxes, fontsize=7, color="#555", va="bottom")


def plot_arm_curves(
    ax, arms: dict[str, list[Path]], records: dict[Path, list[dict]], metric: str, colors: dict[str, str], rate: bool
) -> None:
    clipped = False
    for label, runs in arms.items():
        steps, estimates = arm_curve([records[run] for run in runs], metric)
        if steps:
            clipped |= draw_band(ax, steps, estimates, rate, marker=".", color=colors[label], label=label)
    note_clipped(ax, clipped)
    ax.set_xlabel("training step (one task group each)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    if rate:  # rates on their full scale, so a flat 0.02 does not look like a swing
        ax.set_ylim(-0.02, 1.02)
    if not ax.lines:
        ax.text(
            0.5,
            0.5,
            f"{metric}\nnot logged by these runs",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize=8,
        )


def plot_arm_pass_at_1(ax, arms: dict[str, list[Path]], phase: str, colors: dict[str, str]) -> None:
    """pass@1 per mode in one evaluation phase: one bar per arm, the mean over its seeds with the 95% t interval
    (one seed: the Wilson interval over its tasks)."""
    sections = {label: eval_sections(runs, phase) for label, runs in arms.items()}
    modes = list(dict.fromkeys(m for per_run in sections.values() for section in per_run for m in section))
    width = 0.8 / max(len(arms), 1)
    for i, (label, runs) in enumerate(arms.items()):
        xs, estimates = [], []
        for j, mode in enumerate(modes):
            rows = [
                (s[mode]["pass@1"], read_summary(run).get("n_eval_tasks"))
                for run, s in zip(runs, sections[label])
                if "pass@1" in s.get(mode, {})
            ]
            if rows:
                xs.append(j + (i - (len(arms) - 1) / 2) * width)
                estimates.append(pass_at_1_estimate([r for r, _ in rows], [n for _, n in rows]))
        bars = ax.bar(
            xs,
            [e.mean for e in estimates],
            width=width,
            color=colors[label],
            edgecolor="#333",
            yerr=[[e.mean - e.low for e in estimates], [e.high - e.mean for e in estimates]],
            capsize=3,
            label=label,
        )
        for bar, e in zip(bars, estimates):
            ax.text(bar.get_x() + bar.get_width() / 2, e.mean / 2, f"{e.mean:.0%}", ha="center", fontsize=7)
    ax.set_xticks(range(len(modes)), modes, fontsize=8)
    ax.set_xlabel(f"evaluation mode ({phase} training)")
    ax.set_ylim(0, 1)
    if not modes:
        ax.text(0.5, 0.5, f"no evaluation {phase} training", ha="center", va="center", transform=ax.transAxes)


MAX_ENV_TOOLS = 8  # environments' own tools drawn in a sweep figure (many environments declare dozens)


def most_used(tools: tuple[str, ...], records: list[dict], keep: int = MAX_ENV_TOOLS) -> tuple[str, ...]:
    """The shared tools, then the `keep` most called of the environments' own tools (by summed logged rate)."""
    from agentic_rl.tools.base import declared_specs

    shared = [n for n in tools if n in declared_specs()]
    own = sorted(
        (n for n in tools if n not in shared), key=lambda n: -sum(r.get(f"tools/{n}_rate", 0.0) for r in records)
    )
    return (*shared, *own[:keep])


def plot_sweep(sweep_dir: Path) -> Path:
    """figures/sweep_summary.png: the dashboard's panels (`tracking.panels`), one row per section (tool use,
    learning, evaluation), one colour per arm (its seeds aggregated: mean and 95% CI), one legend for the figure."""
    from agentic_rl.tracking.panels import EVAL_PASS_AT_1, logged_tools, panel_sections, panels

    sweep_dir = Path(sweep_dir)
    runs = training_runs(find_runs(sweep_dir))
    arms = group_by_arm(runs)
    records = {run: read_metrics(run) for run in runs}
    colors = {label: f"C{i % 10}" for i, label in enumerate(arms)}
    phases = [p for p in ("after", "before") if any(any(eval_sections(r, p)) for r in arms.values())] or ["after"]
    logged = [r for rs in records.values() for r in rs]
    # the tools the runs' episodes declared (an environment's own tools under their names), and the env/ panels
    # when the runs stepped CodeGym environments
    shown = panels(most_used(logged_tools(logged), logged), env=any("env/success_rate" in r for r in logged))
    # the eval panel is one axes per evaluation phase present
    rows = [
        [
            (p, phase)
            for p in shown
            if p.section == section
            for phase in (phases if p.metric == EVAL_PASS_AT_1 else [None])
        ]
        for section in panel_sections(shown)
    ]
    cols = max(len(row) for row in rows)
    fig, axes = plt.subplots(len(rows), cols, figsize=(5.5 * cols, 4.2 * len(rows)), squeeze=False)
    for row, row_axes in zip(rows, axes):
        for ax in row_axes[len(row) :]:
            ax.remove()
        for ax, (panel, phase) in zip(row_axes, row):
            if panel.metric == EVAL_PASS_AT_1:
                plot_arm_pass_at_1(ax, arms, phase, colors)
                ax.set_title(f"{panel.section}: {panel.title} ({phase} training)", fontsize=10)
            else:
                plot_arm_curves(ax, arms, records, panel.metric, colors, rate=panel.ylabel.startswith("share"))
                ax.set_title(f"{panel.section}: {panel.title}", fontsize=10)
            ax.set_ylabel(panel.ylabel)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[label]) for label in arms]
    legend = [f"{label} ({len(arms[label])} seed{'s' * (len(arms[label]) > 1)})" for label in arms]
    fig.legend(
        handles,
        [_wrapped(label, 60) for label in legend],
        loc="upper center",
        bbox_to_anchor=(0.5, 0.97),
        ncol=min(len(arms), 6 if max(map(len, legend)) <= 40 else 3),  # long labels (several overrides): fewer columns
        fontsize=9,
    )
    fig.suptitle(
        f"sweep {sweep_dir.resolve().parent.name}/{sweep_dir.name}: {len(arms)} arms, {len(runs)} runs. "
        "Curves: each seed's rolling mean; line = mean over seeds, band = 95% t CI. Bars: mean over seeds "
        "± 95% t CI (one seed: Wilson CI over its tasks)",
        fontsize=10,
        y=0.995,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.945))
    out = sweep_dir / "figures" / "sweep_summary.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _wrapped(label: str, width: int = 48) -> str:
    """An arm label (its overrides, sometimes several) over lines of at most `width` characters."""
    import textwrap

    return "\n".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label


def plot_paired_changes(table: dict, out: Path) -> Path:
    """figures/paired_changes.png beside a `table.md`: per evaluation mode, a forest plot of the primary paired
    differences in held-out pass rate, tasks as the unit (`tables.paired_test`: the mean over tasks of the task
    differences with the percentile bootstrap 95% interval over tasks, unclipped): each arm after against before
    training (`table["paired"]`), then each pair of arms after training on the same seeds and tasks
    (`table["arm_pairs"]`). A row that holds at 0.05 after Holm's correction is drawn in colour (green above zero,
    red below), any other in grey; each row is labelled with the estimate, the tasks up / down, the sign test's p
    raw and Holm-adjusted."""
    rows_by_mode: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for row in table.get("paired", []):
        rows_by_mode[row["mode"]].append((f"{row['arm']}: after - before", row))
    for row in table.get("arm_pairs", []):
        rows_by_mode[row["mode"]].append((f"{row['b']}  -  {row['a']} (after)", row))
    modes = list(rows_by_mode)
    heights = [max(len(rows_by_mode[m]), 1) for m in modes] or [1]
    fig, axes = plt.subplots(
        max(len(modes), 1),
        1,
        figsize=(13, 1.6 + 0.62 * sum(heights) + 0.9 * len(heights)),
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )
    for ax, mode in zip(axes[:, 0], modes):
        rows = rows_by_mode[mode]
        ys = list(range(len(rows)))[::-1]  # the first row on top
        for y, (_, row) in zip(ys, rows):
            _forest_row(ax, y, row)
        ax.axvline(0.0, color="#333", linewidth=0.8)
        within = sum(row["mode"] == mode for row in table.get("paired", []))  # the arms' own changes come first
        if 0 < within < len(rows):  # a rule between the arms' own changes and the arms compared
            ax.axhline(len(rows) - within - 0.5, color="#999", linestyle="--", linewidth=0.8)
        ax.set_yticks(ys, [_wrapped(label) for label, _ in rows], fontsize=8)
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.set_title(f"mode {mode}", fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlabel(
            "difference in held-out pass rate, tasks as the unit (95% bootstrap interval over tasks)", fontsize=9
        )
    if not modes:
        axes[0, 0].text(0.5, 0.5, "no paired records (eval_before/after.jsonl)", ha="center", va="center")
    fig.suptitle(
        "Held-out changes, paired on the same tasks: each arm after vs before training, and the arms against each "
        "other on the same seeds. Right: estimate [95% CI], tasks up / down, exact sign test p and Holm-adjusted p; "
        "coloured: holds at 0.05 after Holm",
        fontsize=9,
        wrap=True,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.95))  # the row annotations right of the axes count in the layout
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _forest_row(ax, y: float, row: dict) -> None:
    """One row of the forest plot: the task-level difference, its interval, and its label."""
    diff, low, high = row["difference"], row["low"], row["high"]
    color = "#777777" if not row["holds"] else "#2a7d2a" if diff > 0 else "#b22222"
    ax.errorbar(diff, y, xerr=[[diff - low], [high - diff]], fmt="o", color=color, capsize=4)
    ax.annotate(
        f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]   {row['up']} / {row['down']} tasks   "
        f"p {row['p_value']:.2g}, Holm {row['p_holm']:.2g}   ({row['tasks']} tasks)",
        xy=(1.01, y),
        xycoords=("axes fraction", "data"),
        va="center",
        fontsize=8,
    )
