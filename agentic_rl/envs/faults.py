"""Whose fault a failed call is: the policy's (its code raised or timed out, its action was malformed) or the
infrastructure's (a server died, the sandbox could not start, the harness crashed; `types.INFRA_CAUSES`).

The two must not be confused: a policy is scored on what it did, so an episode that an infrastructure failure hit
is never scored as a failure of the policy. The agent loop ends such an episode (`Trajectory.infra_failure`) and
the GRPO update leaves it out of its group (agentic_rl.algo.grpo). Every environment types its failed calls here,
on the trainer's side or on an environment server's (the type travels with the observation).
"""

from __future__ import annotations

from agentic_rl.types import INFRA_CAUSES, INFRA_FAULT, POLICY_FAULT, Observation

# Observation statuses that say the infrastructure failed, whatever the call was: the sandbox's own failure
# (sandbox.results: "nothing can be said about the code"), a tool that raised instead of answering (run_tool) and
# a CodeGym driver that exited without answering (envs.codegym).
INFRA_STATUSES = {"sandbox_error": "sandbox", "tool_error": "harness", "harness_error": "harness"}


class InfraFailure(Exception):
    """An infrastructure failure of one call; `cause` is a key of `types.INFRA_CAUSES`."""

    def __init__(self, cause: str, detail: str) -> None:
        if cause not in INFRA_CAUSES:
            raise ValueError(f"unknown infrastructure cause {cause!r}; known: {', '.join(INFRA_CAUSES)}")
        super().__init__(f"{cause}: {detail}")
        self.cause, self.detail = cause, detail


def typed(obs: Observation) -> Observation:
    """`obs` with its fault set from its status (unless already set): infrastructure for INFRA_STATUSES, the
    policy's for any other failed call, None for a call that did not fail."""
    if obs.fault is not None:
        return obs
    cause = INFRA_STATUSES.get(obs.status)
    if cause is not None:
        obs.ok, obs.fault, obs.cause = False, INFRA_FAULT, cause
    elif not obs.ok:
        obs.fault, obs.cause = POLICY_FAULT, obs.status
    return obs


def infra_observation(tool: str, failure: InfraFailure, retries: tuple[str, ...] = ()) -> Observation:
    """The observation of a call the infrastructure failed (its text says so; the episode ends on it)."""
    return Observation(
        tool=tool,
        text=f"<error>{tool} was not run: infrastructure failure ({failure})</error>",
        ok=False,
        status="infra_error",
        fault=INFRA_FAULT,
        cause=failure.cause,
        retries=retries,
    )


__all__ = ["INFRA_STATUSES", "InfraFailure", "infra_observation", "typed"]
