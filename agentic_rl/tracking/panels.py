"""The panels of the comparison dashboard, defined once: `python -m agentic_rl.dashboard` builds them as a
saved W&B workspace, and `python -m agentic_rl.plot SWEEP_DIR` draws the same panels locally (offline).

Each line panel plots one metric per arm (a job of the sweep) against the training step; the eval panel is
pass@1 per mode after training.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Panel:
    section: str
    title: str
    metric: str  # a metric name as train/evaluate log it (tracking.metrics); "eval/*/pass@1" = one bar group per mode
    ylabel: str


EVAL_PASS_AT_1 = "eval/*/pass@1"


def panels() -> tuple[Panel, ...]:
    """The panels, in order: one tool-use rate per declared tool that a model calls by choice (so a new
    tool gets its curve), the no-call and refused-by-cap rates, learning curves, evaluation."""
    from agentic_rl.tools.base import declared_specs

    tool_use = tuple(
        Panel("Tool use", f"{name} rate", f"tools/{name}_rate", "share of turns")
        for name, spec in declared_specs().items()
        if not spec.final
    )
    return (
        *tool_use,
        Panel("Tool use", "no-call rate", "tools/none_rate", "share of turns"),
        Panel("Tool use", "refused-by-cap rate", "tools/capped_rate", "share of turns"),  # does the cap C bind?
        Panel("Learning", "training pass rate", "train/pass_rate", "share of episodes"),
        Panel("Learning", "training reward", "train/reward_mean", "mean episode reward"),
        Panel("Evaluation", "eval pass@1 per mode", EVAL_PASS_AT_1, "pass@1"),
        Panel("Evaluation", "tampered submissions", "tools/submit/tampered_rate", "share of submissions"),
    )


def panel_sections(of: tuple[Panel, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.section for p in of))
