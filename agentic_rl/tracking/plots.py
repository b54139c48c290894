"""Figures from a run dir (metrics.jsonl + summary.json) or a sweep dir (one run dir per job).

Run: pass@1 per mode before/after training (95% Wilson intervals), training pass rate and reward on
separate axes, and the tool-call rates; the title names model, tools, reward and run. Sweep: tool-rate and pass-rate curves per job
and final pass@1 per mode per job, so ablations are compared at a glance.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import matplotlib
import yaml

matplotlib.use("Agg")  # headless: figures are files
import matplotlib.pyplot as plt  # noqa: E402


def read_metrics(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:  # a half-written last line of an interrupted run
            continue
    return records


def per_step(records: list[dict], key: str) -> tuple[list[int], list[float]]:
    """(steps, values) of a training metric."""
    rows = [(r["step"], r[key]) for r in records if r.get(key) is not None and "train/epoch" in r]
    return [s for s, _ in rows], [v for _, v in rows]


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
    return ([groups[e][-1][0] for e in epochs],
            [sum(v for _, v in groups[e]) / len(groups[e]) for e in epochs])


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion; sound at small n and at 0 or n successes
    (where the normal approximation collapses to a zero-width bar)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


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
        bars = ax.bar(xs, values, width=width, color=PHASE_COLORS[phase], edgecolor="#333",
                      yerr=[lows, highs] if n_tasks else None, capsize=3, label=f"{phase} training")
        for bar, v in zip(bars, values):
            ax.text(bar.get_x() + bar.get_width() / 2, v / 2, f"{v:.0%}", ha="center", fontsize=8)
    ax.set_xticks(range(len(modes)), modes, fontsize=8)
    ax.set_ylim(0, min(1.0, top * 1.15))
    ax.set_xlabel("evaluation mode")
    ax.set_ylabel("pass@1 (share of tasks)")
    ax.set_title(f"held-out pass@1, 95% Wilson CI (n={n_tasks or '?'} tasks)", fontsize=10)
    if phases:
        ax.legend(fontsize=8)


def plot_curves(ax, records: list[dict], keys: tuple[tuple[str, str], ...], title: str, ylabel: str,
                shares: bool = False) -> None:
    """Per-step rolling means with epoch means as dots, one line per metric."""
    for key, label in keys:
        steps, values = per_step(records, key)
        if not steps:
            continue
        line, = ax.plot(steps, rolling_mean(values), label=f"{label} (rolling mean)")
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
    """(metric, label) of every tool-call rate the run logged, declared tools first in their order."""
    from agentic_rl.tools.base import tool_names

    logged = {key for r in records for key in r
              if key.startswith("tools/") and key.endswith("_rate") and key.count("/") == 1}
    names = [n for n in tool_names() if f"tools/{n}_rate" in logged]
    names += sorted(k[len("tools/"):-len("_rate")] for k in logged
                    if k[len("tools/"):-len("_rate")] not in names and k != "tools/none_rate")
    return tuple((f"tools/{n}_rate", n) for n in names)


def plot_run(run_dir: Path) -> Path:
    """figures/training_summary.png: pass@1 before/after, training pass rate, reward, tool rates."""
    run_dir = Path(run_dir)
    records = read_metrics(run_dir)
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    fig, axes = plt.subplots(1, 4, figsize=(22, 5))
    plot_pass_at_1_bars(axes[0], summary.get("eval", {}), summary.get("n_eval_tasks"))
    plot_curves(axes[1], records, (("train/pass_rate", "pass rate"),), "training pass rate",
                "pass rate (share of episodes)", shares=True)
    plot_curves(axes[2], records, (("train/reward_mean", "mean reward"),), "training reward",
                "mean episode reward")
    plot_curves(axes[3], records, (*tool_rate_curves(records), ("tools/none_rate", "no call")), "tool-call rates", "share of turns", shares=True)
    fig.suptitle(run_title(summary, run_dir), fontsize=11)
    fig.tight_layout()
    out = run_dir / "figures" / "training_summary.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def find_runs(sweep_dir: Path) -> list[Path]:
    return sorted(p.parent for p in Path(sweep_dir).glob("*/metrics.jsonl"))


def job_labels(runs: list[Path]) -> dict[Path, str]:
    """Label each job by the overrides that differ between the jobs (e.g. `tools=code`)."""
    overrides = {}
    for run in runs:
        path = run / ".hydra" / "overrides.yaml"
        overrides[run] = set(yaml.safe_load(path.read_text()) or []) if path.is_file() else set()
    common = set.intersection(*overrides.values()) if overrides else set()
    return {run: ",".join(sorted(o - common)) or run.name for run, o in overrides.items()}


def eval_after(run: Path) -> dict:
    path = run / "summary.json"
    return (json.loads(path.read_text()).get("eval", {}).get("after") or {}) if path.is_file() else {}


def plot_sweep(sweep_dir: Path) -> Path:
    """figures/sweep_summary.png: the dashboard's panels (`tracking.panels`), one line or bar per job."""
    from agentic_rl.tracking.panels import EVAL_PASS_AT_1, panels

    sweep_dir = Path(sweep_dir)
    runs = find_runs(sweep_dir)
    labels = job_labels(runs)
    records = {run: read_metrics(run) for run in runs}
    cols = 4
    all_panels = panels()
    fig, axes = plt.subplots(-(-len(all_panels) // cols), cols, figsize=(22, 9), squeeze=False)
    for ax, panel in zip(axes.flat, all_panels):
        if panel.metric == EVAL_PASS_AT_1:
            plot_eval_per_job(ax, runs, labels)
        else:
            for run in runs:
                steps, values = per_step(records[run], panel.metric)
                if steps:
                    ax.plot(steps, rolling_mean(values), marker=".", label=labels[run])
            ax.set_xlabel("training step (one task group each)")
            ax.grid(alpha=0.3)
            if panel.ylabel.startswith("share"):  # rates on their full scale
                ax.set_ylim(-0.02, 1.02)
            if not ax.lines:
                ax.text(0.5, 0.5, f"{panel.metric}\nnot logged by these runs", ha="center", va="center",
                        transform=ax.transAxes, fontsize=8)
        ax.set_title(f"{panel.section}: {panel.title}", fontsize=10)
        ax.set_ylabel(panel.ylabel)
        if ax.lines or ax.patches:
            ax.legend(fontsize=7)
    fig.suptitle(f"sweep {sweep_dir.resolve().parent.name}/{sweep_dir.name}: {len(runs)} jobs "
                 "(curves: rolling means per step)", fontsize=11)
    fig.tight_layout()
    out = sweep_dir / "figures" / "sweep_summary.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_eval_per_job(ax, runs: list[Path], labels: dict[Path, str]) -> None:
    """pass@1 after training per mode, one bar per job, with 95% Wilson intervals."""
    afters = {run: eval_after(run) for run in runs}
    modes = list(dict.fromkeys(m for after in afters.values() for m in after))
    width = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        summary_path = run / "summary.json"
        n = json.loads(summary_path.read_text()).get("n_eval_tasks") if summary_path.is_file() else None
        values = [afters[run].get(m, {}).get("pass@1", 0.0) for m in modes]
        errs = [[v - wilson_interval(v * n, n)[0] for v in values], [wilson_interval(v * n, n)[1] - v for v in values]] \
            if n else None
        ax.bar([j + i * width for j in range(len(modes))], values, width=width, yerr=errs, capsize=3,
               label=labels[run])
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(modes))], modes, fontsize=8)
    ax.set_xlabel("evaluation mode (after training)")
