"""Fixtures of the reports tests."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest


@pytest.fixture
def saved_figures(monkeypatch) -> list:
    """The figures saved while the test runs, in order (each still written to its file), so a test can read the
    axes, lines and texts that were drawn rather than the pixels."""
    saved: list = []
    real_savefig = plt.Figure.savefig

    def keep(fig, *args, **kwargs):
        saved.append(fig)
        return real_savefig(fig, *args, **kwargs)

    monkeypatch.setattr(plt.Figure, "savefig", keep)
    return saved
