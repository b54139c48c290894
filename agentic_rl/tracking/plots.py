"""Figures from a run dir (metrics.jsonl + summary.json) or a sweep dir (one run dir per job).

Run: the reference notebook's three panels — pass@1 per mode before/after training, training pass rate
and reward per epoch, search and submit rate per epoch. Sweep: tool-rate and pass-rate curves per job
and final pass@1 per mode per job, so ablations are compared at a glance.
"""
from __future__ import annotations

import json
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
    run_dir = Path(run_dir)
    records = read_metrics(run_dir)
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))

    ax = axes[0]
    labels, values, colors = [], [], []
    evals = summary.get("eval", {})
    modes = list(dict.fromkeys(m for phase in ("before", "after") for m in (evals.get(phase) or {})))
    for mode in modes:  # before/after side by side for each mode
        for phase, color in (("before", "#90a4ae"), ("after", "#43a047")):
            if mode in (evals.get(phase) or {}):
                labels.append(f"{mode}\n({phase})")
                values.append(evals[phase][mode].get("pass@1", 0.0))
                colors.append(color)
    if values:
        bars = ax.bar(range(len(values)), values, color=colors, edgecolor="#333")
        ax.set_xticks(range(len(values)), labels, fontsize=8)
        for bar, v in zip(bars, values):
            ax.text(bar.get_x() + bar.get_width() / 2, v + 0.005, f"{v:.1%}", ha="center", fontsize=9)
        ax.set_ylim(0, max(max(values) * 1.3, 0.1))
    else:
        ax.text(0.5, 0.5, "no evaluation in this run", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel("pass@1")
    ax.set_title(f"held-out pass@1 per mode (n={summary.get('n_eval_tasks', '?')})")

    curves = ((axes[1], "training pass rate and reward", (("train/pass_rate", "pass rate"),
                                                          ("train/reward_mean", "mean reward"))),
              (axes[2], "tool-call rates (share of turns)", tool_rate_curves(records)))
    for ax, title, keys in curves:
        for key, label in keys:
            steps, values = per_step(records, key)
            if not steps:
                continue
            line, = ax.plot(steps, rolling_mean(values), label=f"{label} (rolling mean)")
            xs, ys = per_epoch_end(records, key)
            ax.plot(xs, ys, "o", color=line.get_color(), label=f"{label} (epoch mean)")
        ax.set_xlabel("training step (one task group each)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)

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


def plot_sweep(sweep_dir: Path) -> Path:
    sweep_dir = Path(sweep_dir)
    runs = find_runs(sweep_dir)
    labels = job_labels(runs)
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    for run in runs:
        records = read_metrics(run)
        name = labels[run]
        for ax, key in ((axes[0], "train/pass_rate"), (axes[1], "tools/calls_per_episode")):
            steps = [r["step"] for r in records if r.get(key) is not None and "train/epoch" in r]
            vals = [r[key] for r in records if r.get(key) is not None and "train/epoch" in r]
            if steps:
                ax.plot(steps, vals, marker=".", label=name)
    axes[0].set_title("training pass rate per step")
    axes[1].set_title("tool calls per episode per step")
    for ax in axes[:2]:
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    ax = axes[2]
    width = 0.8 / max(len(runs), 1)
    modes: list[str] = []
    for i, run in enumerate(runs):
        s_path = run / "summary.json"
        after = (json.loads(s_path.read_text()).get("eval", {}).get("after") or {}) if s_path.is_file() else {}
        modes = modes or list(after)
        ax.bar([j + i * width for j in range(len(modes))], [after.get(m, {}).get("pass@1", 0.0) for m in modes],
               width=width, label=labels[run])
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(modes))], modes)
    ax.set_title("pass@1 after training, per job")
    if runs:
        ax.legend(fontsize=7)
    fig.tight_layout()
    out = sweep_dir / "figures" / "sweep_summary.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
