"""What an evaluation run reports: the per-mode summary, the environment report, the figure and the table.

`summary.json` holds, per mode, pass@k, the tool-usage metrics and the outcome counts (timeouts, errors,
no submission, no sample, the full status histogram); the excluded tasks; and the environment's report on its
task set (`Environment.report`; BigCodeBench's is in agentic_rl.envs.reports).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # headless: figures are files
import matplotlib.pyplot as plt  # noqa: E402

from agentic_rl.evaluation.evaluator import ModeResult  # noqa: E402
from agentic_rl.evaluation.records import ERROR_STATUSES  # noqa: E402
from agentic_rl.tools.base import tool_names  # noqa: E402
from agentic_rl.tracking.metrics import NON_TOOL_RATES  # noqa: E402

logger = logging.getLogger(__name__)

FIGURE = "figures/eval_summary.png"
PASS_AT = re.compile(r"^pass@(\d+)$")


def mode_summary(res: ModeResult) -> dict[str, Any]:
    """pass@k, tool metrics and outcome counts of one mode."""
    statuses = Counter(r["status"] for r in res.records)
    return {
        **{f"pass@{k}": v for k, v in res.pass_at.items()},
        **res.metrics,
        "n_tasks": res.n_tasks,
        "n_episodes": len(res.records),
        "n_passed": statuses.get("passed", 0),
        "timeouts": statuses.get("timeout", 0),
        "errors": sum(statuses.get(s, 0) for s in ERROR_STATUSES),
        "no_submission": statuses.get("no_submission", 0),
        "no_sample": statuses.get("no_sample", 0),
        # episodes with a submission the sandbox graded `tampered` (reward hacking caught in the act)
        "tampered": sum(r.get("tampered_submissions", 0) > 0 for r in res.records),
        "statuses": dict(sorted(statuses.items())),
    }


def plot_eval_summary(summary: dict[str, Any], out: Path) -> Path:
    """Two panels: pass@k per mode (one bar per k), and tool calls per episode per mode (stacked by tool)."""
    modes = list(summary.get("eval", {}))
    per_mode = summary.get("eval", {})
    ks = pass_ks(per_mode)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))

    ax = axes[0]
    width = 0.8 / max(len(ks), 1)
    top = 0.0
    for i, k in enumerate(ks):
        values = [per_mode[m].get(f"pass@{k}", 0.0) for m in modes]
        xs = [j + (i - (len(ks) - 1) / 2) * width for j in range(len(modes))]
        bars = ax.bar(xs, values, width=width, label=f"pass@{k}", edgecolor="#333")
        for bar, v in zip(bars, values):
            ax.text(bar.get_x() + bar.get_width() / 2, v + 0.01, f"{v:.1%}", ha="center", fontsize=8)
        top = max([top, *values])
    ax.set_xticks(range(len(modes)), modes)
    ax.set_ylim(0, max(top * 1.2, 0.1))
    ax.set_ylabel("pass rate")
    n = summary.get("n_tasks", "?")
    greedy = " + greedy" if summary.get("greedy") else ""
    ax.set_title(f"pass@k per mode ({n} tasks, {summary.get('n_samples', 1)} sample(s) each{greedy})")
    if len(ks) > 1:
        ax.legend()

    ax = axes[1]
    bottom = [0.0] * len(modes)
    colors = dict(zip(tool_names(), plt.get_cmap("tab10").colors))
    for name in reported_tools(per_mode):
        vals = [per_mode[m].get(f"tools/{name}_rate", 0.0) * per_mode[m].get("rollout/turns_mean", 0.0) for m in modes]
        ax.bar(range(len(modes)), vals, bottom=bottom, label=name, color=colors.get(name), edgecolor="#333")
        bottom = [b + v for b, v in zip(bottom, vals)]
    for j, total in enumerate(bottom):
        ax.text(j, total + 0.02, f"{total:.2f}", ha="center", fontsize=8)
    ax.set_xticks(range(len(modes)), modes)
    ax.set_ylim(0, max(max(bottom, default=0) * 1.2, 1.0))
    ax.set_ylabel("tool calls per episode")
    ax.set_title("tool calls per mode (no_tools: the answer is graded, no call)")
    ax.legend()

    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def pass_ks(per_mode: dict[str, dict[str, Any]]) -> list[int]:
    """The k of every overall `pass@k` in the summaries (not the per task type `pass@1/<type>`)."""
    return sorted({int(m.group(1)) for mode in per_mode.values() for key in mode if (m := PASS_AT.match(key))})


def reported_tools(per_mode: dict[str, dict[str, Any]]) -> list[str]:
    """The tools with a call rate in any mode's metrics: every declared tool, in declaration order,
    then any other tool a summary from elsewhere records (never silently dropped)."""
    present = {
        key[len("tools/") : -len("_rate")]
        for m in per_mode.values()
        for key in m
        if key.startswith("tools/") and key.endswith("_rate") and key.count("/") == 1 and key not in NON_TOOL_RATES
    }
    return [n for n in tool_names() if n in present] + sorted(present - set(tool_names()))


def format_table(summary: dict[str, Any]) -> str:
    """A plain-text table of the per-mode results (what the CLI prints at the end)."""
    per_mode = summary.get("eval", {})
    ks = pass_ks(per_mode)
    tools = reported_tools(per_mode)
    greedy = any("greedy_pass@1" in m for m in per_mode.values())
    head = ["mode", *[f"pass@{k}" for k in ks], *["greedy"] * greedy, "passed", "calls/ep", *tools]
    head += ["timeouts", "errors", "no_sub"]
    rows = [head]
    for mode, m in per_mode.items():
        rows.append(
            [
                mode,
                *[f"{m.get(f'pass@{k}', 0.0):.3f}" for k in ks],
                *[f"{m['greedy_pass@1']:.3f}" if "greedy_pass@1" in m else "-"] * greedy,
                f"{m['n_passed']}/{m['n_episodes']}",
                f"{m.get('tools/calls_per_episode', 0.0):.2f}",
                *[f"{m.get(f'tools/{t}_rate', 0.0):.2f}" for t in tools],
                str(m["timeouts"]),
                str(m["errors"]),
                str(m["no_submission"] + m["no_sample"]),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
