"""Demonstrations for the warm-up: a scripted agent plays each training task through the run's own rollout loop.

A task's demonstration is a list of calls, `task.metadata["demo"]` = [{"tool": "search" | "execute" | "submit",
"content": str}, ...] (e.g. search for the need in words, run a probe, submit the reference); a task without one
gets [{"tool": "submit", "content": task.reference_solution}]. A CodeGym task's calls are its actions: "tool" the
action's name, "content" its JSON (`envs.tasks.attach_demos`: the oracle's actions on a training configuration),
written as `<action>{json}</action>` after the rollout's response prefix (`codegym_replies`).

The scripted agent writes each call in its tool's own syntax, rendered from the tool's spec (`call_text`: the
literal text around its call pattern's content group, checked by parsing it back), and `ScriptedPolicy` replays
those replies as token ids through `rollout.agent.run_episodes`, in the run's environment and rollout config. So
each demonstration is a trajectory made by the same code as RL's episodes: the same chat template and worked
examples, the real tools' observations framed the same way, the same turn and token limits, and a loss mask that
is 1 exactly on the agent's own tokens. A reply is tokenized as text (the tokenizer's canonical ids for it).

What is kept: only a demonstration whose episode passed, i.e. whose final submission passed the task's tests. The
others are dropped and counted with their reason (the grader's status, or how the episode ended: a demonstration
longer than `rollout.max_new_tokens` per turn or `rollout.max_turns` in all cannot be replayed within RL's own
limits, so it is dropped too, never trained on). Calls of tools the environment does not run (a `search` under
`tools=code`) are left out of the script, so the demonstration shows only what that tool set can do; the submission
itself is written as the no-tools answer under `tools=none` (`played_as`).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_rl.envs.codegym import action_name, action_text, find_action
from agentic_rl.rollout.agent import RolloutConfig, run_episodes
from agentic_rl.rollout.policy import ScriptedPolicy, TurnRequest
from agentic_rl.tools.base import ToolSpec, declared_specs, find_call
from agentic_rl.types import Task, Trajectory

DEMO_KEY = "demo"  # task.metadata[DEMO_KEY]: the task's scripted calls
NO_DEMO = "no_demo"  # the drop reason of a task with neither a demonstration nor a reference solution


def demo_calls(task: Task) -> list[tuple[str, str]]:
    """(tool, content) of each call of `task`'s demonstration: its own, else submitting the reference, else none."""
    calls = task.metadata.get(DEMO_KEY)
    if calls is None:
        return [] if task.reference_solution is None else [("submit", task.reference_solution)]
    try:
        return [(str(call["tool"]), str(call["content"])) for call in calls]
    except (TypeError, KeyError) as exc:
        raise ValueError(
            f"task {task.task_id}: metadata['{DEMO_KEY}'] must be a list of {{'tool': name, 'content': text}} "
            f"calls, got {calls!r}"
        ) from exc


def _literal(source: str) -> str | None:
    """The text a regex fragment matches when each optional part is left out and each alternation takes its first
    branch (`(?:python|py)[ \\t]*\\n` -> "python\\n"); None when it is not that simple."""
    text = re.sub(r"\(\?:([^|()]*)(?:\|[^()]*)?\)", lambda m: re.escape(m.group(1)), source)
    text = re.sub(r"(\[[^\]]*\]|\\s)[*?]", "", text)
    if re.search(r"(?<!\\)[.^$*+?{}\[\]|()]", text):
        return None
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def call_text(tool: str, content: str, specs: Mapping[str, ToolSpec] | None = None) -> str:
    """`content` written as a call of `tool`, the way its spec's call pattern reads one (`<search>q</search>`, a
    ```python block, a ```submit block), or, for a tool called by the whole reply (the no-tools `answer`), as one
    ```python block; checked by parsing it back, so a spec and its writer cannot drift apart. `specs`: the specs of
    the tools it is written for (the environment's own); None: the registry's (`declared_specs`)."""
    known = declared_specs() if specs is None else specs
    if tool not in known:
        raise ValueError(f"a demonstration calls the unknown tool {tool!r}; the tools it may call: {list(known)}")
    spec = known[tool]
    pattern = spec.call_pattern
    if pattern is None:
        return _whole_reply(tool, spec, content)
    group = re.search(r"\((?!\?)[^()]*\)", pattern.pattern)  # the content group, e.g. (.*?)
    head = _literal(pattern.pattern[: group.start()]) if group else None
    tail = _literal(pattern.pattern[group.end() :]) if group else None
    if head is None or tail is None:
        raise ValueError(f"cannot write a call of tool {tool!r} from its call pattern {pattern.pattern!r}")
    text = head + content.strip("\n") + ("\n" if head.endswith("\n") else "") + tail
    call = find_call(text, {tool: spec})
    if call is None or call.content != content.strip("\n"):
        raise ValueError(f"a demonstrated {tool} call does not parse back as written: {text!r}")
    return text


def _whole_reply(tool: str, spec: Any, content: str) -> str:
    text = f"```python\n{content.strip(chr(10))}\n```"
    if spec.parse_reply is None or spec.parse_reply(text) != content.strip("\n"):
        raise ValueError(f"tool {tool!r} does not read a ```python block as its call: a demonstration cannot use it")
    return text


def played_as(tool: str, specs: Mapping[str, ToolSpec]) -> str | None:
    """The tool among `specs` (the environment's own tools, by name) that plays a demonstrated call of `tool`, or
    None to leave it out. A submission is the task's answer in any tool set: where `submit` is not among them, the
    set's own final grading tool (the no-tools `answer`) gives it, so every arm of a tools ablation warms up on the
    same solutions."""
    if tool in specs:
        return tool
    if tool == "submit":
        return next((name for name, spec in specs.items() if spec.final and spec.grades), None)
    return None


def demo_replies(task: Task, specs: Mapping[str, ToolSpec], response_prefix: str = "") -> list[str]:
    """The scripted agent's replies, one per turn: the demonstration's calls the tools of `specs` can play (a
    CodeGym task's: its actions, `codegym_replies`)."""
    if task.harness == "codegym":
        return codegym_replies(task, response_prefix)
    played = [(played_as(tool, specs), content) for tool, content in demo_calls(task)]
    return [call_text(tool, content, specs) for tool, content in played if tool is not None]


def codegym_replies(task: Task, response_prefix: str) -> list[str]:
    """A CodeGym task's demonstration (each call's content: one JSON action, as `envs.tasks.attach_demos` writes
    the oracle's) as the model's replies: `<action>{json}</action>`, the form the episode's system prompt asks for.
    The turn's `response_prefix` (rollout.response_prefix, e.g. "<action>") is context the model does not write,
    so each reply is what follows it. Checked by parsing the whole turn back as the episode does."""
    replies = []
    for tool, content in demo_calls(task):
        text = action_text(json.loads(content))
        found = find_action(text)
        if found is None or found[0] != content or action_name(content) != tool:
            raise ValueError(f"task {task.task_id}: a demonstrated action does not parse back as written: {text!r}")
        if not text.startswith(response_prefix):
            raise ValueError(
                f"task {task.task_id}: rollout.response_prefix={response_prefix!r} does not open a CodeGym action "
                f"({text[:40]!r}); use '' or '<action>'"
            )
        replies.append(text[len(response_prefix) :])
    return replies


@dataclass
class Demonstrations:
    """The warm-up's training set. kept: passing demonstration trajectories; dropped: (task id, reason) of the rest."""

    kept: list[Trajectory] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    def drop_reasons(self) -> dict[str, int]:
        return dict(Counter(reason for _, reason in self.dropped))


def drop_reason(traj: Trajectory) -> str | None:
    """Why a demonstration trajectory is not trained on (None: its final submission passed)."""
    if traj.passed:
        return None
    return traj.grade.status if traj.grade is not None else traj.finish_reason


def build_demonstrations(tasks: Sequence[Task], tokenizer: Any, env: Any, rollout_cfg: RolloutConfig) -> Demonstrations:
    """Play each task's demonstration in `env` (the run's environment) and keep the ones that pass.

    `tokenizer`: the run's `ChatTokenizer` (the policy's), so the ids are the ones RL's episodes would have.
    """
    started = time.perf_counter()
    # the environment's own tools; one that does not say which (`Environment.specs` None) plays every declared one
    specs = env.specs if env.specs is not None else declared_specs()
    scripted = [(task, demo_replies(task, specs, rollout_cfg.response_prefix)) for task in tasks]
    playable = [(task, replies) for task, replies in scripted if replies]
    replies = [r for _, r in playable]

    def script(request: TurnRequest) -> str:
        turns = replies[request.episode if request.episode is not None else 0]
        return turns[request.turn_index] if request.turn_index < len(turns) else ""  # past the script: EOS

    out = Demonstrations(dropped=[(task.task_id, NO_DEMO) for task, r in scripted if not r])
    trajs = run_episodes([(task, 0) for task, _ in playable], ScriptedPolicy(script, tokenizer), env, rollout_cfg)
    for traj in trajs:
        reason = drop_reason(traj)
        if reason is None:
            out.kept.append(traj)
        else:
            out.dropped.append((traj.task_id, reason))
    out.seconds = time.perf_counter() - started
    return out
