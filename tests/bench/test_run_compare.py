"""`run_compare` on a run done in chunks: the wall times of its `/usr/bin/time -v` reports add up, the peak is the
largest, and the table's ratio column uses them."""

from __future__ import annotations

import json
from pathlib import Path

from agentic_rl.bench.run_compare import main, time_v_chunks


def report(path: Path, wall: str, rss_kb: int) -> Path:
    path.write_text(
        '\tCommand being timed: "python -m agentic_rl.train"\n'
        f"\tElapsed (wall clock) time (h:mm:ss or m:ss): {wall}\n"
        f"\tMaximum resident set size (kbytes): {rss_kb}\n"
    )
    return path


def run_dir(path: Path, update_s: float) -> Path:
    path.mkdir()
    (path / "summary.json").write_text(json.dumps({"train_seconds": 10.0}))
    rows = [{"step": 1, "train/reward_mean": 0.5, "time/update_s": update_s, "time/rollout_s": 1.0}]
    (path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_chunks_add_their_walls_and_keep_the_largest_peak(tmp_path):
    first = report(tmp_path / "a.txt", "25:24.23", 4543264)
    second = report(tmp_path / "b.txt", "5:52.54", 2927604)
    one = time_v_chunks(str(first))
    assert one == {"wall_s": 25 * 60 + 24.23, "peak_rss_gib": 4543264 / 2**20}
    both = time_v_chunks(f"{first}+{second}")
    assert abs(both["wall_s"] - (25 * 60 + 24.23 + 5 * 60 + 52.54)) < 1e-9
    assert both["peak_rss_gib"] == 4543264 / 2**20
    assert both["time -v chunks"] == 2


def test_the_table_compares_a_chunked_run_by_its_whole_wall_time(tmp_path):
    hf = run_dir(tmp_path / "hf", update_s=2.0)
    vllm = run_dir(tmp_path / "vllm", update_s=3.0)
    hf_report = report(tmp_path / "hf.txt", "1:40.00", 1048576)
    a = report(tmp_path / "a.txt", "1:00.00", 2097152)
    b = report(tmp_path / "b.txt", "0:50.00", 1048576)
    text = main([str(hf), str(vllm), "--time-v", str(hf_report), f"{a}+{b}"])
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()}
    assert rows["wall_s"].endswith("| 100 | 110 | 1.100 |")
    assert rows["peak_rss_gib"].endswith("| 1 | 2 | 2.000 |")
    assert rows["sum time/update_s"].endswith("| 2 | 3 | 1.500 |")
