"""Every sweep axis binds: each swept value changes what a rollout does under that job's other settings.

A sweep whose values cannot matter wastes a grid and reads as a null result (`tool_cap` once swept
C in {1, 2, 4} with 3 turns: C = 4 could never be reached, and C = 2 only on the last turn, after which
nothing was generated). For every file in conf/sweep, every job of its grid is composed as Hydra's
multirun would compose it, and one probe episode is rolled out under that job's rollout limits, tool set
and reward. The probe is a scripted policy that uses tools as eagerly as a model could: it alternates a
search and a crashing python block every turn, whatever the tool set, and submits a correct solution as
soon as it is told that the tool-call limit is reached. Its episode (calls, observation statuses, finish,
verdict, reward terms) is the job's signature. The test fails when

- two jobs of a sweep have the same signature (a swept value changes nothing), or
- a job has the signature it would have with its swept value set to "no constraint" (e.g. a cap C that
  is never reached), or
- a job's cap refuses a call on the episode's last turn (the refusal can change nothing after it).
"""

from __future__ import annotations

import functools
import itertools
import shlex
import subprocess
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser

from agentic_rl.config import register_configs, to_dataclass
from agentic_rl.registry import build
from agentic_rl.rollout.agent import CAP_TEXT, RolloutConfig, run_episodes
from agentic_rl.rollout.policy import ScriptedPolicy, TurnRequest
from tests.rollout.fakes import TASK, toolset

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf"
SWEEPS = sorted(p.stem for p in (CONF / "sweep").glob("*.yaml"))
register_configs()

# Replicate axes: their values are seeds of the same arm, not treatments, so they need not change the rollout.
REPLICATE_KEYS = {"seed"}
# The value of a swept key that constrains nothing: a job must differ from its copy with this value.
UNCONSTRAINED = {"rollout.max_tool_calls": None}
CAP_NOTICE = CAP_TEXT.split(":")[0]  # "<feedback>Tool-call limit reached"

SEARCH = "<search>add two numbers</search>"
CRASHING_CODE = "```python\nraise ValueError('probe')\n```"
CORRECT_SUBMISSION = "```submit\ndef add(a, b):\n    return a + b\n```"
WRONG_SUBMISSION = "```submit\ndef add(a, b):\n    return a - b\n```"


def probe_policy(last_turn: int | None = None) -> ScriptedPolicy:
    """Searches and crashing code in turn, and after a cap notice the right answer; with `last_turn`, a wrong
    answer on that turn (a failed episode that submitted: what the shaped reward's search bonus is about)."""

    def script(req: TurnRequest) -> str:
        if CAP_NOTICE in policy.tokenizer.decode(req.history_ids):
            return CORRECT_SUBMISSION
        if req.turn_index == last_turn:
            return WRONG_SUBMISSION
        return SEARCH if req.turn_index % 2 == 0 else CRASHING_CODE

    policy = ScriptedPolicy(script)
    return policy


def compose_job(sweep: str, overrides: list[str], return_hydra_config: bool = False):
    return _compose(sweep, tuple(overrides), return_hydra_config).copy()


@functools.cache
def _compose(sweep: str, overrides: tuple[str, ...], return_hydra_config: bool):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("train", overrides=[f"sweep={sweep}", *overrides], return_hydra_config=return_hydra_config)


def sweep_grid(sweep: str) -> dict[str, list[str]]:
    """key -> the swept values, as Hydra's basic sweeper expands `hydra.sweeper.params`."""
    params = compose_job(sweep, [], return_hydra_config=True).hydra.sweeper.params or {}
    parser = OverridesParser.create()
    grid = {}
    for key, spec in params.items():
        [override] = parser.parse_overrides([f"{key}={spec}"])
        grid[key] = list(override.sweep_string_iterator()) if override.is_sweep_override() else [str(spec)]
    return grid


def jobs(grid: dict[str, list[str]]) -> list[dict[str, str]]:
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def signature(cfg, submit_last: bool = False) -> tuple:
    """What the probe episode does under `cfg`: per turn (call, observation status), finish, verdict, reward.
    `submit_last`: the probe submits a wrong answer on the last turn."""
    rollout = to_dataclass(cfg.rollout, RolloutConfig)
    tools = toolset(tuple(cfg.tools.active), log=[])
    policy = probe_policy(rollout.max_turns - 1 if submit_last else None)
    [traj] = run_episodes([(TASK, 0)], policy, tools, rollout)
    reward = build(cfg.reward)(traj)
    turns = tuple(
        (t.call.name if t.call else None, t.observation.status if t.observation else None) for t in traj.turns
    )
    return turns, traj.finish_reason, traj.passed, tuple(sorted(reward.terms.items()))


def override_list(job: dict[str, str]) -> list[str]:
    return [f"{k}={v}" for k, v in job.items()]


def test_there_are_sweeps_with_params():
    assert {"tool_cap", "tools", "exec_penalty"} <= set(SWEEPS)
    for sweep in SWEEPS:
        grid = sweep_grid(sweep)
        assert grid and all(len(values) >= 2 for values in grid.values()), f"sweep={sweep}: {grid}"


@pytest.mark.parametrize("sweep", SWEEPS)
def test_every_swept_value_changes_the_rollout(sweep):
    grid = {k: v for k, v in sweep_grid(sweep).items() if k not in REPLICATE_KEYS}
    signatures = {}
    for job in jobs(grid):
        cfg = compose_job(sweep, override_list(job))
        sig = signature(cfg)
        # a reward-only change shows in an episode that submitted and failed: the probe that submits last
        signatures[tuple(job.items())] = (sig, signature(cfg, submit_last=True))
        for key, free in UNCONSTRAINED.items():
            if key in job:
                free_cfg = compose_job(sweep, override_list({**job, key: "null" if free is None else str(free)}))
                assert sig != signature(free_cfg), (
                    f"sweep={sweep}: {key}={job[key]} never binds with the job's other settings "
                    f"(rollout.max_turns={cfg.rollout.max_turns}, tools={cfg.tools.name}); the episode is the "
                    f"same as with {key}={free}. Fix: raise rollout.max_turns in conf/sweep/{sweep}.yaml "
                    "(to at least C + 2) or drop the value."
                )
        turns = sig[0]
        refused = [i for i, (_, status) in enumerate(turns) if status == "capped"]
        assert not refused or refused[0] < len(turns) - 1, (
            f"sweep={sweep}, job {job}: the cap first refuses a call on the last turn ({len(turns)}), so no turn "
            "is left to act on it. Fix: rollout.max_turns >= C + 2."
        )
    for (a, sig_a), (b, sig_b) in itertools.combinations(signatures.items(), 2):
        assert sig_a != sig_b, f"sweep={sweep}: jobs {dict(a)} and {dict(b)} roll out the same episode: {sig_a}"


def test_the_probe_detects_a_cap_that_cannot_bind():
    """The degenerate grid this test exists for: C = 4 with 3 turns is the uncapped episode."""
    base = ["rollout.max_turns=3"]
    capped = signature(compose_job("tool_cap", [*base, "rollout.max_tool_calls=4"]))
    free = signature(compose_job("tool_cap", [*base, "rollout.max_tool_calls=null"]))
    assert capped == free
    # C = 2 with 3 turns refuses the third call on the last turn: nothing can follow the refusal
    turns = signature(compose_job("tool_cap", [*base, "rollout.max_tool_calls=2"]))[0]
    assert [status for _, status in turns][-1] == "capped"


def test_in_the_cap_sweep_each_cap_is_reached_and_followed_by_a_submission():
    cfg = compose_job("tool_cap", [])
    for c in sweep_grid("tool_cap")["rollout.max_tool_calls"]:
        turns, finish, passed, _ = signature(compose_job("tool_cap", [f"rollout.max_tool_calls={c}"]))
        executed = [call for call, status in turns if call in ("search", "execute") and status != "capped"]
        assert len(executed) == int(c), (c, turns)
        assert turns[int(c)][1] == "capped" and turns[int(c) + 1][0] == "submit", (c, turns)
        assert passed and finish == "passed", (c, cfg.rollout.max_turns, turns)


def sweeper_jobs(sweep: str, command_line: list[str]) -> list[list[str]]:
    """The jobs Hydra's basic sweeper launches for `sweep=<sweep> <command_line>`: as its sweep() does, the sweep
    config's params first, then the command line's overrides, a later value of a key replacing an earlier one."""
    params = compose_job(sweep, [], return_hydra_config=True).hydra.sweeper.params
    overrides = OverridesParser.create().parse_overrides([f"{k}={v}" for k, v in params.items()] + command_line)
    [batch] = BasicSweeper.split_arguments(overrides, max_batch_size=None)
    return batch


@pytest.mark.parametrize("sweep", SWEEPS)
def test_every_sweep_runs_each_arm_with_three_seeds_seed_major(sweep):
    arms = jobs({k: v for k, v in sweep_grid(sweep).items() if k != "seed"})
    launched = sweeper_jobs(sweep, [])
    assert len(launched) == 3 * len(arms)
    assert sorted(j[0] for j in launched) == sorted(f"seed={s}" for s in (1, 2, 3) for _ in arms)
    # seed first: the first len(arms) jobs are every arm once, so an interrupted sweep still compares all arms
    assert {j[0] for j in launched[: len(arms)]} == {"seed=1"}
    assert sorted(tuple(j[1:]) for j in launched[: len(arms)]) == sorted(tuple(override_list(a)) for a in arms)


def test_make_sweep_seeds_replace_the_sweep_configs_seed_list():
    def make_sweep_args(*make_vars: str) -> list[str]:
        # under `make test` the sub-make prints "Entering/Leaving directory" lines: take the train command's line
        dry = subprocess.run(
            ["make", "--no-print-directory", "-n", "sweep", *make_vars],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        (command,) = [line for line in dry if "agentic_rl.train" in line]
        words = shlex.split(command)
        return words[words.index("sweep=tools") + 1 :]

    five = sweeper_jobs("tools", make_sweep_args("SEEDS=1,2,3,4,5"))
    assert len(five) == 5 * 3 and {j[0] for j in five} == {f"seed={s}" for s in range(1, 6)}
    assert len(sweeper_jobs("tools", make_sweep_args())) == 3 * 3  # no SEEDS: the config's 1,2,3
    assert {j[0] for j in sweeper_jobs("tools", ["seed=7"])} == {"seed=7"}  # python -m ... seed=7: one seed
