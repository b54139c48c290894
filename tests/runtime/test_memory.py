"""The process memory observables `memory/peak_rss_gib` and `memory/rss_gib`, the heap trim, and the run-level pin of
glibc's mmap threshold (`memory.mmap_threshold_kib`)."""

from __future__ import annotations

import sys

import pytest

from agentic_rl.runtime import memory
from agentic_rl.runtime.memory import (
    GIB,
    MemoryConfig,
    memory_metrics,
    peak_rss_gib,
    pin_mmap_threshold,
    rss_gib,
    upgrade_legacy_pin,
)

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")


@linux_only
def test_metrics_report_the_current_rss_below_the_peak():
    metrics = memory_metrics()
    assert set(metrics) == {"memory/peak_rss_gib", "memory/rss_gib"}
    # a Python interpreter with pytest loaded holds over 10 MiB, and far less than a TiB
    assert 0.01 < metrics["memory/rss_gib"] <= metrics["memory/peak_rss_gib"] + 0.001 < 1024


def test_the_peak_reported_is_never_below_the_resident_set_now(monkeypatch):
    # getrusage's high-water mark comes from per-CPU counters that can lag the exact resident set a moment
    monkeypatch.setattr(memory, "peak_rss_gib", lambda: 1.0)
    monkeypatch.setattr(memory, "rss_gib", lambda: 1.0 + 600 * 4096 / GIB)
    metrics = memory.memory_metrics()
    assert metrics["memory/peak_rss_gib"] == metrics["memory/rss_gib"] == round(1.0 + 600 * 4096 / GIB, 3)
    monkeypatch.setattr(memory, "rss_gib", lambda: None)  # no /proc: the kernel's mark alone
    assert memory.memory_metrics() == {"memory/peak_rss_gib": 1.0}


@linux_only
def test_peak_rises_when_the_process_touches_more_memory_than_ever_before():
    now, peak = rss_gib(), peak_rss_gib()
    grow = peak - now + 0.25  # enough to pass the old high-water mark by a quarter GiB
    block = bytearray(int(grow * GIB))  # zero-filled, so every page is touched
    try:
        assert peak_rss_gib() >= now + grow - 0.05
    finally:
        del block


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_release_free_memory_returns_freed_heap_pages_to_the_system():
    from agentic_rl.runtime.memory import release_free_memory

    # ~300 MiB in 2 KiB heap blocks (below the mmap threshold, above Python's small-object allocator), then all
    # freed but the last one, which pins the heap's top: glibc keeps the freed pages resident
    blocks = [bytes(2048) for _ in range(150_000)]
    pin = blocks[-1]
    del blocks
    before = rss_gib()
    if not release_free_memory():
        pytest.skip("not glibc: nothing to trim")
    assert before - rss_gib() > 0.15, "the freed blocks' pages should leave the resident set"
    assert pin == bytes(2048)  # live data is untouched


def test_each_training_phase_starts_from_a_trimmed_heap(tmp_path, monkeypatch):
    """A rollout batch and its update each start after freed heap went back to the system: the decode
    buffers and the activations are freed in sizes the next phase does not reuse, so resident leftovers
    would stack under each peak."""
    import random

    from hydra import compose, initialize_config_dir

    from agentic_rl import train
    from agentic_rl.config import register_configs
    from agentic_rl.distributed import Distributed
    from agentic_rl.runtime.stages import open_run
    from agentic_rl.tracking.sinks import open_tracker
    from tests.config.test_compose import CONF

    events: list[str] = []

    def recorded(name, fn):
        def wrapper(*args, **kwargs):
            events.append(name)
            return fn(*args, **kwargs) if fn is not None else True

        return wrapper

    monkeypatch.setattr(train, "release_free_memory", recorded("trim", None))
    monkeypatch.setattr(train, "run_episodes", recorded("rollout", train.run_episodes))
    monkeypatch.setattr(train, "update_rollout_batch", recorded("update", train.update_rollout_batch))
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            "train",
            overrides=[
                "model=tiny-random",
                "tools=none",
                "logger=none",
                "algo.group_size=2",
                "rollout.max_turns=1",
                "rollout.max_new_tokens=4",
                "data.limit=2",
                "progress=false",
            ],
        )
    with open_run(cfg, tmp_path, open_tracker(cfg, tmp_path)) as ctx:
        training = train.build_training(cfg, ctx.sandbox, Distributed.from_env(60))
        position = train.Position(data_rng=random.Random(0))
        with train.tqdm(disable=True) as bar:
            train.train_on_chunk(training, training.train_tasks[:2], position, ctx, bar)
    assert events == ["trim", "rollout", "trim", "update"]
    assert position.step == 2


# ------------------------------------------------------------------------------------- the mmap threshold's pin


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_mmap_threshold_pin_is_accepted_by_glibc():
    if memory._glibc() is None:
        pytest.skip("not glibc")
    assert pin_mmap_threshold(128)  # glibc's initial value: what the process has anyway, minus the dynamic raise


def test_the_pin_asks_glibc_for_its_mmap_threshold_in_bytes(monkeypatch):
    """`mallopt(M_MMAP_THRESHOLD, bytes)`, with M_MMAP_THRESHOLD = -3 as glibc's malloc.h defines it (another
    parameter is accepted too, and does something else); False where the C library has no `mallopt` or refuses."""
    import ctypes

    calls = []

    class Libc:
        def __init__(self, answer):
            self.answer = answer

        def mallopt(self, param, value):
            calls.append((param, value))
            return self.answer

        def malloc_trim(self, pad):
            return 1

    def loaded(libc):
        monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: libc)
        memory._glibc.cache_clear()

    monkeypatch.setattr(sys, "platform", "linux")
    try:
        loaded(Libc(1))
        assert pin_mmap_threshold(256) is True and calls == [(-3, 256 * 1024)]
        loaded(Libc(0))
        assert pin_mmap_threshold(256) is False
        loaded(object())  # a C library without mallopt and malloc_trim (musl)
        assert pin_mmap_threshold(256) is False and memory.trim_heap() is False
        loaded(Libc(1))
        monkeypatch.setattr(sys, "platform", "darwin")
        memory._glibc.cache_clear()
        assert pin_mmap_threshold(256) is False and len(calls) == 2
    finally:
        memory._glibc.cache_clear()  # the next caller loads the real C library again


@pytest.mark.parametrize(
    "setting, engine_shares_heap, pinned",
    [
        ("auto", True, 128),  # vLLM on a CPU: the engine and the trainer share this heap
        ("auto", False, None),  # the HF backend, or vLLM on a GPU: glibc's own threshold
        (512, False, 512),  # a number pins it for either backend
        (512, True, 512),
        (0, False, 0),
        (None, True, None),  # null never pins
    ],
)
def test_auto_pins_only_where_the_engine_shares_the_heap(monkeypatch, setting, engine_shares_heap, pinned):
    asked = []
    monkeypatch.setattr(memory, "pin_mmap_threshold", lambda kib: asked.append(kib) or True)
    assert memory.apply_memory_config(MemoryConfig(setting), engine_shares_heap, "glibc") == pinned
    assert asked == ([] if pinned is None else [pinned])


@pytest.mark.parametrize("setting", ["auto", 512, 0, None])
@pytest.mark.parametrize("allocator", ["jemalloc", "tcmalloc"])
def test_nothing_is_pinned_under_another_malloc(monkeypatch, caplog, setting, allocator):
    """glibc's mmap threshold means nothing to jemalloc or tcmalloc (mallopt would still answer yes: it is glibc's),
    so no pin is made or reported, and a size asked for by name says it was not applied."""
    asked = []
    monkeypatch.setattr(memory, "pin_mmap_threshold", lambda kib: asked.append(kib) or True)
    assert memory.apply_memory_config(MemoryConfig(setting), True, allocator) is None
    assert asked == []
    assert (f"not pinned, this process runs on {allocator}" in caplog.text) == isinstance(setting, int)


def test_a_c_library_that_refuses_the_pin_is_reported_not_fatal(monkeypatch, caplog):
    monkeypatch.setattr(memory, "pin_mmap_threshold", lambda kib: False)
    assert memory.apply_memory_config(MemoryConfig(256), engine_shares_heap=False, allocator="glibc") is None
    assert "not glibc" in caplog.text


@pytest.mark.parametrize("bad", [-1, "big", True, 1.5])
def test_a_setting_that_is_not_auto_a_size_or_null_says_what_is(bad):
    with pytest.raises(ValueError, match="memory.mmap_threshold_kib must be auto, a number of KiB >= 0 or null"):
        MemoryConfig(bad)


@pytest.mark.parametrize(
    "rollout, memory_node",
    [
        ({"backend": "vllm", "vllm": {"mmap_threshold_kib": 128}}, {"mmap_threshold_kib": "auto"}),  # the default
        ({"backend": "vllm", "vllm": {"mmap_threshold_kib": 512}}, {"mmap_threshold_kib": 512}),
        ({"backend": "vllm", "vllm": {"mmap_threshold_kib": None}}, {"mmap_threshold_kib": None}),
        ({"backend": "hf", "vllm": {"mmap_threshold_kib": 512}}, {"mmap_threshold_kib": "auto"}),  # HF never pinned
    ],
)
def test_a_run_saved_before_memory_existed_keeps_what_its_pin_did(rollout, memory_node):
    from omegaconf import OmegaConf

    saved = upgrade_legacy_pin(OmegaConf.create({"rollout": rollout}))
    assert "mmap_threshold_kib" not in saved.rollout.vllm and saved.rollout.backend == rollout["backend"]
    assert OmegaConf.to_container(saved.memory) == memory_node


def test_a_config_without_the_old_key_is_left_as_it_is():
    from omegaconf import OmegaConf

    for node in ({"rollout": {"backend": "vllm", "vllm": {"dtype": "auto"}}}, {"seed": 1}):
        assert OmegaConf.to_container(upgrade_legacy_pin(OmegaConf.create(node))) == node
    kept = upgrade_legacy_pin(
        OmegaConf.create({"rollout": {"vllm": {"mmap_threshold_kib": 512}}, "memory": {"mmap_threshold_kib": None}})
    )
    assert kept.memory.mmap_threshold_kib is None and "mmap_threshold_kib" not in kept.rollout.vllm


@pytest.mark.parametrize(
    "entry, stop_at, overrides",
    [
        ("train", "build_training", []),
        ("evaluate", "load_policy", ["evaluator.limit=1"]),
    ],
)
@pytest.mark.parametrize(
    "backend, auto_chooses, pinned",
    [("vllm", None, [128]), ("hf", None, []), ("auto", "vllm", [128]), ("auto", "hf", [])],
)
def test_a_run_pins_before_it_loads_the_model_as_its_backend_asks(
    monkeypatch, tmp_path, entry, stop_at, overrides, backend, auto_chooses, pinned
):
    """`memory.mmap_threshold_kib=auto` (the default): training and evaluation pin on a CPU with the vLLM backend,
    named or chosen by `rollout.backend=auto`, and before the model is loaded, so the model's own allocations
    already follow the pinned threshold."""
    import importlib

    import torch
    from hydra import compose, initialize_config_dir

    from agentic_rl.rollout import backends
    from agentic_rl.runtime import stages
    from tests.config.test_compose import CONF

    module = importlib.import_module(f"agentic_rl.{entry}")
    events = []

    class Stop(Exception):
        pass

    def stop(*args, **kwargs):
        events.append("load")
        raise Stop

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(stages, "loaded_allocator", lambda: "glibc")  # whatever malloc runs pytest
    monkeypatch.setattr(memory, "pin_mmap_threshold", lambda kib: events.append(kib) or True)
    monkeypatch.setattr(module, stop_at, stop)
    monkeypatch.setattr(backends, "auto_choice", lambda: (auto_chooses, "faked for the test"))
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            entry,
            overrides=[
                "model=tiny-random",
                "logger=none",
                "progress=false",
                f"rollout.backend={backend}",
                f"+run_dir={tmp_path}",
                *overrides,
            ],
        )
    with pytest.raises(Stop):
        module.run(cfg)
    assert events == [*pinned, "load"]
