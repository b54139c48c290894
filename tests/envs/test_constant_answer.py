"""The constant-answer filter and baseline of CodeGym (agentic_rl/envs/verify.py): a configuration a constant `Done`
answer solves above chance is dropped, one that needs a real answer is kept; the baseline is the constant that
solves most tasks, per task. Environments run in the sandbox, as an episode's do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_rl.envs.builtin import gym_base
from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.tasks import environment_tasks
from agentic_rl.envs.verify import (
    Rules,
    above_chance_drops,
    answer_key,
    best_constant,
    constant_answer_filter,
    constant_results,
    reference_keys,
    verify_records,
)
from agentic_rl.sandbox import Sandbox

CODE = (
    Path(gym_base.__file__).read_text()
    + '''

class IsPositiveEnv(ToolEnv):
    """Is n positive? (every configuration below has n > 0: the answer is always true)"""

    def load(self, options):
        self.n = options["n"]

    def Observe(self):
        """The number."""
        return {"n": self.n}

    def get_ref_answer(self):
        return self.n > 0


class SumEnv(ToolEnv):
    """The sum of the numbers."""

    def load(self, options):
        self.nums = options["nums"]

    def Observe(self):
        """The numbers."""
        return {"nums": self.nums}

    def get_ref_answer(self):
        return sum(self.nums)


def oracle_positive(call):
    return json.loads(call("Observe"))["n"] > 0


def oracle_sum(call):
    return sum(json.loads(call("Observe"))["nums"])
'''
)
ALWAYS_TRUE = {
    "env_id": "t/IsPositiveEnv",
    "class_name": "IsPositiveEnv",
    "code": CODE,
    "oracle": "oracle_positive",
    "configs": [{"n": n} for n in (1, 2, 3, 4)],
}
NEEDS_AN_ANSWER = {
    "env_id": "t/SumEnv",
    "class_name": "SumEnv",
    "code": CODE,
    "oracle": "oracle_sum",
    "configs": [{"nums": nums} for nums in ([1, 2], [3, 4], [5, 6])],
}
T, F = answer_key(True), answer_key(False)


# ---------------------------------------------------------------- the rule (pure)


def solved_by_equality(keys):
    return {v: [k == v for k in keys] for v in set(keys) - {None}}


def test_a_constant_above_chance_loses_its_excess_configurations():
    keys = [T] * 8 + [F] * 4
    drops = above_chance_drops(keys, solved_by_equality(keys))
    assert drops == {i: T for i in (4, 5, 6, 7)}  # the last 4 `true` ones: 4 and 4 left, each at chance (1/2)


@pytest.mark.parametrize(
    ("keys", "dropped"),
    [
        (["3", "3"], {0, 1}),  # one answer for all: a constant solves every one
        (["1", "2", "3"], set()),  # each value once: every constant at chance
        (["7"], set()),  # a lone configuration cannot be judged
        ([T, F, None, T], {3}),  # the unknown answer is neither judged nor counted: 2 true of 3 is above 1/2
        (["2"] * 8 + ["3"] * 3 + ["4"], set(range(1, 8)) | {9, 10}),  # one of each value left
    ],
)
def test_the_rule_keeps_each_value_at_most_at_chance(keys, dropped):
    assert set(above_chance_drops(keys, solved_by_equality(keys))) == dropped


def test_a_lenient_done_that_a_constant_always_satisfies_drops_everything():
    keys = ["1", "2", "3"]
    solved = {**solved_by_equality(keys), "1": [True, True, True]}
    assert set(above_chance_drops(keys, solved)) == {0, 1, 2}


# ---------------------------------------------------------------- in the sandbox


@pytest.fixture(scope="module")
def runner():
    with Sandbox(workers=2, preload=["gymnasium"], memory_mb=1024) as sandbox:
        yield CodeGymRunner(sandbox=sandbox)


def test_reference_answers_come_back_from_the_sandbox(runner):
    assert reference_keys(runner, NEEDS_AN_ANSWER, 30.0) == ["3", "7", "11"]
    assert reference_keys(runner, {**NEEDS_AN_ANSWER, "class_name": "Missing"}, 30.0) == [None, None, None]


def test_configurations_solved_by_a_constant_true_are_dropped_and_real_answers_kept(runner):
    tasks = environment_tasks(ALWAYS_TRUE) + environment_tasks(NEEDS_AN_ANSWER)
    kept, dropped = constant_answer_filter(tasks, runner, progress=False)
    assert [t.metadata["env_id"] for t in kept] == ["t/SumEnv"] * 3
    assert [d["answer"] for d in dropped] == [True] * 4 and {d["reason"] for d in dropped} == {"constant_answer"}


def test_the_baseline_is_the_constant_that_solves_most_tasks(runner, tmp_path):
    tasks = environment_tasks(ALWAYS_TRUE) + environment_tasks(NEEDS_AN_ANSWER)
    results = constant_results(tasks, runner)
    assert results[T] == {t.task_id: t.metadata["env_id"] == "t/IsPositiveEnv" for t in tasks}
    answer, rows = best_constant(results, [t.task_id for t in tasks])
    assert answer is True and [r["passed"] for r in rows] == [True] * 4 + [False] * 3
    assert set(rows[0]) == {"task_id", "passed", "answer"}
    # on the tasks a real answer is needed for, the best constant solves one of three (its own sum)
    answer, rows = best_constant(results, [t.task_id for t in tasks[4:]])
    assert sum(r["passed"] for r in rows) == 1


def test_verify_drops_constant_answers_only_when_asked(runner):
    rules = Rules(min_tools=2, min_calls=2)
    kept, report = verify_records([ALWAYS_TRUE, NEEDS_AN_ANSWER], runner, rules)
    assert report["configs_kept"] == 7 and "constant_answer" not in report["dropped_reasons"]
    kept, report = verify_records([ALWAYS_TRUE, NEEDS_AN_ANSWER], runner, Rules(2, 2, constant_answer=True))
    assert [r["env_id"] for r in kept] == ["t/SumEnv"] and len(kept[0]["configs"]) == 3
    assert report["dropped_reasons"] == {"constant_answer": 4}
    assert report["dropped_environments"] == {"t/IsPositiveEnv": "no configuration left"}
    assert json.dumps(report["dropped_configs"][0]["detail"]) == '{"answer": true}'


def test_the_baseline_as_metrics_beside_an_evaluations_success_rates(runner):
    from agentic_rl.envs.verify import constant_metrics

    held_out_sum = {**NEEDS_AN_ANSWER, "split": "heldout", "configs": [{"nums": [1, 2]}, {"nums": [2, 1]}]}
    tasks = environment_tasks(ALWAYS_TRUE) + environment_tasks(held_out_sum)
    answer, metrics = constant_metrics(tasks, runner)
    # true solves the 4 seen tasks, 3 the 2 held-out ones: true is the constant, 4 of 6
    assert answer is True
    assert metrics == {
        "env/constant_success_rate": pytest.approx(4 / 6),
        "env/seen_envs/constant_success_rate": 1.0,
        "env/unseen_envs/constant_success_rate": 0.0,
    }
    # over the held-out tasks alone the constant is 3 and solves both; code tasks have no baseline
    assert constant_metrics(environment_tasks(held_out_sum), runner) == (3, {"env/constant_success_rate": 1.0})
    assert constant_metrics([], runner) == (None, {})
