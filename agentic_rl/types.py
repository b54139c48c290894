"""Plain data records that flow between the stages of the pipeline.

tasks -> rollout -> Trajectory -> reward (RewardBreakdown) -> advantages -> loss.
Nothing here holds a runtime object (model, tokenizer, sandbox); those are passed at call sites.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HARNESSES = ("pytest", "unittest", "humaneval", "codegym")

# Why a call failed when the policy did not cause it. Such a failure is not the policy's score: the episode it hits
# ends (`Trajectory.infra_failure`) and is left out of its group's baseline (agentic_rl.algo.grpo), or, where the
# environment server died, the call is retried on another server (`Observation.retries`).
INFRA_CAUSES = {
    "server_died": "the environment server could not be reached, or closed the connection",
    "server_timeout": "the environment server did not answer in time",
    "bad_reply": "the environment server answered something that is not the protocol",
    "server_error": "the environment server failed while handling the call",
    "session_lost": "the environment server no longer holds the episode (it restarted)",
    "sandbox": "the sandbox could not start or failed; nothing can be said about the code",
    "harness": "the tool or environment harness crashed instead of answering",
    "env_broken": "the environment's own code does not start",
}
POLICY_FAULT, INFRA_FAULT = "policy", "infra"


@dataclass(frozen=True)
class Task:
    """One coding problem, whatever dataset it came from.

    `tests` is graded with `harness`:
      - "pytest": the candidate is saved as solution.py, `tests` is a test file that imports from it;
      - "unittest": `tests` defines `class TestCases(unittest.TestCase)`, appended to the candidate;
      - "humaneval": `tests` defines `check(candidate)`, called with `entry_point`;
      - "codegym": not graded by tests: the task is one configuration of an interactive environment
        (`metadata["codegym"]`: its code, class and options), whose `Done(answer)` gives the reward
        (agentic_rl.envs.codegym).
    """

    task_id: str
    prompt: str
    tests: str
    harness: str
    entry_point: str | None = None
    reference_solution: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.harness not in HARNESSES:
            raise ValueError(f"Task {self.task_id}: unknown harness {self.harness!r}; expected one of {HARNESSES}")


@dataclass(frozen=True)
class ToolCall:
    """A completed tool call found in a model turn. `start`/`end` are character offsets in that turn."""

    name: str
    content: str
    start: int
    end: int


@dataclass
class Observation:
    """What a tool answered. `text` is exactly what is appended to the context (tags included)."""

    tool: str
    text: str
    ok: bool
    status: str = "ok"
    latency_ms: float = 0.0
    passed: bool | None = None  # only for submit
    executed: bool = True  # False when the call was refused (cap reached, tool not in the set)
    trust: str | None = None  # grading tools: where the verdict was computed ("out_of_process" | "in_process")
    tamper_kinds: tuple[str, ...] = ()  # grading tools: what a `tampered` verdict caught (sandbox.reports.TAMPER_KINDS)
    # a failed call's fault: "policy" (its code raised or timed out, its action was malformed) or "infra" (one of
    # INFRA_CAUSES); None for a call that did not fail. `cause` is the status for the policy's, the INFRA_CAUSES key
    # for the infrastructure's.
    fault: str | None = None
    cause: str | None = None
    retries: tuple[str, ...] = ()  # infrastructure failures this call recovered from (moved to another server)


@dataclass
class Turn:
    """One model turn: what it generated, the call it closed with, and the observation.

    `text` is what the model generated; `prefix` the response prefix the turn opened with (context, not
    generated: `rollout.response_prefix`). The call was parsed from `prefix + text`.
    """

    generated_ids: list[int]
    text: str
    call: ToolCall | None = None
    observation: Observation | None = None
    observation_ids: list[int] = field(default_factory=list)
    sampler_logprobs: list[float] | None = None  # the sampler's log-prob of each generated id (None: not reported)
    prefix: str = ""
    # the observation is a verdict: the call's tool grades (its spec's `grades`, as the episode says), so the metrics
    # count its tampered and in-process verdicts whatever the tool is named (submit, the no-tools answer)
    graded: bool = False


@dataclass
class Trajectory:
    """A whole episode, token ids verbatim.

    `token_ids[:prompt_len]` is the prompt; `loss_mask[i]` is 1 exactly where token i was generated
    by the model (0 for prompt and observation tokens). `len(token_ids) == len(loss_mask)` always.
    """

    task_id: str
    token_ids: list[int]
    loss_mask: list[int]
    prompt_len: int
    turns: list[Turn] = field(default_factory=list)
    submitted_code: str | None = None
    passed: bool = False
    finish_reason: str = "max_turns"  # passed | failed (no-tools answer) | max_turns | no_call | length | infra_failure
    sample_index: int = 0
    grade: Observation | None = None  # the grader's observation of the last submission (None: never graded)
    # the names calls are counted under (the episode's declared tools, in order; see `calls_by_kind`)
    tools: tuple[str, ...] = ()
    # the INFRA_CAUSES key of the failure that ended the episode (finish_reason "infra_failure"); None: the policy's
    # own episode, scored as usual
    infra_failure: str | None = None
    # the episode's state when it ended (`Episode.snapshot()`, JSON-able; None: a stateless episode), so that a forced
    # final turn (agentic_rl.rollout.agent.run_final_submit) continues the episode from where it was, not from a reset
    env_state: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        assert len(self.token_ids) == len(self.loss_mask), "token ids and loss mask must have the same length"

    def calls_by_kind(self) -> dict[str, int]:
        """Executed tool calls per tool name (every name in `tools`, zeros included, then any other executed
        one), plus `none` = turns that ended without a valid call. The rollout fills `tools` from what the
        episode declared, so this record needs no registry of tools."""
        executed = [
            t.call.name
            for t in self.turns
            if t.call is not None and t.observation is not None and t.observation.executed
        ]
        counts = {name: 0 for name in self.tools}
        counts.update({name: 0 for name in executed if name not in counts})
        counts["none"] = sum(t.call is None for t in self.turns)
        for name in executed:
            counts[name] += 1
        return counts

    def infra_retries(self) -> list[str]:
        """The causes of the infrastructure failures its calls recovered from (a server died, the call moved)."""
        return [cause for t in self.turns if t.observation is not None for cause in t.observation.retries]

    def exec_failed(self) -> bool:
        """True if any executed `python` block failed to run (ToRL's execution penalty)."""
        return any(
            t.call is not None
            and t.call.name == "execute"
            and t.observation is not None
            and t.observation.executed
            and not t.observation.ok
            for t in self.turns
        )

    def sampler_logprobs(self) -> list[float] | None:
        """The sampler's log-prob of each token, aligned with `token_ids` (0.0 where `loss_mask` is 0); None when
        a turn's policy did not report them, or when the trajectory has no turns (built by hand, not sampled: a
        trajectory of prompt only gives all zeros). Model tokens are the turns' generated ids, in order."""
        if any(t.sampler_logprobs is None for t in self.turns) or (not self.turns and any(self.loss_mask)):
            return None
        values = [lp for t in self.turns for lp in t.sampler_logprobs]  # type: ignore[union-attr]
        if len(values) != sum(self.loss_mask):
            raise ValueError(
                f"trajectory {self.task_id!r}: its turns carry {len(values)} sampler log-probs for "
                f"{sum(self.loss_mask)} model tokens (a turn's log-probs must match its generated ids)"
            )
        generated = iter(values)
        return [next(generated) if m else 0.0 for m in self.loss_mask]

    @property
    def n_model_tokens(self) -> int:
        return int(sum(self.loss_mask))


@dataclass
class RewardBreakdown:
    """The scalar reward and every term it is made of (all are logged as `reward/<term>`)."""

    total: float
    terms: dict[str, float] = field(default_factory=dict)
