"""`update_rollout_batch` with a fake step, scorer and clock: which groups are scored off-policy, which
behaviour rows each group gets, and what its `update_s` counts (its own step plus its share of the scoring)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from agentic_rl.algo import grpo
from agentic_rl.algo.grpo import GRPOConfig, StepStats, update_rollout_batch
from agentic_rl.types import Trajectory

SCORING_S = 6.0  # what the fake behaviour scoring takes on the fake clock
STEP_S = 1.0  # what each fake step takes


@pytest.fixture
def fakes(monkeypatch):
    clock = [100.0]
    scored_ids: list[list[int]] = []
    steps: list[dict] = []

    def behaviour_logprobs(model, trajs, pad_id, **kwargs):
        scored_ids.append([t.sample_index for t in trajs])
        clock[0] += SCORING_S
        return [torch.tensor([float(t.sample_index)]) for t in trajs]  # each row names its trajectory

    def step(model, optimizer, group, rewards, cfg, pad_id, *, temperature, old_logprobs, reference=None):
        clock[0] += STEP_S
        rows = None if old_logprobs is None else [int(row.item()) for row in old_logprobs]
        steps.append({"group": [t.sample_index for t in group], "old": rows})
        return StepStats(n_tokens=1, skipped=False)

    monkeypatch.setattr(grpo, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(grpo, "behaviour_logprobs", behaviour_logprobs)
    return SimpleNamespace(step=step, scored=scored_ids, steps=steps)


def groups_of(sizes: list[int]) -> list[list[Trajectory]]:
    """Groups whose trajectories are numbered through the whole batch (sample_index = position in the batch)."""
    out, n = [], 0
    for size in sizes:
        out.append(
            [Trajectory(f"task{len(out)}", [1, 2, 3], [0, 1, 1], prompt_len=1, sample_index=n + k) for k in range(size)]
        )
        n += size
    return out


def run(fakes, sizes: list[int], rewards: list[list[float]]) -> list[StepStats]:
    return update_rollout_batch(
        model=None,
        optimizer=None,
        groups=groups_of(sizes),
        rewards=[torch.tensor(r) for r in rewards],
        cfg=GRPOConfig(),
        pad_id=0,
        temperature=1.0,
        step=fakes.step,
    )


def test_every_group_after_the_first_step_gets_its_own_behaviour_rows(fakes) -> None:
    stats = run(fakes, [2, 3, 2], [[0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0]])
    assert fakes.scored == [[2, 3, 4, 5, 6]]  # groups 1 and 2, scored in one pass before any step
    assert fakes.steps == [
        {"group": [0, 1], "old": None},  # on-policy
        {"group": [2, 3, 4], "old": [2, 3, 4]},
        {"group": [5, 6], "old": [5, 6]},
    ]
    # each off-policy group's time holds half of the scoring
    assert [s.update_s for s in stats] == [STEP_S, STEP_S + SCORING_S / 2, STEP_S + SCORING_S / 2]


def test_a_skipped_group_is_not_scored_and_the_next_stepping_one_is_on_policy(fakes) -> None:
    stats = run(fakes, [2, 2, 2], [[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    assert fakes.scored == [[4, 5]]  # group 0 is skipped (no signal), group 1 takes the first step
    assert [s["old"] for s in fakes.steps] == [None, None, [4, 5]]
    # one off-policy group carries the whole scoring
    assert [s.update_s for s in stats] == [STEP_S, STEP_S, STEP_S + SCORING_S]


def test_one_stepping_group_scores_nothing(fakes) -> None:
    stats = run(fakes, [2], [[0.0, 1.0]])
    assert fakes.scored == [] and fakes.steps == [{"group": [0, 1], "old": None}]
    assert stats[0].update_s == STEP_S
