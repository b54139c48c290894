"""`python -m agentic_rl.dashboard`: a saved W&B workspace with the panels researchers came for.

    pip install 'agentic_rl[dashboard]'          # the wandb-workspaces library
    wandb login                                  # a saved workspace lives on the W&B server
    python -m agentic_rl.dashboard --entity ME --project agentic_rl [--sweep tools-2026-11-30_17-40-00]

Sections and panels come from `agentic_rl.tracking.panels` (the same ones `python -m agentic_rl.plot
SWEEP_DIR` draws offline): tool-rate curves (search / execute / submit / none) per arm, reward and pass-rate
curves, eval pass@1 per mode and the tampered-submission rate. Curves are plotted against `train/step` and
grouped by W&B group (the arm, seed excluded), so the seeds of one arm form one line with a band. With
`--sweep` the workspace shows one sweep (its runs' `sweep:<id>` tag); `--dry-run` prints the panels without any
network. `--tools-from RUN_DIR ...` takes the tool panels from the tools those runs' episodes declared (their
metrics.jsonl), so a CodeGym environment's own tools get panels under their names, with the `env/` panels;
without it the panels are those of the shared tools.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from agentic_rl.tracking.panels import EVAL_PASS_AT_1, Panel, logged_tools, panel_sections, panels
from agentic_rl.tracking.wandb_run import STEP_METRIC

logger = logging.getLogger(__name__)
EVAL_MODES = ("no_tools", "code_only", "multi_tool")


def _require_workspaces() -> tuple[Any, Any]:
    try:
        import wandb_workspaces.reports.v2 as wr
        import wandb_workspaces.workspaces as ws
    except ImportError:
        raise SystemExit(
            "the dashboard needs the wandb-workspaces library: pip install 'agentic_rl[dashboard]' "
            "(offline, draw the same panels with: python -m agentic_rl.plot SWEEP_DIR)"
        ) from None
    return ws, wr


def panel_spec(panel: Panel, wr: Any) -> Any:
    if panel.metric == EVAL_PASS_AT_1:
        return wr.BarPlot(
            title=panel.title,
            metrics=[f"eval/{mode}/pass@1" for mode in EVAL_MODES],
            orientation="v",
            title_y=panel.ylabel,
            groupby="Group",
            groupby_aggfunc="mean",
            groupby_rangefunc="stderr",
        )
    return wr.LinePlot(
        title=panel.title,
        x=STEP_METRIC,
        y=[panel.metric],
        title_x="training step",
        title_y=panel.ylabel,
        groupby="Group",
        groupby_aggfunc="mean",
        groupby_rangefunc="stderr",
        smoothing_factor=0.6,
        smoothing_type="exponential",
    )


def panels_of_runs(run_dirs: list[str]) -> tuple[Panel, ...]:
    """The panels of the tools the episodes of `run_dirs` declared (as they logged them), and the `env/` panels
    when they stepped CodeGym environments."""
    from agentic_rl.reports.run_files import read_metrics

    records = [r for d in run_dirs for r in read_metrics(Path(d))]
    if not records:
        raise SystemExit(f"--tools-from: no metrics.jsonl records in {run_dirs}; give training run dirs")
    return panels(logged_tools(records), env=any("env/success_rate" in r for r in records))


def build_workspace(
    entity: str,
    project: str,
    sweep: str | None = None,
    name: str | None = None,
    tools_from: list[str] | None = None,
) -> Any:
    """The workspace object (no network): one section per panel section, runs grouped by their arm."""
    ws, wr = _require_workspaces()
    all_panels = panels_of_runs(tools_from) if tools_from else panels()
    sections = [
        ws.Section(name=section, is_open=True, panels=[panel_spec(p, wr) for p in all_panels if p.section == section])
        for section in panel_sections(all_panels)
    ]
    filters = ws.And(ws.Tags().isin([f"sweep:{sweep}"])) if sweep else ""
    return ws.Workspace(
        entity=entity,
        project=project,
        name=name or (f"agentic_rl sweep {sweep}" if sweep else "agentic_rl runs"),
        sections=sections,
        runset_settings=ws.RunsetSettings(filters=filters, groupby=[ws.Metric("Group")]),
    )


def describe(workspace: Any) -> str:
    lines = [f"workspace {workspace.name!r} ({workspace.entity}/{workspace.project})"]
    for section in workspace.sections:
        lines.append(f"  {section.name}:")
        for panel in section.panels:
            metrics = getattr(panel, "y", None) or getattr(panel, "metrics", [])
            lines.append(f"    {type(panel).__name__} {panel.title!r}: {', '.join(map(str, metrics))}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entity", required=True, help="W&B entity (user or team)")
    parser.add_argument("--project", default="agentic_rl", help="W&B project (logger.project)")
    parser.add_argument(
        "--sweep",
        help="only the runs of this sweep (its id: sweep config and start time, as in "
        "the runs' sweep:<id> tag, e.g. tools-2026-11-30_17-40-00)",
    )
    parser.add_argument("--name", help="workspace name")
    parser.add_argument(
        "--tools-from",
        nargs="+",
        metavar="RUN_DIR",
        help="take the tool panels from the tools these runs' episodes declared (their metrics.jsonl)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the panels; save nothing (no network)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    workspace = build_workspace(args.entity, args.project, args.sweep, args.name, args.tools_from)
    logger.info(describe(workspace))
    if args.dry_run:
        return 0
    try:
        workspace.save()
    except Exception as exc:  # no login, no network: say what to do instead of a traceback
        logger.error(
            "could not save the workspace (%s: %s). Run `wandb login` first, or draw the same panels "
            "offline: python -m agentic_rl.plot SWEEP_DIR",
            type(exc).__name__,
            exc,
        )
        return 1
    logger.info("saved: %s", workspace.url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
