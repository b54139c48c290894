"""The evaluator with scripted policies and a fake sandbox: modes really change the tool set, records carry the
grader's verdict, pass@k from samples, metrics from records, resume skips graded triples."""

from __future__ import annotations

import json
import math
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

import agentic_rl.evaluate  # noqa: F401  (registers the config schemas and the run-dir resolver)
from agentic_rl.evaluation.evaluator import EvalConfig, evaluate, flat_metrics, mode_rollout, token_budget
from agentic_rl.evaluation.records import ResultStore, metrics_from_records, record_from_trajectory
from agentic_rl.evaluation.report import format_table, mode_summary, plot_eval_summary
from agentic_rl.rollout.agent import RolloutConfig
from agentic_rl.rollout.policy import ScriptedPolicy
from agentic_rl.rollout.tokenizer import ByteChatTokenizer
from agentic_rl.sandbox.results import ExecResult, TestReport
from agentic_rl.tools import build_toolset
from agentic_rl.tools.code import ExecuteTool, SubmitTool
from agentic_rl.tools.search import SearchTool
from agentic_rl.tracking.metrics import episode_metrics
from agentic_rl.types import Task

CONF = Path(__file__).resolve().parents[2] / "conf"
GOOD = "def add(a, b):\n    return a + b"
BAD = "def add(a, b):\n    return a - b"


def tasks(n: int = 5) -> list[Task]:
    return [
        Task(
            task_id=f"t/{i}",
            prompt=f"Write add(a, b) #{i}.",
            tests="def test_add(): ...",
            harness="pytest",
            entry_point="add",
        )
        for i in range(n)
    ]


class FakeSandbox:
    """Grades by looking for `return a + b`; counts every call. `statuses` forces a status per task id."""

    python = sys.executable

    def __init__(self, statuses: dict[str, str] | None = None) -> None:
        self.graded: list[tuple[str, str]] = []
        self.executed: list[str] = []
        self.statuses = statuses or {}
        self._lock = threading.Lock()

    def execute(self, code: str, timeout_s: float | None = None) -> ExecResult:
        with self._lock:
            self.executed.append(code)
        return ExecResult(ok=True, status="ok", stdout="3\n", stderr="")

    def run_tests(self, code, test, *, harness, entry_point=None, timeout_s=None) -> TestReport:
        with self._lock:
            self.graded.append((code, test))
        ok = "return a + b" in code
        for tid, status in self.statuses.items():
            if tid in code:
                return TestReport(False, status, 0, 0, f"{status}: forced")
        if ok:
            return TestReport(True, "passed", 2, 0, "2/2 tests passed")
        return TestReport(False, "failed", 2, 1, "1/2 tests failed: test_add: assert -1 == 3")


def compose_cfg(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("evaluate", overrides=["logger=none", *overrides])


@pytest.fixture(scope="module")
def cfg():
    return compose_cfg("evaluator.toolsets.multi_tool.search.backend=docstore")


def toolsets(cfg, sandbox, modes=("no_tools", "code_only", "multi_tool")):
    return {m: build_toolset(cfg.evaluator.toolsets[m], sandbox) for m in modes}


ROLLOUT = RolloutConfig(max_turns=3, max_new_tokens=400, on_no_call="stop")


def run_eval(cfg, sandbox, script, modes, task_list=None, **eval_kwargs):
    policy = ScriptedPolicy(script)
    ec = EvalConfig(modes=list(modes), **eval_kwargs)
    return evaluate(task_list or tasks(2), policy, toolsets(cfg, sandbox, modes), ROLLOUT, ec, progress=False)


# ----------------------------------------------------------------------------------------------- modes


def seen_prompt(cfg, mode: str) -> str:
    """The whole context the policy sees at its first turn in `mode` (system prompt, any worked examples, task)."""
    seen = []

    def script(req):
        seen.append(ByteChatTokenizer().decode(req.history_ids))
        return "ok"

    run_eval(cfg, FakeSandbox(), script, [mode], task_list=tasks(1))
    return seen[0]


def test_code_only_prompt_has_no_search_and_a_search_call_is_not_run(cfg):
    ts = toolsets(cfg, FakeSandbox())
    code_prompt, multi_prompt = seen_prompt(cfg, "code_only"), seen_prompt(cfg, "multi_tool")
    assert "<search>" not in code_prompt and "search" not in code_prompt.lower()
    assert SearchTool.description.splitlines()[0] not in code_prompt
    assert ExecuteTool.description.splitlines()[0] in code_prompt and "```submit" in code_prompt
    assert "<search>" in multi_prompt  # the contrast: the multi-tool prompt does describe it
    assert ts["code_only"].active == ("execute", "submit")

    reply = "<search>python add numbers</search>\n```submit\n" + GOOD + "\n```"
    sandbox = FakeSandbox()
    submit = "```submit\n" + GOOD + "\n```"
    results = run_eval(cfg, sandbox, lambda req: reply if req.turn_index == 0 else submit, ["code_only", "multi_tool"])
    code_rec, multi_rec = results["code_only"].records[0], results["multi_tool"].records[0]
    # code_only: the <search> is plain text; the turn ends at the submit call, which passes
    assert code_rec["tool_calls"]["search"] == 0 and code_rec["tool_calls"]["submit"] == 1
    assert code_rec["passed"] and code_rec["turns"] == 1
    assert "<doc_result>" not in "".join(t.text for t in results["code_only"].trajectories[0].turns)
    # multi_tool: the same reply's search is executed first (the turn stops there), then the submit
    assert multi_rec["tool_calls"]["search"] == 1 and multi_rec["passed"] and multi_rec["turns"] == 2


def test_no_tools_prompt_has_no_tool_instructions_and_the_answer_is_graded(cfg):
    sandbox = FakeSandbox()
    ts = toolsets(cfg, sandbox, ["no_tools"])
    prompt = seen_prompt(cfg, "no_tools")
    assert "Write add(a, b) #0." in prompt
    for tool in (SearchTool, ExecuteTool, SubmitTool):
        assert tool.description.splitlines()[0] not in prompt
    assert "<search>" not in prompt and "```submit" not in prompt and "tool" not in prompt.lower()
    assert ts["no_tools"].active == ("answer",) and ts["no_tools"].answers_once  # its parser takes the code

    results = run_eval(cfg, sandbox, lambda req: "Here:\n```python\n" + GOOD + "\n```", ["no_tools"])
    rec = results["no_tools"].records[0]
    assert rec["passed"] and rec["status"] == "passed" and rec["turns"] == 1
    assert rec["detail"] == "PASS: 2 tests passed"  # the grader's text, although no observation is in context
    assert rec["submitted_code"] == GOOD
    assert sum(rec["tool_calls"][k] for k in ("search", "execute", "submit")) == 0
    assert rec["tool_calls"]["answer"] == 1
    assert len(sandbox.graded) == 2  # one per task


def test_records_carry_status_and_grader_detail(cfg):
    sandbox = FakeSandbox(statuses={"t/1": "timeout", "t/2": "error"})

    def script(req):
        if req.task.task_id == "t/3":
            return "I don't know."  # no call at all
        if req.task.task_id in ("t/1", "t/2"):
            return f"```submit\n# {req.task.task_id}\n{GOOD}\n```"
        return f"```python\nprint(1)\n```\n```submit\n{BAD}\n```" if req.turn_index == 0 else f"```submit\n{BAD}\n```"

    results = run_eval(cfg, sandbox, script, ["code_only"], task_list=tasks(4))
    recs = {r["task_id"]: r for r in results["code_only"].records}
    assert recs["t/0"]["status"] == "failed" and not recs["t/0"]["passed"]
    assert recs["t/0"]["detail"] == "FAIL: 1/2 tests failed: test_add: assert -1 == 3"
    assert recs["t/0"]["tool_calls"] == {"search": 0, "execute": 1, "submit": 2, "none": 0}
    assert recs["t/0"]["turns"] == 3 and recs["t/0"]["finish_reason"] == "max_turns"
    assert recs["t/1"]["status"] == "timeout" and recs["t/2"]["status"] == "error"
    assert recs["t/3"]["status"] == "no_submission" and recs["t/3"]["finish_reason"] == "no_call"
    summary = mode_summary(results["code_only"])
    assert (summary["timeouts"], summary["errors"], summary["no_submission"], summary["n_passed"]) == (1, 1, 1, 0)
    assert summary["statuses"] == {"error": 1, "failed": 1, "no_submission": 1, "timeout": 1}


# ----------------------------------------------------------------------------------------------- pass@k


def test_pass_at_k_from_samples_uses_the_sampling_temperature(cfg):
    seen_temps = []

    class Recording(ScriptedPolicy):
        def generate(self, requests, sampling, stop):
            seen_temps.append((sampling.temperature, sampling.top_p))
            return super().generate(requests, sampling, stop)

    # task t/0 passes in samples 0 and 1 of 4; t/1 never
    def script(req):
        good = req.task.task_id == "t/0" and req.sample_index < 2
        return "```python\n" + (GOOD if good else BAD) + "\n```"

    ec = EvalConfig(
        modes=["no_tools"], n_samples=4, greedy=False, ks=[1, 2, 4], sample_temperature=0.9, sample_top_p=0.8
    )
    res = evaluate(
        tasks(2), Recording(script), toolsets(cfg, FakeSandbox(), ["no_tools"]), ROLLOUT, ec, progress=False
    )["no_tools"]
    assert set(seen_temps) == {(0.9, 0.8)}
    assert len(res.records) == 8 and [r["sample"] for r in res.records[:4]] == [0, 1, 2, 3]
    # unbiased estimator, by hand: n=4, c=2 -> pass@1 = 1/2, pass@2 = 1 - C(2,2)/C(4,2) = 5/6, pass@4 = 1; t/1: 0
    assert math.isclose(res.pass_at[1], 0.5 / 2)
    assert math.isclose(res.pass_at[2], (5 / 6) / 2)
    assert math.isclose(res.pass_at[4], 1.0 / 2)
    flat = flat_metrics({"no_tools": res})
    assert math.isclose(flat["eval/no_tools/pass@2"], 5 / 12)


def test_one_sample_is_greedy(cfg):
    seen = []

    class Recording(ScriptedPolicy):
        def generate(self, requests, sampling, stop):
            seen.append(sampling.temperature)
            return super().generate(requests, sampling, stop)

    res = evaluate(
        tasks(2),
        Recording(lambda r: "```python\n" + GOOD + "\n```"),
        toolsets(cfg, FakeSandbox(), ["no_tools"]),
        replace(ROLLOUT, temperature=0.7),
        EvalConfig(modes=["no_tools"]),
        progress=False,
    )
    assert seen == [0.0] and res["no_tools"].pass_at == {1: 1.0}


def test_eval_config_validation_says_how_to_fix():
    with pytest.raises(ValueError, match="unknown mode"):
        EvalConfig(modes=["nope"]).validate(["no_tools"])
    with pytest.raises(ValueError, match="n_samples"):
        EvalConfig(modes=["no_tools"], n_samples=2, ks=[5]).validate(["no_tools"])
    with pytest.raises(ValueError, match="sample_temperature"):
        EvalConfig(modes=["no_tools"], n_samples=2, ks=[1], sample_temperature=0.0).validate(["no_tools"])


# ----------------------------------------------------------------------------------------------- metrics


def test_metrics_from_records_equal_episode_metrics(cfg):
    def script(req):
        if req.turn_index == 0:
            return "<search>add</search>"
        if req.turn_index == 1:
            return "```python\nprint(1 + 2)\n```"
        return "```submit\n" + (GOOD if req.task.task_id == "t/0" else BAD) + "\n```"

    results = run_eval(cfg, FakeSandbox(), script, ["multi_tool", "code_only"], task_list=tasks(3))
    for res in results.values():
        expected = episode_metrics(res.trajectories)
        got = metrics_from_records(res.records)
        assert expected.keys() == got.keys()
        for k in expected:
            assert math.isclose(expected[k], got[k], abs_tol=1e-3), k  # latencies are rounded to 1 us
    assert results["multi_tool"].metrics["tools/search_rate"] == pytest.approx(1 / 3)
    assert results["code_only"].metrics["tools/search_rate"] == 0.0


# ----------------------------------------------------------------------------------------------- parity


def test_every_mode_gets_the_same_token_budget(cfg):
    """A policy that never stops talking generates max_turns x max_new_tokens tokens in every mode."""
    rollout = RolloutConfig(max_turns=3, max_new_tokens=20, on_no_call="nudge")
    ec = EvalConfig(modes=["no_tools", "code_only", "multi_tool"])
    endless = ScriptedPolicy(lambda req: "x" * 500)  # no call, no code, no EOS within the budget
    results = evaluate(tasks(2), endless, toolsets(cfg, FakeSandbox()), rollout, ec, progress=False)
    assert token_budget(rollout) == 60
    for mode, res in results.items():
        assert [r["model_tokens"] for r in res.records] == [60, 60], mode
    assert [r["turns"] for r in results["no_tools"].records] == [1, 1]
    assert [r["turns"] for r in results["code_only"].records] == [3, 3]


def test_no_tools_answer_longer_than_one_turn_is_graded_whole(cfg):
    # the function comes after 51 bytes of comments: one turn of 40 tokens would cut it off
    answer = "```python\n" + "# a comment line\n" * 3 + GOOD + "\n```"
    rollout = RolloutConfig(max_turns=3, max_new_tokens=40)
    assert 40 < len(answer) <= token_budget(rollout)
    sandbox = FakeSandbox()
    res = evaluate(
        tasks(1),
        ScriptedPolicy(lambda req: answer),
        toolsets(cfg, sandbox, ["no_tools"]),
        rollout,
        EvalConfig(modes=["no_tools"]),
        progress=False,
    )["no_tools"]
    assert res.records[0]["passed"] and res.records[0]["submitted_code"].endswith(GOOD)
    assert res.pass_at[1] == 1.0


def test_mode_rollout_gives_a_mode_without_tools_one_turn_of_the_whole_budget(cfg):
    ts = toolsets(cfg, FakeSandbox())
    rollout = RolloutConfig(max_turns=5, max_new_tokens=64, temperature=0.7, top_p=0.95)
    ec = EvalConfig()
    no_tools, code_only = mode_rollout(rollout, ts["no_tools"], ec), mode_rollout(rollout, ts["code_only"], ec)
    assert (no_tools.max_turns, no_tools.max_new_tokens) == (1, 320)
    assert (code_only.max_turns, code_only.max_new_tokens) == (5, 64)
    assert token_budget(no_tools) == token_budget(code_only) == 320
    assert (no_tools.temperature, code_only.top_p) == (0.0, 1.0)  # the evaluation's greedy sampling


def test_a_mode_without_tools_reports_no_tool_rates(cfg):
    def script(req):
        return "```python\nprint(1)\n```" if req.turn_index == 0 else "```submit\n" + GOOD + "\n```"

    results = run_eval(cfg, FakeSandbox(), script, ["no_tools", "code_only"])
    assert not [k for k in results["no_tools"].metrics if k.startswith("tools/")]
    assert "rollout/turns_mean" in results["no_tools"].metrics
    assert results["code_only"].metrics["tools/execute_rate"] == pytest.approx(0.5)
    flat = flat_metrics(results)
    assert not [k for k in flat if k.startswith("eval/no_tools/tools/")]
    assert flat["eval/code_only/tools/submit_rate"] == pytest.approx(0.5)
    assert flat["eval/no_tools/pass@1"] == 0.0  # its answer was the print, graded as the solution
    assert not [k for k in mode_summary(results["no_tools"]) if k.startswith("tools/")]


# ----------------------------------------------------------------------------------------------- resume


def test_resume_skips_triples_already_graded(cfg, tmp_path):
    sandbox = FakeSandbox()
    calls = []

    def script(req):
        calls.append((req.task.task_id, req.sample_index))
        return "```python\n" + (GOOD if req.task.task_id != "t/4" else BAD) + "\n```"

    ts = toolsets(cfg, sandbox, ["no_tools", "code_only"])
    ec = EvalConfig(modes=["no_tools"], batch_tasks=2)
    first = evaluate(
        tasks(5),
        ScriptedPolicy(script),
        ts,
        ROLLOUT,
        replace(ec, limit=2),
        progress=False,
        store=ResultStore.in_dir(tmp_path),
    )
    assert len(first["no_tools"].records) == 2 and len(sandbox.graded) == 2
    # "interrupt": a half-written line at the end, as a killed process leaves it
    with (tmp_path / "results.jsonl").open("a") as f:
        f.write('{"task_id": "t/2", "mode": "no_t')
    store = ResultStore.in_dir(tmp_path)
    assert len(store) == 2
    second = evaluate(tasks(5), ScriptedPolicy(script), ts, ROLLOUT, ec, progress=False, store=store)
    assert len(sandbox.graded) == 5, "the 2 graded triples were graded again"
    assert sorted(set(calls)) == [(f"t/{i}", 0) for i in range(5)] and len(calls) == 5
    res = second["no_tools"]
    assert [r["task_id"] for r in res.records] == [f"t/{i}" for i in range(5)]
    assert len(res.trajectories) == 3 and res.pass_at[1] == pytest.approx(4 / 5)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 5 and all(json.loads(line) for line in lines)
    # a third run, with another mode added, runs only that mode
    evaluate(
        tasks(5),
        ScriptedPolicy(script),
        ts,
        ROLLOUT,
        replace(ec, modes=["no_tools", "code_only"]),
        progress=False,
        store=ResultStore.in_dir(tmp_path),
    )
    assert len(sandbox.graded) == 5  # code_only replies contain no submit block: nothing graded
    assert len(ResultStore.in_dir(tmp_path)) == 10


def test_result_store_rejects_a_corrupt_line_in_the_middle(tmp_path):
    path = tmp_path / "results.jsonl"
    good = json.dumps({"task_id": "a", "mode": "no_tools", "sample": 0, "passed": True})
    path.write_text(good + "\nnot json\n" + good.replace('"a"', '"b"') + "\n")
    with pytest.raises(ValueError, match=r"results.jsonl, line 2"):
        ResultStore(path)


def test_record_of_a_trajectory_without_turns_of_tools():
    from agentic_rl.types import Trajectory

    traj = Trajectory(task_id="x", token_ids=[1, 2], loss_mask=[0, 1], prompt_len=1, finish_reason="length")
    rec = record_from_trajectory(traj, "code_only")
    assert rec["status"] == "no_submission" and "context limit" in rec["detail"]


# ----------------------------------------------------------------------------------------------- report


def test_figure_and_table_from_a_summary(cfg, tmp_path):
    results = run_eval(cfg, FakeSandbox(), lambda r: "```submit\n" + GOOD + "\n```", ["no_tools", "code_only"])
    summary = {"n_tasks": 2, "n_samples": 1, "eval": {m: mode_summary(r) for m, r in results.items()}}
    out = plot_eval_summary(summary, tmp_path / "figures" / "eval_summary.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = format_table(summary)
    assert "code_only" in table and "pass@1" in table and "2/2" in table
