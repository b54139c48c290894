"""Figures from a run dir (metrics.jsonl + summary.json) or a sweep dir (one run dir per job).

Run: pass@1 per mode before/after training (95% Wilson intervals), training pass rate and reward on
separate axes, and the tool-call rates; the title names model, tools, reward and run. Sweep: the jobs grouped
into arms (`runs.group_by_arm`: overrides without the seed); per arm the tool-rate, pass-rate and reward curves
as the mean over seeds with a 95% t band, and pass@1 per mode before/after as the mean over seeds ± 95% t CI
(one seed: Wilson over its tasks), so ablations are compared at a glance and with their noise.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures are files
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from agentic_rl.tracking.metrics import NON_TOOL_RATES  # noqa: E402
from agentic_rl.tracking.runs import (  # noqa: E402
    Estimate,
    across_seeds,
    eval_sections,
    find_runs,
    group_by_arm,
    is_evaluation_run,
    pass_at_1_estimate,
    per_step,
    read_metrics,
    read_summary,
)
from agentic_rl.tracking.stats import wilson_interval  # noqa: E402

logger = logging.getLogger(__name__)


def rolling_mean(values: list[float], window: int | None = None) -> list[float]:
    """Trailing mean over about a tenth of the run, so single noisy groups do not hide the trend."""
    window = window or max(1, len(values) // 10)
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def per_epoch_end(records: list[dict], key: str) -> tuple[list[int], list[float]]:
    """Mean of `key` over each epoch, placed at the epoch's last step."""
    groups: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for r in records:
        if r.get(key) is not None and "train/epoch" in r:
            groups[int(r["train/epoch"])].append((r["step"], r[key]))
    epochs = sorted(groups)
    return ([groups[e][-1][0] for e in epochs], [sum(v for _, v in groups[e]) / len(groups[e]) for e in epochs])


def run_title(summary: dict, run_dir: Path) -> str:
    """model / tools / reward / run, as far as summary.json knows them."""
    parts = [f"{key} {summary[key]}" for key in ("model", "tools", "reward") if summary.get(key)]
    return " | ".join(parts + [f"run {Path(run_dir).resolve().parent.name}/{Path(run_dir).name}"])


PHASE_COLORS = {"before": "#90a4ae", "after": "#43a047"}


def plot_pass_at_1_bars(ax, evals: dict, n_tasks: int | None) -> None:
    """pass@1 per mode, before and after training side by side, with 95% Wilson intervals over n tasks."""
    modes = list(dict.fromkeys(m for phase in ("before", "after") for m in (evals.get(phase) or {})))
    if not modes:
        ax.text(0.5, 0.5, "no evaluation in this run", ha="center", va="center", transform=ax.transAxes)
    phases = [p for p in ("before", "after") if evals.get(p)]
    width = 0.8 / max(len(phases), 1)
    top = 0.1
    for j, phase in enumerate(phases):
        xs, values, lows, highs = [], [], [], []
        for i, mode in enumerate(modes):
            if mode not in evals[phase]:
                continue
            v = evals[phase][mode].get("pass@1", 0.0)
            lo, hi = wilson_interval(v * n_tasks, n_tasks) if n_tasks else (v, v)
            xs.append(i + (j - (len(phases) - 1) / 2) * width)
            values.append(v)
            lows.append(v - lo)
            highs.append(hi - v)
            top = max(top, hi)
        bars = ax.bar(
            xs,
            values,
            width=width,
            color=PHASE_COLORS[phase],
            edgecolor="#333",
            yerr=[lows, highs] if n_tasks else None,
            capsize=3,
            label=f"{phase} training",
        )
        for bar, v in zip(bars, values):
            ax.text(bar.get_x() + bar.get_width() / 2, v / 2, f"{v:.0%}", ha="center", fontsize=8)
    ax.set_xticks(range(len(modes)), modes, fontsize=8)
    ax.set_ylim(0, min(1.0, top * 1.15))
    ax.set_xlabel("evaluation mode")
    ax.set_ylabel("pass@1 (share of tasks)")
    ax.set_title(f"held-out pass@1, 95% Wilson CI (n={n_tasks or '?'} tasks)", fontsize=10)
    if phases:
        ax.legend(fontsize=8)


def plot_curves(
    ax, records: list[dict], keys: tuple[tuple[str, str], ...], title: str, ylabel: str, shares: bool = False
) -> None:
    """Per-step rolling means with epoch means as dots, one line per metric."""
    for key, label in keys:
        steps, values = per_step(records, key)
        if not steps:
            continue
        (line,) = ax.plot(steps, rolling_mean(values), label=f"{label} (rolling mean)")
        xs, ys = per_epoch_end(records, key)
        ax.plot(xs, ys, "o", color=line.get_color(), label=f"{label} (epoch mean)")
    ax.set_xlabel("training step (one task group each)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if shares:  # rates on their full 0..1 scale, so a flat 0.02 does not look like a swing
        ax.set_ylim(-0.02, 1.02)
    if ax.lines:
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no training steps logged", ha="center", va="center", transform=ax.transAxes)


def tool_rate_curves(records: list[dict]) -> tuple[tuple[str, str], ...]:
    """(metric, label) of every tool-call rate the run logged: the tools its episodes declared, in that order."""
    from agentic_rl.tracking.panels import logged_tools

    return tuple((f"tools/{n}_rate", n) for n in logged_tools(records))


def plot_run(run_dir: Path) -> Path:
    """figures/training_summary.png: pass@1 before/after, training pass rate, reward, tool rates."""
    run_dir = Path(run_dir)
    records = read_metrics(run_dir)
    summary = read_summary(run_dir)
    fig, axes = plt.subplots(1, 4, figsize=(22, 5))
    plot_pass_at_1_bars(axes[0], summary.get("eval", {}), summary.get("n_eval_tasks"))
    plot_curves(
        axes[1],
        records,
        (("train/pass_rate", "pass rate"),),
        "training pass rate",
        "pass rate (share of episodes)",
        shares=True,
    )
    plot_curves(axes[2], records, (("train/reward_mean", "mean reward"),), "training reward", "mean episode reward")
    plot_curves(
        axes[3],
        records,
        (*tool_rate_curves(records), *NON_TOOL_RATES.items()),
        "tool-call rates",
        "share of turns",
        shares=True,
    )
    fig.suptitle(run_title(summary, run_dir), fontsize=11)
    fig.tight_layout()
    out = run_dir / "figures" / "training_summary.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def arm_curve(runs_records: list[list[dict]], metric: str, rate: bool) -> tuple[list[int], list[Estimate]]:
    """An arm's curve of `metric`: each seed's rolling mean, then per step the mean over the seeds that logged
    that step with its 95% t interval (no band where only one seed has the step)."""
    by_step: dict[int, list[float]] = defaultdict(list)
    for records in runs_records:
        steps, values = per_step(records, metric)
        for step, value in zip(steps, rolling_mean(values)):
            by_step[step].append(value)
    steps = sorted(by_step)
    return steps, [across_seeds(by_step[s], rate=rate) for s in steps]


def plot_arm_curves(
    ax, arms: dict[str, list[Path]], records: dict[Path, list[dict]], metric: str, colors: dict[str, str], rate: bool
) -> None:
    for label, runs in arms.items():
        steps, estimates = arm_curve([records[run] for run in runs], metric, rate)
        if not steps:
            continue
        ax.plot(steps, [e.mean for e in estimates], marker=".", color=colors[label], label=label)
        ax.fill_between(
            steps, [e.low for e in estimates], [e.high for e in estimates], color=colors[label], alpha=0.2, linewidth=0
        )
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
    found = find_runs(sweep_dir)
    runs = [run for run in found if not is_evaluation_run(run)] or found
    if len(runs) < len(found):  # a base-model evaluation kept beside the training runs is not an arm
        left_out = sorted(run.name for run in set(found) - set(runs))
        logger.info("sweep figure: left out the evaluation-only runs %s", left_out)
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
