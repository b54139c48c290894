"""A fourth tool added the way a user would: ONE Python class and TWO YAML files, nothing else edited.

The toy `<calc>2*(3+4)</calc>` tool is declared by its class (`spec`), configured by conf/tool/calc.yaml, and
offered by a tool set conf/tools/calc.yaml. It runs through a scripted rollout, the metrics, an evaluation
report and the figures, whose column and curve for it must appear without any change to the package.
"""

from __future__ import annotations

import ast
import json
import operator
import re
import sys
import time
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

import agentic_rl.evaluate  # noqa: F401  (registers the config schemas)
from agentic_rl.evaluation.evaluator import EvalConfig, evaluate
from agentic_rl.evaluation.report import format_table, mode_summary, plot_eval_summary, reported_tools
from agentic_rl.reports.plots import plot_run, tool_rate_curves
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.sandbox import ExecResult, TestReport
from agentic_rl.tools import build_toolset
from agentic_rl.tools.base import TOOL_SPECS
from agentic_rl.tracking.metrics import episode_metrics
from agentic_rl.types import Task

CONF = Path(__file__).resolve().parents[2] / "conf"
GOOD = "def add(a, b):\n    return a + b"
TASK = Task(
    task_id="t/add", prompt="Write add(a, b).", tests="def test_add(): ...", harness="pytest", entry_point="add"
)

# The toy tool's whole definition: one class (made inside the fixture, so that its registration does not
# leak into other tests) and these two YAML files.
TOOL_YAML = """\
_target_: {target}
max_chars: 60
"""
TOOLSET_YAML = """\
defaults:
  - /tool@calc: calc
  - /tool@execute: execute
  - /tool@submit: submit
  - _self_

name: calc
active: [calc, execute, submit]
worked_example: false
preamble: |
  You are an expert Python programmer. You solve the task by calling tools; you have {n_tools} of them:
"""


def make_calc_tool():
    from agentic_rl.tools.base import Tool, ToolSpec

    binary = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}

    class CalcTool(Tool):
        """Arithmetic on numbers with + - * / and parentheses; anything else is a recorded error."""

        spec = ToolSpec(
            name="calc",
            call_pattern=re.compile(r"<calc>(.*?)</calc>", re.DOTALL),
            result_tag="calc_result",
            counts_toward_cap=True,
            description="Calculate: <calc>2*(3+4)</calc>",
        )

        def __call__(self, call, task):
            start = time.perf_counter()

            def value(node):
                if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
                    return node.value
                if isinstance(node, ast.BinOp) and type(node.op) in binary:
                    return binary[type(node.op)](value(node.left), value(node.right))
                raise ValueError("only numbers, + - * / and parentheses")

            try:
                return self.observation(str(value(ast.parse(call.content.strip(), mode="eval").body)), start=start)
            except (SyntaxError, ValueError, ZeroDivisionError) as exc:
                return self.observation(f"error: {exc}", start=start, ok=False, status="error")

    return CalcTool


class FakeSandbox:
    python = sys.executable

    def execute(self, code, timeout_s=None):
        return ExecResult(ok=True, status="ok", stdout="ran\n", stderr="")

    def run_tests(self, code, test, *, harness, entry_point=None, timeout_s=None):
        ok = "return a + b" in code
        return TestReport(ok, "passed" if ok else "failed", 2, 0 if ok else 1, "" if ok else "1/2 failed")


@pytest.fixture
def calc_conf(tmp_path, monkeypatch):
    """The two YAML files in a config folder searched after conf/, and the class importable by `_target_`."""
    cls = make_calc_tool()
    module = sys.modules[__name__]
    monkeypatch.setattr(module, "CalcTool", cls, raising=False)
    extra = tmp_path / "conf"
    (extra / "tool").mkdir(parents=True)
    (extra / "tools").mkdir()
    (extra / "tool" / "calc.yaml").write_text(TOOL_YAML.format(target=f"{__name__}.CalcTool"))
    (extra / "tools" / "calc.yaml").write_text(TOOLSET_YAML)
    yield extra
    TOOL_SPECS.pop("calc", None)


def compose_with(extra: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(
            "train",
            overrides=[
                "logger=none",
                f"hydra.searchpath=[file://{extra}]",
                "tools=calc",
                "+tools@evaluator.toolsets.calc_mode=calc",
                *overrides,
            ],
        )


def script(req):
    """Turn 0: a calculation; turn 1: the solution."""
    return ["First <calc>2*(3+4)</calc>", "```submit\n" + GOOD + "\n```"][min(req.turn_index, 1)]


def test_toy_tool_needs_one_class_and_two_yaml_files(calc_conf, tmp_path):
    added = sorted(p.relative_to(calc_conf).as_posix() for p in calc_conf.rglob("*.yaml"))
    assert added == ["tool/calc.yaml", "tools/calc.yaml"]
    cfg = compose_with(calc_conf)
    sandbox = FakeSandbox()
    toolset = build_toolset(cfg.tools, sandbox)
    assert toolset.active == ("calc", "execute", "submit")
    assert "Calculate: <calc>" in toolset.system_prompt and "you have 3 of them" in toolset.system_prompt

    # scripted rollout: the call is parsed, generation stops at </calc>, the observation is tagged and capped
    rollout = RolloutConfig(
        max_turns=3, max_new_tokens=200, on_no_call="stop", observation_format="inline", max_tool_calls=1
    )
    traj = run_episodes([(TASK, 0)], ScriptedPolicy(script), toolset, rollout)[0]
    first = traj.turns[0]
    assert first.text.endswith("</calc>") and first.call.name == "calc" and first.call.content == "2*(3+4)"
    assert first.observation.text == "<calc_result>\n14\n</calc_result>"
    assert traj.passed and traj.calls_by_kind()["calc"] == 1

    # the cap C counts it (declared counts_toward_cap): a second calc after one is refused
    capped = run_episodes([(TASK, 0)], ScriptedPolicy(lambda r: "<calc>1+1</calc>"), toolset, rollout)[0]
    assert [t.observation.status for t in capped.turns] == ["ok", "capped", "capped"]

    # metrics: its rate, latency and error rate under the standard names
    metrics = episode_metrics([traj, capped])
    assert metrics["tools/calc_rate"] == pytest.approx(2 / 5)  # 2 executed calc calls over 5 turns
    assert metrics["tools/calc/error_rate"] == 0.0 and "tools/calc/latency_ms" in metrics

    # evaluation report: a column for it in the table, a bar segment for it in the figure
    ec = EvalConfig(modes=["calc_mode", "code_only"])
    toolsets = {m: build_toolset(cfg.evaluator.toolsets[m], sandbox) for m in ec.modes}
    results = evaluate([TASK], ScriptedPolicy(script), toolsets, rollout, ec, progress=False)
    summary = {"n_tasks": 1, "n_samples": 1, "eval": {m: mode_summary(r) for m, r in results.items()}}
    assert summary["eval"]["calc_mode"]["tools/calc_rate"] == pytest.approx(0.5)
    assert reported_tools(summary["eval"]) == ["search", "execute", "submit", "calc"]
    header = format_table(summary).splitlines()[0].split()
    assert "calc" in header and header.index("calc") > header.index("submit")
    assert plot_eval_summary(summary, tmp_path / "eval.png").read_bytes()[:4] == b"\x89PNG"

    # training figure: a tool-rate curve for it
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with open(run_dir / "metrics.jsonl", "w") as f:
        for step in range(3):
            f.write(
                json.dumps({"step": step, "train/pass_rate": 1.0, "train/reward_mean": 1.0, **episode_metrics([traj])})
                + "\n"
            )
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert ("tools/calc_rate", "calc") in tool_rate_curves(records)
    assert plot_run(run_dir).read_bytes()[:4] == b"\x89PNG"


def test_a_bad_calculation_is_a_recorded_error(calc_conf):
    cfg = compose_with(calc_conf)
    toolset = build_toolset(cfg.tools, FakeSandbox())
    rollout = RolloutConfig(max_turns=2, max_new_tokens=200, on_no_call="stop", observation_format="inline")
    replies = ["<calc>__import__('os')</calc>", "```submit\n" + GOOD + "\n```"]
    traj = run_episodes([(TASK, 0)], ScriptedPolicy(lambda r: replies[r.turn_index]), toolset, rollout)[0]
    obs = traj.turns[0].observation
    assert not obs.ok and obs.status == "error" and "only numbers" in obs.text
    assert episode_metrics([traj])["tools/calc/error_rate"] == 1.0


def test_two_tools_cannot_declare_one_name():
    from agentic_rl.tools.base import Tool, ToolSpec

    with pytest.raises(ValueError, match="declare the name 'search'"):

        class Impostor(Tool):  # noqa: F841
            spec = ToolSpec(name="search", call_pattern=re.compile(r"<s>(.*?)</s>"), result_tag="s")
