"""`python -m agentic_rl.envs.synthesize` against a stand-in OpenAI endpoint that replays written replies: every
stage's yield, pass@K, the filters, failures recorded (malformed, refused, timed out, garbage), and resumption."""

from __future__ import annotations

import json

import pytest

from agentic_rl.envs.synthesize import prompts
from agentic_rl.envs.synthesize.cli import main
from agentic_rl.envs.synthesize.endpoint import ChatEndpoint, EndpointFailure
from agentic_rl.envs.tasks import load_codegym, read_environments
from tests.envs.synth_stub import StubEndpoint

SUM_ENV = '''```python
class SumEnv(ToolEnv):
    """Sum a hidden list of numbers."""

    def load(self, options):
        self.nums = list(options["nums"])

    def Observe(self):
        """Return the number of elements."""
        return len(self.nums)

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def get_ref_answer(self):
        return sum(self.nums)
```'''
RIGHT = """```python
import json


def solve(call):
    n = json.loads(call("Observe"))
    total = json.loads(call("GetItem", index=0))
    for i in range(1, n):
        total = json.loads(call("Add", a=total, b=json.loads(call("GetItem", index=i))))
    return total
```"""
WRONG = '```python\ndef solve(call):\n    call("Observe")\n    return 0\n```'
INPUTS = [
    {"nums": [1, 2, 3, 4, 5]},  # 15: the reference model's constant guess solves it (too easy)
    {"nums": [2, 4, 6, 8, 10, 12]},
    {"nums": [1, 2]},  # 5 calls: too few
    {"nums": "ab"},  # the solution raises
    {"nums": [1, 2, 3, 4, 5]},  # a duplicate
    {"nums": [7, 7, 7, 7, 7]},
    {"nums": [3, 1, 4, 1, 5, 9]},
]
PROBLEMS = ["p_sum", "p_refused", "p_bad_inputs", "p_timeout", "p_garbage"]


def problem_row(pid):
    solution = "def total(nums):\n    return sum(nums)\n"
    return {
        "question_id": pid,
        "question": "Return the sum of nums.",
        "solution": solution,
        "test_info": [{"function_name": "total"}],
    }


def responder(overrides=None):
    """Replies by request kind (the system prompt) and problem; `overrides[(kind, pid)]` replaces one."""
    solver_replies = iter(["I cannot write code.", WRONG, RIGHT, RIGHT])

    def respond(body):
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        pid = next((p for p in PROBLEMS if p in user), None)
        kind = {prompts.ENVIRONMENT_SYSTEM: "env", prompts.INPUTS_SYSTEM: "inputs", prompts.SOLVER_SYSTEM: "solver"}
        kind = kind.get(system, "reference")
        if (kind, pid) in (overrides or {}):
            return overrides[(kind, pid)]
        if kind == "env":
            return SUM_ENV
        if kind == "inputs":
            return f"Here you go:\n```json\n{json.dumps(INPUTS)}\n```"
        if kind == "solver":
            return next(solver_replies)
        return '<action>{"name": "Done", "parameters": {"answer": 15}}</action>'  # the reference's guess

    return respond


FIRST = {
    ("env", "p_refused"): {"refusal": "I can't help with that."},
    ("inputs", "p_bad_inputs"): "```json\n{not json\n```",
    ("env", "p_timeout"): {"sleep": 4, "then": SUM_ENV},
    ("env", "p_garbage"): {"raw": b"<html>proxy error</html>"},
}


def run(tmp_path, stub, *extra):
    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(json.dumps(problem_row(p)) + "\n" for p in PROBLEMS))
    out = tmp_path / "envs.jsonl"
    argv = [str(problems), "--endpoint", stub.url, "--model", "stub", "--out", str(out), "-k", "3"]
    assert main([*argv, "--timeout-s", "2", "--reference-endpoint", stub.url, "--reference-model", "ref", *extra]) == 0
    return out, json.loads((tmp_path / "envs.report.json").read_text())


def asked_about(stub, pid):
    return sum(pid in json.dumps(body) for body in stub.requests)


def test_synthesis_yields_failures_and_resumption(tmp_path):
    with StubEndpoint(responder(FIRST)) as stub:
        out, report = run(tmp_path, stub)
    (env,) = read_environments(out)
    assert env["env_id"] == "synth/p_sum" and env["oracle"] == "solve"
    assert [c["nums"] for c in env["configs"]] == [[2, 4, 6, 8, 10, 12], [7, 7, 7, 7, 7], [3, 1, 4, 1, 5, 9]]
    assert env["oracle_calls"] == [13, 11, 13]  # Observe, n GetItem, n - 1 Add, Done
    assert report["problems_in"] == 5 and report["environments_out"] == 1 and report["configs_out"] == 3
    assert report["dropped_configs"] == {
        "duplicate_input": 1,
        "solution_failed": 1,
        "too_few_calls": 1,
        "too_easy": 1,
        "malformed_candidate": 1,
    }
    stages = report["stages"]
    assert stages["inputs"]["configs_in"] == 7 and stages["outputs"]["configs_out"] == 5
    assert stages["solvable"]["configs_out"] == 5 and stages["complexity"]["configs_out"] == 4
    assert stages["constant"]["configs_out"] == 4 and stages["difficulty"]["configs_out"] == 3
    problems = report["problems"]
    assert problems["p_refused"] == {"status": "failed", "stage": "environment", "reason": "refused"}
    assert problems["p_bad_inputs"] == {"status": "failed", "stage": "inputs", "reason": "malformed_reply"}
    assert problems["p_timeout"] == {"status": "failed", "stage": "environment", "reason": "timeout"}
    assert problems["p_garbage"]["reason"] == "malformed_reply"
    # the kept file loads as CodeGym tasks, and its oracle and configurations pass the project's verify rules
    assert len(load_codegym(str(out), split="all")) == 3

    # killed after writing p_sum's environment but before its status line, mid-way through another line
    status = tmp_path / "envs.status.jsonl"
    lines = [line for line in status.read_text().splitlines() if '"p_sum"' not in line]
    status.write_text("\n".join(lines) + '\n{"problem_id": "p_ti')
    with StubEndpoint(responder({("env", "p_timeout"): {"refusal": "no"}})) as stub:
        out, report = run(tmp_path, stub)
        # finished problems are never asked again; the timed-out one (transient) is
        assert [asked_about(stub, p) for p in PROBLEMS] == [0, 0, 0, 1, 0]
    assert [e["env_id"] for e in read_environments(out)] == ["synth/p_sum"]  # not written twice
    assert report["problems"]["p_sum"]["status"] == "kept" and report["environments_out"] == 1
    assert report["problems"]["p_timeout"]["reason"] == "refused" and report["problems_finished"] == 5


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ({"status": 500, "text": "overloaded"}, "http_error"),
        ({"raw": b'{"choices": []}'}, "malformed_reply"),
        ({"refusal": "no"}, "refused"),
        ("", "malformed_reply"),
        ({"sleep": 2}, "timeout"),
    ],
)
def test_every_endpoint_failure_is_an_endpoint_failure(reply, kind):
    with StubEndpoint(lambda body: reply) as stub:
        with pytest.raises(EndpointFailure) as info:
            ChatEndpoint(stub.url, "m", timeout_s=0.5).complete([{"role": "user", "content": "hi"}])
    assert info.value.kind == kind and info.value.transient == (kind in ("timeout", "http_error"))


def test_replies_without_what_was_asked_for_are_reply_errors():
    with pytest.raises(prompts.ReplyError, match="ToolEnv"):
        prompts.read_environment("```python\nclass X:\n    pass\n```")
    with pytest.raises(prompts.ReplyError, match="not valid Python"):
        prompts.read_solver("```python\ndef solve(call)\n```")
    with pytest.raises(prompts.ReplyError, match="list of objects"):
        prompts.read_inputs('```json\n{"a": 1}\n```')


def test_a_broken_problems_file_is_a_clear_error(tmp_path, caplog):
    bad = tmp_path / "problems.jsonl"
    bad.write_text(json.dumps(problem_row("a")) + "\n" + '{"question_id": "b", "question": "q"}\n')
    assert main([str(bad), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--out", str(tmp_path / "o")]) == 2
    assert "problems.jsonl, line 2: field 'solution'" in caplog.text


def test_a_row_whose_solution_cannot_be_run_is_a_recorded_drop_not_a_stop(tmp_path):
    """KodCode has class-based rows (no function to call) and a row can hold code that does not parse: each is that
    problem's recorded drop, asked nothing of the endpoint, and the other problems are synthesized."""
    class_based = {"question_id": "p_class", "question": "A stack.", "solution": "class Stack:\n    pass\n"}
    broken = {"question_id": "p_broken", "question": "Sum.", "solution": "def total(nums)\n    return 0\n"}
    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(json.dumps(r) + "\n" for r in (class_based, problem_row("p_sum"), broken)))
    out = tmp_path / "envs.jsonl"
    argv = [str(problems), "--endpoint", "", "--model", "stub", "--out", str(out), "-k", "3", "--timeout-s", "2"]
    with StubEndpoint(responder()) as stub:
        argv[2] = stub.url
        assert main([*argv, "--reference-endpoint", stub.url, "--reference-model", "ref"]) == 0
        assert asked_about(stub, "p_class") == 0 and asked_about(stub, "p_broken") == 0
    report = json.loads((tmp_path / "envs.report.json").read_text())
    assert report["problems_in"] == 3 and report["environments_out"] == 1
    assert report["problems"]["p_sum"]["status"] == "kept"
    assert report["problems"]["p_class"] == {
        "status": "dropped",
        "stage": "problem",
        "reason": "no entry point: test_info names no function and the solution has no top-level function",
    }
    assert report["problems"]["p_broken"]["stage"] == "problem"
    assert report["problems"]["p_broken"]["reason"].startswith("the solution is not valid Python")
    # a rerun asks nothing again: the drops are final
    with StubEndpoint(responder()) as stub:
        argv[2] = stub.url
        assert main([*argv, "--reference-endpoint", stub.url, "--reference-model", "ref"]) == 0
        assert stub.requests == []
