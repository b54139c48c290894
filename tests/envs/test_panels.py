"""Dashboard panels and figures take the tool names from what the episodes declared (as the runs logged
them), not from the global tool registry: a CodeGym environment's own tools get panels under their names."""

from __future__ import annotations

import json

from agentic_rl.dashboard import main
from agentic_rl.reports.plots import most_used, tool_rate_curves
from agentic_rl.tracking.panels import logged_tools, panels

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


def fake_run(path, seed, before, after):
    """A run dir whose evaluations mixed both held-out sets: (seen, unseen) success rates over 10 and 20 episodes."""
    path.mkdir(parents=True)
    (path / "metrics.jsonl").write_text(json.dumps({"step": 1, "train/epoch": 0, "train/reward_mean": 0.1}) + "\n")

    def section(rates):
        return {
            "multi_tool": {
                "pass@1": 0.0,
                "env/seen_envs/success_rate": rates[0],
                "env/seen_envs/episodes": 10.0,
                "env/unseen_envs/success_rate": rates[1],
                "env/unseen_envs/episodes": 20.0,
            }
        }

    summary = {"seed": seed, "n_eval_tasks": 30, "eval": {"before": section(before), "after": section(after)}}
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def test_the_table_reports_each_held_out_set_before_and_after(tmp_path):
    from agentic_rl.reports.tables import build_table, table_markdown

    runs = [fake_run(tmp_path / f"seed-{s}", s, (0.2, 0.0), after) for s, after in ((1, (0.4, 0.0)), (2, (0.6, 0.05)))]
    table = build_table(runs)
    seen, unseen = table["env_sets"]
    assert seen["set"].startswith("held-out configurations") and unseen["set"] == "held-out environments"
    assert seen["after"]["mean"] == 0.5 and seen["after_pooled"]["k"] == 10 and seen["after_pooled"]["n"] == 20
    assert seen["before_pooled"]["k"] == 4 and unseen["after_pooled"]["k"] == 1 and unseen["after_pooled"]["n"] == 40
    assert 0.0 < seen["after_pooled"]["low"] < 0.5 < seen["after_pooled"]["high"] < 1.0
    assert "| held-out environments | 0.000" in table_markdown(table)
