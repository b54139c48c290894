"""The held-out episodes the warm-up alone solves and warm-up + GRPO does not, seed by seed: which environment, which
tools each policy called, what it answered. Reads the records' own eval_after.jsonl; writes lost_episodes.md.

    python experiments/codegym/lost_episodes.py [--out experiments/codegym/lost_episodes.md]
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEEDS = (1, 2, 3)


def episodes(path: Path) -> dict[str, dict]:
    return {r["task_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def tools_used(record: dict) -> str:
    return ", ".join(f"{name} x{n}" for name, n in sorted(record["tool_calls"].items()) if n and name != "none")


def answer(record: dict) -> str:
    if record["finish_reason"] == "t_max":
        return "(no Done: T_max)"
    try:
        return json.dumps(json.loads(record["submitted_code"])["parameters"].get("answer"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return "(unreadable)"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(HERE / "lost_episodes.md"))
    args = p.parse_args()
    rows, by_env, won = [], collections.Counter(), 0
    for seed in SEEDS:
        grpo = episodes(HERE / f"seed-{seed}" / "eval_after.jsonl")
        warm = episodes(HERE / "sft-only" / f"seed-{seed}" / "eval_after.jsonl")
        won += sum(grpo[t]["passed"] and not warm[t]["passed"] for t in grpo)
        for task in sorted(grpo):
            g, w = grpo[task], warm[task]
            if w["passed"] and not g["passed"]:
                env = task.split("/")[2]
                by_env[(env, g["env"]["seen_env"])] += 1
                rows.append(
                    [str(seed), task.removeprefix("codegym/"), tools_used(g), answer(g), tools_used(w), answer(w)]
                )
    lines = [
        "# Held-out episodes the warm-up alone solves and warm-up + GRPO does not (greedy, after training)",
        "",
        f"Written by `python experiments/codegym/lost_episodes.py` from `seed-*/eval_after.jsonl` and "
        f"`sft-only/seed-*/eval_after.jsonl`. Lost: {len(rows)}; the other way (GRPO solves, the warm-up alone "
        f"not): {won}.",
        "",
        "| environment | seen in training | lost |",
        "|---|---|---|",
        *(
            f"| {env} | {'yes' if seen else 'no (held-out environment)'} | {n} |"
            for (env, seen), n in by_env.most_common()
        ),
        "",
        "| seed | task | GRPO's tools | GRPO's answer | warm-up's tools | warm-up's answer (right) |",
        "|---|---|---|---|---|---|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(args.out)  # noqa: T201 - the file written, for the shell


if __name__ == "__main__":
    main()
