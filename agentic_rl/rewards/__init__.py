"""Episode rewards: small functions `(trajectory, **params) -> RewardBreakdown`.

A reward config names its function with `_target_` and `_partial_: true` (conf/reward/*.yaml), so
`registry.build(cfg.reward)` binds the parameters and returns `traj -> RewardBreakdown`; a parameter the
function does not take fails at start (`config.check_keys`). Every function returns all of its terms
(logged as `reward/<term>`), and `total` is their sum.

- shaped (the reference notebook's): 1.0 for a pass; a failed episode that submitted earns
  0.05·min(n_search, 3) for its searches; an episode that never submitted gets -0.1 (and no search bonus).
- binary: 1.0 for a pass, else 0.0 (CodeGym).
- torl: +1 pass / -1 otherwise, plus an optional -0.5 when any executed code failed to run (ToRL).
"""

from __future__ import annotations

from agentic_rl.types import RewardBreakdown, Trajectory


def _breakdown(**terms: float) -> RewardBreakdown:
    return RewardBreakdown(total=float(sum(terms.values())), terms={k: float(v) for k, v in terms.items()})


def shaped(
    traj: Trajectory,
    pass_reward: float = 1.0,
    search_bonus: float = 0.05,
    max_searches: int = 3,
    no_submit_penalty: float = -0.1,
) -> RewardBreakdown:
    """>>> shaped(failed_episode_with_two_searches).total  # 0.05 * 2
    0.1
    """
    submitted = traj.submitted_code is not None
    n_search = traj.calls_by_kind().get("search", 0)
    return _breakdown(
        passed=pass_reward if traj.passed else 0.0,
        search_bonus=search_bonus * min(n_search, max_searches) if submitted and not traj.passed else 0.0,
        no_submission=no_submit_penalty if not submitted else 0.0,
    )


def binary(traj: Trajectory, pass_reward: float = 1.0) -> RewardBreakdown:
    """>>> binary(passing_episode).total
    1.0
    """
    return _breakdown(passed=pass_reward if traj.passed else 0.0)


def torl(traj: Trajectory, exec_penalty: float = -0.5, use_exec_penalty: bool = False) -> RewardBreakdown:
    """>>> torl(failed_episode_whose_code_crashed, use_exec_penalty=True).total  # -1 - 0.5
    -1.5
    """
    return _breakdown(
        outcome=1.0 if traj.passed else -1.0,
        exec_penalty=exec_penalty if use_exec_penalty and traj.exec_failed() else 0.0,
    )
