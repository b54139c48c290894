"""Hydra callbacks: draw the sweep's comparison figure, write its tables and report failed jobs when a multirun
ends."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

logger = logging.getLogger(__name__)


class SweepOutputOnEnd(Callback):
    """Writes one output of a finished sweep from its job dirs. A figure or table must never turn a finished sweep
    into a failure: an error is logged with the command that writes the output again."""

    what = "output"
    command = "agentic_rl.plot"

    def write(self, sweep_dir: Path) -> Any:
        raise NotImplementedError

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from agentic_rl.reports.run_files import find_runs

        sweep_dir = Path(config.hydra.sweep.dir)
        if not find_runs(sweep_dir):
            return
        try:
            logger.info("sweep %s: %s", self.what, self.write(sweep_dir))
        except Exception:
            logger.warning(
                "could not write the sweep %s; run python -m %s %s", self.what, self.command, sweep_dir, exc_info=True
            )


class PlotSweepOnEnd(SweepOutputOnEnd):
    """<sweep dir>/figures/sweep_summary.png and each arm's training_summary figure (reports/plots.py)."""

    what, command = "figure", "agentic_rl.plot"

    def write(self, sweep_dir: Path) -> Path:
        from agentic_rl.reports.plots import plot_seeds, plot_sweep

        plot_seeds(sweep_dir)  # the three-panel figure per arm, over its seeds
        return plot_sweep(sweep_dir)


class TabulateSweepOnEnd(SweepOutputOnEnd):
    """<sweep dir>/table.md and table.json: per arm, its seeds' numbers with 95% CIs (reports/tables.py)."""

    what, command = "tables", "agentic_rl.table"

    def write(self, sweep_dir: Path) -> str:
        from agentic_rl.reports.tables import write_table

        return ", ".join(map(str, write_table([sweep_dir])))


class ReportSweepFailures(Callback):
    """After the last job: name the failed jobs and the command that reruns only them, and exit non-zero.

    Listed after PlotSweepOnEnd and TabulateSweepOnEnd in the config, so the figure and tables of the jobs that
    finished are written first.
    `entry` is the module the sweep ran (`agentic_rl.train`).
    """

    def __init__(self, entry: str = "agentic_rl.train") -> None:
        self.entry = entry

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from agentic_rl.runtime.jobs import FAILURES_FILE, read_failures, rerun_command

        sweep_dir = Path(config.hydra.sweep.dir)
        failures = read_failures(sweep_dir)
        if not failures:
            return
        for num, failure in sorted(failures.items()):
            logger.error("job %s failed: %s (%s)", num, failure["error"], failure["details"])
        logger.error(
            "%d job(s) failed, listed in %s. To run only the missing and failed jobs: %s",
            len(failures),
            sweep_dir / FAILURES_FILE,
            rerun_command(self.entry, sweep_dir),
        )
        sys.exit(1)
