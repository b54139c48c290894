"""The environment is a component: a package that is not this one adds an environment, named in config by its import
path (`env._target_=...`), and `agentic_rl.train` trains a GRPO step on it with no edit to the trainer.

The toy package is written to a temporary folder and put on `sys.path`, as a user's own package would be installed.
Its episodes ask for any reply and grade it by the parity of its length; its hooks count the episodes and their
characters, which the training step logs beside the trainer's own metrics.
"""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import pytest

import agentic_rl.train as train
from tests.e2e.test_warmup_run import compose_train

TOY_PACKAGE = '''
"""A toy environment: one turn, any reply is the answer, graded by the parity of its length."""

from agentic_rl.envs.base import Environment, Episode
from agentic_rl.types import Observation, ToolCall

OPENED = []  # (task id, sample) of every episode opened, read by the test


class GuessEpisode(Episode):
    tools = ("guess",)
    answers_once = True

    def __init__(self, task):
        self.task = task

    def prompt_messages(self, observation_format):
        return [{"role": "user", "content": "Say anything: " + self.task.prompt}]

    def parse(self, text):
        return ToolCall(name="guess", content=text, start=0, end=len(text))

    def grades(self, name):
        return True

    def final(self, name):
        return True

    def step(self, call):
        passed = len(call.content) % 2 == 0
        return Observation(tool="guess", text="", ok=True, status="passed" if passed else "failed", passed=passed)


class ToyEnvironment(Environment):
    name = "toy"

    def __init__(self, toolset, label="toy"):
        self.toolset, self.label = toolset, label  # the run's tool set is handed in; this environment ignores it

    def open(self, task, sample_index):
        OPENED.append((task.task_id, sample_index))
        return GuessEpisode(task)

    def stops(self, text):
        return False

    def episode_counts(self, traj, task):
        return {"chars": len(traj.turns[0].text), "passed": traj.passed}

    def metrics(self, counts):
        counts = [c for c in counts if c is not None]
        return {
            self.label + "/episodes": float(len(counts)),
            self.label + "/pass_rate": sum(c["passed"] for c in counts) / len(counts),
        }


def not_an_environment(toolset):
    return toolset
'''

STEP = [
    "model=tiny-random",
    "data=pipelines",
    "data.limit=2",
    "logger=none",
    "progress=false",
    "warmup=none",
    "eval_before=false",
    "eval_after=false",
    "checkpoint_every=0",
    "save_adapter=false",
    "reward=binary",
    "algo.group_size=4",
    "algo.epochs=1",
    "algo.tasks_per_epoch=1",
    "algo.tasks_per_rollout=1",
    "algo.lr=0.01",
    "rollout.max_turns=1",
    "rollout.max_new_tokens=12",
    "rollout.temperature=1.0",
]


@pytest.fixture
def toy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "pkgs" / "toy_env_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(TOY_PACKAGE))
    monkeypatch.syspath_prepend(str(package.parent))
    import importlib

    module = importlib.import_module("toy_env_pkg")
    yield module
    import sys

    sys.modules.pop("toy_env_pkg", None)


def test_a_toy_environment_from_another_package_trains_one_grpo_step(tmp_path, toy_package):
    cfg = compose_train(
        *STEP, "env._target_=toy_env_pkg.ToyEnvironment", "+env.label=toy", f"+run_dir={tmp_path / 'run'}"
    )
    summary = train.run(cfg)
    assert summary["train_steps"] == 1
    # every episode of the step was opened by the toy environment: G samples of the one task
    assert sorted(i for _, i in toy_package.OPENED) == [0, 1, 2, 3]
    (step,) = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    # the environment's hooks are logged with the step, and agree with the trainer's view of the same episodes
    assert step["toy/episodes"] == 4.0
    assert step["toy/pass_rate"] == step["train/pass_rate"]
    # the episode's own tool is what calls are counted under
    assert step["tools/guess_rate"] == 1.0
    # a real update: the rewards (length parity) differ within the group, so the loss is there and the adapter moved
    assert 0 < step["train/pass_rate"] < 1, "the sampled replies' parity did not vary: pick another seed"
    assert math.isfinite(step["train/loss"]) and step["train/grad_norm"] > 0


def test_an_env_target_that_is_no_environment_is_refused_with_a_fix(tmp_path, toy_package):
    from agentic_rl.errors import ConfigError

    cfg = compose_train(*STEP, "env._target_=toy_env_pkg.not_an_environment", f"+run_dir={tmp_path / 'run'}")
    with pytest.raises(ConfigError, match="built a ToolSet, not an Environment"):
        train.run(cfg)


def test_the_evaluator_evaluates_a_mode_on_an_environment_that_is_no_tool_set(toy_package):
    """The evaluator asks an environment only what `Environment` declares (`answers_once`, `specs`, the hooks), so
    a mode may run in the toy environment: its episodes graded by their own step, its hooks in the mode's metrics."""
    from agentic_rl.evaluation.evaluator import EvalConfig, evaluate
    from agentic_rl.evaluation.replay import ReplayPolicy
    from agentic_rl.rollout import RolloutConfig, ScriptedPolicy
    from agentic_rl.types import Task

    tasks = [Task(f"toy/{n}", f"task {n}", "", "pytest", "f") for n in range(3)]
    replies = {"toy/0": "ab", "toy/1": "abc", "toy/2": "abcd"}  # even, odd, even: passed, failed, passed
    budgets: list[int] = []

    class Recording(ScriptedPolicy):
        def generate(self, requests, sampling, stop):
            budgets.append(sampling.max_new_tokens)
            return super().generate(requests, sampling, stop)

    def run(env):
        policy = Recording(lambda req: replies[req.task.task_id])
        rollout = RolloutConfig(max_turns=2, max_new_tokens=16)
        return evaluate(tasks, policy, {"guess": env}, rollout, EvalConfig(modes=["guess"]), progress=False)["guess"]

    result = run(toy_package.ToyEnvironment(toolset=None))
    assert [r["passed"] for r in result.records] == [True, False, True]
    assert result.pass_at == {1: pytest.approx(2 / 3)}
    assert [r["env"] for r in result.records] == [{"chars": n, "passed": n % 2 == 0} for n in (2, 3, 4)]
    assert result.metrics["toy/episodes"] == 3.0 and result.metrics["toy/pass_rate"] == pytest.approx(2 / 3)
    assert result.metrics["tools/guess_rate"] == 1.0 and budgets == [16]  # a tool mode's turn: its own budget

    class AnswersOnce(toy_package.ToyEnvironment):
        answers_once = True  # declared: its one turn gets the mode's whole budget, and no tools/* metrics

    budgets.clear()
    once = run(AnswersOnce(toolset=None))
    assert [r["passed"] for r in once.records] == [True, False, True] and budgets == [2 * 16]
    assert not [k for k in once.metrics if k.startswith("tools/")]
    # a replay answers an environment that names no submit tool (`specs` None) in a ```python block
    assert ReplayPolicy({"toy/0": ["x = 1"]}).for_mode(AnswersOnce(toolset=None), RolloutConfig())[0].fence == "python"
