"""Resume config, clean interruption, summary-first finishing, full disks and sweep failure records."""

from __future__ import annotations

import errno
import json
import os
import signal
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from agentic_rl.runtime import jobs
from agentic_rl.runtime.files import DiskFullError
from agentic_rl.runtime.interrupt import InterruptGuard, RunInterrupted
from agentic_rl.runtime.stages import RunContext, finish
from agentic_rl.tracking.sinks import Tracker


def saved_run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    (run_dir / ".hydra").mkdir(parents=True)
    OmegaConf.save(
        OmegaConf.create(
            {
                "seed": 3,
                "progress": True,
                "checkpoint_every": 4,
                "resume": None,
                "model": {"name": "tiny-random", "seed": "${seed}"},
                "algo": {"lr": 0.01},
            }
        ),
        run_dir / ".hydra" / "config.yaml",
    )
    return run_dir


def current(run_dir: Path, **values) -> OmegaConf:
    """What Hydra composes for `python -m agentic_rl.train resume=RUN_DIR ...` from the default config."""
    base = {
        "seed": 42,
        "progress": True,
        "checkpoint_every": 4,
        "resume": str(run_dir),
        "model": {"name": "smollm2-135m", "seed": "${seed}"},
        "algo": {"lr": 5e-6},
    }
    return OmegaConf.merge(base, values)


def test_resume_uses_the_runs_own_config_not_the_defaults(tmp_path):
    run_dir = saved_run(tmp_path)
    cfg = jobs.resolve_resume(current(run_dir), overrides=[f"resume={run_dir}"])
    assert cfg.seed == 3 and cfg.model.name == "tiny-random" and cfg.model.seed == 3 and cfg.algo.lr == 0.01
    assert cfg.resume == str(run_dir)


def test_resume_allows_harmless_and_unchanged_overrides(tmp_path):
    run_dir = saved_run(tmp_path)
    cfg = jobs.resolve_resume(
        current(run_dir, progress=False, checkpoint_every=1, algo={"lr": 0.01}),
        overrides=[
            f"resume={run_dir}",
            "progress=false",
            "checkpoint_every=1",
            "algo.lr=0.01",
            "hydra.run.dir=/elsewhere",
        ],
    )
    assert cfg.progress is False and cfg.checkpoint_every == 1 and cfg.algo.lr == 0.01 and cfg.seed == 3


def test_resume_refuses_an_override_that_changes_the_experiment(tmp_path):
    run_dir = saved_run(tmp_path)
    with pytest.raises(ValueError, match=r"algo.lr=0.5 \(the run has algo.lr=0.01\).*Fix: drop them"):
        jobs.resolve_resume(current(run_dir, algo={"lr": 0.5}), overrides=[f"resume={run_dir}", "algo.lr=0.5"])
    with pytest.raises(ValueError, match="model=smollm2-135m"):
        jobs.resolve_resume(current(run_dir), overrides=[f"resume={run_dir}", "model=smollm2-135m"])


def test_resume_may_change_the_memory_setting_which_computes_nothing(tmp_path):
    run_dir = saved_run(tmp_path)
    cfg = jobs.resolve_resume(
        current(run_dir, memory={"mmap_threshold_kib": 256}),
        overrides=[f"resume={run_dir}", "memory.mmap_threshold_kib=256"],
    )
    assert cfg.memory.mmap_threshold_kib == 256 and cfg.seed == 3
    assert jobs.experiment_hash(cfg) == jobs.experiment_hash(
        OmegaConf.merge(cfg, {"memory": {"mmap_threshold_kib": 0}})
    )


def test_where_the_base_evaluation_is_kept_may_change_on_resume_but_its_seed_may_not(tmp_path):
    """`base_eval.cache` is harmless (its entries are keyed by what they compute; the default reads an environment
    variable, so a resume from another shell resolves it anew); `base_eval.seed`, its sibling, changes the numbers."""
    run_dir = saved_run(tmp_path)
    saved = OmegaConf.load(run_dir / ".hydra" / "config.yaml")
    saved.base_eval = {"cache": "/first/cache", "seed": 0}
    OmegaConf.save(saved, run_dir / ".hydra" / "config.yaml")
    here = {"base_eval": {"cache": "/second/cache", "seed": 0}}
    overrides = [f"resume={run_dir}", "base_eval.cache=/second/cache"]
    cfg = jobs.resolve_resume(current(run_dir, **here), overrides=overrides)
    assert cfg.base_eval.cache == "/second/cache" and cfg.base_eval.seed == 0 and cfg.seed == 3
    assert jobs.experiment_hash(cfg) == jobs.experiment_hash(saved)
    assert jobs.experiment_hash(OmegaConf.merge(cfg, {"base_eval": {"seed": 1}})) != jobs.experiment_hash(saved)
    with pytest.raises(ValueError, match=r"base_eval.seed=1 \(the run has base_eval.seed=0\)"):
        jobs.resolve_resume(
            current(run_dir, base_eval={"cache": "/first/cache", "seed": 1}),
            overrides=[f"resume={run_dir}", "base_eval.seed=1"],
        )


def test_a_run_saved_with_the_pin_under_rollout_vllm_resumes_with_it_as_the_runs(tmp_path):
    from agentic_rl.config import find_problems

    run_dir = saved_run(tmp_path)
    saved = OmegaConf.load(run_dir / ".hydra" / "config.yaml")
    saved.rollout = {"backend": "vllm", "vllm": {"dtype": "auto", "mmap_threshold_kib": 512}}
    OmegaConf.save(saved, run_dir / ".hydra" / "config.yaml")
    cfg = jobs.resolve_resume(current(run_dir), overrides=[f"resume={run_dir}"])
    assert cfg.memory.mmap_threshold_kib == 512 and dict(cfg.rollout.vllm) == {"dtype": "auto"}
    assert not [p for p in find_problems(cfg, "train") if "mmap_threshold_kib" in p]


def test_resume_of_a_dir_without_a_run_says_what_to_pass(tmp_path):
    with pytest.raises(FileNotFoundError, match="no .hydra/config.yaml there. Fix: pass the dir of a training run"):
        jobs.resolve_resume(current(tmp_path), overrides=[])


def test_a_signal_outside_the_loop_stops_at_once_inside_it_waits_for_the_safe_point(tmp_path):
    # a job started in the background by a shell inherits SIGINT ignored; whatever it was, it comes back
    sigint_before = signal.getsignal(signal.SIGINT)
    with InterruptGuard(tmp_path, step=5) as guard:
        with guard.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            assert guard.requested  # nothing raised: the loop finishes its step first
        error = guard.interrupted()
    assert (error.step, error.exit_code, error.run_dir) == (5, 128 + signal.SIGTERM, tmp_path)
    with pytest.raises(RunInterrupted) as raised:
        with InterruptGuard(tmp_path, step=2):
            os.kill(os.getpid(), signal.SIGINT)
    assert raised.value.step == 2 and raised.value.exit_code == 130
    assert signal.getsignal(signal.SIGINT) is sigint_before  # handlers are put back


def context(tmp_path: Path) -> RunContext:
    return RunContext(run_dir=tmp_path, tracker=Tracker(tmp_path), interrupts=InterruptGuard(tmp_path))


def test_a_failing_figure_is_logged_and_the_summary_and_adapter_are_kept(tmp_path, caplog):
    def broken_figure():
        raise RuntimeError("matplotlib exploded")

    summary = finish(
        context(tmp_path),
        {"eval": {"after": 0.5}},
        late=[("adapter", lambda: tmp_path / "adapter", True), ("figure", broken_figure, False)],
    )
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk == summary and on_disk["status"] == "complete" and on_disk["adapter"] == str(tmp_path / "adapter")
    assert "figure" not in on_disk and "could not write the figure" in caplog.text


def test_a_failing_adapter_save_raises_after_the_summary_is_written(tmp_path):
    def full_disk():
        raise DiskFullError(errno.ENOSPC, f"no space left on the device while writing {tmp_path / 'adapter'}")

    with pytest.raises(DiskFullError, match=str(tmp_path / "adapter")):
        finish(context(tmp_path), {"eval": {"after": 0.5}}, late=[("adapter", full_disk, True)])
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["eval"] == {"after": 0.5} and on_disk["status"] == "finishing"


def test_a_full_disk_names_the_file_being_written(tmp_path, monkeypatch):
    tracker = Tracker(tmp_path)
    tracker.summary({"kept": True})
    real_open = open

    def no_space(path, *args, **kwargs):
        if str(path).endswith(("metrics.jsonl", ".summary.json.tmp")):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_space)
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: no_space(self, *a, **k))
    with pytest.raises(DiskFullError, match=f"while writing {tmp_path / 'metrics.jsonl'}"):
        tracker.log({"train/loss": 1.0}, step=1)
    with pytest.raises(DiskFullError, match=f"while writing {tmp_path / 'summary.json'}"):
        tracker.summary({"kept": False})
    monkeypatch.undo()
    assert json.loads((tmp_path / "summary.json").read_text()) == {"kept": True}  # the old one, whole


def test_failures_are_recorded_per_job_and_cleared_when_the_job_succeeds(tmp_path):
    sweep = tmp_path / "sweep"
    for num in (0, 2):
        jobs.record_failure(sweep / str(num), sweep, num, ValueError(f"bad job {num}"))
    failures = jobs.read_failures(sweep)
    assert set(failures) == {"0", "2"} and failures["2"]["error"] == "ValueError: bad job 2"
    assert "ValueError: bad job 0" in (sweep / "0" / jobs.ERROR_FILE).read_text()
    jobs.clear_failure(sweep / "0", sweep, 0)
    assert set(jobs.read_failures(sweep)) == {"2"} and not (sweep / "0" / jobs.ERROR_FILE).exists()
    command = jobs.rerun_command("agentic_rl.train", sweep, argv=["sweep=tools", "hydra.sweep.dir=old"])
    assert command == f"python -m agentic_rl.train sweep=tools hydra.sweep.dir={sweep}"


def test_only_complete_jobs_of_the_same_experiment_are_skipped(tmp_path):
    cfg = OmegaConf.create({"seed": 1, "algo": {"lr": 0.1}, "progress": True})
    summary = {"status": "complete", "config_hash": jobs.experiment_hash(cfg)}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    assert jobs.completed_summary(tmp_path, OmegaConf.merge(cfg, {"progress": False})) == summary
    with pytest.raises(ValueError, match="different experiment"):
        jobs.completed_summary(tmp_path, OmegaConf.merge(cfg, {"algo": {"lr": 0.2}}))
    (tmp_path / "summary.json").write_text(json.dumps({**summary, "status": "finishing"}))
    assert jobs.completed_summary(tmp_path, cfg) is None  # killed between summary.json and the adapter


def test_a_resumed_tracker_continues_the_same_wandb_run(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    first = Tracker(tmp_path, {"name": "wandb", "mode": "offline"}, {})
    run_id = first.wandb_info["id"]
    first.close(exit_code=1)
    resumed = Tracker(tmp_path, {"name": "wandb", "mode": "offline"}, {}, resume_id=run_id)
    assert resumed.wandb_info["id"] == run_id
    resumed.close()


def test_a_second_signal_exits_at_once(tmp_path):
    import subprocess
    import sys
    import time

    script = (
        "import time\nfrom agentic_rl.runtime.interrupt import InterruptGuard\n"
        f"with InterruptGuard({str(tmp_path)!r}) as guard, guard.deferred():\n"
        "    print('ready', flush=True)\n    time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)  # deferred: the "loop" keeps sleeping
    time.sleep(0.5)
    assert proc.poll() is None
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and time.monotonic() - started < 30
    assert "second SIGINT: exiting now, without saving" in err and "Traceback" not in err
