"""Pure parts of agentic_rl.distributed: sharding, metric reduction, per-rank command lines, launch parsing."""

from __future__ import annotations

import pytest
import torch

from agentic_rl.distributed import Distributed, adapter_digest, processes_from_launch_cmdline, rank_argv, reduce_metrics


def test_shard_pads_to_a_multiple_and_deals_round_robin():
    tasks = list("abcde")
    shards = [Distributed(rank=r, world_size=2).shard(tasks) for r in (0, 1)]
    assert shards == [["a", "c", "e"], ["b", "d", "a"]]  # 'a' repeats so both ranks take 3 steps
    assert Distributed().shard(tasks) == tasks
    three = [Distributed(rank=r, world_size=3).shard(tasks) for r in range(3)]
    assert [len(s) for s in three] == [2, 2, 2] and sorted(sum(three, [])[:5]) == sorted("abcde")


def test_reduce_metrics_means_rates_sums_counts_takes_slowest_time_largest_memory_and_keeps_absent_absent():
    out = reduce_metrics(
        [
            {
                "train/pass_rate": 0.5,
                "train/loss": 0.2,
                "rollout/episodes": 4.0,
                "time/step_s": 3.0,
                "tools/submit/x": None,
                "memory/peak_rss_gib": 2.5,
            },
            {
                "train/pass_rate": 0.0,
                "rollout/episodes": 4.0,
                "time/step_s": 5.0,
                "tools/submit/x": None,
                "memory/peak_rss_gib": 3.5,
            },
        ]
    )
    assert out == {
        "train/pass_rate": 0.25,
        "train/loss": 0.2,
        "rollout/episodes": 8.0,
        "time/step_s": 5.0,
        "memory/peak_rss_gib": 3.5,
    }


def test_rank_argv_keeps_rank0_and_sends_other_ranks_hydra_dirs_elsewhere():
    argv = ["prog", "model=tiny-random", "hydra.run.dir=/runs/x", "+hydra.output_subdir=.h"]
    assert rank_argv(argv, 0) == argv
    other = rank_argv(argv, 1)
    assert other[:2] == ["prog", "model=tiny-random"]
    assert "hydra.run.dir=/runs/x" not in other and "+hydra.output_subdir=.h" not in other
    assert "hydra.output_subdir=null" in other
    private = next(a.split("=", 1)[1] for a in other if a.startswith("hydra.run.dir="))
    assert private != "/runs/x" and "rank1" in private


@pytest.mark.parametrize(
    "cmdline, expected",
    [
        (["python", "/bin/accelerate", "launch", "--cpu", "--num_processes", "2", "-m", "agentic_rl.train", "x=1"], 2),
        (["accelerate", "launch", "--cpu", "--num_processes=3", "-m", "agentic_rl.train"], 3),
        (["python", "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2", "train.py"], 2),
        (["accelerate", "launch", "--cpu", "-m", "agentic_rl.train"], None),
        (["python", "-m", "agentic_rl.train"], None),
    ],
)
def test_process_count_is_read_from_the_accelerate_launch_command(cmdline, expected):
    assert processes_from_launch_cmdline(cmdline) == expected


def test_cpu_launch_over_machines_says_how_to_use_mpi():
    with pytest.raises(RuntimeError, match="mpirun hostfile"):
        processes_from_launch_cmdline(
            ["accelerate", "launch", "--cpu", "--num_processes", "4", "--num_machines", "2", "train.py"]
        )


def test_single_process_gradient_average_is_the_identity():
    p = torch.nn.Parameter(torch.ones(3))
    p.grad = torch.tensor([1.0, 2.0, 3.0])
    assert Distributed().average_gradients([p], counts=True) == 1
    assert torch.equal(p.grad, torch.tensor([1.0, 2.0, 3.0]))


def test_adapter_digest_sees_a_one_ulp_change():
    model = torch.nn.Linear(3, 2)
    before = adapter_digest(model)
    with torch.no_grad():
        model.weight[0, 0] = torch.nextafter(model.weight[0, 0], torch.tensor(10.0))
    assert adapter_digest(model) != before
