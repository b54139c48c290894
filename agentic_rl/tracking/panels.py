"""The panels of the comparison dashboard, defined once: `python -m agentic_rl.dashboard` builds them as a
saved W&B workspace, and `python -m agentic_rl.plot SWEEP_DIR` draws the same panels locally (offline).

Each line panel plots one metric per arm (a job of the sweep) against the training step; the eval panel is
pass@1 per mode after training. The tool-use panels are those of the tools the runs' episodes declared (read
from what they logged, `logged_tools`): a CodeGym environment's own tools appear under their names, in an
"Environment tools" section apart from the shared tools, with the `env/` panels beside them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Panel:
    section: str
    title: str
    metric: str  # a metric name as train/evaluate log it (tracking.metrics); "eval/*/pass@1" = one bar group per mode
    ylabel: str


EVAL_PASS_AT_1 = "eval/*/pass@1"
ENV_PANELS = (
    Panel("Environment", "success rate", "env/success_rate", "share of episodes"),
    Panel("Environment", "calls per episode", "env/calls_per_episode", "calls"),
    Panel("Environment", "invalid-call rate", "env/invalid_call_rate", "share of calls"),
    Panel("Environment", "T_max hits", "env/t_max_rate", "share of episodes"),
)


def logged_tools(records: Iterable[dict]) -> tuple[str, ...]:
    """The tool names the runs' episodes declared, as logged (`tools/<name>_rate`), in first-logged order."""
    from agentic_rl.tracking.metrics import NON_TOOL_RATES

    keys = (k for r in records for k in r if k.startswith("tools/") and k.endswith("_rate") and k.count("/") == 1)
    return tuple(dict.fromkeys(k[len("tools/") : -len("_rate")] for k in keys if k not in NON_TOOL_RATES))


def panels(tools: Sequence[str] | None = None, env: bool = False) -> tuple[Panel, ...]:
    """The panels, in order: one tool-use rate per tool, the no-call and refused-by-cap rates, learning
    curves, evaluation, and with `env` the CodeGym `env/` panels.

    tools: the names the runs' episodes declared (`logged_tools`); a name without a shared tool spec (an
    environment's own tool) goes to the "Environment tools" section. None: every shared tool that a model
    calls by choice (a dashboard built before any run).
    """
    from agentic_rl.tools.base import declared_specs

    specs = declared_specs()
    if tools is None:
        tools = [name for name, spec in specs.items() if not spec.final]
    tool_use = tuple(
        Panel(
            "Tool use" if name in specs else "Environment tools", f"{name} rate", f"tools/{name}_rate", "share of turns"
        )
        for name in tools
        if name not in specs or not specs[name].final
    )
    return (
        *(p for p in tool_use if p.section == "Tool use"),
        Panel("Tool use", "no-call rate", "tools/none_rate", "share of turns"),
        Panel("Tool use", "refused-by-cap rate", "tools/capped_rate", "share of turns"),  # does the cap C bind?
        Panel("Learning", "training pass rate", "train/pass_rate", "share of episodes"),
        Panel("Learning", "training reward", "train/reward_mean", "mean episode reward"),
        Panel("Evaluation", "eval pass@1 per mode", EVAL_PASS_AT_1, "pass@1"),
        Panel("Evaluation", "tampered submissions", "tools/submit/tampered_rate", "share of submissions"),
        *(ENV_PANELS if env else ()),
        *(p for p in tool_use if p.section == "Environment tools"),
    )


def panel_sections(of: tuple[Panel, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.section for p in of))
