"""Readable output: the evaluation bar advances per finished episode; figures carry a title, axis labels,
separate reward and pass-rate axes, a before/after legend and Wilson intervals on pass@1."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pytest

import agentic_rl.evaluation.evaluator as evaluator_module
from agentic_rl.evaluation.evaluator import EvalConfig, evaluate
from agentic_rl.reports.plots import draw_pass_at_1, plot_run, plot_sweep, run_title
from agentic_rl.reports.runs import Estimate
from agentic_rl.reports.stats import wilson_interval
from agentic_rl.rollout.agent import RolloutConfig
from agentic_rl.rollout.policy import ScriptedPolicy
from agentic_rl.tracking.sinks import Tracker
from tests.evaluation.test_evaluator import GOOD, FakeSandbox, compose_cfg, tasks, toolsets


class RecordingBar:
    """Stands in for tqdm: records every update."""

    instances: list[RecordingBar] = []

    def __init__(self, total=0, initial=0, **_):
        self.total, self.n, self.updates = total, initial, []
        RecordingBar.instances.append(self)

    def update(self, n=1):
        self.updates.append(n)
        self.n += n

    def set_postfix(self, **_):
        pass

    def close(self):
        pass


def test_eval_progress_advances_as_each_episode_ends(monkeypatch):
    monkeypatch.setattr(evaluator_module, "tqdm", RecordingBar)
    RecordingBar.instances.clear()

    def script(req):  # task 0 submits at once; the others try code first and submit at their 2nd/3rd turn
        index = int(req.task.task_id.split("/")[1])
        return f"```submit\n{GOOD}\n```" if req.turn_index >= index else "```python\nprint(1)\n```"

    cfg = compose_cfg("evaluator.toolsets.multi_tool.search.backend=docstore")
    evaluate(
        tasks(3),
        ScriptedPolicy(script),
        toolsets(cfg, FakeSandbox(), ["code_only"]),
        RolloutConfig(max_turns=3, max_new_tokens=400),
        EvalConfig(modes=["code_only"], batch_tasks=3),
    )
    bar = RecordingBar.instances[-1]
    assert bar.total == 3 and bar.n == 3
    assert [u for u in bar.updates if u] == [1, 1, 1]  # one episode per turn, all in one generation batch


def test_wilson_interval_matches_hand_computed_values():
    lo, hi = wilson_interval(0, 28)  # z^2/(n+z^2) = 3.8416/31.8416
    assert lo == 0.0 and hi == pytest.approx(0.12065, abs=1e-4)
    lo, hi = wilson_interval(14, 28)
    assert (lo, hi) == (pytest.approx(0.3263, abs=1e-3), pytest.approx(0.6737, abs=1e-3))


def test_pass_at_1_bars_have_legend_labels_and_their_intervals_as_error_bars():
    fig, ax = plt.subplots()
    low, high = wilson_interval(14, 28)
    pass_at_1 = {
        "before": {
            "no_tools": Estimate(0.0, 0.0, 0.12, 28, "tasks"),
            "multi_tool": Estimate(0.25, 0.1, 0.4, 28, "tasks"),
        },
        "after": {
            "no_tools": Estimate(0.5, low, high, 28, "tasks"),
            "last_block": Estimate(0.5, low, high, 28, "tasks"),
        },
    }
    draw_pass_at_1(ax, pass_at_1)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["before training", "after training"]
    assert ax.get_ylabel() == "pass@1 (share of tasks)" and ax.get_xlabel().startswith("evaluation mode")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["no_tools", "multi_tool", "last_block"]
    caps = [c for c in ax.containers if hasattr(c, "lines") and c.lines[1]]  # error bars with caps
    assert len(caps) == 2
    tops = sorted(round(float(y), 3) for c in caps for y in c.lines[1][1].get_ydata())
    assert tops[-1] == pytest.approx(0.674, abs=1e-3)  # upper Wilson bound of 14/28
    assert "Wilson over tasks" in ax.get_title()
    plt.close(fig)


def test_run_figure_has_a_title_and_separate_axes(tmp_path, saved_figures):
    tracker = Tracker(tmp_path)
    for step in range(1, 5):
        tracker.log(
            {
                "train/epoch": 0,
                "train/pass_rate": 0.25 * step,
                "train/reward_mean": -0.1 + 0.3 * step,
                "tools/search_rate": 0.1,
                "tools/execute_rate": 0.2,
                "tools/submit_rate": 0.4,
                "tools/none_rate": 0.3,
            },
            step,
        )
    summary = {
        "model": "tiny-random",
        "tools": "multi",
        "reward": "shaped",
        "n_eval_tasks": 2,
        "eval": {"before": {"multi_tool": {"pass@1": 0.0}}, "after": {"multi_tool": {"pass@1": 0.5}}},
    }
    tracker.summary(summary)
    assert run_title(summary, tmp_path).startswith("model tiny-random | tools multi | reward shaped | run ")
    out = plot_run(tmp_path)
    assert out.is_file() and out.stat().st_size > 10_000
    (fig,) = saved_figures
    assert fig._suptitle.get_text() == run_title(summary, tmp_path)
    labels = [ax.get_ylabel() for ax in fig.axes]  # the three panels, then the reward's own axis on the middle one
    assert labels == ["pass@1 (share of tasks)", "pass rate (share of episodes)", "rate", "mean episode reward"]
    assert all(ax.get_xlabel() for ax in fig.axes)


def test_sweep_figure_draws_every_dashboard_panel(tmp_path, saved_figures):
    from agentic_rl.tracking.panels import panels

    for job, tampered in (("0", 0.0), ("1", 0.5)):
        t = Tracker(tmp_path / job)
        for step in range(1, 4):
            t.log(
                {
                    "train/epoch": 0,
                    "train/pass_rate": 0.5,
                    "train/reward_mean": 0.2,
                    "tools/search_rate": 0.1,
                    "tools/execute_rate": 0.2,
                    "tools/submit_rate": 0.3,
                    "tools/none_rate": 0.4,
                    "tools/submit/tampered_rate": tampered,
                },
                step,
            )
        t.summary({"n_eval_tasks": 4, "eval": {"after": {"multi_tool": {"pass@1": 0.5}}}})
        (tmp_path / job / ".hydra").mkdir()
        tools = "code" if job == "0" else "multi"
        (tmp_path / job / ".hydra" / "overrides.yaml").write_text(json.dumps([f"tools={tools}"]))
    # the base model's evaluation kept beside the jobs (python -m agentic_rl.evaluate): not an arm of the figure
    base = tmp_path / "base"
    (base / ".hydra").mkdir(parents=True)
    (base / ".hydra" / "overrides.yaml").write_text(json.dumps(["data=pipelines-heldout"]))
    (base / "metrics.jsonl").write_text(json.dumps({"step": 0, "eval/multi_tool/pass@1": 0.0}) + "\n")
    (base / "results.jsonl").write_text(json.dumps({"task_id": "a", "mode": "multi_tool", "passed": False}) + "\n")
    out = plot_sweep(tmp_path)
    assert out.is_file()
    (fig,) = saved_figures
    axes = fig.axes
    # the eval panel is drawn once per evaluation phase the runs have (here: after training only)
    assert [ax.get_title() for ax in axes] == [
        f"{p.section}: {p.title}" + (" (after training)" if "*" in p.metric else "") for p in panels()
    ]
    tampered = axes[[p.metric for p in panels()].index("tools/submit/tampered_rate")]
    assert sorted(line.get_label() for line in tampered.lines) == ["tools=code", "tools=multi"]
    assert [line.get_ydata()[-1] for line in tampered.lines] == [0.0, 0.5]
    assert [t.get_text() for t in fig.legends[0].texts] == ["tools=code (1 seed)", "tools=multi (1 seed)"]
