"""Configs are safe: unknown keys (also `+` additions) fail naming the closest valid keys, experiments
override groups, the precedence command line > sweep > experiment > primary holds, config errors exit 2
with one message, and no key of the composed defaults is one that nothing reads."""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from agentic_rl.config import (
    CONF_DIR,
    ConfigError,
    _locate,
    check_keys,
    find_problems,
    node_schema,
    primary_keys,
    register_configs,
    validate,
)

REPO = Path(__file__).resolve().parents[2]
PACKAGE_SOURCE = "\n".join(p.read_text() for p in (REPO / "agentic_rl").rglob("*.py"))
# a key interpolated into another node (`lr: ${algo.lr}` in conf/optimizer/) is read wherever that node is
CONF_SOURCE = "\n".join(p.read_text() for p in CONF_DIR.rglob("*.yaml"))
register_configs()


def compose_cfg(overrides: list[str], primary: str = "train"):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(primary, overrides=overrides)


@pytest.mark.parametrize(
    "override, key, closest",
    [
        ("+algo.learning_rate=1e-5", "algo.learning_rate", "algo.lr"),  # the spelling Hydra's own hint suggests
        ("+algo.max_turns=3", "algo.max_turns", "rollout.max_turns"),  # right key, wrong group
        ("+rollout.max_new_token=64", "rollout.max_new_token", "rollout.max_new_tokens"),
        ("+tools.execute.timeout=3", "tools.execute.timeout", "tools.execute.timeout_s"),
        ("+logger.tag=[a]", "logger.tag", "logger.tags"),
        ("+sede=1", "sede", "seed"),
        ("+memory.mmap_threshold=128", "memory.mmap_threshold", "memory.mmap_threshold_kib"),
        # where the pin was before it became the run's: the message points to its new place
        ("+rollout.vllm.mmap_threshold_kib=128", "rollout.vllm.mmap_threshold_kib", "memory.mmap_threshold_kib"),
    ],
)
def test_plus_additions_of_unknown_keys_fail_naming_the_closest_valid_key(override, key, closest):
    cfg = compose_cfg([override])  # Hydra accepts it: `+` merges with struct mode off
    with pytest.raises(ConfigError) as info:
        validate(cfg)
    message = str(info.value)
    assert f"unknown config key '{key}'" in message
    assert closest in message.split("Closest valid keys: ")[1].split(". Valid keys")[0].split(", "), message


def test_data_path_on_builtin_data_names_the_data_options_that_take_a_path():
    problems = find_problems(compose_cfg(["+data.path=/tmp/tasks.jsonl"]), "train")
    assert len(problems) == 1
    assert "unknown config key 'data.path'" in problems[0]
    assert "bigcodebench-hard, codegym, humaneval, kodcode take 'path'" in problems[0]


def test_reward_parameters_are_checked_against_the_reward_function():
    problems = find_problems(compose_cfg(["reward=binary", "+reward.search_bonus=0.1"]), "train")
    assert problems and "unknown config key 'reward.search_bonus'" in problems[0]
    assert "agentic_rl.rewards.binary" in problems[0] and "pass_reward" in problems[0]
    assert "traj" not in problems[0].split("Valid keys")[1]  # the runtime argument is no config key


@pytest.mark.parametrize(
    "override, message",
    [
        ("data.limit=abc", "data.limit='abc' has the wrong type: expected int | None"),
        ("reward.use_exec_penalty=maybe", "reward.use_exec_penalty='maybe' has the wrong type"),
        ("logger.mode=onlin", "logger.mode='onlin'"),
    ],
)
def test_wrong_types_outside_the_dataclass_groups_fail_with_the_expected_type(override, message):
    extra = ["reward=torl"] if "reward" in override else []
    with pytest.raises(ConfigError, match=re.escape(message)):
        validate(compose_cfg(extra + [override]))


def test_every_key_of_every_primary_config_is_known():
    for primary in ("train", "evaluate"):
        assert find_problems(compose_cfg([], primary), primary) == []


# --------------------------------------------------------------------------------------------- precedence


def test_experiment_overrides_groups_and_the_command_line_wins():
    assert compose_cfg(["experiment=smoke"]).logger.name == "none"
    cfg = compose_cfg(["experiment=smoke", "logger=wandb"])
    assert cfg.logger.name == "wandb" and cfg.logger.table_every == 1  # the experiment's delta still applies
    assert compose_cfg(["experiment=smoke", "algo.epochs=3"]).algo.epochs == 3


def test_sweep_wins_over_experiment_and_the_command_line_over_both():
    both = compose_cfg(["experiment=smoke", "sweep=tools"])
    assert list(both.evaluator.modes) == ["no_tools", "code_only", "multi_tool"]  # sweep=tools sets 3, smoke 2
    assert both.algo.group_size == 2  # smoke's key that the sweep does not touch stays
    assert both.logger.name == "wandb"  # the sweep's `override /logger: wandb` beats smoke's `none`
    assert len(compose_cfg(["sweep=tools", "experiment=smoke"]).evaluator.modes) == 3  # order on the line: same
    cli = compose_cfg(["experiment=smoke", "sweep=tools", "logger=none", "algo.tasks_per_epoch=5"])
    assert cli.logger.name == "none" and cli.algo.tasks_per_epoch == 5


def test_experiments_choose_groups_with_override_not_by_setting_keys():
    for path in (CONF_DIR / "experiment").glob("*.yaml"):
        raw = OmegaConf.load(path)
        for group in ("model", "data", "tools", "reward", "rollout", "algo", "evaluator", "sandbox", "logger"):
            node = raw.get(group) or {}
            assert "_target_" not in node and "name" not in node, (
                f"{path.name} swaps {group} by setting keys; use `- override /{group}: <option>` in its defaults"
            )


# --------------------------------------------------------------------------------------------- dead keys


def _is_root_key_read(key: str) -> bool:
    return bool(re.search(rf"cfg\.{key}\b|cfg\.get\(\"{key}\"|cfg\[\"{key}\"\]", PACKAGE_SOURCE))


def _is_field_read(name: str) -> bool:
    return bool(re.search(rf"\.{name}\b|get\(\"{name}\"|\[\"{name}\"\]", PACKAGE_SOURCE))


def _is_parameter_used(target: str, name: str) -> bool:
    """The parameter appears in the target's body, not only in its signature."""
    obj = _locate(target)
    if dataclasses.is_dataclass(obj):  # a generated __init__ has no source: the field must be read somewhere
        return _is_field_read(name)
    source = inspect.getsource(obj)
    body = source.split(")", 1)[1] if not inspect.isclass(obj) else source
    if inspect.isclass(obj):  # the class body minus the __init__ signature
        init = inspect.getsource(obj.__init__)
        body = source.replace(init.split(":\n", 1)[0], "")
    return bool(re.search(rf"\b{name}\b", body))


def unread_keys(plain: Mapping, primary: str) -> list[str]:
    """Every leaf key of a composed config that no code reads: a parameter its `_target_` ignores, a
    dataclass field nothing accesses, a root key no entry point reads."""
    dead: list[str] = []

    def walk(node: Mapping, path: str) -> None:
        schema, what = node_schema(node, path) if path else (primary_keys(primary), "root")
        for key, value in node.items():
            sub = f"{path}.{key}" if path else key
            if key.startswith("_") and key.endswith("_"):
                continue
            if "_target_" in node:
                read = _is_parameter_used(str(node["_target_"]), key)
            elif path:
                read = _is_field_read(key)
            else:
                read = _is_root_key_read(key)
            if not read and "${" + sub + "}" not in CONF_SOURCE:
                dead.append(sub)
            if isinstance(value, Mapping) and (node_schema(value, sub)[0] is not None or "_target_" in value):
                walk(value, sub)

    walk(plain, "")
    return dead


@pytest.mark.parametrize("primary", ["train", "evaluate"])
def test_no_leaf_key_of_the_composed_defaults_is_dead(primary):
    plain = OmegaConf.to_container(compose_cfg([], primary), resolve=True)
    assert unread_keys(plain, primary) == []


def test_the_dead_key_walk_catches_keys_nothing_reads():
    plain = OmegaConf.to_container(compose_cfg([]), resolve=True)
    plain["never_read_anywhere"] = 1
    plain["algo"]["zz_unused_knob"] = 2
    plain["sandbox"]["zz_ignored_param"] = 3
    assert sorted(unread_keys(plain, "train")) == [
        "algo.zz_unused_knob",
        "never_read_anywhere",
        "sandbox.zz_ignored_param",
    ]


def test_the_sandbox_has_no_dead_timeout_keys():
    cfg = compose_cfg([])
    assert "timeout_s" not in cfg.sandbox and "test_timeout_s" not in cfg.sandbox
    assert cfg.tools.execute.timeout_s > 0 and cfg.tools.submit.timeout_s > 0  # the limits that apply


# --------------------------------------------------------------------------------------------- the CLI


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentic_rl.train", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        timeout=300,
    )


@pytest.mark.slow  # two interpreter starts with torch imports: 15-70 s depending on load
def test_a_config_error_is_one_message_and_exit_code_2(tmp_path):
    proc = _cli("+algo.learning_rate=1e-5", f"hydra.run.dir={tmp_path}")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("config error: ") and "--verbose" in lines[1]  # one message
    assert "config error: unknown config key 'algo.learning_rate'" in proc.stderr
    assert "Closest valid keys: algo.lr" in proc.stderr
    typo = _cli("algo.learning_rate=1e-5", f"hydra.run.dir={tmp_path}")  # without `+`: Hydra's own refusal
    assert typo.returncode == 2 and "Closest valid keys: algo.lr" in typo.stderr and "Traceback" not in typo.stderr
    assert "+algo.learning_rate" not in typo.stderr  # Hydra's hint to add it with `+` is dropped


@pytest.mark.slow
def test_verbose_and_hydra_full_error_show_the_traceback(tmp_path):
    verbose = _cli("+algo.learning_rate=1e-5", "--verbose", f"hydra.run.dir={tmp_path}")
    assert "Traceback" in verbose.stderr and "ConfigError" in verbose.stderr
    full = _cli("reward=dense", f"hydra.run.dir={tmp_path}", env={"HYDRA_FULL_ERROR": "1"})
    assert "Traceback" in full.stderr and "Could not find 'reward/dense'" in full.stderr


def test_check_keys_accepts_every_experiment_and_sweep():
    for group in ("experiment", "sweep"):
        for path in (CONF_DIR / group).glob("*.yaml"):
            check_keys(compose_cfg([f"{group}={path.stem}"]), "train")
