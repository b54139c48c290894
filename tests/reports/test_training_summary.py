"""The notebook's three-panel figure from a run's own files (issue #46): pass@1 per mode before and after with 95%
intervals over tasks (format baselines included), training pass rate and reward, and tool rates with search drawn
apart for `docs` tasks and for the others, from the per-type keys; over seeds, mean and band, never clipped in the
numbers. The assertions read the data the figure draws (`summary_data`) and the lines drawn."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from agentic_rl.plot import main as plot_main
from agentic_rl.reports.plots import arm_curve, draw_summary, plot_run, plot_seeds, summary_data
from agentic_rl.reports.runs import across_seeds
from agentic_rl.reports.stats import task_rate

# step -> the step's task type and its typed search rate; the overall tools/search_rate is a decoy (0.5 throughout)
TYPES = {1: ("docs", 0.9), 2: ("plain", 0.1), 3: ("exec", 0.2), 4: ("docs", 0.7), 5: ("plain", 0.0), 6: ("exec", 0.3)}


def make_run(path: Path, seed: int = 1, types: dict[int, tuple[str, float]] = TYPES, scale: float = 1.0) -> Path:
    """A run dir as a training run leaves it: metrics.jsonl with per-type metrics, summary.json, and the records of
    both evaluations (a greedy episode and two samples per task; the format baselines among the modes)."""
    path.mkdir(parents=True)
    (path / ".hydra").mkdir()
    (path / ".hydra" / "overrides.yaml").write_text(f"- seed={seed}\n")
    lines = []
    for step, (kind, search) in types.items():
        lines.append(
            {
                "step": step,
                "train/epoch": 0,
                "train/pass_rate": 0.1 * step * scale,
                "train/reward_mean": 0.05 * step,
                "tools/search_rate": 0.5,
                "tools/execute_rate": 0.2,
                "tools/submit_rate": 0.3,
                "tools/none_rate": 0.0,
                f"train/pass_rate/{kind}": 0.5,
                f"tools/search_rate/{kind}": search * scale,
                f"tools/search_episodes/{kind}": 1.0,
            }
        )
    (path / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    phases = {
        "before": {"no_tools": {"a"}, "multi_tool": set(), "last_block": {"a", "b"}, "forced_submit": {"b"}},
        "after": {"no_tools": {"a"}, "multi_tool": {"a", "b", "c"}, "last_block": {"a", "b", "c"}},
    }
    for phase, passing in phases.items():
        rows = [
            {"task_id": t, "mode": m, "sample": s, "greedy": s == 0, "passed": t in passed and s != 2 or s == 0}
            for m, passed in passing.items()
            for t in ("a", "b", "c", "d")
            for s in (0, 1, 2)
        ]
        (path / f"eval_{phase}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = {"model": "tiny", "tools": "multi", "n_eval_tasks": 4, "eval": {"after": {"multi_tool": {"pass@1": 0.9}}}}
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def curve(data, label_start: str):
    return next(c for c in data.tools if c.label.startswith(label_start))


def test_search_is_split_by_task_type_from_the_typed_keys(tmp_path):
    data = summary_data([make_run(tmp_path / "run")])
    labels = [c.label for c in data.tools]
    assert labels == [
        "search, docs tasks (share of turns)",
        "search, other tasks (share of turns)",
        "execute (share of turns)",
        "submit (share of turns)",
    ]
    docs, other = curve(data, "search, docs"), curve(data, "search, other")
    # 2 docs steps and 4 other steps: the rolling window (a tenth of the steps) is 1, so the values are the logged ones
    assert (docs.steps, docs.means) == ([1, 4], pytest.approx([0.9, 0.7]))
    assert (other.steps, other.means) == ([2, 3, 5, 6], pytest.approx([0.1, 0.2, 0.0, 0.3]))
    assert curve(data, "submit").means == pytest.approx([0.3] * 6)
    rate, reward = data.learning
    assert rate.means == pytest.approx([0.1 * s for s in range(1, 7)]) and not reward.share
    assert reward.means == pytest.approx([0.05 * s for s in range(1, 7)])


def test_pass_at_1_bars_are_task_level_from_the_records_with_the_format_baselines(tmp_path):
    """The bars come from eval_before/after.jsonl, not summary.json's 0.9: each task's mean over its samples (the
    greedy episode, passing everywhere here, left out), the Wilson interval over the 4 tasks."""
    data = summary_data([make_run(tmp_path / "run")])
    assert list(data.pass_at_1["before"]) == ["no_tools", "multi_tool", "last_block", "forced_submit"]
    after = data.pass_at_1["after"]["multi_tool"]
    expected = task_rate([(t, t in "abc" and s == 1) for t in "abcd" for s in (1, 2)])  # 3 tasks pass 1 sample of 2
    assert (after.mean, after.low, after.high, after.n) == pytest.approx((0.375, expected["low"], expected["high"], 4))
    assert data.pass_at_1["after"]["last_block"].mean == pytest.approx(0.375)
    assert data.pass_at_1["before"]["multi_tool"].mean == 0.0


def test_the_run_figure_draws_the_three_panels_from_that_data(tmp_path, saved_figures):
    run = make_run(tmp_path / "run")
    out = plot_run(run)
    assert out == run / "figures" / "training_summary.png" and out.read_bytes()[:4] == b"\x89PNG"
    ((bars, learning, tools, reward_axis),) = [fig.axes for fig in saved_figures]
    drawn = {line.get_label(): list(line.get_ydata()) for line in tools.lines}
    assert drawn["search, docs tasks (share of turns)"] == pytest.approx([0.9, 0.7])
    assert drawn["search, other tasks (share of turns)"] == pytest.approx([0.1, 0.2, 0.0, 0.3])
    assert [t.get_text() for t in bars.get_xticklabels()] == ["no_tools", "multi_tool", "last_block", "forced_submit"]
    assert [line.get_label() for line in reward_axis.lines] == ["mean reward"]


def test_over_seeds_the_curves_are_mean_and_band_and_the_band_is_not_clipped(tmp_path):
    """Two seeds whose docs steps differ: each seed's moving average is carried to the other's docs steps, and the
    figure holds the mean over both with the t interval; pass rates 0.1·s and 0.3·s give a band below 0 that the
    numbers keep and only the drawing clips, saying so."""
    other_types = {1: ("plain", 0.0), 2: ("docs", 0.5), 3: ("docs", 0.3), 4: ("exec", 0.1), 5: ("docs", 0.1)}
    runs = [make_run(tmp_path / "seed-1", 1), make_run(tmp_path / "seed-2", 2, other_types, scale=3.0)]
    data = summary_data(runs)
    docs = curve(data, "search, docs")
    # seed 1: 0.9 at step 1, 0.7 at 4; seed 2 (x3): 1.5 at 2, 0.9 at 3, 0.3 at 5 (window 1: the logged values)
    assert docs.steps == [1, 2, 3, 4, 5]  # the docs steps of either seed
    assert docs.means == pytest.approx([0.9, (0.9 + 1.5) / 2, (0.9 + 0.9) / 2, (0.7 + 0.9) / 2, (0.7 + 0.3) / 2])
    assert [e.n for e in docs.estimates] == [1, 2, 2, 2, 2]
    assert docs.estimates[1].high > 1.0  # a band past 1 kept in the numbers
    rate = data.learning[0]
    by_hand = across_seeds([0.1, 0.3])  # 0.2 -+ 12.706 * 0.1414 / sqrt(2): [-1.071, 1.471]
    assert (rate.estimates[0].low, rate.estimates[0].high) == pytest.approx((by_hand.low, by_hand.high))
    assert rate.estimates[0].low == pytest.approx(0.2 - 12.706205 * 0.1) and rate.estimates[0].low < 0
    fig_path = draw_summary(data, "two seeds", tmp_path / "out.png")
    assert fig_path.is_file()
    written = plot_seeds(tmp_path)
    assert written == [tmp_path / "figures" / "training_summary.png"]


def test_the_band_is_clipped_only_in_the_drawing_with_a_note(tmp_path):
    records = [[{"step": 1, "train/epoch": 0, "m": v}] for v in (0.0, 1.0)]
    steps, (estimate,) = arm_curve(records, "m")
    assert estimate.low < 0 and estimate.high > 1  # the t interval of 2 seeds, unclipped
    from agentic_rl.reports.plots import CLIP_NOTE, draw_band, note_clipped

    fig, ax = plt.subplots()
    clipped = draw_band(ax, [1, 2], [estimate, estimate], share=True, label="m")
    note_clipped(ax, clipped)
    (band,) = ax.collections
    ys = band.get_paths()[0].vertices[:, 1]
    assert clipped and ys.min() == 0.0 and ys.max() == 1.0
    assert CLIP_NOTE in [t.get_text() for t in ax.texts]
    plt.close(fig)


def test_the_plot_command_draws_each_run_and_the_seeds_figure(tmp_path, capsys):
    for seed in (1, 2):
        make_run(tmp_path / f"seed-{seed}", seed)
    assert plot_main([str(tmp_path)]) == 0
    printed = capsys.readouterr().out.split()
    assert str(tmp_path / "figures" / "training_summary.png") in printed
    assert str(tmp_path / "seed-1" / "figures" / "training_summary.png") in printed
