"""The launcher configs compose onto the installed Hydra plugins (optional extras joblib / slurm)."""

from __future__ import annotations

from hydra import compose, initialize_config_dir

from agentic_rl.config import CONF_DIR, check_keys, register_configs

register_configs()


def launcher(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("train", overrides=["sweep=tools", *overrides], return_hydra_config=True)
    return cfg.hydra.launcher


def test_local_runs_three_sweep_jobs_at_once_through_joblib():
    cfg = launcher("hydra/launcher=local")
    assert cfg._target_.endswith("JoblibLauncher") and cfg.n_jobs == 3
    assert launcher("hydra/launcher=joblib", "hydra.launcher.n_jobs=2").n_jobs == 2  # the plugin's own config


def test_slurm_submits_one_gpu_job_per_sweep_job_with_overridable_resources():
    cfg = launcher("hydra/launcher=slurm", "hydra.launcher.partition=gpu")
    assert cfg._target_.endswith("SlurmLauncher")
    assert (cfg.partition, cfg.gpus_per_node, cfg.cpus_per_task, cfg.timeout_min) == ("gpu", 1, 8, 720)
    assert cfg.submitit_folder.endswith("/.submitit/%j")


def test_a_launcher_changes_nothing_the_job_reads():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        job = compose("train", overrides=["sweep=tools", "hydra/launcher=slurm"])
        plain = compose("train", overrides=["sweep=tools"])
    check_keys(job, "train")
    assert job == plain
