"""Dashboard panels and figures take the tool names from what the episodes declared (as the runs logged
them), not from the global tool registry: a CodeGym environment's own tools get panels under their names."""

from __future__ import annotations

import json

from agentic_rl.dashboard import main
from agentic_rl.tracking.panels import logged_tools, panels
from agentic_rl.tracking.plots import most_used, tool_rate_curves

CODEGYM_STEP = {
    "train/step": 1,
    "tools/none_rate": 0.25,
    "tools/capped_rate": 0.0,
    "tools/Observe_rate": 0.5,
    "tools/CharAt_rate": 0.0,
    "tools/Done_rate": 0.25,
    "tools/Done/error_rate": 0.0,
    "env/success_rate": 0.5,
}


def test_an_environments_own_tools_get_panels_under_their_names():
    names = logged_tools([CODEGYM_STEP, {"tools/Lower_rate": 0.1}])
    assert names == ("Observe", "CharAt", "Done", "Lower")  # as logged; no-call and capped rates are no tools
    shown = panels(names, env=True)
    by_metric = {p.metric: p for p in shown}
    assert by_metric["tools/CharAt_rate"].section == "Environment tools" and by_metric["tools/Done_rate"]
    assert by_metric["env/success_rate"].section == "Environment"
    assert "tools/search_rate" not in by_metric  # a shared tool the episodes never declared has no panel
    assert "tools/search_rate" in {p.metric for p in panels()}  # ... unless no run is known
    shared = {p.metric: p.section for p in panels(("search", "execute", "submit", "answer", "Observe"))}
    assert shared["tools/search_rate"] == "Tool use" and "tools/answer_rate" not in shared  # final: no panel
    assert shared["tools/Observe_rate"] == "Environment tools"


def test_the_run_figure_draws_the_declared_tools_in_their_logged_order():
    records = [{"tools/Zeta_rate": 0.1, "tools/Alpha_rate": 0.2, "tools/none_rate": 0.7}]
    assert tool_rate_curves(records) == (("tools/Zeta_rate", "Zeta"), ("tools/Alpha_rate", "Alpha"))


def test_a_sweep_figure_keeps_the_most_called_environment_tools():
    records = [{f"tools/T{i}_rate": i / 100 for i in range(12)}, {"tools/submit_rate": 0.0}]
    kept = most_used(logged_tools(records), records, keep=3)
    assert kept == ("submit", "T11", "T10", "T9")


def test_the_dashboard_reads_the_tools_of_given_runs(tmp_path, caplog):
    (tmp_path / "metrics.jsonl").write_text(json.dumps(CODEGYM_STEP) + "\n")
    caplog.set_level("INFO")
    assert main(["--entity", "me", "--dry-run", "--tools-from", str(tmp_path)]) == 0
    assert "LinePlot 'CharAt rate': tools/CharAt_rate" in caplog.text
    assert "LinePlot 'success rate': env/success_rate" in caplog.text
    assert "search rate" not in caplog.text
