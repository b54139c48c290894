"""How the submit tool's verdicts reach the tool metrics: a failed or tampered candidate is graded (not a tool
error); only a verdict the sandbox could not give (its own error) counts as a submit error."""

from __future__ import annotations

import dataclasses

import pytest

from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import ToolSet
from agentic_rl.sandbox.results import TestReport
from agentic_rl.tools.code import SubmitTool
from agentic_rl.tracking.metrics import aggregate_metrics, episode_counts
from agentic_rl.types import ToolCall
from tests.rollout.fakes import TASK

SUBMIT = "```submit\ndef add(a, b):\n    return a + b\n```"


class VerdictSandbox:
    """Gives every submission the same verdict."""

    def __init__(self, status: str, tamper_kinds: tuple[str, ...] = ()) -> None:
        self.status, self.tamper_kinds = status, tamper_kinds

    def run_tests(self, code: str, tests: str, **kwargs) -> TestReport:
        passed = self.status == "passed"
        return TestReport(
            passed=passed,
            status=self.status,
            n_tests=2,
            n_failed=0 if passed else 2,
            detail="" if passed else f"verdict: {self.status}",
            tamper_kinds=self.tamper_kinds,
        )


def submit_once(status: str) -> dict:
    """One episode that submits once under a sandbox giving `status`; its metric counts."""
    tool = SubmitTool(VerdictSandbox(status))
    toolset = ToolSet(name="submit", tools={"submit": tool}, grader=tool, system_prompt="SYS")
    traj = run_episodes([(TASK, 0)], ScriptedPolicy(lambda req: SUBMIT), toolset, RolloutConfig(max_turns=1))[0]
    obs = traj.turns[0].observation
    assert obs.status == status and obs.passed is (status == "passed") and traj.passed is (status == "passed")
    return episode_counts(traj)


@pytest.mark.parametrize(
    ("status", "errors", "tampered"),
    [
        ("passed", 0, 0),
        ("failed", 0, 0),
        ("tampered", 0, 1),
        ("sandbox_error", 1, 0),
    ],
)
def test_a_tampered_verdict_is_a_failed_candidate_not_a_submit_error(status: str, errors: int, tampered: int) -> None:
    """Guards against a tampered verdict being counted as a submit-tool error (`tools/submit/error_rate` would
    then mix forged verdicts with a broken sandbox, and the tampering would show twice)."""
    counts = submit_once(status)
    assert counts["tool_errors"]["submit"] == errors
    assert counts["tampered_submissions"] == tampered
    metrics = aggregate_metrics([counts])
    assert metrics["tools/submit/error_rate"] == errors
    assert metrics["tools/submit/tampered_rate"] == tampered


def test_submit_observation_marks_tampered_as_graded() -> None:
    """Guards the same bug at the tool: the observation of a tampered verdict is `ok` (graded) and not passed."""
    obs = SubmitTool(VerdictSandbox("tampered"))(ToolCall("submit", "x", 0, 1), TASK)
    assert (obs.ok, obs.passed, obs.status) == (True, False, "tampered")
    assert "FAIL" in obs.text and "tampered" in obs.text


class TrustSandbox(VerdictSandbox):
    """Fails every submission, with the verdict computed where `trust` says."""

    def __init__(self, trust: str) -> None:
        super().__init__("failed")
        self.trust = trust

    def run_tests(self, code: str, tests: str, **kwargs) -> TestReport:
        return dataclasses.replace(super().run_tests(code, tests, **kwargs), trust=self.trust)


def test_in_process_share_of_submissions_is_logged() -> None:
    """`tools/submit/in_process_rate`: the share of submissions graded by the in-process fallback harness, from
    the verdict's `trust` through the observation into the training metrics."""
    counts = []
    for trust in ("in_process", "out_of_process", "out_of_process", "in_process", "out_of_process"):
        tool = SubmitTool(TrustSandbox(trust))
        assert tool(ToolCall("submit", "x", 0, 1), TASK).trust == trust
        toolset = ToolSet(name="submit", tools={"submit": tool}, grader=tool, system_prompt="SYS")
        traj = run_episodes([(TASK, 0)], ScriptedPolicy(lambda req: SUBMIT), toolset, RolloutConfig(max_turns=1))[0]
        counts.append(episode_counts(traj))
    assert [c["in_process_submissions"] for c in counts] == [1, 0, 0, 1, 0]
    assert aggregate_metrics(counts)["tools/submit/in_process_rate"] == pytest.approx(2 / 5)
    no_submission = submit_once("failed") | {"tool_calls": {"none": 1}}
    assert "tools/submit/in_process_rate" not in aggregate_metrics([no_submission])


def test_the_kind_of_a_tampered_verdict_reaches_the_metrics() -> None:
    """The sandbox says what it caught; the observation carries it, so `tools/submit/tampered/<kind>` counts it
    (not `unknown`)."""
    tool = SubmitTool(VerdictSandbox("tampered", ("shadowed_module",)))
    toolset = ToolSet(name="submit", tools={"submit": tool}, grader=tool, system_prompt="SYS")
    traj = run_episodes([(TASK, 0)], ScriptedPolicy(lambda req: SUBMIT), toolset, RolloutConfig(max_turns=1))[0]
    assert traj.turns[0].observation.tamper_kinds == ("shadowed_module",)
    metrics = aggregate_metrics([episode_counts(traj)])
    assert metrics["tools/submit/tampered/shadowed_module"] == 1.0
    assert "tools/submit/tampered/unknown" not in metrics
