"""The W&B workspace spec, built and converted to the saved view's model without any network."""

from __future__ import annotations

from agentic_rl.dashboard import build_workspace, describe, main
from agentic_rl.tracking.panels import panels


def test_workspace_has_the_tool_reward_eval_and_tampered_panels_for_one_sweep():
    workspace = build_workspace("me", "agentic_rl", sweep="tools-2026-11-30_17-40-00")
    by_title = {p.title: p for s in workspace.sections for p in s.panels}
    assert [s.name for s in workspace.sections] == ["Tool use", "Learning", "Evaluation"]
    for rate in ("search", "execute", "submit", "none"):
        panel = next(p for p in by_title.values() if getattr(p, "y", None) == [f"tools/{rate}_rate"])
        assert panel.x == "train/step" and panel.groupby == "Group"  # one line per arm, seeds averaged
    assert by_title["training pass rate"].y == ["train/pass_rate"]
    assert by_title["training reward"].y == ["train/reward_mean"]
    assert by_title["eval pass@1 per mode"].metrics == [
        f"eval/{m}/pass@1" for m in ("no_tools", "code_only", "multi_tool")
    ]
    assert by_title["tampered submissions"].y == ["tools/submit/tampered_rate"]
    assert len(by_title) == len(panels())
    assert str(workspace.runset_settings.filters) == "Metric(\"Tags\") in ['sweep:tools-2026-11-30_17-40-00']"
    assert [m.name for m in workspace.runset_settings.groupby] == ["Group"]
    assert build_workspace("me", "agentic_rl").runset_settings.filters == ""  # no --sweep: every run
    view = workspace._to_model()  # what save() would send: the spec must convert without errors
    assert view.spec is not None


def test_dry_run_prints_the_panels_and_saves_nothing(caplog):
    caplog.set_level("INFO")
    assert main(["--entity", "me", "--dry-run"]) == 0
    assert "LinePlot 'search rate': tools/search_rate" in caplog.text
    assert describe(build_workspace("me", "p")).startswith("workspace 'agentic_rl runs' (me/p)")
