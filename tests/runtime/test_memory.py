"""The process memory observables `memory/peak_rss_gib` and `memory/rss_gib`."""

from __future__ import annotations

import sys

import pytest

from agentic_rl.runtime.memory import GIB, memory_metrics, peak_rss_gib, rss_gib

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")


@linux_only
def test_metrics_report_the_current_rss_below_the_peak():
    metrics = memory_metrics()
    assert set(metrics) == {"memory/peak_rss_gib", "memory/rss_gib"}
    # a Python interpreter with pytest loaded holds over 10 MiB, and far less than a TiB
    assert 0.01 < metrics["memory/rss_gib"] <= metrics["memory/peak_rss_gib"] + 0.001 < 1024


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
