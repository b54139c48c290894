"""Format baselines: the episodes of a tool mode graded as if the model had got the format right.

A small model may write correct code and never submit it. Training can then "gain" by learning to submit,
which is formatting, not solving. Two baselines separate the two; both grade the *same* episodes as the mode
they derive from (`BASELINE_SOURCE`, the multi-tool mode), so a difference to that mode is due to the format alone:

  last_block     the last fenced code block the model wrote in the episode (```python or ```submit) is graded as
                 its submission: a model that runs code and never submits is credited with its last code. No model
                 turn is added; an episode that wrote no block has no submission.
  forced_submit  an episode that ended without a submission gets one more turn that must be its final answer, in its
                 environment's own terms (`Episode.final_answer`, `rollout.agent.run_final_submit`): a code task's
                 opens with the submit fence as context, so what the model writes is its submission; a CodeGym
                 episode's opens with its `Done` action up to the answer. An episode that submitted is kept as it is;
                 so is one whose environment declares no final answer (finish_reason "no_final_answer" in its
                 record: the baseline does not apply to it, and says so).

Both are graded by the episode's real grader: last_block's block by the tool set's submit tool, in the sandbox; a
forced answer by the episode's own step (the submit tool, a CodeGym environment's `Done`). An episode that its
environment's own final call graded (a CodeGym `Done`) keeps that verdict under last_block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from agentic_rl.rollout.agent import (
    RolloutConfig,
    RolloutResult,
    ToolSet,
    merge_rollout_stats,
    run_final_submit,
    run_tool,
)
from agentic_rl.rollout.policy import Policy
from agentic_rl.tools.base import ToolSpec
from agentic_rl.types import Task, ToolCall, Trajectory

BASELINE_SOURCE = "multi_tool"  # the mode whose episodes the format baselines grade


def code_tools(specs: Mapping[str, ToolSpec]) -> dict[str, ToolSpec]:
    """The tools of `specs` whose call is a fenced code block: those that run or grade code (`ToolSpec.runs_code`)
    and are called by a pattern (```python for execute, ```submit for submit)."""
    return {name: spec for name, spec in specs.items() if spec.runs_code and spec.call_pattern is not None}


def last_code_block(traj: Trajectory, specs: Mapping[str, ToolSpec]) -> str | None:
    """The content of the last fenced code block of the episode's own turns (a call pattern of the `code_tools` of
    `specs`, its tool set's), whether it ran, was refused by the cap, or was submitted; None when it wrote none.

    >>> last_code_block(episode_with_turns("```python\\nx = 1\\n```", "```submit\\ny = 2\\n```"), MULTI.specs)
    'y = 2'
    """
    patterns = [spec.call_pattern for spec in code_tools(specs).values()]
    for turn in reversed(traj.turns):
        text = turn.prefix + turn.text
        found = [m for p in patterns if p is not None for m in p.finditer(text)]
        if found:
            return max(found, key=lambda m: m.end()).group(1).strip("\n")
    return None


def grade_last_block(traj: Trajectory, task: Task, toolset: ToolSet) -> Trajectory:
    """The episode with its last code block as the submission, graded by `toolset.grader`.

    When that block is the submission the episode already had graded, its verdict is reused (same code, same
    tests: grading it again would only cost time)."""
    if traj.grade is not None and traj.grade.tool not in code_tools(toolset.specs):
        # graded by its environment's own final call (a CodeGym `Done`): there is no code block to grade instead,
        # and replacing that verdict by "no submission" would fail an episode for a format it was never asked for
        return traj
    code = last_code_block(traj, toolset.specs)
    if code is None:
        return replace(traj, submitted_code=None, passed=False, grade=None)
    if code == traj.submitted_code and traj.grade is not None:
        return traj
    obs = run_tool(toolset.grader, ToolCall("submit", code, 0, len(code)), task)
    return replace(traj, submitted_code=code, passed=bool(obs.passed), grade=obs)


def last_block_baseline(
    episodes: RolloutResult, tasks: Sequence[Task], policy: Policy, toolset: ToolSet, rollout: RolloutConfig
) -> RolloutResult:
    """`last_block`: each episode graded by its last code block; nothing is generated."""
    return RolloutResult([grade_last_block(t, task, toolset) for t, task in zip(episodes, tasks)], episodes.stats)


def forced_submit_baseline(
    episodes: RolloutResult, tasks: Sequence[Task], policy: Policy, toolset: ToolSet, rollout: RolloutConfig
) -> RolloutResult:
    """`forced_submit`: the episodes that ended without a submission get exactly one forced turn that must be their
    final answer, in their environment's terms (`run_final_submit`). An episode an infrastructure failure ended is
    kept as it is: it is not the policy's score (`Trajectory.infra_failure`), and a forced turn would make it one."""
    open_ones = [n for n, t in enumerate(episodes) if t.submitted_code is None and t.infra_failure is None]
    if not open_ones:
        return episodes
    forced = run_final_submit([(tasks[n], episodes[n]) for n in open_ones], policy, toolset, rollout)
    out = list(episodes)
    for n, traj in zip(open_ones, forced):
        out[n] = traj
    return RolloutResult(out, merge_rollout_stats([episodes.stats, forced.stats]))


# mode name -> (episodes of BASELINE_SOURCE, their tasks, policy, tool set, rollout) -> the graded episodes
FORMAT_BASELINES = {"last_block": last_block_baseline, "forced_submit": forced_submit_baseline}
