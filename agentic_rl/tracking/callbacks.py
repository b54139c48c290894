"""Hydra callbacks: draw the sweep's comparison figure when a multirun ends."""
from __future__ import annotations

import logging
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
