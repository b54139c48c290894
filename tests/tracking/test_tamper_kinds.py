"""Issue #47: tampered submissions are counted per kind, `tools/submit/tampered/<kind>` beside
`tools/submit/tampered_rate`, from the verdict's kinds (`TestReport.tamper_kinds`, carried by the submit
observation); records written before the field existed stay readable."""

from __future__ import annotations

import pytest

from agentic_rl.evaluation.records import metrics_from_records, record_from_trajectory
from agentic_rl.tracking.metrics import aggregate_metrics, episode_counts, episode_metrics
from agentic_rl.types import Observation, ToolCall, Trajectory, Turn


def _submit(status: str, kinds: tuple[str, ...] | None) -> Turn:
    obs = Observation(tool="submit", text="<test_result>FAIL</test_result>", ok=True, status=status, passed=False)
    if kinds is not None:
        # the verdict's kinds, as the submit tool carries them (TestReport.tamper_kinds)
        obs.tamper_kinds = kinds  # type: ignore[attr-defined]
    # graded: the rollout marks the turns of a grading tool (its spec's `grades`), which is what is counted
    return Turn(generated_ids=[1], text="", call=ToolCall("submit", "x", 0, 1), observation=obs, graded=True)


def _episode(*turns: Turn) -> Trajectory:
    return Trajectory(task_id="t", token_ids=[1], loss_mask=[0], prompt_len=1, turns=list(turns))


def test_each_kind_is_a_share_of_submissions():
    trajs = [
        _episode(_submit("tampered", ("shadowed_module",)), _submit("failed", None)),
        _episode(_submit("tampered", ("handle_operator", "refused_name"))),
        _episode(_submit("tampered", ("shadowed_module",)), _submit("failed", None)),
    ]
    m = episode_metrics(trajs)
    assert m["tools/submit/tampered_rate"] == pytest.approx(3 / 5)
    assert m["tools/submit/tampered/shadowed_module"] == pytest.approx(2 / 5)
    assert m["tools/submit/tampered/handle_operator"] == pytest.approx(1 / 5)
    assert m["tools/submit/tampered/refused_name"] == pytest.approx(1 / 5)
    assert "tools/submit/tampered/frame_access" not in m  # a kind no episode showed is absent
    # evaluation: the records carry the counts, and give the same metrics
    records = [record_from_trajectory(t, "multi") for t in trajs]
    assert records[1]["tampered_kinds"] == {"handle_operator": 1, "refused_name": 1}
    assert metrics_from_records(records)["tools/submit/tampered/shadowed_module"] == pytest.approx(2 / 5)


def test_a_tampered_verdict_without_kinds_counts_as_unknown():
    m = episode_metrics([_episode(_submit("tampered", None))])
    assert m["tools/submit/tampered/unknown"] == 1.0


def test_records_without_the_field_stay_readable():
    counts = episode_counts(_episode(_submit("tampered", ("canary",))))
    old = {k: v for k, v in counts.items() if k != "tampered_kinds"}  # a record written before the field
    m = aggregate_metrics([old, counts])
    assert m["tools/submit/tampered_rate"] == 1.0
    assert m["tools/submit/tampered/canary"] == pytest.approx(1 / 2)


def test_verdicts_are_counted_by_the_grading_flag_not_by_the_tools_name():
    """The no-tools `answer` grades (its spec's `grades`), so its tampered or in-process verdict counts as the
    submission's; a call of a tool that does not grade counts nothing, whatever its observation's status says."""
    answer = Observation(tool="answer", text="", ok=True, status="tampered", passed=False, trust="in_process")
    graded = Turn(generated_ids=[1], text="", call=ToolCall("answer", "x", 0, 1), observation=answer, graded=True)
    ran = Observation(tool="execute", text="", ok=True, status="tampered", trust="in_process")
    executed = Turn(generated_ids=[1], text="", call=ToolCall("execute", "x", 0, 1), observation=ran)
    counts = episode_counts(_episode(graded, executed))
    assert (counts["tampered_submissions"], counts["in_process_submissions"]) == (1, 1)
    assert counts["tampered_kinds"] == {"unknown": 1}
