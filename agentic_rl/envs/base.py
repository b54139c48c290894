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
  - `close()`: release what the episode holds.
The stop condition is the environment's (`stops(text)`, `closing_markers()`): a batch of episodes of one
environment is generated together, so it shares one.

Two environments exist: `ToolSetEnvironment` (agentic_rl.envs.toolset: the same search / execute / submit
tools for every code task) and the CodeGym episodes it opens for tasks whose harness is "codegym"
(agentic_rl.envs.codegym: a `gymnasium.Env` per problem, stepped in the sandbox).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from agentic_rl.types import Observation, Task, ToolCall


class Episode(ABC):
    """One task x sample: its tools, prompt, parser and state (see the module docstring)."""

    task: Task
    tools: tuple[str, ...] = ()
    answers_once: bool = False
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

    def snapshot(self) -> dict:
        """The episode's state as JSON-able data (empty: a stateless episode)."""
        return {}

    def restore(self, snapshot: dict) -> None:  # noqa: B027  (optional: a stateless episode has nothing to restore)
        """Put back the state `snapshot()` gave (a no-op for a stateless episode)."""

    def close(self) -> None:  # noqa: B027  (an optional hook, not abstract: most episodes hold nothing)
        """Release what the episode holds (nothing, unless a subclass holds something)."""


class Environment(ABC):
    """A kind of episode, built once per run; `open` starts one episode per task and sample."""

    name: str

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


def describe_failure(exc: BaseException) -> str:
    """One line naming an exception, for observations and logs."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1]}" if text else type(exc).__name__


__all__ = ["Environment", "Episode", "describe_failure"]
