"""Choosing CodeGym training environments (patterns, measured-success band, configurations per environment,
the combined held-out split), the env/* metrics of evaluation records, and `agentic_rl.evaluate` stepping
CodeGym tasks in its own sandbox."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_dir

from agentic_rl.envs.metrics import env_metrics
from agentic_rl.envs.tasks import load_codegym
from agentic_rl.evaluation.records import metrics_from_records, record_from_trajectory
from agentic_rl.paths import CONFIG_PATH
from agentic_rl.rollout import ScriptedPolicy
from agentic_rl.types import Task
from tests.envs.test_metrics import codegym_metrics, traj, turn

HELDOUT_ENVS = 6  # one per workflow of the built-in set


def env_ids(tasks):
    return {t.metadata["env_id"] for t in tasks}


def test_env_patterns_narrow_the_training_environments_but_never_the_held_out_ones():
    train = load_codegym(split="train", envs=["strings/*", "graphs/HasCycleEnv"])
    assert "graphs/HasCycleEnv" in env_ids(train) and all(
        e.startswith("strings/") or e == "graphs/HasCycleEnv" for e in env_ids(train)
    )
    assert len(train) == 10 * len(env_ids(train))
    unseen = load_codegym(split="heldout_envs", envs=["graphs/HasCycleEnv"])
    assert len(env_ids(unseen)) == HELDOUT_ENVS
    with pytest.raises(ValueError, match="match no environment.*shell patterns"):
        load_codegym(envs=["graphs/NoSuchEnv"])


def test_configs_per_env_and_the_combined_held_out_split():
    few = load_codegym(split="train", envs=["dp/*"], configs_per_env=3)
    assert [t.metadata["config_index"] for t in few[:4]] == [0, 1, 2, 0]
    both = load_codegym(split="heldout", envs=["graphs/HasCycleEnv"], configs_per_env=4)
    seen = [t for t in both if t.metadata["env_split"] == "train"]
    assert [t.task_id for t in seen] == [
        "codegym/graphs/HasCycleEnv/010",
        "codegym/graphs/HasCycleEnv/011",
    ]  # the held-out configurations of the seen environment, the same as split=heldout_configs
    assert len(both) - len(seen) == 4 * HELDOUT_ENVS
    with pytest.raises(ValueError, match="configs_per_env"):
        load_codegym(configs_per_env=0)


def write_results(path, rows):
    path.write_text("".join(json.dumps({"task_id": f"codegym/{e}/{i:03d}", "passed": p}) + "\n" for e, i, p in rows))
    return str(path)


def test_a_measured_success_band_keeps_the_environments_with_room(tmp_path):
    results = write_results(
        tmp_path / "results.jsonl",
        [
            ("strings/PalindromeCheckEnv", 0, True),
            ("strings/PalindromeCheckEnv", 1, False),  # 0.5: kept
            ("graphs/HasCycleEnv", 0, False),  # 0.0: never solved, dropped
            ("dp/WordBreakEnv", 0, True),  # 1.0: no room, dropped
        ],
    )
    train = load_codegym(split="train", success=results, min_success=0.0, max_success=0.75)
    assert env_ids(train) == {"strings/PalindromeCheckEnv"}  # the unmeasured environments are dropped too
    heldout = load_codegym(split="heldout", success=results, min_success=0.0, max_success=0.75)
    assert len(env_ids(heldout)) == 1 + HELDOUT_ENVS
    assert env_ids(load_codegym(split="train", success=results, max_success=1.0)) == {
        "strings/PalindromeCheckEnv",
        "graphs/HasCycleEnv",
        "dp/WordBreakEnv",
    }
    with pytest.raises(ValueError, match="no training environment"):
        load_codegym(success=results, min_success=0.9, max_success=0.95)
    with pytest.raises(ValueError, match="must be below"):
        load_codegym(success=results, min_success=0.5, max_success=0.5)
    with pytest.raises(FileNotFoundError, match="data.success"):
        load_codegym(success=str(tmp_path / "missing.jsonl"))


def codegym_task(split="train", oracle_calls=12):
    return Task(
        task_id="codegym/x/000",
        prompt="",
        tests="",
        harness="codegym",
        metadata={"oracle_calls": oracle_calls, "env_split": split, "codegym": {}},
    )


def test_evaluation_records_give_the_same_env_metrics_as_training():
    trajs = [
        traj([turn("Observe"), turn("Done")], passed=True, finish="passed"),
        traj([turn("invalid_action", "invalid", executed=False, ok=False), turn(None)], finish="max_turns"),
        traj([turn("Observe"), turn("Observe")], finish="t_max"),
    ]
    tasks = [codegym_task(), codegym_task(), codegym_task("heldout")]
    records = [json.loads(json.dumps(record_from_trajectory(t, "multi_tool", k))) for t, k in zip(trajs, tasks)]
    assert records[0]["env"]["calls"] == 2 and records[0]["env"]["done"] and not records[1]["env"]["observe"]
    from_records = {k: v for k, v in metrics_from_records(records).items() if k.startswith("env/")}
    assert from_records == codegym_metrics(trajs, tasks)
    assert from_records["env/success_rate"] == pytest.approx(1 / 3)
    assert from_records["env/invalid_call_rate"] == pytest.approx(1 / 5)
    assert from_records["env/t_max_rate"] == pytest.approx(1 / 3)
    assert from_records["env/calls_vs_oracle"] == pytest.approx((5 / 3) / 12)
    # a mixed set reports each group apart: 1 of 2 seen-environment episodes, 0 of 1 held-out environment
    assert from_records["env/seen_envs/success_rate"] == 0.5 and from_records["env/seen_envs/episodes"] == 2
    assert from_records["env/unseen_envs/success_rate"] == 0.0 and from_records["env/unseen_envs/episodes"] == 1
    # a code task's record carries no env counts, and the metrics of code tasks alone have no env/ key
    code = Task(task_id="t", prompt="", tests="", harness="pytest")
    assert "env" not in record_from_trajectory(trajs[0], "multi_tool", code)
    assert not env_metrics([None])


def test_an_unmixed_set_reports_no_groups():
    m = codegym_metrics([traj([turn("Done")], passed=True, finish="passed")], [codegym_task()])
    assert m["env/success_rate"] == 1.0 and not [k for k in m if "seen_envs" in k]


def test_evaluate_steps_codegym_tasks_in_its_own_sandbox(tmp_path, monkeypatch):
    import agentic_rl.envs.codegym as codegym
    import agentic_rl.evaluate as evaluate
    from agentic_rl.sandbox import Sandbox

    def no_default(code, timeout_s):
        raise AssertionError("a CodeGym call went to the default sandbox, not the run's")

    calls = []
    real_execute = Sandbox.execute

    def counted(self, code, **kwargs):
        calls.append(id(self))
        return real_execute(self, code, **kwargs)

    monkeypatch.setattr(codegym, "_default_execute", no_default)
    monkeypatch.setattr(Sandbox, "execute", counted)
    replies = ['<action>{"name": "Observe", "parameters": {}}</action>', "<action>not json</action>"]
    replies.append('<action>{"name": "Done", "parameters": {"answer": true}}</action>')
    policy = ScriptedPolicy(lambda req: replies[min(req.turn_index, 2)])
    monkeypatch.setattr(evaluate, "load_policy", lambda cfg: policy)
    episode_calls: list = []  # the calls made before the constant-answer baseline (which runs after the episodes)
    real_constant = evaluate.evaluation_constant

    def constant_after_episodes(tasks, sandbox):
        episode_calls.extend(calls)
        return real_constant(tasks, sandbox)

    monkeypatch.setattr(evaluate, "evaluation_constant", constant_after_episodes)
    with initialize_config_dir(config_dir=str(CONFIG_PATH), version_base="1.3"):
        cfg = compose(
            "evaluate",
            overrides=[
                "logger=none",
                "progress=false",
                "sandbox.preload=[json]",
                "sandbox.workers=1",
                "data=codegym",
                "data.envs=[strings/PalindromeCheckEnv]",
                "data.configs_per_env=2",
                "data.shuffle=false",
                "evaluator.modes=[multi_tool]",
                "evaluator.n_samples=0",  # the greedy episode alone: one episode per task
                "rollout.max_turns=4",
                f"+run_dir={tmp_path}",
            ],
        )
    summary = evaluate.run(cfg)
    # one reset and two steps (Observe, Done) per task, all in the one sandbox the run opened; the malformed
    # action is refused without a call; the constant-answer baseline then runs in that sandbox too
    assert len(episode_calls) == 2 * 3 and len(calls) > len(episode_calls) and len(set(calls)) == 1
    assert summary["constant_answer"]["n_tasks"] == 2
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["env"]["calls"] for r in records] == [3, 3] and all(r["env"]["done"] for r in records)
    m = summary["eval"]["multi_tool"]
    assert m["env/done_rate"] == 1.0 and m["env/observe_rate"] == 1.0
    assert m["env/invalid_call_rate"] == pytest.approx(1 / 3)
    assert m["env/success_rate"] == m["pass@1"]


def test_the_cpu_experiment_trains_and_evaluates_the_environments_its_measurement_kept(tmp_path):
    from agentic_rl.config import register_configs
    from agentic_rl.registry import build

    register_configs()  # the schemas the train config's groups extend
    results = write_results(
        tmp_path / "rates.jsonl",
        [("strings/PalindromeCheckEnv", 0, True), ("strings/PalindromeCheckEnv", 1, False), ("dp/WordBreakEnv", 0, 0)],
    )
    with initialize_config_dir(config_dir=str(CONFIG_PATH), version_base="1.3"):
        cfg = compose("train", overrides=["experiment=codegym-cpu", f"data.success={results}", "seed=3"])
    train, held = build(cfg.data), build(cfg.eval_data)
    assert env_ids(train) == {"strings/PalindromeCheckEnv"} and len(train) == 6  # the seed's pool
    seen = [t for t in held if t.metadata["env_split"] == "train"]
    assert env_ids(seen) == {"strings/PalindromeCheckEnv"} and len(seen) == 2
    assert len(held) - len(seen) == 2 * HELDOUT_ENVS
    assert {t.metadata["codegym"]["t_max"] for t in train + held} == {cfg.rollout.max_turns}
    # made usable by a small model: turns open with the action tag, and every prompt has the worked example
    assert cfg.rollout.response_prefix == "<action>"
    assert {t.metadata["codegym"]["worked_example"] for t in train + held} == {True}
    assert {t.metadata["codegym"]["calls_left"] for t in train + held} == {True}
