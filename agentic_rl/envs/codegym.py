"""CodeGym environments: a `gymnasium.Env` per problem, its own tools, stepped in the sandbox.

The format is the one of the CodeGym paper (Generalizable End-to-End Tool-Use RL with Synthetic CodeGym):
an environment class has `func_mapping` (tool name -> method), the generic tools `Observe()` (the current
observation of the task configuration) and `Done(answer)` (ends the episode with a sparse binary reward),
`reset(options)` loading one task configuration and `get_ref_answer()`. An action is the JSON object
`{"name": ..., "parameters": {...}}`; the model writes it as `<action>{...}</action>`. A turn's action is the
first `<action>` tag's: its content up to `</action>` (malformed JSON there is an invalid action), or, where the
model writes one complete JSON object after `<action>` and goes on with other text instead of the closing tag,
exactly that object (the turn stops there). With `worked_example` (data.worked_example) the system prompt ends
with a short episode of another task: an Observe, its result and a Done with a concrete answer. With
`calls_left` (data.calls_left) each observation ends with the number of calls left, and the last but one asks
for Done.

Environment code is untrusted: it never runs in the trainer. Each reset and step is one sandbox call
(`agentic_rl.envs.driver`), with trial-then-overwrite state: the episode keeps the environment's state as
JSON, the call runs on a copy in the sandbox, and the new state is committed only when the call succeeded.
A failed call (the tool raised, timed out, crashed, printed no result) answers its error and leaves the state
as it was. `T_max` caps the calls of an episode (malformed and unknown actions count too, so a model that
loops on bad actions still ends); the call that reaches it runs, then the episode ends with
finish_reason "t_max".

Bad input never stops a run: an environment that raises in reset gives an episode whose every call answers
that error; malformed JSON, an unknown tool, a missing parameter (a `Done` without `answer`) or a hanging tool
answer an error observation.

An episode's final answer is `Done` (`DoneAnswer`): the evaluation's `forced_submit` baseline gives an episode that
ended without `Done` one more turn opened with the Done action up to its answer, so the model writes only the
answer, and the episode's own `Done` grades it from the state the episode ended in.

Failed calls are typed (agentic_rl.envs.faults): a tool that raised or timed out, or a refused action, is the
policy's doing; an environment that does not start, a sandbox failure or a driver that crashed without answering
is the infrastructure's, and ends the episode without scoring the policy. `snapshot()` is the episode's whole
state as JSON (the environment's committed state, the call count, the tools), so another process can resume it
(`CodeGymRunner.resume`, an environment server taking over a dead one's episode) without a reset.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentic_rl.envs.base import Environment, Episode, FinalAnswer
from agentic_rl.envs.driver import driver_program, read_reply
from agentic_rl.envs.faults import INFRA_STATUSES, typed
from agentic_rl.envs.metrics import env_counts, env_metrics
from agentic_rl.types import INFRA_FAULT, Observation, Task, ToolCall, Trajectory

logger = logging.getLogger(__name__)

ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)
OPEN, CLOSE = "<action>", "</action>"
_JSON = json.JSONDecoder()
RESULT_TAG = "env_result"
INVALID = "invalid_action"  # the name a malformed action is recorded under
HARNESS_ERROR = "harness_error"  # the driver exited without answering (typed as the infrastructure's failure)
SNAPSHOT_KEYS = ("state", "tool_docs", "doc", "broken", "broken_cause", "n_calls", "terminated", "finish_reason")
SYSTEM_PROMPT = """You solve a task by calling the tools of an interactive environment, one call per turn.
Call a tool by writing exactly one JSON action in an <action> tag, for example:
<action>{"name": "Observe", "parameters": {}}</action>
Each result comes back in <env_result> tags. Start with Observe to see the task's input. When you know the
answer, call Done with it: <action>{"name": "Done", "parameters": {"answer": ...}}</action>. Done ends the
episode; the answer is right or wrong. You may make at most {t_max} calls."""
WORKED_EXAMPLE = """An episode of another task (its input is a number; the answer: is it odd?) went:
<action>{"name": "Observe", "parameters": {}}</action>
<env_result>{"n": 7}</env_result>
<action>{"name": "Done", "parameters": {"answer": true}}</action>"""
NUDGE_TEXT = (
    '<feedback>No action found. Call a tool with <action>{"name": ..., "parameters": {...}}</action>, '
    "or end with Done.</feedback>"
)


@dataclass
class CodeGymRunner:
    """Runs CodeGym episodes in `sandbox` (the run's, or the default one when None).

    timeout_s: wall-clock limit of one reset or step.  t_max: calls per episode, unless the task sets its own.
    max_chars: observation text kept per call.
    """

    sandbox: Any = None
    timeout_s: float = 10.0
    t_max: int = 64
    max_chars: int = 600

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError(f"codegym timeout_s must be > 0, got {self.timeout_s}")
        if self.t_max < 1:
            raise ValueError(f"codegym t_max must be >= 1, got {self.t_max}")

    def open(self, task: Task, sample_index: int) -> CodeGymEpisode:
        return CodeGymEpisode(self, task)

    def resume(self, task: Task, sample_index: int, snapshot: dict[str, Any]) -> CodeGymEpisode:
        """The episode continued from its `snapshot()`: no reset, no sandbox call."""
        return CodeGymEpisode(self, task, snapshot=snapshot)

    def stops(self, text: str) -> bool:
        return find_action(text) is not None

    def closing_markers(self) -> list[str] | None:
        return None  # an action may end without "</action>" (see find_action): check after every token

    def call(self, payload: dict[str, Any], timeout_s: float | None = None) -> tuple[dict[str, Any], str]:
        """Run the driver on `payload` in the sandbox: (its reply, or {"ok": False, "error": ...}; the status)."""
        program, nonce = driver_program(payload)
        execute = self.sandbox.execute if self.sandbox is not None else _default_execute
        result = execute(program, timeout_s=timeout_s or self.timeout_s)
        reply = read_reply(result.stdout, nonce)
        if reply is not None:
            return reply, "ok" if reply.get("ok") else "error"
        if result.status == "timeout":
            return {"ok": False, "error": f"the call timed out after {timeout_s or self.timeout_s:g} s"}, "timeout"
        detail = result.stderr.strip().splitlines()[-1:] or [result.status]
        # the driver answers every exception of the environment's code, so an exit with an error and no answer is
        # the driver (the harness) crashing; the resource limits (memory, killed, ...) keep their own status
        status = HARNESS_ERROR if result.status == "error" else result.status
        return {"ok": False, "error": f"the environment gave no result ({result.status}): {detail[0]}"}, status


def _default_execute(code: str, timeout_s: float) -> Any:
    from agentic_rl.sandbox import execute

    return execute(code, timeout_s=timeout_s)


def find_action(text: str) -> tuple[str, int, int] | None:
    """The action of a turn's text: (its content, start, end), or None while there is none (yet).

    From the first `<action>`: with a `</action>` after it, the content between them (stripped; a malformed one
    is an invalid action), unless it opens with a complete JSON object followed by other text, which is then
    the action, as below. Without `</action>`: a complete JSON object right after the tag (whitespace aside)
    followed by text that is not the start of `</action>`: exactly that object. Once a text has an action, any
    continuation has the same one, so generation can stop at the first text that has one.
    """
    start = text.find(OPEN)
    if start < 0:
        return None
    body_at = start + len(OPEN)
    close = text.find(CLOSE, body_at)
    body = text[body_at:] if close < 0 else text[body_at:close]
    lead = len(body) - len(body.lstrip())
    try:
        obj, end = _JSON.raw_decode(body, lead)
    except ValueError:
        obj, end = None, 0
    if isinstance(obj, dict):
        rest = body[end:].lstrip()
        if rest and not (close < 0 and CLOSE.startswith(rest)):  # went on after the object: the object alone
            return body[lead:end], start, body_at + end
        if close >= 0:
            return body[lead:end], start, close + len(CLOSE)
        return None  # the closing tag may still come
    if close >= 0:
        return body.strip(), start, close + len(CLOSE)
    return None


DONE_PREFIX = '<action>{"name": "Done", "parameters": {"answer": '  # a forced final turn opens with it


class DoneAnswer(FinalAnswer):
    """A CodeGym episode's final answer: `Done(answer)`, the action that ends it with its reward.

    Why Done, not "not applicable": the baseline asks what the episode would score had the model given its answer
    in the format the task grades; in a CodeGym environment that format is Done, the action the prompt already asks
    for at the end, so the forced turn opens with the Done action up to its answer and the model writes the answer.
    The turn is read as one action where it holds a complete one (`find_action`, the episode's own parser: a
    malformed one is an invalid action, refused by the episode as any other); otherwise the JSON value the model
    wrote first is the answer (EOS or the token limit came before the closing braces). A turn with neither answers
    nothing.
    """

    prefix = DONE_PREFIX

    def parse(self, text: str) -> ToolCall | None:
        found = find_action(text)
        if found is not None:  # a complete action: read as the episode reads every action
            return ToolCall(action_name(found[0]), *found)
        body = text[len(self.prefix) :] if text.startswith(self.prefix) else text
        lead = len(body) - len(body.lstrip())
        try:
            value, end = _JSON.raw_decode(body, lead)
        except ValueError:  # nothing that reads as an answer
            return None
        action = json.dumps({"name": "Done", "parameters": {"answer": value}})
        return ToolCall("Done", action, 0, len(text) - len(body) + end)

    def stops(self, text: str) -> bool:
        return find_action(text) is not None


def action_text(action: dict[str, Any]) -> str:
    """An action as a model turn writes it, the form the system prompt shows: `<action>{json}</action>`."""
    return f"{OPEN}{json.dumps(action)}{CLOSE}"


def action_name(content: str) -> str:
    """The tool an action's JSON names, or INVALID (malformed JSON, not an object, no string name)."""
    try:
        action = json.loads(content)
    except ValueError:
        return INVALID
    return action["name"] if isinstance(action, dict) and isinstance(action.get("name"), str) else INVALID


def calls_left_note(left: int) -> str:
    """What an observation adds with `calls_left` (data.calls_left): the calls the episode has left."""
    if left == 1:
        return "(1 call left: make it Done with your answer)"
    return f"({left} calls left)"


def record_of(task: Task) -> dict[str, Any]:
    record = task.metadata.get("codegym")
    if not isinstance(record, dict) or not {"code", "class_name", "options"} <= set(record):
        raise ValueError(
            f"task {task.task_id} has harness 'codegym' but no metadata['codegym'] with code, "
            "class_name and options (load CodeGym tasks with agentic_rl.envs.tasks)"
        )
    return record


class CodeGymEpisode(Episode):
    """One configuration of one CodeGym environment (see the module docstring)."""

    nudge_text = NUDGE_TEXT

    def __init__(self, runner: CodeGymRunner, task: Task, snapshot: dict[str, Any] | None = None) -> None:
        self.runner, self.task = runner, task
        self.record = record_of(task)
        self.t_max = int(self.record.get("t_max") or runner.t_max)
        self.n_calls = 0
        self.state: dict[str, Any] | None = None
        self.tool_docs: dict[str, str] = {}
        self.doc = ""
        self.broken: str | None = None
        self.broken_cause = "env_broken"  # whose failure `broken` is (an INFRA_CAUSES key)
        self._terminated = False
        if snapshot is not None:
            self.restore(snapshot)
            return
        reply, status = runner.call(
            {
                "op": "reset",
                "code": self.record["code"],
                "class_name": self.record["class_name"],
                "options": self.record["options"],
            }
        )
        if reply.get("ok") and isinstance(reply.get("state"), dict) and isinstance(reply.get("tools"), dict):
            self.state, self.tool_docs, self.doc = reply["state"], reply["tools"], str(reply.get("doc") or "")
        else:
            self.broken = f"the environment failed to start: {reply.get('error', 'no state or tools')}"
            self.broken_cause = INFRA_STATUSES.get(status, "env_broken")
            logger.warning("codegym task %s: %s", task.task_id, self.broken)
        self.tools = tuple(self.tool_docs)

    def snapshot(self) -> dict[str, Any]:
        values = (self.state, self.tool_docs, self.doc, self.broken, self.broken_cause)
        return dict(zip(SNAPSHOT_KEYS, (*values, self.n_calls, self._terminated, self.finish_reason)))

    def restore(self, snapshot: dict[str, Any]) -> None:
        missing = [key for key in SNAPSHOT_KEYS if key not in snapshot]
        if missing:
            raise ValueError(f"codegym task {self.task.task_id}: a snapshot without {missing} cannot be restored")
        self.state, self.tool_docs, self.doc = snapshot["state"], dict(snapshot["tool_docs"]), str(snapshot["doc"])
        self.broken, self.broken_cause = snapshot["broken"], str(snapshot["broken_cause"])
        self.n_calls, self._terminated = int(snapshot["n_calls"]), bool(snapshot["terminated"])
        self.finish_reason = snapshot["finish_reason"]
        self.tools = tuple(self.tool_docs)

    # --- what the agent loop asks
    def prompt_messages(self, observation_format: str) -> list[dict[str, str]]:
        tools = "\n".join(f"- {name}: {doc or '(no documentation)'}" for name, doc in self.tool_docs.items())
        task = self.task.prompt.strip() or self.doc
        user = f"{task}\n\nTools:\n{tools}" if tools else f"{task}\n\n({self.broken})"
        system = SYSTEM_PROMPT.replace("{t_max}", str(self.t_max))
        if self.record.get("worked_example"):
            system += "\n" + WORKED_EXAMPLE
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]

    def parse(self, text: str) -> ToolCall | None:
        found = find_action(text)
        if found is None:
            return None
        content, start, end = found
        return ToolCall(name=action_name(content), content=content, start=start, end=end)

    def final_answer(self) -> FinalAnswer | None:
        """`Done`, where the environment has it (an environment without Done has no final answer to force)."""
        return DoneAnswer() if "Done" in self.tool_docs else None

    def counts_toward_cap(self, name: str) -> bool:
        return False  # T_max, counted here, is the cap of a CodeGym episode

    def grades(self, name: str) -> bool:
        return self._terminated

    def final(self, name: str) -> bool:
        return self._terminated

    def step(self, call: ToolCall) -> Observation:
        started = time.perf_counter()
        self.n_calls += 1
        self._terminated = False
        obs = typed(self._step(call, started))
        if not self._terminated and self.n_calls >= self.t_max:
            self.finish_reason = "t_max"
            obs.text = obs.text.replace(
                f"</{RESULT_TAG}>", f"(T_max = {self.t_max} calls reached: the episode ends)\n</{RESULT_TAG}>"
            )
        elif not self._terminated and self.record.get("calls_left"):
            obs.text = obs.text.replace(
                f"</{RESULT_TAG}>", f"{calls_left_note(self.t_max - self.n_calls)}\n</{RESULT_TAG}>"
            )
        return obs

    # --- one call, trial-then-overwrite
    def _step(self, call: ToolCall, started: float) -> Observation:
        if self.broken is not None:
            obs = self._observation(call.name, f"ERROR: {self.broken}", started, ok=False, status="env_error")
            obs.fault, obs.cause = INFRA_FAULT, self.broken_cause  # the policy did not break the environment
            return obs
        problem = self._invalid(call)
        if problem is not None:
            return self._observation(
                call.name, f"ERROR: {problem}", started, ok=False, status="invalid", executed=False
            )
        reply, status = self.runner.call(
            {
                "op": "step",
                "code": self.record["code"],
                "class_name": self.record["class_name"],
                "state": self.state,
                "action": call.content,
            }
        )
        if not reply.get("ok") or not isinstance(reply.get("state"), dict):
            # trial failed: the committed state stays as it was
            return self._observation(
                call.name,
                f"ERROR: {reply.get('error', 'no new state')}",
                started,
                ok=False,
                status=status if status != "ok" else "error",
            )
        self.state = reply["state"]
        self._terminated = bool(reply.get("terminated"))
        passed = float(reply.get("reward") or 0.0) > 0 if self._terminated else None
        return self._observation(
            call.name, str(reply.get("observation", "")), started, ok=True, status="ok", passed=passed
        )

    def _invalid(self, call: ToolCall) -> str | None:
        """Why an action cannot be run (checked here, without a sandbox call), or None."""
        # the name is read from the content again: a call may come from another parser than this episode's (a
        # forced turn's), and whatever its content, a call that is not one JSON action is refused, never raised
        if call.name == INVALID or action_name(call.content) != call.name:
            return (
                'malformed action: write one JSON object {"name": <tool>, "parameters": {...}} inside '
                f"<action></action>; got {call.content[:120]!r}"
            )
        action = json.loads(call.content)
        if call.name not in self.tool_docs:
            return f"unknown tool {call.name!r}; the tools are {sorted(self.tool_docs)}"
        if not isinstance(action.get("parameters", {}), dict):
            return f"the parameters of {call.name} must be a JSON object, got {action.get('parameters')!r}"
        return None

    def _observation(
        self,
        name: str,
        body: str,
        started: float,
        *,
        ok: bool,
        status: str,
        passed: bool | None = None,
        executed: bool = True,
    ) -> Observation:
        if len(body) > self.runner.max_chars:
            body = body[: self.runner.max_chars] + f"\n... [truncated {len(body) - self.runner.max_chars} chars]"
        return Observation(
            tool=name,
            text=f"<{RESULT_TAG}>\n{body}\n</{RESULT_TAG}>",
            ok=ok,
            status=status,
            passed=passed,
            executed=executed,
            latency_ms=(time.perf_counter() - started) * 1e3,
        )


class CodeGymEnvironment(Environment):
    """An environment of CodeGym tasks only (every task must have harness "codegym"); declared as the harness
    environment of "codegym" (agentic_rl.registry BUILTINS["harness_env"]), so a tool-set environment opens its
    tasks here. Its hooks give the `env/` metrics (agentic_rl.envs.metrics)."""

    name = "codegym"

    def __init__(self, sandbox: Any = None, timeout_s: float = 10.0, t_max: int = 64, max_chars: int = 600) -> None:
        self.runner = CodeGymRunner(sandbox=sandbox, timeout_s=timeout_s, t_max=t_max, max_chars=max_chars)

    def open(self, task: Task, sample_index: int) -> Episode:
        if task.harness != "codegym":
            raise ValueError(f"task {task.task_id} is not a CodeGym task (harness {task.harness!r})")
        return self.runner.open(task, sample_index)

    def resume(self, task: Task, sample_index: int, snapshot: dict[str, Any]) -> Episode:
        return self.runner.resume(task, sample_index, snapshot)

    def stops(self, text: str) -> bool:
        return self.runner.stops(text)

    def closing_markers(self) -> list[str] | None:
        return self.runner.closing_markers()

    def episode_counts(self, traj: Trajectory, task: Task) -> dict[str, Any] | None:
        return env_counts(traj, task)

    def metrics(self, counts: Iterable[dict[str, Any] | None]) -> dict[str, float]:
        return env_metrics(counts)


__all__ = [
    "ACTION",
    "INVALID",
    "WORKED_EXAMPLE",
    "CodeGymEnvironment",
    "CodeGymEpisode",
    "CodeGymRunner",
    "DoneAnswer",
    "find_action",
]
