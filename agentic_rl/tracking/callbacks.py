"""Hydra callbacks: draw the sweep's comparison figure and report failed jobs when a multirun ends."""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

logger = logging.getLogger(__name__)


class PlotSweepOnEnd(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from agentic_rl.tracking.plots import find_runs, plot_sweep

        sweep_dir = Path(config.hydra.sweep.dir)
        if not find_runs(sweep_dir):
            return
        try:
            logger.info("sweep figure: %s", plot_sweep(sweep_dir))
        except Exception:  # a figure must never turn a finished sweep into a failure
            logger.warning("could not draw the sweep figure; run python -m agentic_rl.plot %s", sweep_dir,
                           exc_info=True)


class ReportSweepFailures(Callback):
    """After the last job: name the failed jobs and the command that reruns only them, and exit non-zero.

    Listed after PlotSweepOnEnd in the config, so the figure of the jobs that finished is drawn first.
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
        logger.error("%d job(s) failed, listed in %s. To run only the missing and failed jobs: %s", len(failures),
                     sweep_dir / FAILURES_FILE, rerun_command(self.entry, sweep_dir))
        sys.exit(1)
