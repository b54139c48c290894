"""`memory.allocator`: which malloc a command asks for, how it starts itself again under it, and that a run's values
do not depend on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_rl.runtime import allocator
from agentic_rl.runtime.allocator import (
    RESTARTED_ENV,
    choice_from,
    library_path,
    loaded_allocator,
    reexec_under,
    restart_environment,
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


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "train.yaml"
    path.write_text(text)
    return path


def test_the_command_line_wins_over_the_config_file_and_its_last_override_counts(tmp_path):
    config = write_config(tmp_path, "memory:\n  allocator: tcmalloc\n")
    assert choice_from([], config) == "tcmalloc"
    assert choice_from(["seed=3", "memory.allocator=glibc"], config) == "glibc"
    assert choice_from(["memory.allocator=glibc", "++memory.allocator='jemalloc'"], config) == "jemalloc"
    assert choice_from(["memory.allocator_x=glibc"], config) == "tcmalloc"  # another key
    assert choice_from([], write_config(tmp_path, "seed: 1\n")) == "auto"
    assert choice_from([], tmp_path / "missing.yaml") == "glibc"  # unreadable: the malloc of the process as started


@pytest.mark.parametrize("bad", ["mimalloc", "", "JEMALLOC"])
def test_a_choice_that_is_not_one_of_them_lists_the_choices(tmp_path, bad):
    with pytest.raises(ValueError, match="memory.allocator must be one of auto, glibc, jemalloc, tcmalloc"):
        choice_from([f"memory.allocator={bad}"], write_config(tmp_path, ""))
    with pytest.raises(ValueError, match="memory.allocator must be one of"):
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
def jemalloc_found(monkeypatch):
    monkeypatch.setattr(allocator, "library_path", lambda name: "/lib/libjemalloc.so.2" if name == "jemalloc" else None)
    monkeypatch.setattr(allocator, "loaded_allocator", lambda maps=None: "glibc")
    monkeypatch.delenv(RESTARTED_ENV, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")


def test_a_command_starts_again_with_its_own_argv_under_the_malloc_asked_for(tmp_path, monkeypatch, jemalloc_found):
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", "agentic_rl.train", "seed=2"], raising=False)
    execve = Exec()
    reexec_under(write_config(tmp_path, "memory:\n  allocator: auto\n"), ["seed=2"], execve)
    ((path, argv, env),) = execve.calls
    assert path == sys.executable and argv == [sys.executable, "-m", "agentic_rl.train", "seed=2"]
    assert env["LD_PRELOAD"].split()[0] == "/lib/libjemalloc.so.2" and env[RESTARTED_ENV] == "1"


@pytest.mark.parametrize(
    "argv, config, loaded, restarted",
    [
        (["memory.allocator=glibc"], "auto", "glibc", False),  # glibc asked for: nothing to do
        ([], "glibc", "glibc", False),
        ([], "auto", "jemalloc", False),  # already on it
        (["-m", "seed=1,2"], "auto", "glibc", False),  # a multirun's jobs share the process
        ([], "auto", "glibc", True),  # started again once already: never a third time
        (["memory.allocator=tcmalloc"], "auto", "glibc", False),  # missing: stays on glibc
        (["memory.allocator=nonsense"], "auto", "glibc", False),  # the config check reports it later
    ],
)
def test_no_restart_where_there_is_nothing_to_change(
    tmp_path, monkeypatch, jemalloc_found, argv, config, loaded, restarted
):
    monkeypatch.setattr(allocator, "loaded_allocator", lambda maps=None: loaded)
    if restarted:
        monkeypatch.setenv(RESTARTED_ENV, "1")
    execve = Exec()
    reexec_under(write_config(tmp_path, f"memory:\n  allocator: {config}\n"), argv, execve)
    assert execve.calls == []


@needs_jemalloc
def test_a_process_started_again_runs_on_jemalloc(tmp_path):
    """The real thing: a process that calls `reexec_under` comes back under jemalloc, and only once."""
    config = write_config(tmp_path, "memory:\n  allocator: jemalloc\n")
    script = (
        "import os, sys; from pathlib import Path; from agentic_rl.runtime.allocator import reexec_under, "
        f"loaded_allocator; print('start', flush=True); reexec_under(Path({str(config)!r}), []); "
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
    """experiment=smoke (warm-up, GRPO steps, evaluation) on glibc and on jemalloc: every logged value that is not
    a time or a memory figure is equal, bit for bit, and the summary says which malloc ran."""
    runs = {}
    for name in ("glibc", "jemalloc"):
        run_dir = tmp_path / name
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", RESTARTED_ENV)}
        out = subprocess.run(
            [sys.executable, "-m", "agentic_rl.train", "experiment=smoke", "logger=none", "progress=false",
             "base_eval.cache=null", f"memory.allocator={name}", f"hydra.run.dir={run_dir}"],
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
