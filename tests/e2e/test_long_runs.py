"""Long runs as a user lives them, in real subprocesses: kill -9 then resume, Ctrl-C, a sweep with a failing job.

The runs use tests/e2e/train_driver.py (`python -m agentic_rl.train` plus a reward read off the sampled
tokens), so the tiny random model really trains and every step's numbers depend on the RNG, adapter and
optimizer state a resume must restore.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from safetensors.torch import load_file

from agentic_rl.runtime.checkpoint import CHECKPOINT_DIR, load_latest, verify

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("train_driver.py")
TINY = [
    "model=tiny-random",
    "reward=binary",
    "reward._target_=train_driver.sampled",
    "algo.lr=0.01",
    "algo.group_size=2",
    "algo.epochs=2",
    "algo.tasks_per_epoch=2",
    "algo.tasks_per_rollout=1",
    "data.limit=3",
    "eval_before=false",
    "eval_after=false",
    "warmup=none",  # these runs are about steps, checkpoints and signals; the warm-up's own are in test_warmup_run
    "rollout.max_turns=1",
    "rollout.max_new_tokens=8",
    "logger=none",
    "progress=false",
    "checkpoint_every=1",
]
N_STEPS = 4


def is_machine_state(metric: str) -> bool:
    """Wall-clock and process-memory metrics differ between any two runs; everything else must match exactly."""
    return metric.startswith(("time/", "memory/")) or metric.endswith(("_per_s", "latency_ms"))


def env() -> dict[str, str]:
    return {**os.environ, "WANDB_MODE": "offline", "PYTHONPATH": str(REPO)}


def start(args: list[str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(DRIVER), *args],
        cwd=REPO,
        env={**env(), **kwargs.pop("extra_env", {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def finish(args: list[str], timeout: int = 600, **kwargs) -> subprocess.CompletedProcess:
    proc = start(args, **kwargs)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def train_records(run_dir: Path) -> list[dict]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def wait_for_steps(run_dir: Path, proc: subprocess.Popen, n: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = run_dir / "metrics.jsonl"
        if path.is_file() and len(path.read_text().splitlines()) >= n:
            return
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.2)
    raise TimeoutError(f"{run_dir}: fewer than {n} steps after {timeout} s")


def comparable(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if not is_machine_state(k)} for r in records]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("uninterrupted") / "run"
    done = finish([*TINY, f"hydra.run.dir={run_dir}"])
    assert done.returncode == 0, done.stderr[-3000:]
    records = train_records(run_dir)
    assert [r["step"] for r in records] == list(range(1, N_STEPS + 1))
    assert len({r["train/reward_mean"] for r in records}) > 1  # the sampled reward varies: the run trains
    return run_dir


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_equals_the_uninterrupted_run(uninterrupted, tmp_path):
    run_dir = tmp_path / "run"
    proc = start([*TINY, f"hydra.run.dir={run_dir}"])
    wait_for_steps(run_dir, proc, 2)
    proc.kill()  # SIGKILL: no handler, no cleanup, possibly mid-write
    proc.wait()
    killed_at = len(train_records(run_dir))
    assert killed_at < N_STEPS and load_latest(run_dir) is not None

    done = finish([f"resume={run_dir}"])
    assert done.returncode == 0, done.stderr[-3000:]
    resumed, reference = train_records(run_dir), train_records(uninterrupted)
    assert [r["step"] for r in resumed] == list(range(1, N_STEPS + 1))  # every step exactly once
    assert comparable(resumed) == comparable(reference)
    got = load_file(str(run_dir / "adapter" / "adapter_model.safetensors"))
    want = load_file(str(uninterrupted / "adapter" / "adapter_model.safetensors"))
    assert got.keys() == want.keys() and all(got[k].equal(want[k]) for k in want)
    assert any(want[k].abs().max() > 0 for k in want if "lora_B" in k)  # the adapter moved off its zero init
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "complete" and summary["train_steps"] == N_STEPS
    # the run's own Hydra record is untouched; the resume's went to .hydra/resume/
    assert "resume=" not in (run_dir / ".hydra" / "overrides.yaml").read_text()
    assert (run_dir / ".hydra" / "resume" / "overrides.yaml").is_file()


@pytest.mark.slow
def test_sigint_saves_a_checkpoint_and_prints_one_line(tmp_path):
    run_dir = tmp_path / "run"
    proc = start([*TINY, "checkpoint_every=0", f"hydra.run.dir={run_dir}"])
    wait_for_steps(run_dir, proc, 1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130
    assert "Traceback" not in err + out
    lines = [line for line in (err + out).splitlines() if line.startswith("interrupted")]
    assert lines == [
        f"interrupted at step {lines[0].split()[3].rstrip(';')}; resume with: "
        f"python -m agentic_rl.train resume={run_dir}"
    ]
    step = int(re.match(r"interrupted at step (\d+);", lines[0]).group(1))
    checkpoint = load_latest(run_dir)  # checkpoint_every=0: this one exists only because of the signal
    assert checkpoint is not None and checkpoint.step == step >= 1 and verify(checkpoint.path) is None
    assert [r["step"] for r in train_records(run_dir)] == list(range(1, step + 1))
    assert not (run_dir / "summary.json").exists()


@pytest.mark.slow
def test_a_sweep_finishes_despite_a_failing_job_and_a_rerun_runs_only_that_job(tmp_path):
    sweep_dir, marker = tmp_path / "sweep", tmp_path / "fail-now"
    marker.touch()
    args = [
        "-m",
        *TINY,
        "algo.epochs=1",
        "algo.tasks_per_epoch=1",
        "reward._target_=train_driver.sampled,train_driver.fail_if_marker",
        f"hydra.sweep.dir={sweep_dir}",
    ]
    first = finish(args, extra_env={"FAIL_MARKER": str(marker)})
    assert first.returncode == 1  # the sweep says it is incomplete...
    assert json.loads((sweep_dir / "0" / "summary.json").read_text())["status"] == "complete"  # ...job 0 finished
    failures = json.loads((sweep_dir / "failures.json").read_text())
    assert list(failures) == ["1"] and "made to fail by the test" in failures["1"]["error"]
    assert "RuntimeError: made to fail" in (sweep_dir / "1" / "error.txt").read_text()
    assert f"hydra.sweep.dir={sweep_dir}" in first.stdout + first.stderr  # the rerun command is printed
    job0_metrics = (sweep_dir / "0" / "metrics.jsonl").read_bytes()

    marker.unlink()
    second = finish(args, extra_env={"FAIL_MARKER": str(marker)})
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads((sweep_dir / "failures.json").read_text()) == {}
    assert not (sweep_dir / "1" / "error.txt").exists()
    assert json.loads((sweep_dir / "1" / "summary.json").read_text())["status"] == "complete"
    assert [r["step"] for r in train_records(sweep_dir / "1")] == [1]
    assert (sweep_dir / "0" / "metrics.jsonl").read_bytes() == job0_metrics  # job 0 was skipped, not rerun
    assert not (sweep_dir / "0" / CHECKPOINT_DIR / "step-000002").exists()
