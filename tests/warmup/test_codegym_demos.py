"""The warm-up on CodeGym: the oracle's actions played as demonstrations through the run's own rollout loop, in the
episode's exact format, from training configurations only; and the code-task default's demonstrations unchanged."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from agentic_rl.config import register_configs, validate, warmup_config
from agentic_rl.envs.tasks import DEMO_KEY
from agentic_rl.models import load_tiny_random
from agentic_rl.registry import build, to_dataclass
from agentic_rl.rollout import HFChatTokenizer, RolloutConfig
from agentic_rl.train import run_environment
from agentic_rl.types import Task
from agentic_rl.warmup import build_demonstrations
from agentic_rl.warmup import demos as warmup_demos
from agentic_rl.warmup.demos import codegym_replies
from tests.config.test_compose import CONF
from tests.warmup.default_fingerprint import TOKENIZER, default_fingerprint

# default_fingerprint(8) at 9376fac, before CodeGym demonstrations were added to agentic_rl.warmup
DEFAULT_FINGERPRINT = "8 kept, 0 dropped, sha256 43ccb07fbe1edd5815acb5ec46c7167242d605cab4d16aaaa6c77c55ec94c246"


def learn_config(*overrides: str):
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("train", overrides=["experiment=codegym-learn", "logger=none", *overrides])
    validate(cfg)
    return cfg


@pytest.fixture(scope="module")
def chat():
    return HFChatTokenizer(load_tiny_random(TOKENIZER).tokenizer)


def test_the_code_task_defaults_demonstrations_are_byte_identical():
    assert default_fingerprint(8) == DEFAULT_FINGERPRINT


def test_the_warmup_key_is_the_one_codegym_tasks_carry():
    assert warmup_demos.DEMO_KEY == DEMO_KEY


def test_every_demonstration_replays_to_the_oracles_answer_in_the_runs_episode_format(chat):
    """All 40 demonstrated configurations of experiment=codegym-learn, played in the environment and with the rollout
    settings the run builds: each passes, its turns are the oracle's actions in order (the model writes the JSON and
    </action> after the '<action>' prefix, which is context), and its Done is the oracle's answer, judged correct."""
    cfg = learn_config("seed=1")
    shown, _ = warmup_config(cfg).split(build(cfg.data))
    rollout = to_dataclass(cfg.rollout, RolloutConfig)
    with build(cfg.sandbox) as sandbox:
        demos = build_demonstrations(shown, chat, run_environment(cfg, cfg.tools, sandbox, None), rollout)
    assert demos.dropped == [] and len(demos.kept) == len(shown) == 40
    by_id = {t.task_id: t for t in shown}
    for traj in demos.kept:
        actions = [json.loads(c["content"]) for c in by_id[traj.task_id].metadata[DEMO_KEY]]
        assert traj.passed and traj.finish_reason == "passed", traj.task_id
        assert [json.loads(t.call.content) for t in traj.turns] == actions
        assert [t.prefix for t in traj.turns] == ["<action>"] * len(actions)
        assert [t.text for t in traj.turns] == [json.dumps(a) + "</action>" for a in actions]
        assert "correct" in traj.turns[-1].observation.text and traj.turns[-1].call.name == "Done"
        assert sum(traj.loss_mask) == sum(len(t.generated_ids) for t in traj.turns)


def test_no_heldout_configuration_is_demonstrated_in_any_seed():
    for seed in (1, 2, 3):
        cfg = learn_config(f"seed={seed}")
        shown, rl = warmup_config(cfg).split(build(cfg.data))
        heldout = build(cfg.eval_data)

        def key(task: Task) -> tuple[str, str]:
            return task.metadata["env_id"], json.dumps(task.metadata["codegym"]["options"], sort_keys=True)

        assert len(shown) == 40 and all(DEMO_KEY in t.metadata for t in shown)
        assert not {key(t) for t in shown} & {key(t) for t in heldout}
        assert not {key(t) for t in shown} & {key(t) for t in rl}  # GRPO draws from the configurations not shown
        assert {t.metadata["env_split"] for t in heldout} == {"train", "heldout"} and len(heldout) == 40


def test_the_config_leaves_room_for_every_oracle_episode():
    cfg = learn_config()
    tasks = build(cfg.data) + build(cfg.eval_data)
    longest = max(t.metadata["oracle_calls"] for t in tasks)
    assert cfg.data.t_max >= longest and cfg.rollout.max_turns >= cfg.data.t_max == cfg.eval_data.t_max
    assert warmup_config(cfg).enabled and cfg.rollout.response_prefix == "<action>"
    # the tables find the evaluated environments in .hydra/config.yaml, which Hydra writes unresolved
    assert OmegaConf.to_container(cfg.eval_data, resolve=False)["path"] == "starter"


def test_a_prefix_that_does_not_open_an_action_is_refused_with_a_fix():
    task = build(learn_config().data)[0]
    assert codegym_replies(task, "")[0] == '<action>{"name": "Observe", "parameters": {}}</action>'
    with pytest.raises(ValueError, match="response_prefix"):
        codegym_replies(task, "```")
