"""`env/calls_vs_oracle` read over training (issue #50: the seed's finding that an episode's calls approach the
oracle's): the table's first- vs last-window section and the figure, from metrics.jsonl files whose course is known;
nothing (and no error) for runs that did not log the ratio; unreadable lines and steps without it skipped and
counted. The assertions read the numbers written and the lines drawn."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agentic_rl.plot import main as plot_main
from agentic_rl.reports.oracle_course import ORACLE_SECTION, RATIO, run_course
from agentic_rl.reports.plots import plot_seeds
from agentic_rl.reports.run_files import read_metrics
from agentic_rl.table import main as table_main

# seed 1 falls from 3x the oracle's calls to 1.2x; seed 2 rises from 0.2x to 0.9x. 8 steps: windows of ceil(8/4) = 2
FALLING = [3.0, 2.6, 2.2, 2.0, 1.8, 1.6, 1.4, 1.2]  # first window 2.8, last 1.3: distance 1.8 -> 0.3
RISING = [0.2, 0.4, 0.5, 0.5, 0.6, 0.7, 0.8, 1.0]  # first window 0.3, last 0.9: distance 0.7 -> 0.1
ORACLE_CALLS = 10.0
T_975_1 = 12.706205  # t(0.975, 1 degree of freedom): the 95% interval of two seeds


def step_line(step: int, ratio: float | None) -> dict:
    """A CodeGym training step as train.py logs it (`envs.metrics.env_metrics`: ratio = calls / oracle calls)."""
    line = {"step": step, "train/epoch": 0, "train/reward_mean": 0.1, "env/success_rate": 0.0}
    if ratio is not None:
        line |= {"env/calls_per_episode": ratio * ORACLE_CALLS, "env/oracle_calls": ORACLE_CALLS, RATIO: ratio}
    return line


def write_run(path: Path, lines: list, seed: int) -> Path:
    """A run dir with its metrics.jsonl (`lines`: dicts, or raw text for a damaged line) and its seed override."""
    path.mkdir(parents=True)
    (path / ".hydra").mkdir()
    (path / ".hydra" / "overrides.yaml").write_text(f"- seed={seed}\n")
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    (path / "metrics.jsonl").write_text("".join(t + "\n" for t in text))
    return path


def codegym_run(path: Path, ratios: list[float], seed: int) -> Path:
    # the evaluation before training logs the ratio under eval/...: not a training step, so not in the course
    evaluation = {"step": 0, "eval/multi_tool/env/calls_vs_oracle": 0.01}
    return write_run(path, [evaluation, *(step_line(i + 1, r) for i, r in enumerate(ratios))], seed)


def code_task_run(path: Path, seed: int) -> Path:
    """A run on code tasks: no `env/` metric at any step."""
    return write_run(path, [{"step": s, "train/epoch": 0, "train/reward_mean": 0.1 * s} for s in (1, 2, 3)], seed)


def tabulate(tmp_path: Path, runs: list[Path]) -> tuple[str, dict]:
    out = tmp_path / "table"
    assert table_main([*map(str, runs), "--out", str(out)]) == 0
    return (out / "table.md").read_text(), json.loads((out / "table.json").read_text())


def section_rows(markdown: str) -> list[str]:
    """The table rows of the calls-vs-oracle section."""
    lines = markdown.split(f"## {ORACLE_SECTION}", 1)[1].split("\n## ", 1)[0].splitlines()
    return [line for line in lines if line.startswith("| ") and not line.startswith("| arm")]


def test_the_table_reads_the_first_and_last_windows_of_a_known_course(tmp_path):
    runs = [codegym_run(tmp_path / "seed-1", FALLING, 1), codegym_run(tmp_path / "seed-2", RISING, 2)]
    markdown, data = tabulate(tmp_path, runs)
    falling, rising, mean = section_rows(markdown)
    assert falling.endswith("| 1 | 8 (2) | 2.800 | 1.300 | 1.800 | 0.300 | -1.500 | 28.00, 13.00 | 10.00, 10.00 | 0 |")
    assert rising.endswith("| 2 | 8 (2) | 0.300 | 0.900 | 0.700 | 0.100 | -0.600 | 3.00, 9.00 | 10.00, 10.00 | 0 |")
    (arm,) = data["calls_vs_oracle"]
    # across seeds: the mean and the t interval of two values, half-width t * |a - b| / 2
    assert arm["first_quarter"]["mean"] == pytest.approx(1.55)
    assert arm["first_quarter"]["high"] == pytest.approx(1.55 + T_975_1 * 1.25)
    assert arm["last_quarter"]["mean"] == pytest.approx(1.1)
    assert arm["gap_change"]["mean"] == pytest.approx(-1.05)
    assert arm["gap_change"]["low"] == pytest.approx(-1.05 - T_975_1 * 0.45)
    assert "| **mean over seeds** | | | 1.550 [" in mean and "| -1.050 [" in mean
    seed_1 = arm["runs"][0]
    assert (seed_1["n_steps"], seed_1["quarter_steps"], seed_1["seed"]) == (8, 2, 1)
    assert seed_1["calls"] == pytest.approx([28.0, 13.0]) and seed_1["oracle"] == pytest.approx([10.0, 10.0])


def test_one_step_is_a_window_of_one(tmp_path):
    course = run_course(codegym_run(tmp_path / "run", [2.5], 1))
    assert (course.steps, course.ratios) == ([1], [2.5])
    markdown, _ = tabulate(tmp_path, [course.run])
    (row, _) = section_rows(markdown)
    assert "| 1 (1) | 2.500 | 2.500 | 1.500 | 1.500 | +0.000 |" in row


def test_runs_without_the_ratio_get_no_section_and_no_figure(tmp_path, capsys):
    runs = [code_task_run(tmp_path / f"seed-{s}", s) for s in (1, 2)]
    markdown, data = tabulate(tmp_path, runs)
    assert ORACLE_SECTION not in markdown and "calls_vs_oracle" not in markdown
    assert data["calls_vs_oracle"] is None
    # the folder's figures (`plot_seeds`, what the command draws over seeds) and a run dir's, by the command
    assert plot_seeds(tmp_path) == [tmp_path / "figures" / "training_summary.png"]
    capsys.readouterr()  # the table command's own output
    assert plot_main([str(runs[0])]) == 0
    assert capsys.readouterr().out.split() == [str(runs[0] / "figures" / "training_summary.png")]
    assert not list(tmp_path.rglob("calls_vs_oracle*.png"))


def test_unreadable_lines_and_steps_without_the_ratio_are_skipped_and_counted(tmp_path, caplog):
    lines = [step_line(i + 1, r) for i, r in enumerate(FALLING)]
    lines[3] = step_line(4, None)  # a training step that logged no ratio (line 4)
    lines[5][RATIO] = None  # one whose ratio is null
    lines.insert(2, '{"step": 3, "train/epoch": 0, "env/calls_vs_')  # a torn line: line 3 of the file
    lines.insert(5, "[1, 2]")  # JSON, not an object: line 6 of the file
    run = write_run(tmp_path / "seed-1", lines, 1)
    assert len(read_metrics(run)) == 8  # the run-files reader leaves out the two lines that are not objects
    with caplog.at_level(logging.WARNING):
        course = run_course(run)
    assert course.missing_steps == [4, 6] and course.bad_lines == [3, 6]
    assert course.ratios == [3.0, 2.6, 2.2, 1.8, 1.4, 1.2]  # the windows are over the steps that logged it
    assert "2 training steps without a numeric value" in caplog.text and "2 lines not a JSON object" in caplog.text
    markdown, _ = tabulate(tmp_path, [run])
    (row, _) = section_rows(markdown)
    # 6 steps: windows of 2, (3.0 + 2.6) / 2 = 2.8 and (1.4 + 1.2) / 2 = 1.3
    assert "| 6 (2) | 2.800 | 1.300 |" in row and row.endswith("| 2 steps, 2 lines |")


def test_the_figure_draws_each_seed_their_band_and_the_oracle(tmp_path, capsys, saved_figures):
    codegym_run(tmp_path / "seed-1", FALLING, 1)
    codegym_run(tmp_path / "seed-2", RISING, 2)
    code_task_run(tmp_path / "code", 3)  # a run of the same arm (seeds differ only) without the ratio: left out
    assert plot_main([str(tmp_path)]) == 0
    printed = capsys.readouterr().out.split()
    oracle = [Path(p) for p in printed if "calls_vs_oracle" in p]
    assert len(oracle) == 1 and oracle[0].parent == tmp_path / "figures" and oracle[0].is_file()
    fig = next(f for f in saved_figures if RATIO in f.get_suptitle())
    left, right = fig.axes[:2]
    lines = {line.get_label(): line for line in left.lines}
    assert "seed-1: 2.800 -> 1.300 (first/last 2 steps)" in lines
    assert "seed-2: 0.300 -> 0.900 (first/last 2 steps)" in lines
    # 8 steps: the rolling window is 1, so the mean line is the per-step mean of the two seeds
    mean = lines["mean over seeds, 95% t band"]
    assert list(mean.get_ydata()) == pytest.approx([(a + b) / 2 for a, b in zip(FALLING, RISING)])
    assert len(left.collections) == 1  # the band over the two seeds
    assert list(lines["the oracle's calls (1.0)"].get_ydata()) == [1.0, 1.0]
    drawn = {line.get_label(): list(line.get_ydata()) for line in right.lines}
    assert drawn["the oracle's calls, same tasks"] == pytest.approx([ORACLE_CALLS] * 8)
    assert drawn["calls per episode (policy)"] == pytest.approx([5 * (a + b) for a, b in zip(FALLING, RISING)])


def test_one_run_dir_gets_its_own_figure(tmp_path, capsys):
    run = codegym_run(tmp_path / "run", FALLING, 1)
    assert plot_main([str(run)]) == 0
    assert str(run / "figures" / "calls_vs_oracle.png") in capsys.readouterr().out.split()
