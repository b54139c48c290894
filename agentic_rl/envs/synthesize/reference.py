"""The difficulty filter's reference policy: a results file, or any OpenAI-compatible endpoint playing episodes.

A configuration is dropped ("too_easy") when the reference solves it in more than `max_success` of its tries
(the paper: 4 tries of a strong model, kept at most 25%). `judge(record, max_success)` returns the indices kept
and one reason per configuration dropped.

- `ResultsReference(path)`: one JSON object with `task_id` and `passed` per line (e.g. an evaluation's
  results.jsonl). Task ids are those `agentic_rl.envs.tasks.environment_tasks` gives the environment as it stands
  before the difficulty stage (`codegym/synth/<problem id>/<index>`: what a run without a reference writes). A
  configuration the file does not measure is kept and counted as "not_measured" in the report.
- `EndpointReference(endpoint, runner, tries)`: plays `tries` episodes per configuration with the model behind
  the endpoint: the CodeGym episode's own prompt, parser and sandboxed steps (agentic_rl.envs.codegym), chat
  messages in and text out, a reply without an action answered with the episode's nudge. An endpoint failure
  during an episode fails the problem (it is raised), since a success rate with holes would be wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.synthesize.endpoint import ChatEndpoint
from agentic_rl.envs.tasks import environment_tasks, read_success
from agentic_rl.types import Task

TOO_EASY = "too_easy"


def too_easy(passes: Sequence[bool] | None, max_success: float) -> bool:
    return bool(passes) and sum(passes) / len(passes) > max_success + 1e-9  # 1/4 must not read as above 0.25


@dataclass
class ResultsReference:
    path: str | Path

    def __post_init__(self) -> None:
        if not Path(self.path).is_file():
            raise FileNotFoundError(f"--reference-results: no results file at {self.path} (task_id, passed per line)")
        self.success = read_success(self.path)
        self.not_measured = 0

    def judge(self, record: dict[str, Any], max_success: float) -> tuple[list[int], list[str]]:
        kept, reasons = [], []
        for i, task in enumerate(environment_tasks(record)):
            passes = self.success.get(task.task_id)
            self.not_measured += passes is None
            if too_easy(passes, max_success):
                reasons.append(TOO_EASY)
            else:
                kept.append(i)
        return kept, reasons


@dataclass
class EndpointReference:
    endpoint: ChatEndpoint
    runner: CodeGymRunner
    tries: int = 4
    t_max: int = 64

    def __post_init__(self) -> None:
        if self.tries < 1:
            raise ValueError(f"--reference-tries must be >= 1, got {self.tries}")

    def judge(self, record: dict[str, Any], max_success: float) -> tuple[list[int], list[str]]:
        kept, reasons = [], []
        for i, task in enumerate(environment_tasks(record, t_max=self.t_max)):
            passes = [self.play(task) for _ in range(self.tries)]
            if too_easy(passes, max_success):
                reasons.append(TOO_EASY)
            else:
                kept.append(i)
        return kept, reasons

    def play(self, task: Task) -> bool:
        """One episode of the reference model on `task`: whether its Done answer was right."""
        episode = self.runner.open(task, 0)
        messages = episode.prompt_messages("chat")
        while episode.n_calls < episode.t_max and episode.finish_reason is None:
            reply = self.endpoint.complete(messages)
            call = episode.parse(reply)
            if call is None:
                messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": episode.nudge_text}]
                episode.n_calls += 1  # a turn without an action still uses one of T_max, so the loop always ends
                continue
            observation = episode.step(call)
            messages += [
                {"role": "assistant", "content": reply[: call.end]},
                {"role": "user", "content": observation.text},
            ]
            if episode.final(call.name):
                return bool(observation.passed)
        return False
