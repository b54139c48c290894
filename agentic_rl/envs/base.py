"""The environment seam: what the agent loop talks to, for every kind of task.

An `Environment` is built once per run (or per evaluation mode). For each task and sample the agent loop
opens an `Episode` and closes it when the episode ends. The episode owns everything that may differ between
tasks:
  - `tools`: the tool names it declares, in counting order (metrics, tables and figures count calls under
    these names, zeros included);
  - `prompt_messages(observation_format)`: the chat messages before the first model turn;
  - `parse(text)`: the call a finished model turn closed with (or None);
  - `counts_toward_cap(name)`, `grades(name)`, `final(name)`: how the loop treats a call of that tool;
  - `step(call) -> Observation`: run the call; it may change the episode's state;
  - `finish_reason`: set when the episode itself ends the episode (a CodeGym `T_max` hit), else None;
  - `infra_failure`: set when the infrastructure failed the episode before any call (no server could open it);
  - `snapshot()` / `restore(snapshot)`: the episode's state as JSON, and putting it back (an environment server
    that died mid-episode costs nothing: another one resumes the episode from it, `Environment.resume`);
  - `final_answer()`: how the episode is made to give its final answer in one forced turn (a `FinalAnswer`: a code
    task's submission, a CodeGym environment's `Done`), or None where the episode has no such answer (the
    evaluation's `forced_submit` baseline then keeps the episode as it was and records why);
  - `close()`: release what the episode holds.
The stop condition is the environment's (`stops(text)`, `closing_markers()`): a batch of episodes of one
environment is generated together, so it shares one.

What the trainer and the evaluation learn from an environment goes through its hooks, never through its name:
  - `episode_counts(traj, task)`: what one finished episode contributes to the environment's own metrics
    (JSON-able; an evaluation keeps it in the episode's record, field "env"), None when it has nothing to add;
  - `metrics(counts)`: those metrics over a set of episodes' counts (training logs them per step, an evaluation
    per mode); `group_metrics(trajs, tasks)` is the two together;
  - `report(tasks, records, python=..., excluded=...)`: an evaluation's report on its tasks (summary.json's
    "environment"), None when it has none.

The run's environment is the `env` config group (conf/env/*.yaml, built by `registry.build` with the runtime
objects `toolset`, `sandbox` and `served`); the default is `ToolSetEnvironment` (agentic_rl.envs.toolset: the
same search / execute / submit tools for every code task). Tasks that bring their own environment name it by
their harness (`Task.harness`) in the "harness_env" registry (agentic_rl.registry: CodeGym, agentic_rl.envs.codegym,
a `gymnasium.Env` per problem stepped in the sandbox); a tool-set environment opens those tasks with it, and its
hooks are that environment's (`HarnessEnvironments`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentic_rl.registry import Registry
from agentic_rl.types import Observation, Task, ToolCall, Trajectory

# Environments that own the tasks of one harness (`Task.harness` -> an Environment class built with `sandbox=`);
# the built-ins are in agentic_rl.registry BUILTINS["harness_env"], another package's are `harness_env.<harness>`
# entry points.
HARNESS_ENVS: Registry[type] = Registry("harness environment", key="harness_env")


class FinalAnswer(ABC):
    """How an episode is made to give its final answer in one forced turn: the evaluation's `forced_submit` format
    baseline (agentic_rl.rollout.agent.run_final_submit) gives an episode that ended without an answer this turn.

    The turn opens with `prefix` (context, not generated, as `rollout.response_prefix`), so what the model writes
    is the answer itself; `stops(text)` and `parse(text)` read the turn as prefix + what the model wrote. `parse`
    gives the call that answers (the episode's own `step` grades it, as any of its calls), or None when the text
    holds no answer (the episode then ends "no_call": a recorded failure, never an exception). Forced turns of
    different episodes are generated together when their `key` is the same.
    """

    prefix: str = ""

    @abstractmethod
    def parse(self, text: str) -> ToolCall | None: ...

    @abstractmethod
    def stops(self, text: str) -> bool: ...

    def closing_markers(self) -> list[str] | None:
        """Literals every completed answer ends with (see `Environment.closing_markers`); None: check every token."""
        return None

    @property
    def key(self) -> tuple[str, str]:
        """What a batch of forced turns shares: the kind of answer and the prefix its turns open with."""
        return type(self).__qualname__, self.prefix


class Episode(ABC):
    """One task x sample: its tools, prompt, parser and state (see the module docstring)."""

    task: Task
    tools: tuple[str, ...] = ()
    answers_once: bool = False
    nudge_text: str | None = None  # the reminder after a turn without a call (None: the agent loop's own)
    finish_reason: str | None = None
    infra_failure: str | None = None

    @abstractmethod
    def prompt_messages(self, observation_format: str) -> list[dict[str, str]]: ...

    @abstractmethod
    def parse(self, text: str) -> ToolCall | None: ...

    @abstractmethod
    def step(self, call: ToolCall) -> Observation: ...

    def counts_toward_cap(self, name: str) -> bool:
        return True

    def grades(self, name: str) -> bool:
        return False

    def final(self, name: str) -> bool:
        return False

    def counted_tools(self, executed: list[str]) -> tuple[str, ...]:
        """The names this episode's calls are counted under: its declared tools, then any other executed name."""
        return tuple(self.tools) + tuple(sorted(set(executed) - set(self.tools) - {"none"}))

    def final_answer(self) -> FinalAnswer | None:
        """How this episode gives its final answer in a forced turn (see `FinalAnswer`). None (the default): it has
        none, so a forced turn is not applicable. An environment must say what its final answer is; guessing one
        (a code block sent to an environment that reads JSON actions) would score a format it never asked for."""
        return None

    def snapshot(self) -> dict:
        """The episode's state as JSON-able data (empty: a stateless episode)."""
        return {}

    def restore(self, snapshot: dict) -> None:  # noqa: B027  (optional: a stateless episode has nothing to restore)
        """Put back the state `snapshot()` gave (a no-op for a stateless episode)."""

    def close(self) -> None:  # noqa: B027  (an optional hook, not abstract: most episodes hold nothing)
        """Release what the episode holds (nothing, unless a subclass holds something)."""


class Environment(ABC):
    """A kind of episode, built once per run; `open` starts one episode per task and sample.

    What a run may ask of an environment before opening an episode is declared here, with defaults for one whose
    episodes differ by task (a tool set, agentic_rl.envs.toolset, overrides both):
      - `answers_once`: every episode is one final answer (the no-tools mode): an evaluation gives its one turn the
        token budget of a tool mode's turns, and reports no `tools/*` metrics;
      - `specs`: the specs (agentic_rl.tools.base.ToolSpec) of the tools every episode is told about, by name, when
        they are the same for all of them; None when the environment does not say (the warm-up then writes its
        demonstrations with the registry's tools, a replay answers in a ```python block).
    """

    name: str
    answers_once: bool = False
    specs: Mapping[str, Any] | None = None

    @abstractmethod
    def open(self, task: Task, sample_index: int) -> Episode: ...

    def resume(self, task: Task, sample_index: int, snapshot: dict) -> Episode:
        """An episode continued from `snapshot` (its `Episode.snapshot()`), without starting it again. Environments
        whose episodes start with side effects (a CodeGym reset) override this to skip them."""
        episode = self.open(task, sample_index)
        episode.restore(snapshot)
        return episode

    @abstractmethod
    def stops(self, text: str) -> bool:
        """True once `text` (a turn being generated) holds a completed call: where generation stops."""

    def closing_markers(self) -> list[str] | None:
        """Literals every completed call ends with (a policy checks `stops` only when one arrives); None:
        check after every token."""
        return None

    # --- hooks: what a run reads from its environment (see the module docstring); the defaults add nothing
    def episode_counts(self, traj: Trajectory, task: Task) -> dict[str, Any] | None:
        """What one finished episode adds to this environment's metrics (JSON-able), or None."""
        return None

    def metrics(self, counts: Iterable[dict[str, Any] | None]) -> dict[str, float]:
        """This environment's metrics over episodes' `episode_counts` (None entries skipped)."""
        return {}

    def group_metrics(self, trajs: Sequence[Trajectory], tasks: Sequence[Task]) -> dict[str, float]:
        """`metrics` of the episodes `trajs` (`tasks[i]` is the task of `trajs[i]`)."""
        return self.metrics(self.episode_counts(traj, task) for traj, task in zip(trajs, tasks))

    def report(
        self,
        tasks: Sequence[Task],
        records: Mapping[str, Sequence[dict[str, Any]]],
        *,
        python: str | None = None,
        excluded: Sequence[str] = (),
    ) -> dict[str, Any] | None:
        """An evaluation's report on `tasks` (the scored ones; `records`: each mode's result records; `python`: the
        sandbox's interpreter; `excluded`: the ids the user dropped), or None when this environment has none."""
        return None


class HarnessEnvironments:
    """The environments of the harnesses in HARNESS_ENVS, each built on first use with `sandbox`, and their hooks.

    Built lazily on purpose: an environment's stop condition joins the tool set's only once one of its tasks was
    opened (`built`), so a run without such tasks stops exactly where its tool set alone would.
    """

    def __init__(self, sandbox: Any = None) -> None:
        self.sandbox = sandbox
        self.built: dict[str, Environment] = {}

    def owns(self, task: Task) -> bool:
        return task.harness in HARNESS_ENVS

    def of(self, task: Task) -> Environment:
        if task.harness not in self.built:
            self.built[task.harness] = HARNESS_ENVS.get(task.harness)(sandbox=self.sandbox)
        return self.built[task.harness]

    def episode_counts(self, traj: Trajectory, task: Task) -> dict[str, Any] | None:
        return self.of(task).episode_counts(traj, task) if self.owns(task) else None

    def metrics(self, counts: Iterable[dict[str, Any] | None]) -> dict[str, float]:
        """Each harness environment's metrics of `counts` (a record's counts do not say whose they are: with one
        harness environment declared, as now, they are all its own)."""
        counts = list(counts)
        out: dict[str, float] = {}
        for harness in HARNESS_ENVS.names():
            env = self.built.get(harness) or HARNESS_ENVS.get(harness)(sandbox=self.sandbox)
            out.update(env.metrics(counts))
        return out


def describe_failure(exc: BaseException) -> str:
    """One line naming an exception, for observations and logs."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1]}" if text else type(exc).__name__


__all__ = ["HARNESS_ENVS", "Environment", "Episode", "FinalAnswer", "HarnessEnvironments", "describe_failure"]
