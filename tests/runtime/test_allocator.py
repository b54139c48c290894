"""`memory.allocator`: which malloc a command asks for, how it starts itself again under it, and that a run's values
do not depend on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agentic_rl.runtime import allocator
from agentic_rl.runtime.allocator import (
    RESTARTED_ENV,
    allocator_for,
    library_path,
    loaded_allocator,
    restart_environment,
    restart_on,
    wanted_allocator,
)
from agentic_rl.runtime.memory import MemoryConfig

JEMALLOC = library_path("jemalloc")
needs_jemalloc = pytest.mark.skipif(
    JEMALLOC is None or not sys.platform.startswith("linux"),
    reason="no jemalloc on this system (apt-get install libjemalloc2; make setup installs it where it can)",
)
MAPS_LINE = "7f00-7f10 r-xp 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/{}\n"


@pytest.mark.parametrize(
    "mapped, name",
    [
        (["libc.so.6", "libjemalloc.so.2"], "jemalloc"),
        (["libc.so.6", "libtcmalloc_minimal.so.4.5.10"], "tcmalloc"),
        (["libc.so.6", "libm.so.6"], "glibc"),
        ([], "glibc"),
    ],
)
def test_the_malloc_in_use_is_read_from_the_mapped_libraries(mapped, name):
    assert loaded_allocator("".join(MAPS_LINE.format(lib) for lib in mapped)) == name


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/maps")
def test_this_process_reports_the_malloc_its_environment_preloads():
    preloaded = os.environ.get("LD_PRELOAD", "")
    expected = "jemalloc" if "jemalloc" in preloaded else "tcmalloc" if "tcmalloc" in preloaded else "glibc"
    assert loaded_allocator() == expected


def test_auto_takes_jemalloc_then_tcmalloc_then_glibc():
    libs = {"jemalloc": "/lib/libjemalloc.so.2", "tcmalloc": "/lib/libtcmalloc_minimal.so.4"}
    assert wanted_allocator("auto", libs.get) == ("jemalloc", libs["jemalloc"])
    assert wanted_allocator("auto", {"tcmalloc": libs["tcmalloc"]}.get) == ("tcmalloc", libs["tcmalloc"])
    assert wanted_allocator("auto", {}.get) == ("glibc", None)
    assert wanted_allocator("glibc", libs.get) == ("glibc", None)
    assert wanted_allocator("tcmalloc", libs.get) == ("tcmalloc", libs["tcmalloc"])


def test_a_named_malloc_that_is_missing_stays_on_glibc_and_says_how_to_get_it(caplog):
    assert wanted_allocator("jemalloc", {}.get) == ("glibc", None)
    assert "memory.allocator=jemalloc" in caplog.text and "apt-get install libjemalloc2" in caplog.text


def test_a_library_is_found_in_the_system_folders(tmp_path):
    (tmp_path / "libtcmalloc_minimal.so.4").write_bytes(b"")
    assert library_path("tcmalloc", dirs=[str(tmp_path / "none"), str(tmp_path)]) == str(
        tmp_path / "libtcmalloc_minimal.so.4"
    )


def test_auto_leaves_glibc_only_where_its_heap_would_be_pinned():
    libs = {"jemalloc": "/lib/libjemalloc.so.2"}
    assert allocator_for("auto", True, libs.get) == ("jemalloc", libs["jemalloc"])  # the vLLM engine on a CPU
    assert allocator_for("auto", False, libs.get) == ("glibc", None)  # the HF engine: glibc measured faster
    assert allocator_for("jemalloc", False, libs.get) == ("jemalloc", libs["jemalloc"])  # named: taken as named
    assert allocator_for("glibc", True, libs.get) == ("glibc", None)


@pytest.mark.parametrize("bad", ["mimalloc", "", "JEMALLOC"])
def test_a_choice_that_is_not_one_of_them_lists_the_choices(bad):
    with pytest.raises(ValueError, match="memory.allocator must be one of auto, glibc, jemalloc, tcmalloc"):
        MemoryConfig(allocator=bad)


def test_the_library_goes_first_in_ld_preload_and_the_restart_is_marked():
    library = "/lib/libjemalloc.so.2"
    env = restart_environment({"LD_PRELOAD": f"/x/libfoo.so {library}", "PATH": "/bin"}, library)
    assert env["LD_PRELOAD"] == "/lib/libjemalloc.so.2 /x/libfoo.so"
    assert env[RESTARTED_ENV] == "1" and env["PATH"] == "/bin"
    assert restart_environment({}, "/lib/libjemalloc.so.2")["LD_PRELOAD"] == "/lib/libjemalloc.so.2"


class Exec:
    def __init__(self):
        self.calls = []

    def __call__(self, path, argv, env):
        self.calls.append((path, argv, env))


@pytest.fixture
def restartable(monkeypatch):
    monkeypatch.setattr(allocator, "_restartable", True)
    monkeypatch.delenv(RESTARTED_ENV, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")


def test_a_command_starts_again_with_its_own_argv_and_more_under_the_library(monkeypatch, restartable):
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", "agentic_rl.train", "seed=2"], raising=False)
    execve = Exec()
    assert restart_on("jemalloc", "/lib/libjemalloc.so.2", ["hydra.run.dir='/runs/a'"], execve)
    ((path, argv, env),) = execve.calls
    assert path == sys.executable
    assert argv == [sys.executable, "-m", "agentic_rl.train", "seed=2", "hydra.run.dir='/runs/a'"]
    assert env["LD_PRELOAD"].split()[0] == "/lib/libjemalloc.so.2" and env[RESTARTED_ENV] == "1"


def test_no_restart_for_a_run_in_process_or_a_second_time(monkeypatch, restartable):
    execve = Exec()
    monkeypatch.setenv(RESTARTED_ENV, "1")
    assert not restart_on("jemalloc", "/lib/libjemalloc.so.2", [], execve)
    monkeypatch.delenv(RESTARTED_ENV)
    monkeypatch.setattr(allocator, "_restartable", False)  # a test or a notebook calling run(cfg)
    assert not restart_on("jemalloc", "/lib/libjemalloc.so.2", [], execve)
    assert execve.calls == []


class Sampler:
    def __init__(self, shares):
        self.shares = shares

    def shares_trainer_heap(self, on_gpu):
        return self.shares


@pytest.mark.parametrize(
    "setting, shares_heap, asked",
    [
        ("auto", True, "jemalloc"),  # vLLM on a CPU: jemalloc instead of the pin
        ("auto", False, None),  # HF: glibc, no restart
        ("jemalloc", False, "jemalloc"),
        ("glibc", True, None),  # glibc named: the pin as before
    ],
)
def test_a_run_starts_again_into_its_own_run_dir_where_the_config_asks(
    monkeypatch, tmp_path, setting, shares_heap, asked
):
    """`pin_run_heap` (train and evaluate, before the model loads): where the config's malloc is not the process's,
    the command starts again on it with its Hydra run dir named, so a dir named by the time is not made twice."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    from agentic_rl.runtime import memory, stages

    restarts = []
    monkeypatch.setattr(allocator, "library_path", lambda name: f"/lib/lib{name}.so.2")
    monkeypatch.setattr(stages, "loaded_allocator", lambda: "glibc")
    monkeypatch.setattr(stages, "in_hydra", lambda: True)
    monkeypatch.setattr(stages, "in_multirun", lambda: False)
    monkeypatch.setattr(
        HydraConfig, "get", staticmethod(lambda: OmegaConf.create({"runtime": {"output_dir": str(tmp_path)}}))
    )
    monkeypatch.setattr(
        stages, "restart_on", lambda name, library, extra: restarts.append((name, library, extra)) or True
    )
    monkeypatch.setattr(memory, "pin_mmap_threshold", lambda kib: True)
    cfg = OmegaConf.create({"memory": {"mmap_threshold_kib": "auto", "allocator": setting}})
    pinned = stages.pin_run_heap(cfg, Sampler(shares_heap))
    if asked is None:
        assert restarts == [] and pinned == (128 if shares_heap else None)
    else:
        assert restarts == [(asked, f"/lib/lib{asked}.so.2", [f"hydra.run.dir='{tmp_path}'"])]


def test_a_run_that_cannot_start_again_says_so_and_runs_on(monkeypatch, caplog):
    from omegaconf import OmegaConf

    from agentic_rl.runtime import memory, stages

    monkeypatch.setattr(allocator, "library_path", lambda name: f"/lib/lib{name}.so.2")
    monkeypatch.setattr(stages, "loaded_allocator", lambda: "glibc")
    monkeypatch.setattr(memory, "pin_mmap_threshold", lambda kib: True)
    monkeypatch.setattr(allocator, "_restartable", False)
    cfg = OmegaConf.create({"memory": {"mmap_threshold_kib": "auto", "allocator": "auto"}})
    assert stages.pin_run_heap(cfg, Sampler(True)) == 128  # still on glibc: pinned as before
    assert "cannot start again" in caplog.text


@needs_jemalloc
def test_a_process_started_again_runs_on_jemalloc():
    """The real thing: a process that calls `restart_on` comes back under jemalloc, and only once."""
    script = (
        "import os; from agentic_rl.runtime.allocator import allow_restart, restart_on, loaded_allocator; "
        f"print('start', flush=True); allow_restart(); restart_on('jemalloc', {JEMALLOC!r}); "
        "print(loaded_allocator(), os.environ.get('AGENTIC_RL_ALLOCATOR_RESTARTED'))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", RESTARTED_ENV)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["start", "start", "jemalloc", "1"]


VALUE_KEYS = ("loss", "kl", "grad_norm", "reward", "pass", "rate", "entropy", "logp", "clip", "advantage", "tokens")


@pytest.mark.slow
@needs_jemalloc
def test_a_run_computes_the_same_values_on_either_malloc(tmp_path):
    """experiment=smoke (warm-up, a GRPO step, the evaluation after) on glibc and on jemalloc: every logged value
    that is not a time or a memory figure is equal, bit for bit, and the summary says which malloc ran."""
    runs = {}
    for name in ("glibc", "jemalloc"):
        run_dir = tmp_path / name
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", RESTARTED_ENV)}
        out = subprocess.run(
            [sys.executable, "-m", "agentic_rl.train", "experiment=smoke", "logger=none", "progress=false",
             "eval_before=false", f"memory.allocator={name}", f"hydra.run.dir={run_dir}"],
            capture_output=True, text=True, env=env, timeout=900,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        assert json.loads((run_dir / "summary.json").read_text())["allocator"] == name
        runs[name] = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    compared = 0
    for row_glibc, row_jemalloc in zip(runs["glibc"], runs["jemalloc"], strict=True):
        for key, value in row_glibc.items():
            if key.startswith(("time/", "memory/")) or key.endswith(("_s", "tokens_per_s", "latency_ms")):
                continue
            assert row_jemalloc.get(key) == value, (row_glibc.get("step"), key)
            compared += any(part in key for part in VALUE_KEYS)
    assert compared > 50  # losses, gradients, rewards and pass rates were among them
