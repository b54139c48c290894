"""Every option of every config group composes, builds what it names, and bad values fail with a fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from agentic_rl.config import register_configs, validate

CONF = Path(__file__).resolve().parents[2] / "conf"
register_configs()


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def compose_train(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("train", overrides=overrides)


GROUP_OPTIONS = [
    (g, o)
    for g in (
        "model",
        "data",
        "tools",
        "reward",
        "rollout",
        "algo",
        "evaluator",
        "sandbox",
        "logger",
        "experiment",
        "sweep",
    )
    for o in options(g)
]


@pytest.mark.parametrize("group, option", GROUP_OPTIONS)
def test_every_option_composes_and_validates(group, option):
    cfg = compose_train([f"{group}={option}"])
    OmegaConf.resolve(cfg)
    validate(cfg)


@pytest.mark.parametrize("option", options("tool"))
def test_every_tool_config_builds(option, tmp_path):
    from agentic_rl.tools import build_tool

    node = OmegaConf.load(CONF / "tool" / f"{option}.yaml")
    if "defaults" in node:  # variants that extend another tool file
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            node = compose(f"tool/{option}").tool
    name = option.split("_")[0]
    tool = build_tool(name, node, sandbox=object())
    assert tool.name == name and tool.description


@pytest.mark.parametrize("option", options("tools"))
def test_every_tool_set_builds_and_describes_only_its_tools(option):
    from agentic_rl.tools import build_toolset

    cfg = compose_train(
        [f"tools={option}", "tools.search.backend=docstore"] if option == "multi" else [f"tools={option}"]
    )
    toolset = build_toolset(cfg.tools, sandbox=object())
    assert list(toolset.active) == list(cfg.tools.active)
    for name in ("search", "execute", "submit"):
        marker = {"search": "<search>", "execute": "Execute code", "submit": "```submit"}[name]
        assert (marker in toolset.system_prompt) == (name in toolset.active)
    assert ("tool" in toolset.system_prompt) == (not toolset.answers_once)  # no-tools: one final `answer` tool
    assert toolset.grader.name == "submit"


def test_data_options_build_from_local_copies(sample_data_dir):
    from agentic_rl.registry import build

    paths = {
        "kodcode": "kodcode_sample.jsonl",
        "kodcode-heldout": "kodcode_sample.jsonl",
        "bigcodebench-hard": "bigcodebench_hard.jsonl",
    }
    for option in options("data"):
        overrides = [f"data={option}", "data.limit=3"]
        if option in paths:
            overrides.append(f"data.path={sample_data_dir / paths[option]}")
        if option == "kodcode-heldout":
            overrides.append("data.n_heldout=6")  # the few-row sample has fewer rows than the full copy's split
        tasks = build(compose_train(overrides).data)
        assert 1 <= len(tasks) <= 3, option


def test_model_tiny_random_builds():
    from agentic_rl.registry import build

    loaded = build(compose_train(["model=tiny-random"]).model)
    assert loaded.model.config.num_hidden_layers == 2 and loaded.tokenizer.padding_side == "left"


@pytest.mark.parametrize(
    "override, message",
    [
        ("algo.group_size=1", "group_size must be >= 2"),
        ("algo.lr=-0.1", "lr must be > 0"),
        ("rollout.max_turns=0", "max_turns must be >= 1"),
        ("rollout.on_no_call=maybe", "on_no_call"),
        ("algo.kl_estimator=k7", "available: k1, k2, k3"),
        ("evaluator.modes=[no_tools,oracle]", "unknown mode"),
        ("memory.mmap_threshold_kib=-1", "memory.mmap_threshold_kib must be auto, a number of KiB >= 0 or null"),
        ("memory.mmap_threshold_kib=big", "memory.mmap_threshold_kib"),
    ],
)
def test_impossible_values_fail_at_start_with_a_fix(override, message):
    with pytest.raises((ValueError, KeyError), match=message):
        validate(compose_train([override]))


def test_wrong_type_fails_at_compose_time():
    with pytest.raises(ConfigCompositionException, match="group_size"):
        compose_train(["algo.group_size=four"])


def test_unknown_option_lists_the_available_ones():
    with pytest.raises(ConfigCompositionException, match="Available options"):
        compose_train(["reward=dense"])


def test_experiment_seed_3b_is_the_reference_setup():
    cfg = compose_train(["experiment=seed-3b"])
    assert cfg.model.name_or_path == "Qwen/Qwen2.5-Coder-3B-Instruct"
    assert cfg.data._target_.endswith("load_kodcode") and cfg.data.n == 1000 and cfg.data.subset_stride == 5
    assert cfg.eval_data._target_.endswith("load_bigcodebench") and cfg.eval_data.limit == 50
    assert (cfg.algo.group_size, cfg.algo.epochs, cfg.algo.lr, cfg.algo.kl_coeff) == (4, 3, 5e-6, 0.05)
    assert cfg.require_gpu is True


def test_experiment_transfer_cpu_trains_on_one_family_and_evaluates_on_its_other_half():
    cfg = compose_train(["experiment=transfer-cpu"])
    assert cfg.data._target_.endswith("load_pipelines") and cfg.eval_data._target_.endswith("load_pipelines")
    assert (cfg.data.split, cfg.eval_data.split) == ("train", "heldout")
    # one family: every key that draws it is the same on both sides
    for key in ("family_seed", "n_train", "n_heldout", "steps", "n_tests"):
        assert cfg.data[key] == cfg.eval_data[key], key
    assert cfg.data.limit >= 64 and cfg.data.limit <= cfg.data.n_train and cfg.algo.epochs == 1
    assert cfg.eval_data.n_heldout >= 200


def test_experiment_exec_penalty_cpu_splits_one_kodcode_file_the_same_way_on_both_sides():
    cfg = compose_train(["experiment=exec-penalty-cpu", "data.path=tasks.jsonl"])
    assert cfg.data._target_.endswith("load_kodcode") and cfg.eval_data._target_.endswith("load_kodcode")
    assert (cfg.data.part, cfg.eval_data.part) == ("train", "heldout")
    for key in ("path", "n_heldout", "split_seed", "difficulties"):
        assert cfg.data[key] == cfg.eval_data[key], key
    assert cfg.data.limit == 64 and cfg.algo.epochs == 1
    assert cfg.reward._target_.endswith("torl") and list(cfg.evaluator.modes) == ["code_only"]
    assert cfg.tools.name == "code" and set(cfg.tools.active) == {"execute", "submit"}
