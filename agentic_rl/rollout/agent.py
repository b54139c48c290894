"""The multi-turn agent loop, as an explicit state machine over a batch of episodes.

Each episode is GENERATING until its turn closes, then one of:
  - a completed call of the active tool set   -> TOOL: run it, append the observation, back to GENERATING
  - a call over the cap C (tools whose spec counts toward it) -> refused: append a short notice, back to GENERATING
  - no call                                    -> nudge (append a reminder) or DONE("no_call"), per config
  - a passing submission                       -> DONE("passed")
  - out of turns / context                     -> DONE("max_turns" / "length")
  - a call the infrastructure failed (a server died and no other took over, the sandbox failed, the harness
    crashed; typed by the environment, agentic_rl.envs.faults) -> DONE("infra_failure"): not the policy's doing,
    so the episode stops there and its trajectory says why (`infra_failure`); the update leaves it out of its
    group (agentic_rl.algo.grpo). An episode no environment could open starts in that state.
A final tool (the no-tools mode's `answer`, whose parser takes the code out of the reply) ends the episode
with its grade. What each tool is (pattern, cap, grading) is looked up in its ToolSpec (agentic_rl.tools.base).

Token ids are kept verbatim: history ids + generated ids + tokenized observation. The loss mask is built
alongside (1 for generated ids, 0 for prompt and observation ids) and checked to have the same length.
All active episodes generate as one batch each turn (the G rollouts of a task, or several tasks' groups),
and their tool calls run concurrently in a thread pool (the sandbox bounds real concurrency). A policy that
batches continuously (`ContinuousPolicy`: the vLLM backend with `rollout.vllm.continuous_batching`) takes each
episode's turns one at a time instead: an episode whose tool has answered starts its next turn at once, while
the others are still generating, and the engine's batch never waits for its slowest reply.

A response prefix (`rollout.response_prefix`, e.g. "<action>" for CodeGym) opens every model turn: its ids
follow the prompt and each observation, masked like them, and the model continues from it. The parser and the
stop condition read the turn as prefix + generated text, so a small model that only has to write what follows
the prefix is parsed exactly as if it had written the whole call.

A finished episode may be given one more turn that must be its final answer (`run_final_submit`, the evaluation's
`forced_submit` baseline), in its environment's own terms (`Episode.final_answer`): a code task's turn opens with the
submit fence as context, so what the model writes is the code; a CodeGym episode's with its `Done` action up to the
answer. An episode whose environment has no final answer is kept as it was and says so.

The policy's `session()` (HFPolicy's) keeps each episode's KV cache across the turns of one call of
`run_episodes`; the result carries the rollout's counters and timings (`RolloutStats`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

from agentic_rl.envs.base import Environment, Episode, FinalAnswer
from agentic_rl.envs.toolset import (  # noqa: F401  (re-exported)
    SUBMIT_FENCE,
    as_environment,
    prompt_messages,
    run_tool,
    split_example_reply,
)
from agentic_rl.rollout.backends import DEFAULT_BACKEND, SAMPLERS, VLLMConfig, check_servers, vllm_config
from agentic_rl.rollout.policy import (
    ContinuousPolicy,
    GenerationStats,
    Policy,
    SamplingParams,
    StopCondition,
    TurnRequest,
)
from agentic_rl.tools.base import ToolSet
from agentic_rl.tools.code import extract_code  # noqa: F401  (re-exported: agentic_rl.rollout.extract_code)
from agentic_rl.types import INFRA_FAULT, Observation, Task, ToolCall, Trajectory, Turn

logger = logging.getLogger(__name__)

NUDGE_TEXT = "<feedback>No tool call found. Use a tool, or submit your solution in a ```submit block.</feedback>"
CAP_TEXT = "<feedback>Tool-call limit reached: {name} was not run. Submit your solution now.</feedback>"
OBSERVATION_FORMATS = ("chat", "inline")


@dataclass
class RolloutConfig:
    """Limits of one episode (conf/rollout/*.yaml).

    max_turns: model turns per episode (a turn ends at the first completed tool call, EOS or max_new_tokens).
    max_tool_calls: the cap C on executed search/execute calls; later ones are refused. null = no cap.
    max_new_tokens: tokens generated per turn.
    max_context_tokens: an episode whose history reaches this ends with finish_reason "length".
    on_no_call: "nudge" appends a reminder and continues; "stop" ends the episode.
    observation_format: "chat" puts each observation in a user turn of the chat template; "inline" appends
        it to the assistant's own message (the reference notebook's way).
    tool_workers: threads that run tool calls of different episodes concurrently.
    backend: the sampler that generates the turns, by name in the "sampler" registry (`rollout.backends`):
        hf (the transformers reference), vllm, or another declared backend; vllm: that backend's settings.
    response_prefix: text that opens every model turn ("" = none). It is context, not generated: its ids are
        appended after the prompt and after each observation with loss mask 0, and the episode's parser and the
        stop condition read it in front of the generated text (e.g. "<action>": the model only writes the JSON).
    servers: where the sampler runs (agentic_rl.rollout.service): null = the backend's default (vllm: one local
        server, hf: in this process), 0 = in this process, N = N local servers of the backend's engine, or a list
        of server URLs started elsewhere. server_token_env: the variable holding those servers' token.
        server_startup_timeout_s: how long a local server may take to start. sync_dir: a folder the servers
        started elsewhere read the trainer's weights from (local servers get a temporary one).
    """

    max_turns: int = 5
    max_tool_calls: int | None = None
    max_new_tokens: int = 256
    temperature: float = 0.7
    top_p: float = 0.95
    max_context_tokens: int = 4096
    on_no_call: str = "nudge"
    observation_format: str = "chat"
    tool_workers: int = 4
    backend: str = DEFAULT_BACKEND
    vllm: VLLMConfig = field(default_factory=VLLMConfig)
    response_prefix: str = ""
    servers: Any = None
    server_token_env: str = "AGENTIC_RL_SAMPLER_TOKEN"
    server_startup_timeout_s: float = 1200.0
    sync_dir: str | None = None

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ValueError(f"rollout.max_turns must be >= 1, got {self.max_turns}")
        if self.max_tool_calls is not None and self.max_tool_calls < 0:
            raise ValueError(f"rollout.max_tool_calls must be >= 0 or null, got {self.max_tool_calls}")
        if self.on_no_call not in ("nudge", "stop"):
            raise ValueError(f"rollout.on_no_call must be 'nudge' or 'stop', got {self.on_no_call!r}")
        if self.observation_format not in OBSERVATION_FORMATS:
            raise ValueError(
                f"rollout.observation_format must be one of {OBSERVATION_FORMATS}, got {self.observation_format!r}"
            )
        if self.tool_workers < 1:
            raise ValueError(f"rollout.tool_workers must be >= 1, got {self.tool_workers}")
        if self.backend not in SAMPLERS:
            raise ValueError(
                f"rollout.backend={self.backend!r} is not a sampler; available: {', '.join(SAMPLERS.names())}"
            )
        self.vllm = vllm_config(self.vllm)
        self.servers = check_servers(self.servers, self.sync_dir)
        _ = self.sampling  # built once here so that bad sampling fields fail at config time

    @property
    def sampling(self) -> SamplingParams:
        return SamplingParams(self.max_new_tokens, self.temperature, self.top_p)


@dataclass
class _Episode:
    """The loop's record of one episode: the environment's `env` episode, the ids and mask, the turns."""

    env: Episode
    task: Task
    sample_index: int
    ids: list[int]
    mask: list[int]
    prompt_len: int
    turns: list[Turn] = field(default_factory=list)
    n_capped_calls: int = 0
    submitted_code: str | None = None
    passed: bool = False
    finish_reason: str | None = None
    grade: Observation | None = None
    infra_failure: str | None = None

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    def append(self, ids: list[int], trainable: bool) -> None:
        self.ids.extend(ids)
        self.mask.extend([1 if trainable else 0] * len(ids))

    def to_trajectory(self) -> Trajectory:
        return Trajectory(
            task_id=self.task.task_id,
            token_ids=self.ids,
            loss_mask=self.mask,
            prompt_len=self.prompt_len,
            turns=self.turns,
            submitted_code=self.submitted_code,
            passed=self.passed,
            finish_reason=self.finish_reason or "max_turns",
            sample_index=self.sample_index,
            grade=self.grade,
            tools=self.counted_tools(),
            infra_failure=self.infra_failure,
            env_state=self.env.snapshot() or None,
        )

    def counted_tools(self) -> tuple[str, ...]:
        executed = [
            t.call.name
            for t in self.turns
            if t.call is not None and t.observation is not None and t.observation.executed
        ]
        return self.env.counted_tools(executed)


@dataclass
class RolloutStats:
    """Counters and timings of one `run_episodes` call (logged by `tracking.metrics.rollout_metrics`).

    prefill_tokens: positions the policy's model computed (see `GenerationStats`); None when the policy does
        not report it (scripted and replay policies).
    context_tokens: the episodes' final lengths, summed.  generated_tokens: the model's tokens in them.
    rollout_s: wall time of the whole rollout; generate_s: inside the policy; tools_s: waiting for tool calls.
    """

    prefill_tokens: int | None = None
    context_tokens: int = 0
    generated_tokens: int = 0
    rollout_s: float = 0.0
    generate_s: float = 0.0
    sync_s: float = 0.0  # bringing the sampler to the trainer's weights (vLLM backend), at the rollout's start
    tools_s: float = 0.0


def merge_rollout_stats(parts: Sequence[RolloutStats]) -> RolloutStats:
    """The stats of several rollouts (an evaluation's batches) as one: counts and times summed. Prefill is summed
    only when every part counted it: a policy that does not count it leaves it None, never a partial sum."""
    total = RolloutStats()
    for p in parts:
        for name in ("context_tokens", "generated_tokens", "rollout_s", "generate_s", "tools_s", "sync_s"):
            setattr(total, name, getattr(total, name) + getattr(p, name))
    prefills = [p.prefill_tokens for p in parts if p.prefill_tokens is not None]
    total.prefill_tokens = sum(prefills) if len(prefills) == len(parts) else None
    return total


class RolloutResult(list):
    """The trajectories of a rollout, in job order (a plain list to its callers), plus `stats`."""

    def __init__(self, trajectories: Sequence[Trajectory], stats: RolloutStats) -> None:
        super().__init__(trajectories)
        self.stats = stats


def environment_stop_condition(env: Environment, response_prefix: str = "") -> StopCondition:
    """The stop condition a batch of `env`'s episodes shares; a turn's text is read after `response_prefix`."""
    if not response_prefix:
        return StopCondition(env.stops, env.closing_markers())
    if env.stops(response_prefix):
        raise ValueError(
            f"rollout.response_prefix={response_prefix!r} already holds a complete call, so every turn would stop "
            "before the model writes anything: use a prefix that only opens a call (e.g. '<action>')"
        )
    return StopCondition(lambda text: env.stops(response_prefix + text), env.closing_markers())


def run_episodes(
    jobs: Sequence[tuple[Task, int]],
    policy: Policy,
    toolset: ToolSet | Environment,
    cfg: RolloutConfig,
    on_turn: Callable[[int, int], None] | None = None,
) -> RolloutResult:
    """Roll out one episode per (task, sample_index) job, all batched together; returns them in order.

    `toolset` is the environment (a plain `ToolSet` is wrapped in `ToolSetEnvironment`): each job opens one
    of its episodes, closed when the rollout ends. `on_turn(n_active, n_done)` is called after each turn.
    """
    started = time.perf_counter()
    env = as_environment(toolset)
    tok = policy.tokenizer
    episodes: list[_Episode] = []
    try:
        for task, sample_index in jobs:
            opened = env.open(task, sample_index)
            prompt = tok.chat_prompt_ids(opened.prompt_messages(cfg.observation_format))
            episodes.append(_Episode(opened, task, sample_index, list(prompt), [0] * len(prompt), len(prompt)))
            if opened.infra_failure is not None:  # no environment could open it: nothing to generate for
                _end_by_infra(episodes[-1], opened.infra_failure)
        # built once the episodes are open: an environment may learn what its episodes need from opening them
        # (a tool set's CodeGym runner, whose actions have no fixed closing marker, exists from its first CodeGym
        # task on; asked before, its markers would be the tool set's alone, and a CodeGym turn would not stop)
        stop = environment_stop_condition(env, cfg.response_prefix)
        return _roll_out(episodes, policy, stop, cfg, on_turn, started)
    finally:
        for episode in episodes:
            episode.env.close()


NO_FINAL_ANSWER = "no_final_answer"  # the finish reason of an episode a forced final turn is not applicable to


class _FinalTurnEpisode(Episode):
    """An episode's forced last turn: only its final answer is parsed (`FinalAnswer.parse`); the rest is the
    episode's own (its step grades the answer, its tools count the call)."""

    def __init__(self, inner: Episode, answer: FinalAnswer) -> None:
        self.inner, self.answer = inner, answer
        self.task, self.tools = inner.task, inner.tools

    def prompt_messages(self, observation_format: str) -> list[dict[str, str]]:
        return self.inner.prompt_messages(observation_format)

    def parse(self, text: str) -> ToolCall | None:
        return self.answer.parse(text)

    def step(self, call: ToolCall) -> Observation:
        return self.inner.step(call)

    def counts_toward_cap(self, name: str) -> bool:
        return self.inner.counts_toward_cap(name)

    def grades(self, name: str) -> bool:
        return self.inner.grades(name)

    def final(self, name: str) -> bool:
        return self.inner.final(name)

    def counted_tools(self, executed: list[str]) -> tuple[str, ...]:
        return self.inner.counted_tools(executed)

    def snapshot(self) -> dict:
        return self.inner.snapshot()

    def close(self) -> None:
        self.inner.close()


def run_final_submit(
    episodes: Sequence[tuple[Task, Trajectory]],
    policy: Policy,
    toolset: ToolSet | Environment,
    cfg: RolloutConfig,
) -> RolloutResult:
    """Each finished episode continued by exactly one turn that must give its final answer in its environment's own
    terms (`Episode.final_answer`: a code task's submission after the submit fence, a CodeGym environment's `Done`).
    The turn opens with the answer's prefix (context, masked, as `response_prefix`); only the answer stops the turn
    or is parsed, and the episode's own step grades it. A turn that gives no answer ends with "no_call".

    The episodes' ids, mask and turns are continued verbatim (copies: the given trajectories are not changed), from
    the state each ended in (`Trajectory.env_state`). An episode whose environment has no final answer is returned
    as it was, with finish_reason "no_final_answer" (its record says so, and a warning counts them): nothing is
    forced on an environment that did not say what its answer is. Forced turns of one kind of answer are generated
    together; the result is in the order of `episodes`.
    """
    env = as_environment(toolset)
    out: dict[int, Trajectory] = {}  # by the episode's place in `episodes`
    groups: dict[tuple[str, str], list[tuple[int, _Episode, FinalAnswer]]] = {}
    opened: list[Episode] = []
    try:
        for n, (task, traj) in enumerate(episodes):
            inner = _reopen(env, task, traj)
            opened.append(inner)
            answer = inner.final_answer()
            if answer is None:
                out[n] = replace(traj, finish_reason=NO_FINAL_ANSWER)
            else:
                continued = _continued(_FinalTurnEpisode(inner, answer), task, traj)
                groups.setdefault(answer.key, []).append((n, continued, answer))
        _warn_not_applicable(list(out.values()))  # so far, those kept as they were
        stats = []
        for members in groups.values():
            result = _forced_turns([e for _, e, _ in members], members[0][2], policy, cfg)
            stats.append(result.stats)
            for (n, _, _), traj in zip(members, result):
                out[n] = traj
        return RolloutResult([out[n] for n in range(len(episodes))], merge_rollout_stats(stats))
    finally:
        for episode in opened:
            episode.close()


def _reopen(env: Environment, task: Task, traj: Trajectory) -> Episode:
    """The episode of a finished trajectory again: resumed from the state it ended in, or opened anew when it kept
    none (a stateless episode)."""
    if traj.env_state:
        return env.resume(task, traj.sample_index, traj.env_state)
    return env.open(task, traj.sample_index)


def _forced_turns(episodes: list[_Episode], answer: FinalAnswer, policy: Policy, cfg: RolloutConfig) -> RolloutResult:
    """One forced turn of each episode, all giving `answer`'s kind of final answer, generated as one batch."""
    started = time.perf_counter()
    cfg = replace(cfg, max_turns=1, response_prefix=answer.prefix, on_no_call="stop")
    stop = StopCondition(lambda text: answer.stops(answer.prefix + text), answer.closing_markers())
    return _roll_out(episodes, policy, stop, cfg, None, started)


def _warn_not_applicable(kept: Sequence[Trajectory]) -> None:
    if kept:
        logger.warning(
            "forced final turn: not applicable to %d episodes, whose environment declares no final answer "
            "(Episode.final_answer); kept as they were, finish_reason %r: %s",
            len(kept),
            NO_FINAL_ANSWER,
            sorted({t.task_id for t in kept})[:10],
        )


def _continued(env: Episode, task: Task, traj: Trajectory) -> _Episode:
    """The loop's record of a finished trajectory, open again for more turns (its lists copied)."""
    return _Episode(
        env,
        task,
        traj.sample_index,
        list(traj.token_ids),
        list(traj.loss_mask),
        traj.prompt_len,
        turns=list(traj.turns),
        submitted_code=traj.submitted_code,
        passed=traj.passed,
        grade=traj.grade,
    )


def _roll_out(
    episodes: list[_Episode],
    policy: Policy,
    stop: StopCondition,
    cfg: RolloutConfig,
    on_turn: Callable[[int, int], None] | None,
    started: float,
) -> RolloutResult:
    """The turn loop of `run_episodes` over opened episodes: turn by turn, or continuously where the policy
    batches that way (`ContinuousPolicy`)."""
    if policy.continuous_batching:
        return _roll_out_continuously(episodes, policy, stop, cfg, on_turn, started)  # type: ignore[arg-type]
    tok = policy.tokenizer
    prefix_ids = tok.encode(cfg.response_prefix) if cfg.response_prefix else []
    stats = RolloutStats()
    with policy.session() as gen_stats, ThreadPoolExecutor(max_workers=cfg.tool_workers) as pool:
        for turn_index in range(cfg.max_turns):
            live = [(n, e) for n, e in enumerate(episodes) if not e.done]
            if not live:
                break
            requests = [_open_turn(e, n, turn_index, prefix_ids, cfg) for n, e in live]
            # the sampler's log-probs go with the trajectory (None: a policy that records none)
            generated = policy.generate_with_logprobs(requests, cfg.sampling, stop)
            pending: list[tuple[_Episode, Turn, ToolCall]] = []
            for (_, episode), (new_ids, logps) in zip(live, generated):
                turn, call = _take_turn(episode, new_ids, tok, cfg)
                turn.sampler_logprobs = logps
                if call is not None:
                    pending.append((episode, turn, call))
            tools_started = time.perf_counter()
            observations = list(pool.map(lambda p: p[0].env.step(p[2]), pending))
            stats.tools_s += time.perf_counter() - tools_started
            for (episode, turn, call), obs in zip(pending, observations):
                _observe(episode, turn, call, obs, tok, cfg.observation_format)
            for _, episode in live:
                _check_context(episode, cfg)
            if on_turn:
                on_turn(sum(not e.done for e in episodes), sum(e.done for e in episodes))
    return _result(episodes, gen_stats, stats, started)


def _roll_out_continuously(
    episodes: list[_Episode],
    policy: ContinuousPolicy,
    stop: StopCondition,
    cfg: RolloutConfig,
    on_turn: Callable[[int, int], None] | None,
    started: float,
) -> RolloutResult:
    """The turn loop with continuous batching: an episode's next turn joins the engine's batch as soon as its
    tool has answered, while the other episodes' turns are still being generated, and tools run meanwhile.

    Each episode goes through the same states as in the turn-by-turn loop (`_take_turn`, `_observe`), so its
    trajectory is what that loop would make of the same replies; only the order in which episodes advance differs.
    The policy seeds each turn from the episode and turn index, not from the order turns are asked for (a tool
    that answers sooner must not change another episode's sample).
    """
    tok = policy.tokenizer
    prefix_ids = tok.encode(cfg.response_prefix) if cfg.response_prefix else []
    stats = RolloutStats()
    turns_opened = [0] * len(episodes)
    tools: dict[Future, tuple[int, Turn, ToolCall]] = {}

    def next_turn(n: int, after_a_turn: bool = True) -> None:
        episode = episodes[n]
        _check_context(episode, cfg)
        if not episode.done and turns_opened[n] < cfg.max_turns:
            policy.start_turn(_open_turn(episode, n, turns_opened[n], prefix_ids, cfg), cfg.sampling, stop)
            turns_opened[n] += 1
        elif not episode.done:
            episode.finish_reason = "max_turns"
        if after_a_turn and on_turn:
            on_turn(sum(not e.done for e in episodes), sum(e.done for e in episodes))

    with policy.session() as gen_stats, ThreadPoolExecutor(max_workers=cfg.tool_workers) as pool:
        try:
            for n in range(len(episodes)):
                next_turn(n, after_a_turn=False)
            while policy.turns_in_flight() or tools:
                for n, new_ids, logps in policy.finished_turns() if policy.turns_in_flight() else []:
                    turn, call = _take_turn(episodes[n], new_ids, tok, cfg)
                    turn.sampler_logprobs = logps
                    if call is None:
                        next_turn(n)
                    else:
                        tools[pool.submit(episodes[n].env.step, call)] = (n, turn, call)
                if policy.turns_in_flight():
                    answered = [f for f in tools if f.done()]
                else:  # nothing to generate until a tool answers
                    waited = time.perf_counter()
                    answered = list(wait(tools, return_when=FIRST_COMPLETED).done)
                    stats.tools_s += time.perf_counter() - waited
                for future in answered:
                    n, turn, call = tools.pop(future)
                    _observe(episodes[n], turn, call, future.result(), tok, cfg.observation_format)
                    next_turn(n)
        finally:
            policy.abort_turns()  # after an error, nothing of this rollout stays in the engine
    return _result(episodes, gen_stats, stats, started)


def _open_turn(episode: _Episode, n: int, turn_index: int, prefix_ids: list[int], cfg: RolloutConfig) -> TurnRequest:
    """The request for an episode's next turn, which opens with the response prefix (context, not trained on)."""
    episode.append(prefix_ids, trainable=False)
    return TurnRequest(
        episode.ids,
        episode.task,
        episode.sample_index,
        turn_index,
        episode=n,
        keep_cache=turn_index + 1 < cfg.max_turns,
    )


def _check_context(episode: _Episode, cfg: RolloutConfig) -> None:
    if not episode.done and len(episode.ids) >= cfg.max_context_tokens:
        episode.finish_reason = "length"


def _result(
    episodes: list[_Episode], gen_stats: GenerationStats | None, stats: RolloutStats, started: float
) -> RolloutResult:
    for episode in episodes:
        if not episode.done:
            episode.finish_reason = "max_turns"
    trajectories = [e.to_trajectory() for e in episodes]
    if isinstance(gen_stats, GenerationStats):
        stats.prefill_tokens = gen_stats.prefill_tokens
        stats.generate_s = gen_stats.generate_s
        stats.sync_s = gen_stats.sync_s
    stats.context_tokens = sum(len(t.token_ids) for t in trajectories)
    stats.generated_tokens = sum(t.n_model_tokens for t in trajectories)
    stats.rollout_s = time.perf_counter() - started
    return RolloutResult(trajectories, stats)


def _take_turn(episode: _Episode, new_ids: list[int], tok: Any, cfg: RolloutConfig) -> tuple[Turn, ToolCall | None]:
    """Append the model's ids and decide what happens next; returns the call to run, if any."""
    text = tok.decode(new_ids)
    episode.append(new_ids, trainable=True)
    call = episode.env.parse(cfg.response_prefix + text)
    turn = Turn(generated_ids=new_ids, text=text, call=call, prefix=cfg.response_prefix)
    episode.turns.append(turn)
    if call is None:
        if cfg.on_no_call == "stop" or episode.env.answers_once:
            episode.finish_reason = "no_call"
        else:
            _append_feedback(episode, turn, tok, episode.env.nudge_text or NUDGE_TEXT, cfg.observation_format)
        return turn, None
    capped = episode.env.counts_toward_cap(call.name)
    if capped and cfg.max_tool_calls is not None and episode.n_capped_calls >= cfg.max_tool_calls:
        notice = CAP_TEXT.format(name=call.name)
        turn.observation = Observation(tool=call.name, text=notice, ok=False, status="capped", executed=False)
        _append_feedback(episode, turn, tok, notice, cfg.observation_format)
        return turn, None
    if capped:
        episode.n_capped_calls += 1
    return turn, call


def observation_ids(tok: Any, text: str, after_ids: list[int], observation_format: str) -> list[int]:
    """Token ids of an observation appended after the model's `after_ids`."""
    if observation_format == "chat":
        after_eos = bool(after_ids) and after_ids[-1] == tok.eos_token_id
        return tok.encode(tok.chat_observation_text(text.strip(), after_eos))
    return tok.encode("\n" + text.strip() + "\n")


def _append_feedback(episode: _Episode, turn: Turn, tok: Any, text: str, observation_format: str) -> None:
    ids = observation_ids(tok, text, turn.generated_ids, observation_format)
    turn.observation_ids = ids
    episode.append(ids, trainable=False)


def _observe(
    episode: _Episode, turn: Turn, call: ToolCall, obs: Observation, tok: Any, observation_format: str
) -> None:
    env = episode.env
    turn.observation = obs
    if obs.fault == INFRA_FAULT:  # not the policy's doing: nothing graded, the episode ends here (its record says why)
        _append_feedback(episode, turn, tok, obs.text, observation_format)
        _end_by_infra(episode, obs.cause or "harness")
        return
    if env.grades(call.name):
        turn.graded = True
        episode.grade = obs
        episode.submitted_code = call.content
        episode.passed = bool(obs.passed)
    if env.final(call.name):  # the no-tools answer, CodeGym's Done: its grade ends the episode, nothing appended
        episode.finish_reason = "passed" if episode.passed else "failed"
        return
    ids = observation_ids(tok, obs.text, turn.generated_ids, observation_format)
    turn.observation_ids = ids
    episode.append(ids, trainable=False)
    if episode.passed:
        episode.finish_reason = "passed"
    elif env.finish_reason is not None:  # the episode ended itself (a CodeGym T_max hit)
        episode.finish_reason = env.finish_reason


def _end_by_infra(episode: _Episode, cause: str) -> None:
    episode.infra_failure, episode.finish_reason = cause, "infra_failure"
    logger.warning(
        "episode %s/%d ended by an infrastructure failure: %s", episode.task.task_id, episode.sample_index, cause
    )
