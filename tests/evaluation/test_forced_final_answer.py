"""The `forced_submit` baseline beyond code tasks, and the constant-answer baseline in an evaluation's summary.

- A CodeGym evaluation runs every default mode (the tiny random model): a forced final turn is a `Done` answer,
  never a crash (it was: the submit fence's code reached CodeGym's JSON parser).
- An environment that declares no final answer keeps its episodes, each recorded with finish_reason
  "no_final_answer", and the model is not asked; an episode an infrastructure failure ended is not forced.
- `last_block` keeps the verdict of an episode graded by its environment's own final call (a CodeGym `Done`).
- `python -m agentic_rl.evaluate` on CodeGym tasks writes the constant-answer baseline into summary.json (a value
  computed by hand below), and prints it beside the success rates; on code tasks it writes none.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

from hydra import compose, initialize_config_dir

import agentic_rl.evaluate as evaluate
from agentic_rl.envs.base import Environment, Episode
from agentic_rl.evaluation.baselines import forced_submit_baseline
from agentic_rl.evaluation.records import record_from_trajectory
from agentic_rl.paths import CONFIG_PATH
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import NO_FINAL_ANSWER, RolloutResult
from agentic_rl.types import Observation, Task, ToolCall
from tests.envs.test_constant_answer import CODE as ENVS_CODE

QUIET = ["logger=none", "progress=false", "sandbox.workers=1"]
CODEGYM = ["data=codegym", "data.shuffle=false", "sandbox.preload=[json]"]


def compose_eval(*overrides):
    with initialize_config_dir(config_dir=str(CONFIG_PATH), version_base="1.3"):
        return compose("evaluate", overrides=[*QUIET, *overrides])


def read_records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


# ------------------------------------------------------------------------------------ forced final turn on CodeGym


def test_the_tiny_random_model_evaluates_codegym_in_every_default_mode(tmp_path):
    cfg = compose_eval(
        *CODEGYM,
        "model=tiny-random",
        "data.envs=[strings/PalindromeCheckEnv]",
        "data.configs_per_env=1",
        # sampled episodes: random weights at temperature write random text (the greedy one writes next to nothing),
        # which is what reached CodeGym's JSON parser as a forced submission's code and raised
        "evaluator.n_samples=2",
        "rollout.max_turns=1",
        "rollout.max_new_tokens=8",
        f"+run_dir={tmp_path}",
    )
    summary = evaluate.run(cfg)  # default modes: no_tools, code_only, multi_tool, last_block, forced_submit
    records = read_records(tmp_path)
    multi = {(r["task_id"], r["sample"]): r for r in records if r["mode"] == "multi_tool"}
    forced = {(r["task_id"], r["sample"]): r for r in records if r["mode"] == "forced_submit"}
    assert len(forced) == 3 and set(summary["eval"]) == set(cfg.evaluator.modes)
    for key, r in forced.items():  # random weights never call Done in one turn: each episode was forced once
        assert not multi[key]["env"]["done"] and r["turns"] == multi[key]["turns"] + 1
        assert r["finish_reason"] in ("passed", "failed", "no_call")  # an answer graded by Done, or none written
        assert r["finish_reason"] != "no_call" or r["status"] == "no_submission"


# ------------------------------------------------------------------------------ an environment with no final answer


class PingEpisode(Episode):
    """A toy episode: `<ping/>` is its only call; it declares no final answer (the base class's None)."""

    tools = ("ping",)

    def __init__(self, task: Task) -> None:
        self.task = task

    def prompt_messages(self, observation_format):
        return [{"role": "user", "content": "ping me"}]

    def parse(self, text):
        return ToolCall("ping", "", 0, len(text)) if "<ping/>" in text else None

    def step(self, call):
        return Observation(tool="ping", text="<pong/>", ok=True)


class PingEnvironment(Environment):
    name = "ping"

    def open(self, task, sample_index):
        return PingEpisode(task)

    def stops(self, text):
        return "<ping/>" in text


def ping_tasks(n: int) -> list[Task]:
    return [Task(task_id=f"ping/{i}", prompt="", tests="", harness="pytest") for i in range(n)]


def test_an_environment_without_a_final_answer_keeps_its_episodes_and_records_why(caplog):
    asked = []
    policy = ScriptedPolicy(lambda req: asked.append(req.turn_index) or "<ping/>")
    cfg, tasks = RolloutConfig(max_turns=2), ping_tasks(2)
    episodes = run_episodes([(t, 0) for t in tasks], policy, PingEnvironment(), cfg)
    asked.clear()
    with caplog.at_level(logging.WARNING, logger="agentic_rl.rollout.agent"):
        kept = forced_submit_baseline(episodes, tasks, policy, PingEnvironment(), cfg)
    assert asked == []  # nothing was forced on it
    assert [t.turns for t in kept] == [t.turns for t in episodes] and not any(t.passed for t in kept)
    records = [record_from_trajectory(t, "forced_submit", task) for t, task in zip(kept, tasks)]
    assert [r["finish_reason"] for r in records] == [NO_FINAL_ANSWER] * 2
    assert "not applicable to 2 episodes" in caplog.text and "ping/0" in caplog.text


def test_an_episode_an_infrastructure_failure_ended_is_not_forced():
    from tests.rollout.fakes import TASK, toolset

    asked = []
    policy = ScriptedPolicy(lambda req: asked.append(1) or "```submit\ndef f(): pass\n```")
    cfg = RolloutConfig(max_turns=1)
    rolled = run_episodes([(TASK, 0)], ScriptedPolicy(lambda req: "hm"), toolset(("submit",), []), cfg)
    hit = replace(rolled[0], finish_reason="infra_failure", infra_failure="sandbox")
    after = forced_submit_baseline(RolloutResult([hit], rolled.stats), [TASK], policy, toolset(("submit",), []), cfg)
    assert asked == [] and after[0] is hit  # still unscored, as the infrastructure left it
    forced = forced_submit_baseline(rolled, [TASK], policy, toolset(("submit",), []), cfg)
    assert asked == [1] and forced[0].turns[-1].prefix == "```submit\n"  # the same episode, unhit, is forced


# --------------------------------------------------------------------------- the constant-answer baseline in summary


# Two environments, four configurations: "is n positive" (true, true) and "the sum" (3, 7). The constants the
# answers take are true, 3 and 7: `true` solves 2 of 4, 3 and 7 one each, so the baseline is `true` at 0.5. The
# environments are those of the constant-answer filter's tests.
def write_envs(path: Path) -> Path:
    rows = [
        {"env_id": "t/IsPositiveEnv", "class_name": "IsPositiveEnv", "configs": [{"n": 1}, {"n": 2}]},
        {"env_id": "t/SumEnv", "class_name": "SumEnv", "configs": [{"nums": [1, 2]}, {"nums": [3, 4]}]},
    ]
    path.write_text("".join(json.dumps({**row, "code": ENVS_CODE}) + "\n" for row in rows))
    return path


def test_a_codegym_evaluation_carries_the_constant_answer_baseline(tmp_path, monkeypatch):
    done_true = '<action>{"name": "Done", "parameters": {"answer": true}}</action>'  # the policy is that constant
    monkeypatch.setattr(evaluate, "load_policy", lambda cfg: ScriptedPolicy(lambda req: done_true))
    envs = write_envs(tmp_path / "envs.jsonl")
    run_dir = tmp_path / "run"
    cfg = compose_eval(
        *CODEGYM,
        f"data.path={envs}",
        "data.split=all",
        "data.heldout_configs=0",
        "evaluator.n_samples=0",
        "evaluator.modes=[multi_tool]",
        f"+run_dir={run_dir}",
    )
    summary = evaluate.run(cfg)
    assert summary["constant_answer"] == {"answer": True, "n_tasks": 4, "env/constant_success_rate": 0.5}
    assert json.loads((run_dir / "summary.json").read_text())["constant_answer"] == summary["constant_answer"]
    assert summary["eval"]["multi_tool"]["env/success_rate"] == 0.5  # a policy that is the constant scores it
    line = evaluate.constant_line(summary)
    assert line == (
        "constant-answer baseline (Done with true on every task): 0.500 of 4 CodeGym tasks; "
        "success rate: multi_tool 0.500"
    )


def test_a_code_task_evaluation_has_no_constant_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(evaluate, "load_policy", lambda cfg: ScriptedPolicy(lambda req: "def f():\n    pass"))
    cfg = compose_eval(
        "data=builtin-eval",
        "evaluator.limit=1",
        "evaluator.n_samples=0",
        "evaluator.modes=[no_tools]",
        "sandbox.preload=[pytest]",
        f"+run_dir={tmp_path}",
    )
    summary = evaluate.run(cfg)
    assert "constant_answer" not in summary and evaluate.constant_line(summary) is None


def test_last_block_keeps_the_verdict_of_an_environments_own_final_call():
    from agentic_rl.evaluation.baselines import grade_last_block
    from agentic_rl.types import Trajectory, Turn
    from tests.rollout.fakes import toolset

    done = '<action>{"name": "Done", "parameters": {"answer": true}}</action>'
    verdict = Observation(tool="Done", text="correct", ok=True, passed=True)
    turn = Turn(generated_ids=[1], text=done, call=ToolCall("Done", done, 0, len(done)), observation=verdict)
    traj = Trajectory("codegym/x/000", [0, 1], [0, 1], 1, [turn], submitted_code=done, passed=True, grade=verdict)
    gym = Task(task_id="codegym/x/000", prompt="", tests="", harness="codegym")
    multi = toolset(("search", "execute", "submit"), [])  # Done is none of its code tools (ToolSpec.runs_code)
    assert grade_last_block(traj, gym, multi) is traj  # no code block to grade instead: Done's verdict stands
