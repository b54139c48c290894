"""The first trajectories that differ between two training runs, from their W&B tables of every step's groups.

Run with `logger.table_every=1`, a run's offline W&B folder holds one table per step with the transcripts of
that step's group (`wandb/latest-run/files/media/table/samples/trajectories_<step>_*.table.json`). This prints
how many (step, task, sample) episodes each run has, a unified diff of the first three transcripts that differ,
and the number that differ.

    python experiments/sandbox-wording/trajectory_diff.py RUN_A RUN_B
"""

import difflib
import glob
import json
import os
import sys


def episodes(run_dir: str) -> dict:
    found = {}
    pattern = os.path.join(run_dir, "wandb/latest-run/files/media/table/samples/trajectories_*.table.json")
    for path in glob.glob(pattern):
        table = json.load(open(path))
        for row in table["data"]:
            record = dict(zip(table["columns"], row))
            found[(record["step"], record["task"], record["sample"])] = record
    return found


def main(run_a: str, run_b: str, shown: int = 3) -> None:
    a, b = episodes(run_a), episodes(run_b)
    print(f"episodes: {len(a)} and {len(b)}")
    differ = [key for key in sorted(a) if a[key] != b.get(key)]
    for key in differ[:shown]:
        step, task, sample = key
        print(f"== step {step}, {task}, sample {sample}")
        before, after = a[key]["transcript"].splitlines(), b[key]["transcript"].splitlines()
        lines = difflib.unified_diff(before, after, lineterm="", n=2)
        print("\n".join(lines))
    print(f"episodes that differ: {len(differ)}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
