"""Clean interruption: SIGINT / SIGTERM stop a run at its next safe point instead of mid-step.

While the training loop runs (`guard.deferred()`), a signal only sets a flag; the loop checks it after each
step, saves a checkpoint and raises `RunInterrupted`. Anywhere else (loading, evaluation, saving) there is
nothing half-done worth finishing, so the signal raises `RunInterrupted` at once and the last checkpoint is
the resume point. A second signal exits immediately, without cleanup: the user asked twice.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RunInterrupted(Exception):
    """The run stopped on a signal; `step` is the step its last checkpoint holds (None: not a training run)."""

    def __init__(self, signum: int, run_dir: Path, step: int | None) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum, self.run_dir, self.step = signum, run_dir, step

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # the shell's convention for "killed by signal N": 130 for SIGINT


class InterruptGuard:
    """Installs the SIGINT/SIGTERM handlers for the duration of a `with` block (main thread only)."""

    def __init__(self, run_dir: Path, step: int | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.saved_step = step  # what a resume would start from; updated on every checkpoint
        self.signum: int | None = None
        self._deferring = False
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def interrupted(self) -> RunInterrupted:
        return RunInterrupted(self.signum or signal.SIGINT, self.run_dir, self.saved_step)

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            self._previous = {s: signal.signal(s, self._handle) for s in SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous = {}

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Inside this block a signal waits for the caller's next check of `requested`."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            sys.stderr.write(f"second {signal.Signals(signum).name}: exiting now, without saving\n")
            sys.stderr.flush()
            os._exit(128 + signum)
        self.signum = signum
        if not self._deferring:
            raise self.interrupted()
