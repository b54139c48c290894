"""Parts added the way another package would add them: a package on the path, its entry points, its YAML files.

The package `toy_parts` is written to a temporary folder with a `.dist-info` holding its entry points (what
`pip install` writes), and its config files sit in its own `conf/`, searched after the project's with
`hydra.searchpath`. Nothing in agentic_rl imports it or is edited. It brings one part of each kind:
  tool       `<shout>text</shout>` -> the text in capitals          (entry point tool.shout, conf/tool, conf/tools)
  reward     a bonus per shout call                                   (`_target_`, conf/reward/toy.yaml)
  objective  the clipped GRPO objective, counting its calls           (entry point policy_objective.toy)
  sampler    a scripted backend: sample 0 shouts, then submits         (entry point sampler.toy)
  evaluator  every mode scored 0.25                                   (entry point evaluator.toy)
  optimizer  SGD counting its steps                                   (`_target_`, conf/optimizer/toy_sgd.yaml)
  policy     for `agentic_rl.evaluate policy=toy`                    (entry point policy.toy)
  sandbox    grades by a substring, runs nothing                      (`_target_`, conf/sandbox/toy.yaml)
One short training run on the tiny random model goes through all of them from the command-line config.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from hydra import compose, initialize_config_dir

from agentic_rl.config import CONF_DIR, register_configs
from agentic_rl.registry import BUILTINS, Registry

register_configs()

PACKAGE = '''
"""A third-party package of agentic_rl parts (written by tests/test_components.py)."""
import re
import time

import torch

from agentic_rl.algo.core import grpo_clip
from agentic_rl.evaluation.evaluator import ModeResult
from agentic_rl.evaluation.policies import PolicySource
from agentic_rl.rollout.policy import ScriptedPolicy
from agentic_rl.rollout.tokenizer import ByteChatTokenizer, HFChatTokenizer
from agentic_rl.sandbox import ExecResult, TestReport
from agentic_rl.tools.base import Tool, ToolSpec
from agentic_rl.types import RewardBreakdown

CALLS = {"objective": 0, "optimizer_steps": 0, "sampler_built": 0}
GOOD = "def add(a, b):\\n    return a + b"


class ShoutTool(Tool):
    spec = ToolSpec(name="shout", call_pattern=re.compile(r"<shout>(.*?)</shout>", re.DOTALL),
                    result_tag="shout_result", description="Shout: <shout>text</shout>")

    def __call__(self, call, task):
        return self.observation(call.content.upper(), start=time.perf_counter())


def shout_reward(traj, per_call=0.5):
    n = traj.calls_by_kind().get("shout", 0)
    return RewardBreakdown(total=per_call * n, terms={"shouts": per_call * n})


def counting_objective(logp, old_logp, advantages, mask, *, clip_eps):
    CALLS["objective"] += 1
    return grpo_clip(logp, old_logp, advantages, mask, clip_eps=clip_eps)


def script(request):
    if request.sample_index % 2 == 0 and request.turn_index == 0:
        return "<shout>hello</shout>"
    return "```submit\\n" + GOOD + "\\n```"


class ScriptedSampler(ScriptedPolicy):
    def __init__(self, model, tokenizer, **options):
        CALLS["sampler_built"] += 1
        super().__init__(script, HFChatTokenizer(tokenizer) if tokenizer is not None else ByteChatTokenizer())


def quarter_evaluator(tasks, policy, toolsets, rollout, cfg, progress=True, store=None):
    return {mode: ModeResult(mode=mode, pass_at={1: 0.25}, metrics={}, trajectories=[], n_tasks=len(tasks))
            for mode in cfg.modes}


class CountingSGD(torch.optim.SGD):
    def step(self, closure=None):
        CALLS["optimizer_steps"] += 1
        return super().step(closure)


class EchoPolicy(PolicySource):
    @staticmethod
    def describe(cfg):
        return {"policy": "toy"}

    @staticmethod
    def load(cfg):
        return ScriptedPolicy(script)


class FakeSandbox:
    python = None

    def execute(self, code, timeout_s=None):
        return ExecResult(ok=True, status="ok", stdout="", stderr="")

    def run_tests(self, code, test, *, harness, entry_point=None, timeout_s=None):
        ok = "return a + b" in code
        return TestReport(ok, "passed" if ok else "failed", 1, 0 if ok else 1, "")

    def close(self):
        pass
'''

ENTRY_POINTS = """\
[agentic_rl.components]
tool.shout = toy_parts:ShoutTool
policy_objective.toy = toy_parts:counting_objective
sampler.toy = toy_parts:ScriptedSampler
evaluator.toy = toy_parts:quarter_evaluator
policy.toy = toy_parts:EchoPolicy
"""

CONF = {
    "tool/shout.yaml": "_target_: toy_parts.ShoutTool\nmax_chars: 40\n",
    "tools/shout.yaml": """\
        defaults:
          - /tool@shout: shout
          - /tool@submit: submit
          - _self_
        name: shout
        active: [shout, submit]
        preamble: |
          You have {n_tools} tools:
        """,
    "reward/toy.yaml": "_target_: toy_parts.shout_reward\n_partial_: true\nper_call: 0.5\n",
    "optimizer/toy_sgd.yaml": "_target_: toy_parts.CountingSGD\nlr: ${algo.lr}\n",
    "sandbox/toy.yaml": "_target_: toy_parts.FakeSandbox\n",
}


@pytest.fixture
def toy_package(tmp_path, monkeypatch):
    """Write `toy_parts` and its dist-info to a folder on sys.path; return its conf dir and module."""
    site = tmp_path / "site"
    (site / "toy_parts").mkdir(parents=True)
    (site / "toy_parts" / "__init__.py").write_text(PACKAGE)
    dist = site / "toy_parts-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-parts\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    conf = site / "toy_parts" / "conf"
    for rel, text in CONF.items():
        (conf / rel).parent.mkdir(parents=True, exist_ok=True)
        (conf / rel).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(site))
    import toy_parts

    yield conf, toy_parts
    sys.modules.pop("toy_parts", None)
    from agentic_rl.tools.base import TOOL_SPECS

    TOOL_SPECS.pop("shout", None)


def compose_with(conf: Path, primary: str, *overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(primary, overrides=[f"hydra.searchpath=[file://{conf}]", "logger=none", *overrides])


TRAIN = [
    "model=tiny-random",
    "tools=shout",
    "reward=toy",
    "optimizer=toy_sgd",
    "sandbox=toy",
    "rollout.backend=toy",
    "algo.objective=toy",
    "evaluator.name=toy",
    "evaluator.modes=[code_only]",
    "algo.group_size=2",
    "algo.epochs=1",
    "algo.tasks_per_epoch=1",
    "algo.tasks_per_rollout=1",
    "algo.lr=0.05",
    "data.limit=1",
    "eval_before=false",
    "rollout.max_turns=2",
    "rollout.max_new_tokens=40",
    "progress=false",
    "save_adapter=false",
    "checkpoint_every=0",
]


def test_a_toy_of_each_kind_trains_from_the_command_line_config(toy_package, tmp_path):
    from agentic_rl import train

    conf, toy = toy_package
    cfg = compose_with(conf, "train", *TRAIN, f"+run_dir={tmp_path / 'run'}")
    summary = train.run(cfg)  # validates first: an undiscovered tool would be an unknown key `tools.shout`

    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    step = next(r for r in records if "train/reward_mean" in r)
    # sample 0 shouts once (reward 0.5), sample 1 submits at once (0): the toy tool ran and the toy reward paid it
    assert step["tools/shout_rate"] > 0 and step["reward/shouts"] == pytest.approx(0.25)
    assert step["train/reward_mean"] == pytest.approx(0.25) and step["train/pass_rate"] == 1.0
    assert toy.CALLS["sampler_built"] == 1  # rollout.backend=toy built the policy
    assert toy.CALLS["objective"] >= 1 and toy.CALLS["optimizer_steps"] == 1  # the group had signal: one step
    assert summary["eval"]["after"] == {"code_only": {"pass@1": 0.25}}  # the toy evaluator's score


def test_the_toy_policy_answers_an_evaluation_config(toy_package):
    from agentic_rl.evaluate import describe_policy, load_policy
    from agentic_rl.rollout import RolloutConfig, run_episodes
    from agentic_rl.tools import build_toolset
    from agentic_rl.types import Task

    conf, toy = toy_package
    cfg = compose_with(conf, "evaluate", "policy=toy")
    assert describe_policy(cfg) == {"policy": "toy"}
    toolset = build_toolset(compose_with(conf, "train", "tools=shout").tools, toy.FakeSandbox())
    task = Task(task_id="t/add", prompt="Write add(a, b).", tests="", harness="pytest", entry_point="add")
    traj = run_episodes([(task, 0)], load_policy(cfg), toolset, RolloutConfig(max_turns=2, max_new_tokens=60))[0]
    assert traj.turns[0].observation.text == "<shout_result>\nHELLO\n</shout_result>" and traj.passed


def test_the_toy_tool_is_a_column_after_the_builtins_whatever_was_imported(toy_package):
    from agentic_rl.tools.base import TOOL_SPECS, tool_names

    TOOL_SPECS.pop("shout", None)  # as if the toy's module had never been imported: the declaration finds it
    assert tool_names() == (*BUILTINS["tool"], "shout")


def test_an_unknown_name_lists_the_available_ones(toy_package):
    from agentic_rl.rollout.agent import RolloutConfig
    from agentic_rl.rollout.backends import make_policy

    with pytest.raises(ValueError, match=r"rollout.backend='vlm'.*available: hf, vllm, auto, toy"):
        make_policy(None, None, SimpleNamespace(backend="vlm"))
    with pytest.raises(ValueError, match=r"rollout.backend='vlm' is not a sampler; available: hf, vllm, auto, toy"):
        RolloutConfig(backend="vlm")


def test_every_builtin_reference_imports():
    for kind, table in BUILTINS.items():
        loaded = Registry(kind).load_all()
        assert list(loaded) == list(table) and all(callable(obj) for obj in loaded.values()), kind


def test_a_package_cannot_replace_a_builtin_and_a_table_cannot_register_one_twice():
    table: Registry = Registry("tool")
    with pytest.raises(ValueError, match="registered twice"):
        table.register("search")(object)
    fns: Registry = Registry("toy function")
    fns.register("a")(len)
    with pytest.raises(ValueError, match="registered twice"):
        fns.register("a")(len)
    assert fns.get("a") is len and fns.names() == ["a"]


def test_a_builtin_whose_package_is_missing_says_so(monkeypatch):
    from agentic_rl.rollout.backends import make_policy

    monkeypatch.setitem(BUILTINS["sampler"], "gone", "agentic_rl.rollout.not_installed_engine:Engine")
    with pytest.raises(ValueError, match=r"rollout.backend='gone'.*cannot be loaded.*choose another of: hf"):
        make_policy(None, None, SimpleNamespace(backend="gone"))
