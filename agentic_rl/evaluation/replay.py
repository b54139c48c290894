"""The replay policy: answers from a samples file instead of a model, through the same rollout and graders.

Samples file (BigCodeBench's own tools write this format): JSON Lines, one object per line,

    {"task_id": "BigCodeBench/13", "solution": "import os\\ndef task_func(...):\\n    ..."}

`solution` is the complete program that is graded. Several lines with the same task_id are several samples
of that task, in file order (sample 0, 1, ...). A line may instead carry `completion` (HumanEval's format):
the code that continues the task's prompt; the graded program is then `prompt + completion`. Other keys are
ignored; blank lines are skipped. A malformed line is an error naming the file and the line.

How it answers: in `no_tools` mode the reply is the solution in a ```python block (graded as the answer); in
tool modes it is the solution in a ```submit block, graded by the submit tool. One turn per episode: a replay
submits once. A task with no sample (or fewer samples than `evaluator.n_samples`) is a recorded failure with
status "no_sample"; the evaluator asks `has_sample` and does not roll such episodes out. Its samples are graded
as samples 0..n-1 with no greedy episode (`policies.fit_to_policy` sets that for `policy=replay`; code that calls
`evaluate` itself passes `greedy=False`).

Built on `ScriptedPolicy` with the byte-level tokenizer, so no model is loaded and the rollout runs exactly
as for a model (prompt, parser, tools, graders).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentic_rl.envs.base import Environment
from agentic_rl.rollout.agent import RolloutConfig, ToolSet
from agentic_rl.rollout.policy import ScriptedPolicy, TurnRequest
from agentic_rl.rollout.tokenizer import ByteChatTokenizer

logger = logging.getLogger(__name__)

# A sample is either a whole program ("solution") or a continuation of the prompt ("completion").
Sample = tuple[str, str]  # (kind, text)
UNLIMITED = 10**9  # token limits of a replay: its replies are never cut


class SamplesFileError(ValueError):
    """A samples file is missing or one of its lines is malformed; the message names the file and line."""


def load_samples(path: str | os.PathLike[str]) -> dict[str, list[Sample]]:
    """task_id -> its samples in file order, each ("solution" | "completion", text)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise SamplesFileError(
            f"samples file {path} not found. Fix: pass samples=<path to a .jsonl file with "
            'one {"task_id", "solution"} object per line>.'
        )
    samples: dict[str, list[Sample]] = {}
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}, line {lineno}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SamplesFileError(
                    f"{where}: not valid JSON ({exc.msg} at column {exc.colno}). Fix: each "
                    'line must be one JSON object such as {"task_id": ..., "solution": ...}.'
                ) from exc
            if not isinstance(row, dict):
                raise SamplesFileError(f"{where}: expected a JSON object, got {type(row).__name__}.")
            task_id = row.get("task_id")
            if not isinstance(task_id, str) or not task_id.strip():
                raise SamplesFileError(f'{where}: missing or empty "task_id" (a string such as "HumanEval/0").')
            if isinstance(row.get("solution"), str):
                sample: Sample = ("solution", row["solution"])
            elif isinstance(row.get("completion"), str):
                sample = ("completion", row["completion"])
            else:
                raise SamplesFileError(
                    f'{where}: task {task_id!r} has no string "solution" (the whole program) '
                    f'or "completion" (code continuing the prompt); keys found: {sorted(row)}.'
                )
            samples.setdefault(task_id.strip(), []).append(sample)
    if not samples:
        raise SamplesFileError(f"samples file {path} has no samples. Fix: write one JSON object per line.")
    fenced = sorted(tid for tid, v in samples.items() if any("```" in text for _, text in v))
    if fenced:
        logger.warning(
            "replay: %d tasks have a sample containing ``` which ends the reply's code block early: %s",
            len(fenced),
            fenced[:5],
        )
    logger.info("replay: %d samples of %d tasks from %s", sum(map(len, samples.values())), len(samples), path)
    return samples


def write_samples(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]]) -> Path:
    """Write `{"task_id", "solution"}` rows as a samples file (tests, and exporting reference solutions)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps({"task_id": row["task_id"], "solution": row["solution"]}) + "\n")
    return path


class ReplayPolicy(ScriptedPolicy):
    """A policy whose replies are the samples of a file, fenced for the mode's tool set (see the module doc)."""

    def __init__(
        self, samples: Mapping[str, Sequence[Sample | str]], source: str = "<memory>", fence: str = "python"
    ) -> None:
        super().__init__(self._reply, ByteChatTokenizer())
        # plain strings are whole programs
        self.samples = {tid: [s if isinstance(s, tuple) else ("solution", s) for s in v] for tid, v in samples.items()}
        self.source = source
        self.fence = fence

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ReplayPolicy:
        return cls(load_samples(path), source=str(path))

    def has_sample(self, task_id: str, index: int) -> bool:
        return index < len(self.samples.get(task_id, ()))

    def max_samples(self) -> int:
        return max((len(v) for v in self.samples.values()), default=0)

    def program(self, request: TurnRequest) -> str | None:
        """The program of the requested sample (None when the file has none)."""
        if not self.has_sample(request.task.task_id, request.sample_index):
            return None
        kind, text = self.samples[request.task.task_id][request.sample_index]
        return request.task.prompt + text if kind == "completion" else text

    def for_mode(self, env: ToolSet | Environment, rollout: RolloutConfig) -> tuple[ReplayPolicy, RolloutConfig]:
        """This policy fenced for the mode's environment `env` (a ```submit block where its tools have the submit
        tool, else a ```python block), and the rollout limits a replay needs.

        One turn (a replay submits once; a failed submission is final), no cut of the reply (a sample is
        graded whole, however long: `ScriptedPolicy` only slices it) and no context limit (the prompt and the
        reply are not a model's context).
        """
        fence = "submit" if "submit" in (env.specs or {}) else "python"
        policy = ReplayPolicy(self.samples, self.source, fence)
        rollout = replace(
            rollout, max_turns=1, max_new_tokens=UNLIMITED, max_context_tokens=UNLIMITED, on_no_call="stop"
        )
        return policy, rollout

    def _reply(self, request: TurnRequest) -> str:
        program = self.program(request)
        if program is None or request.turn_index > 0:
            return ""
        body = program.strip("\n")
        return f"```{self.fence}\n{body}\n```"
