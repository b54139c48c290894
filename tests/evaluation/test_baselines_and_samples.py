"""Format baselines (last_block, forced_submit) and the samples per task, with scripted policies: the baselines
grade the multi_tool episodes (no new episode; one forced turn only where nothing was submitted) with the real
grader; samples are drawn at the training temperature plus a greedy one, under reproducible, distinct seeds; records
carry the task type and the metrics split by it."""

from __future__ import annotations

import math

import pytest
import torch

from agentic_rl.evaluation.baselines import code_tools, last_code_block
from agentic_rl.evaluation.evaluator import EvalConfig, batch_seed, evaluate, flat_metrics
from agentic_rl.evaluation.report import format_table, mode_summary
from agentic_rl.rollout.agent import RolloutConfig
from agentic_rl.rollout.policy import ScriptedPolicy
from agentic_rl.sandbox import Sandbox
from agentic_rl.tools import ExecuteTool, SearchTool, SubmitTool, build_toolset
from agentic_rl.types import Task, Trajectory, Turn
from tests.evaluation.test_evaluator import BAD, GOOD, FakeSandbox, compose_cfg, tasks

MODES = ["multi_tool", "last_block", "forced_submit"]
ROLLOUT = RolloutConfig(max_turns=2, max_new_tokens=400, on_no_call="nudge")
REAL_TEST = "from solution import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


@pytest.fixture(scope="module")
def cfg():
    return compose_cfg("evaluator.toolsets.multi_tool.search.backend=docstore")


def toolsets(cfg, sandbox, modes=MODES):
    return {m: build_toolset(cfg.evaluator.toolsets[m], sandbox) for m in modes}


class Recording(ScriptedPolicy):
    """Records every request: (task id, sample, turn index, temperature, the context's tail)."""

    def __init__(self, script):
        super().__init__(script)
        self.requests: list[tuple[str, int, int, float, str]] = []

    def generate(self, requests, sampling, stop):
        for r in requests:
            tail = self.tokenizer.decode(r.history_ids[-12:])
            self.requests.append((r.task.task_id, r.sample_index, r.turn_index, sampling.temperature, tail))
        return super().generate(requests, sampling, stop)


def run(cfg, sandbox, policy, task_list, modes=MODES, rollout=ROLLOUT, **kwargs):
    ec = EvalConfig(modes=list(modes), **kwargs)
    return evaluate(task_list, policy, toolsets(cfg, sandbox, modes), rollout, ec, progress=False)


# ----------------------------------------------------------------------------------------------- format baselines


def script_by_task(req) -> str:
    """t/0: runs the right code, then wrong code, never submits; t/1: wrong then right code, never submits;
    t/2: submits right code at once; t/3: writes prose only. A forced turn (it opens with the submit fence) gets
    the bare right function for t/0 and t/1, and prose for t/3."""
    tid = req.task.task_id
    if _opens_with_fence(req):
        return "I am not sure." if tid == "t/3" else GOOD + "\n```"
    if tid == "t/0":
        return f"```python\n{GOOD if req.turn_index == 0 else BAD}\n```"
    if tid == "t/1":
        return f"```python\n{BAD if req.turn_index == 0 else GOOD}\n```"
    if tid == "t/2":
        return f"```submit\n{GOOD}\n```"
    return "Let me think about it."


def _opens_with_fence(req) -> bool:
    from agentic_rl.rollout.tokenizer import ByteChatTokenizer

    return ByteChatTokenizer().decode(req.history_ids).endswith("```submit\n")


def test_last_block_grades_the_last_block_of_the_same_episodes(cfg):
    sandbox = FakeSandbox()
    policy = Recording(script_by_task)
    results = run(cfg, sandbox, policy, tasks(4), modes=["multi_tool", "last_block"])
    multi = {r["task_id"]: r for r in results["multi_tool"].records}
    last = {r["task_id"]: r for r in results["last_block"].records}
    assert [multi[f"t/{i}"]["passed"] for i in range(4)] == [False, False, True, False]
    assert multi["t/0"]["status"] == multi["t/1"]["status"] == "no_submission"
    # t/0's last block is the wrong one, t/1's the right one; t/2's submission stands; t/3 wrote no block
    assert [last[f"t/{i}"]["passed"] for i in range(4)] == [False, True, True, False]
    assert last["t/0"]["submitted_code"] == BAD and last["t/1"]["submitted_code"] == GOOD
    assert last["t/3"]["status"] == "no_submission" and last["t/0"]["status"] == "failed"
    assert last["t/1"]["mode"] == "last_block" and last["t/1"]["tool_calls"] == multi["t/1"]["tool_calls"]
    # no new episode: the model was asked only for the multi_tool turns
    assert len(policy.requests) == sum(r["turns"] for r in multi.values())
    assert "rollout/tokens_per_s" not in results["last_block"].metrics  # it generated nothing to time
    # graded: t/0 and t/1 by the grader now (t/2's verdict is its own submission's, the same code)
    assert sorted(code for code, _ in sandbox.graded) == sorted([GOOD, BAD, GOOD])
    assert results["last_block"].pass_at[1] == 0.5 and results["multi_tool"].pass_at[1] == 0.25


def test_forced_submit_adds_exactly_one_turn_only_where_nothing_was_submitted(cfg):
    policy = Recording(script_by_task)
    results = run(cfg, FakeSandbox(), policy, tasks(4), modes=["multi_tool", "forced_submit"])
    multi = {r["task_id"]: r for r in results["multi_tool"].records}
    forced = {r["task_id"]: r for r in results["forced_submit"].records}
    forced_requests = [r for r in policy.requests if r[4].endswith("```submit\n")]
    # one forced turn for each episode without a submission (t/0, t/1, t/3), none for t/2 which submitted
    assert sorted(r[0] for r in forced_requests) == ["t/0", "t/1", "t/3"]
    assert len(policy.requests) == sum(r["turns"] for r in multi.values()) + 3
    assert [forced[f"t/{i}"]["turns"] - multi[f"t/{i}"]["turns"] for i in range(4)] == [1, 1, 0, 1]
    # the forced turn's code is the submission (the fence was context): graded
    assert forced["t/0"]["passed"] and forced["t/1"]["passed"] and forced["t/2"]["passed"]
    assert forced["t/0"]["submitted_code"] == GOOD and forced["t/0"]["tool_calls"]["submit"] == 1
    # an unclosed block is closed: the prose written after the fence is t/3's (failing) submission
    assert forced["t/3"]["submitted_code"] == "I am not sure." and forced["t/3"]["status"] == "failed"
    traj = next(t for t in results["forced_submit"].trajectories if t.task_id == "t/0")
    assert traj.turns[-1].prefix == "```submit\n" and len(traj.token_ids) == len(traj.loss_mask)
    masked = [i for i, m in zip(traj.token_ids, traj.loss_mask) if m]
    assert masked == [i for t in traj.turns for i in t.generated_ids]  # the fence is context, not trained on


def test_baselines_are_graded_by_the_real_grader(cfg):
    task_list = [
        Task(task_id=f"r/{i}", prompt="Write add(a, b).", tests=REAL_TEST, harness="pytest", entry_point="add")
        for i in range(2)
    ]

    def script(req):  # r/0 runs right code and never submits; r/1 runs wrong code; forced: each writes its code
        code = GOOD if req.task.task_id == "r/0" else BAD
        return code + "\n```" if _opens_with_fence(req) else f"```python\n{code}\n```"

    sandbox = Sandbox()
    try:
        results = run(cfg, sandbox, ScriptedPolicy(script), task_list, rollout=RolloutConfig(max_turns=1))
    finally:
        getattr(sandbox, "close", lambda: None)()
    for mode in ("last_block", "forced_submit"):
        recs = results[mode].records
        assert [r["passed"] for r in recs] == [True, False], mode
        assert recs[1]["status"] == "failed" and "assert -1 == 3" in recs[1]["detail"], mode
    assert [r["passed"] for r in results["multi_tool"].records] == [False, False]


def test_last_code_block_reads_python_and_submit_fences_in_order():
    def turn(text: str) -> Turn:
        return Turn(generated_ids=[1], text=text)

    def episode(*texts: str) -> Trajectory:
        return Trajectory("t", [0, 1], [0, 1], 1, turns=[turn(t) for t in texts])

    specs = {spec.name: spec for spec in (SearchTool.spec, ExecuteTool.spec, SubmitTool.spec)}
    assert code_tools(specs) == {"execute": ExecuteTool.spec, "submit": SubmitTool.spec}  # read off the specs
    assert last_code_block(episode("```python\nx = 1\n```", "```submit\ny = 2\n```", "no code"), specs) == "y = 2"
    assert last_code_block(episode("```submit\na\n``` then ```python\nb\n```"), specs) == "b"
    assert last_code_block(episode("<search>q</search>", "plain words"), specs) is None
    # only the tool set's own code tools are read: without execute, a ```python block is no submission
    assert last_code_block(episode("```submit\na\n``` then ```python\nb\n```"), {"submit": SubmitTool.spec}) == "a"


# ----------------------------------------------------------------------------------------------- samples per task


def test_samples_at_the_training_temperature_plus_greedy(cfg):
    policy = Recording(lambda req: f"```python\n{GOOD if req.sample_index in (0, 2) else BAD}\n```")
    res = run(cfg, FakeSandbox(), policy, tasks(2), modes=["no_tools"], n_samples=4, sample_temperature=0.7)
    recs = res["no_tools"].records
    assert [(r["sample"], r["greedy"]) for r in recs[:5]] == [(0, True), (1, False), (2, False), (3, False), (4, False)]
    temps = {(r[1], r[3]) for r in policy.requests}
    assert temps == {(0, 0.0), *((s, 0.7) for s in range(1, 5))}
    # pass@1 = mean over the 4 samples (1 of 4 passes: sample 2); the greedy one (sample 0, passed) apart
    assert res["no_tools"].pass_at[1] == 0.25
    flat = flat_metrics(res)
    assert flat["eval/no_tools/pass@1"] == 0.25 and flat["eval/no_tools/greedy_pass@1"] == 1.0
    assert flat["eval/no_tools/rollout/episodes"] == 8.0  # the metrics describe the sampled episodes
    assert "greedy" in format_table({"eval": {"no_tools": mode_summary(res["no_tools"])}})


def test_greedy_only_is_pass_at_1_and_the_config_default_is_four_samples_plus_greedy(cfg):
    res = run(cfg, FakeSandbox(), ScriptedPolicy(lambda r: f"```python\n{GOOD}\n```"), tasks(2), modes=["no_tools"])
    assert [r["sample"] for r in res["no_tools"].records] == [0, 0] and res["no_tools"].pass_at == {1: 1.0}
    ev = cfg.evaluator
    assert (ev.n_samples, ev.greedy, ev.sample_temperature) == (4, True, cfg.rollout.temperature) == (4, True, 0.7)
    assert list(ev.modes) == ["no_tools", "code_only", "multi_tool", "last_block", "forced_submit"]
    with pytest.raises(ValueError, match="no episode"):
        EvalConfig(n_samples=0, greedy=False).validate(["no_tools", "code_only", "multi_tool"])


def test_sample_seeds_differ_per_sample_and_reproduce():
    """The seed a sampler draws for each row comes from the global RNG under `batch_seed`: the same batch draws the
    same seeds whatever ran before, different batches (modes, jobs) draw others, and the RNG is restored after."""
    batch = [(t, s) for t in tasks(2) for s in range(4)]

    def draws(stream, jobs):
        with batch_seed(42, stream, jobs):
            return torch.randint(0, 2**62, (len(jobs),)).tolist()

    before = torch.get_rng_state()
    first = draws("multi_tool", batch)
    torch.rand(10)  # what ran in between (a training step) changes nothing
    assert draws("multi_tool", batch) == first and len(set(first)) == len(batch)
    assert draws("code_only", batch) != first and draws("multi_tool", batch[:4]) != first[:4]
    torch.set_rng_state(before)
    with batch_seed(42, "multi_tool", batch):
        torch.rand(3)
    assert torch.equal(torch.get_rng_state(), before)  # evaluation leaves the caller's randomness as it was


# ----------------------------------------------------------------------------------------------- task types


def test_records_carry_the_task_type_and_metrics_split_by_it(cfg):
    task_list = tasks(4)
    for t, kind in zip(task_list, ["docs", "docs", "plain", None]):
        if kind:
            t.metadata["task_type"] = kind

    def script(req):  # docs tasks search first (t/0 in every sample, t/1 never), all submit; t/0 and t/2 pass
        if req.task.task_id == "t/0" and req.turn_index == 0:
            return "<search>add two numbers</search>"
        return f"```submit\n{GOOD if req.task.task_id in ('t/0', 't/2') else BAD}\n```"

    res = run(cfg, FakeSandbox(), ScriptedPolicy(script), task_list, modes=["multi_tool", "no_tools"], n_samples=2)
    recs = res["multi_tool"].records
    assert {r["task_id"]: r["task_type"] for r in recs} == {"t/0": "docs", "t/1": "docs", "t/2": "plain", "t/3": None}
    assert all({"task_id", "mode", "sample", "passed", "status", "tool_calls", "task_type"} <= set(r) for r in recs)
    flat = flat_metrics(res)
    assert flat["eval/multi_tool/pass@1/docs"] == 0.5 and flat["eval/multi_tool/pass@1/plain"] == 1.0
    assert flat["eval/multi_tool/greedy_pass@1/docs"] == 0.5
    assert flat["eval/multi_tool/tools/search/episode_rate/docs"] == 0.5
    assert flat["eval/multi_tool/tools/search/episode_rate/plain"] == 0.0
    assert math.isclose(flat["eval/multi_tool/tools/search/episode_rate"], 2 / 8)
    assert "eval/multi_tool/pass@1/None" not in flat and flat["eval/no_tools/pass@1/docs"] == 0.0
    assert not [k for k in flat if k.startswith("eval/no_tools/tools/")]


def test_a_baseline_after_a_resumed_multi_tool_runs_its_episodes_once_for_both(cfg, tmp_path):
    from agentic_rl.evaluation.records import ResultStore

    policy = Recording(script_by_task)
    ts = toolsets(cfg, FakeSandbox())
    first = ResultStore.in_dir(tmp_path)
    evaluate(tasks(4), policy, ts, ROLLOUT, EvalConfig(modes=["multi_tool"]), progress=False, store=first)
    n_first = len(policy.requests)
    again = ResultStore.in_dir(tmp_path)
    results = evaluate(tasks(4), policy, ts, ROLLOUT, EvalConfig(modes=MODES), progress=False, store=again)
    # multi_tool came from results.jsonl; its episodes were rolled out again once, shared by both baselines,
    # plus the 3 forced turns
    assert len(policy.requests) - n_first == n_first + 3
    assert [r["passed"] for r in results["last_block"].records] == [False, True, True, False]
    assert len(ResultStore.in_dir(tmp_path)) == 3 * 4
