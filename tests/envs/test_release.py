"""Files in the public CodeGym release's format load with `data=codegym data.path=...` and run as episodes.

The release is CC BY-NC, so no row of it is here: `RELEASE_ENV` is an environment written for this test in the
release's shape (func_mapping of action codes, step returning (executed, message), Done keeping `_reward` and
`_done`, a constructor that resets with no options and fails, state in a private attribute)."""

from __future__ import annotations

import json

import pytest

from agentic_rl.envs.tasks import load_codegym
from agentic_rl.registry import build
from tests.config.test_compose import compose_train
from tests.envs.test_codegym import act, observations, roll

RELEASE_ENV = '''import json
import gymnasium


class CountEvensEnv(gymnasium.Env):
    def __init__(self, env_str: str = None):
        super().__init__()
        self.OBSERVE, self.GET, self.BUMP, self.COUNT, self.DONE = 0, 1, 2, 3, 4
        self.func_mapping = {"Observe": 0, "GetItem": 1, "Increment": 2, "GetCount": 3, "Done": 4}
        self.reset()

    @property
    def finished(self):
        return self._done

    @property
    def reward(self):
        return float(self._reward)

    def reset(self, options={}):
        self.nums = list(options["nums"])  # no options: KeyError, as some release environments do
        self._count, self._reward, self._done = 0, 0, False
        return "reset"

    def get_ref_answer(self):
        return sum(1 for x in self.nums if x % 2 == 0)

    def step(self, action):
        call = json.loads(action)
        code, params = self.func_mapping[call["name"]], call["parameters"]
        if code == self.OBSERVE:
            return True, self.Observe()
        if code == self.GET:
            return True, self.GetItem(params["index"])
        if code == self.BUMP:
            return True, self.Increment()
        if code == self.COUNT:
            return True, self.GetCount()
        return True, self.Done(params["answer"])

    def Observe(self):
        """Return how many numbers the hidden list holds."""
        return str(len(self.nums))

    def GetItem(self, index):
        """Return the number at position index."""
        return str(self.nums[index])

    def Increment(self):
        """Add one to the counter."""
        self._count += 1
        return str(self._count)

    def GetCount(self):
        """Return the counter."""
        return str(self._count)

    def Done(self, answer):
        """Submit the answer: the count of even numbers."""
        self._reward, self._done = int(answer == self.get_ref_answer()), True
        return f"reward={self._reward}"
'''


def row(code_id, options, calls, gym_env=None):
    extra = {"index": "0", "solve_fc_round": calls, **({"gym_env": gym_env} if gym_env else {})}
    user = "Please call the functions one at a time.\n\nQuestion:\n\nCount the even numbers of a hidden list."
    return {
        "ability": f"codegym_v1@{code_id}__CountEvensEnv@{json.dumps(options)}",
        "code_id": code_id,
        "data_source": "codegym_v1",
        "prompt": [{"role": "system", "content": "Function: ..."}, {"role": "user", "content": user}],
        "reward_model": {"ground_truth": None, "style": "agent_env"},
        "answer": "There is no answer",
        "plugin_call_max_round": 256,
        "extra_info": extra,
    }


@pytest.fixture
def release(tmp_path):
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "Own_1_I__CountEvensEnv.py").write_text(RELEASE_ENV)
    rows = [
        row("Own_1_I", {"nums": [2, 3, 4]}, 12),
        row("Own_1_I", {"nums": [1, 3]}, 10),
        row("Own_2_I", {"nums": [6]}, 11, gym_env=RELEASE_ENV),  # the code carried in the row
    ]
    path = tmp_path / "release.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_release_file_loads_through_the_data_config(release):
    cfg = compose_train(["data=codegym", f"data.path={release}", "data.split=all", "data.t_max=null"])
    tasks = build(cfg.data)
    assert sorted(t.task_id for t in tasks) == [
        "codegym/Own_1_I__CountEvensEnv/000",
        "codegym/Own_1_I__CountEvensEnv/001",
        "codegym/Own_2_I__CountEvensEnv/000",
    ]
    by_id = {t.task_id: t for t in tasks}
    first = by_id["codegym/Own_1_I__CountEvensEnv/000"]
    assert first.metadata["oracle_calls"] == 12 and first.metadata["codegym"]["t_max"] == 256
    assert first.prompt == "Count the even numbers of a hidden list."
    assert first.metadata["codegym"]["options"] == {"nums": [2, 3, 4]}


def test_a_release_environment_runs_as_an_episode_with_its_private_state(release):
    task = load_codegym(str(release), split="all", t_max=None)
    task = next(t for t in task if t.task_id.endswith("Own_1_I__CountEvensEnv/000"))
    traj = roll(task, act("Increment"), act("Increment"), act("GetCount"), act("Done", answer=2))
    assert traj.passed and traj.finish_reason == "passed"
    assert "2" in observations(traj)[2]  # the private counter travelled between sandbox calls
    wrong = roll(task, act("Done", answer=1), act("Observe"))
    assert not wrong.passed and wrong.finish_reason == "failed" and len(wrong.turns) == 1


def test_the_tools_documentation_is_the_methods_not_the_action_codes(release):
    from agentic_rl.envs.codegym import CodeGymEnvironment

    task = load_codegym(str(release), split="all")[0]
    prompt = CodeGymEnvironment().open(task, 0).prompt_messages("chat")[1]["content"]
    assert "- Increment: Add one to the counter." in prompt and "int([x])" not in prompt


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (lambda lines: [lines[0], "{not json", *lines[1:]], r"release.jsonl, line 2: not JSON"),
        (lambda lines: [lines[0].replace("Own_1_I__", "Own_9_I__")], r"line 1: no code for environment Own_9_I"),
        (lambda lines: [lines[0], lines[1].replace("@{", "@[")], r"line 2: the options"),
        (lambda lines: [lines[0], json.dumps({"env_id": "x"})], r"line 2: not a release row"),
    ],
)
def test_a_broken_release_file_names_the_file_and_line(release, break_it, message):
    release.write_text("\n".join(break_it(release.read_text().splitlines())) + "\n")
    with pytest.raises(ValueError, match=message):
        load_codegym(str(release), split="all")
