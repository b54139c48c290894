"""A stand-in for `train.Training` in tests that drive the loop's pieces (`train_on_chunk`, `train_loop`) without a
model: every field of the real dataclass is there (None unless the test gives it), so a field the loop starts
reading exists in every fake at once instead of failing one test file at a time."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

from agentic_rl.train import Training

# one process: no data parallelism, the step's metrics as they are, every task this rank's
SINGLE_PROCESS = SimpleNamespace(
    data_parallel=lambda step: step,
    reduce_step=lambda metrics, model: metrics,
    shard=lambda order: order,
    is_main=True,
)


def fake_training(**given: Any) -> SimpleNamespace:
    """`Training`'s fields, None where `given` has none, one process (`SINGLE_PROCESS`) unless `dist` is given.
    Derived values the real class computes (`n_steps`) are given by the test where the loop reads them."""
    fields = {field.name: None for field in dataclasses.fields(Training)}
    unknown = sorted(set(given) - set(fields) - {"n_steps"})
    if unknown:
        raise TypeError(f"Training has no field(s) {unknown}: the fake would hide a renamed field")
    return SimpleNamespace(**{**fields, "dist": SINGLE_PROCESS, **given})
