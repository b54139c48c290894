"""`python -m agentic_rl.train` plus two test-only rewards, run as a real subprocess by the long-run tests.

The rewards are picked with `reward._target_=train_driver.<name>`: this file's folder is the script's
`sys.path[0]`, so Hydra imports them from here like any reward function.

- `sampled`: a reward read off the sampled tokens, so groups have reward spread and the adapter really
  trains on the tiny random model (whose replies never pass); a resume that restored the wrong RNG state,
  adapter or optimizer state would sample other tokens and log other rewards and losses.
- `fail_if_marker`: raises while the file named by $FAIL_MARKER exists: a job that fails, then is fixed.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentic_rl.types import RewardBreakdown, Trajectory


def sampled(traj: Trajectory, pass_reward: float = 1.0) -> RewardBreakdown:
    value = (sum(traj.token_ids[traj.prompt_len :]) % 7) / 6
    return RewardBreakdown(total=value, terms={"sampled": value})


def fail_if_marker(traj: Trajectory, pass_reward: float = 1.0) -> RewardBreakdown:
    if Path(os.environ["FAIL_MARKER"]).exists():
        raise RuntimeError("made to fail by the test (FAIL_MARKER exists)")
    return RewardBreakdown(total=0.0, terms={"passed": 0.0})


if __name__ == "__main__":
    import runpy

    runpy.run_module("agentic_rl.train", run_name="__main__")  # exactly as `python -m agentic_rl.train`
