"""Edges of the GRPO maths that the hand-computed cases in test_core.py do not reach.

Written after mutation testing (docs/mutation.md): each test names the edit it was added to catch.
"""
from __future__ import annotations

import torch

from agentic_rl.algo.core import ZERO_STD_TOL, grpo_advantages, group_has_signal


def test_signal_threshold_is_the_population_std_inclusive() -> None:
    """Guards `group_has_signal`: a std of exactly ZERO_STD_TOL has signal (`>=`, not `>`), and the spread is
    the population std (two rewards 1.6e-6 apart: population std 0.8e-6, below the tolerance, while the
    sample std would be 1.13e-6, above it)."""
    at_tol = torch.tensor([0.0, 2 * ZERO_STD_TOL], dtype=torch.float64)
    assert at_tol.std(unbiased=False).item() == ZERO_STD_TOL  # exactly on the boundary
    assert group_has_signal(at_tol)
    below = torch.tensor([0.0, 1.6 * ZERO_STD_TOL], dtype=torch.float64)
    assert not group_has_signal(below)
    assert torch.equal(grpo_advantages(below), torch.zeros(2))
