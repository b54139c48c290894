"""Two or more training runs side by side, from their own files: where the time went, memory, rewards, the
sampler/trainer gap.

    python -m agentic_rl.bench.run_compare RUN_DIR [RUN_DIR ...] [--time-v FILE[+FILE...] ...] [--out FILE.md]

Made for the same recipe on two sampler backends (`rollout.backend=hf` and `vllm`). Per run, read from its
`summary.json`, `metrics.jsonl` and, when given (one per run, in the same order), the `/usr/bin/time -v` report:
wall time and peak RSS (a run done in chunks, e.g. stopped by a timeout and resumed, gives its chunks' reports
joined by `+`: the walls add up, the peak is the largest); the training steps' `time/*` summed; generated
tokens/s and prefill/context tokens of the training rollouts; `train/reward_mean` per quarter of the steps; the
evaluations' pass@1 and rollout seconds per mode, before and after; the means of `rollout_correction/*` over the
steps that logged them. The last column is the second run over the first where a ratio means something.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)
TIME_KEYS = ("time/rollout_s", "time/tools_s", "time/sync_s", "time/update_s", "time/step_s")


def time_v(path: Path) -> dict[str, float]:
    """Wall seconds and peak RSS (GiB) from a `/usr/bin/time -v` report."""
    text = path.read_text()
    out: dict[str, float] = {}
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    if wall:
        seconds = 0.0
        for part in wall.group(1).split(":"):
            seconds = seconds * 60 + float(part)
        out["wall_s"] = seconds
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if rss:
        out["peak_rss_gib"] = int(rss.group(1)) / 2**20
    return out


def time_v_chunks(spec: str) -> dict[str, float]:
    """`time_v` of one report, or of a run's chunks given as `A+B+...`: summed wall seconds, the largest peak RSS."""
    parts = [time_v(Path(part)) for part in spec.split("+")]
    out: dict[str, float] = {}
    walls = [p["wall_s"] for p in parts if "wall_s" in p]
    if walls:
        out["wall_s"] = sum(walls)
    peaks = [p["peak_rss_gib"] for p in parts if "peak_rss_gib" in p]
    if peaks:
        out["peak_rss_gib"] = max(peaks)
    if len(parts) > 1:
        out["time -v chunks"] = float(len(parts))
    return out


def run_figures(run: Path, time_report: str | None) -> dict[str, Any]:
    summary = json.loads((run / "summary.json").read_text())
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    steps = [r for r in rows if "train/reward_mean" in r]
    config = run / ".hydra" / "config.yaml"
    backend = None
    if config.exists():
        from omegaconf import OmegaConf

        backend = OmegaConf.select(OmegaConf.load(config), "rollout.backend")
    figures: dict[str, Any] = {"rollout.backend": backend, "train_steps": len(steps)}
    if time_report is not None:
        figures.update(time_v_chunks(time_report))
    figures["summary peak_rss_gib"] = summary.get("peak_rss_gib")
    figures["train_seconds"] = summary.get("train_seconds")
    for key in TIME_KEYS:
        figures[f"sum {key}"] = sum(r.get(key, 0.0) for r in steps)
    generated = sum(r.get("rollout/tokens_per_s", 0.0) * r.get("time/rollout_s", 0.0) for r in steps)
    rollout_s = figures["sum time/rollout_s"]
    figures["train rollout tok/s"] = generated / rollout_s if rollout_s else None
    prefill = sum(r.get("rollout/prefill_tokens", 0.0) for r in steps)
    context = sum(r.get("rollout/context_tokens", 0.0) for r in steps)
    figures["train prefill/context"] = prefill / context if context else None
    n = len(steps)
    for q in range(4):
        part = steps[q * n // 4 : (q + 1) * n // 4]
        if part:
            figures[f"reward_mean quarter {q + 1}"] = sum(r["train/reward_mean"] for r in part) / len(part)
    for when, modes in (summary.get("eval") or {}).items():
        for mode, values in modes.items():
            figures[f"eval {when} {mode} pass@1"] = values.get("pass@1")
            figures[f"eval {when} {mode} rollout_s"] = values.get("time/rollout_s")
    gap_keys = sorted({k for r in steps for k in r if k.startswith("rollout_correction/")})
    for key in gap_keys:
        values = [r[key] for r in steps if key in r]
        figures[f"mean {key}"] = sum(values) / len(values)
    return figures


def table(names: list[str], runs: list[dict[str, Any]]) -> str:
    keys = list(dict.fromkeys(k for r in runs for k in r))
    ratio = len(runs) == 2
    lines = ["| quantity | " + " | ".join(names) + (" | second / first |" if ratio else " |")]
    lines.append("|" + "---|" * (len(names) + 1 + ratio))
    for key in keys:
        values = [r.get(key) for r in runs]
        cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in values]
        row = f"| {key} | " + " | ".join(cells) + " |"
        if ratio:
            a, b = values
            numeric = isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
            row += f" {b / a:.3f} |" if numeric and a and key != "train_steps" else " |"
        lines.append(row)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument(
        "--time-v", nargs="*", default=None, help="one /usr/bin/time -v report per run (a run's chunks: A+B)"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    reports = args.time_v or [None] * len(args.runs)
    if len(reports) != len(args.runs):
        raise SystemExit(f"--time-v takes one report per run: {len(reports)} for {len(args.runs)} runs")
    text = table([str(r) for r in args.runs], [run_figures(r, t) for r, t in zip(args.runs, reports)])
    if args.out:
        args.out.write_text(text + "\n")
    logger.info("%s", text)
    return text


if __name__ == "__main__":
    main()
