"""Two CPU ranks (gloo) against one process: the averaged gradient is the single-process gradient over the
union of the ranks' groups, the ranks stay bit-identical, and skipped groups keep the ranks in lockstep."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agentic_rl.algo.grpo import grpo_step
from agentic_rl.models import lora_state
from tests.distributed.cases import CFG, SCHEDULE, make_group, rewards_of, tiny_policy

REPO = Path(__file__).resolve().parents[2]
# ~25 s of CPU (two ranks plus the single-process reference), over a minute on a loaded machine
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ranks(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("dp")
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "PYTHONPATH": str(REPO)}
    # A rank that missed a collective would hang its peer: the timeout turns that into a failure.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            str(REPO / "tests" / "distributed" / "dp_worker.py"),
            str(out),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [torch.load(out / f"rank{r}.pt") for r in (0, 1)]


def single_process_reference() -> list[dict]:
    """The same schedule in one process: per step, the mean of the gradients of the groups that count."""
    model, pad_id = tiny_policy()
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    optimizer = torch.optim.AdamW(list(params.values()), lr=CFG.lr)
    probe = torch.optim.SGD(list(params.values()), lr=0.0)  # lets grpo_step compute a gradient without moving
    steps = []
    for schedule in SCHEDULE:
        counted = []
        for rank in (0, 1):
            seed, rewards = schedule[rank]
            stats = grpo_step(model, probe, make_group(seed), rewards_of(rewards), CFG, pad_id, temperature=1.0)
            if not stats.skipped:
                counted.append({n: p.grad.detach().clone() for n, p in params.items()})
        mean = {n: sum(g[n] for g in counted) / len(counted) for n in params} if counted else None
        if mean is not None:
            for n, p in params.items():
                p.grad = mean[n].clone()
            optimizer.step()
        steps.append({"grads": mean, "weights": lora_state(model), "n_counted": len(counted)})
    return steps


def test_both_ranks_ran_the_whole_schedule_as_two(ranks):
    assert [r["world_size"] for r in ranks] == [2, 2]
    assert [len(r["steps"]) for r in ranks] == [len(SCHEDULE)] * 2
    # step 1: rank 1's zero-spread group was skipped but its rank still stepped with rank 0's gradient
    assert [r["steps"][1]["skipped"] for r in ranks] == [False, True]
    assert all(r["steps"][2]["skipped"] for r in ranks)


def test_averaged_gradient_equals_the_single_process_gradient_over_the_union(ranks):
    reference = single_process_reference()
    assert [s["n_counted"] for s in reference] == [2, 1, 0]
    for k, ref in enumerate(reference[:2]):
        for rank in ranks:
            got = rank["steps"][k]["grads"]
            for name, expected in ref["grads"].items():
                assert torch.allclose(got[name], expected, rtol=1e-4, atol=1e-6), (k, name)
        # the gradient is not trivially zero: both the A and B matrices of LoRA moved by step 1
        assert any(g.abs().max() > 0 for n, g in ref["grads"].items() if "lora_B" in n)
    for k, ref in enumerate(reference):
        for name, expected in ref["weights"].items():
            assert torch.allclose(ranks[0]["steps"][k]["weights"][name], expected, rtol=1e-4, atol=1e-6), (k, name)


def test_ranks_hold_bit_identical_weights_after_every_step(ranks):
    for k in range(len(SCHEDULE)):
        w0, w1 = ranks[0]["steps"][k]["weights"], ranks[1]["steps"][k]["weights"]
        assert w0.keys() == w1.keys()
        assert all(torch.equal(w0[n], w1[n]) for n in w0), k


def test_no_rank_steps_when_no_group_counts(ranks):
    """Step 2 skipped on every rank: AdamW's momentum must not move the weights on a zero gradient."""
    for rank in ranks:
        before, after = rank["steps"][1]["weights"], rank["steps"][2]["weights"]
        assert all(torch.equal(before[n], after[n]) for n in before)
