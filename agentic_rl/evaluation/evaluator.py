"""Evaluation modes: the same rollout with the tool set of each mode, graded by the sandbox.

Modes (conf/evaluator/*.yaml maps each to a tool set under `toolsets.<mode>`):
  no_tools      - one turn, the task prompt alone, no tool instructions; the reply's code is graded;
  code_only     - execute + submit; the search tool is neither described nor parsed;
  multi_tool    - search + execute + submit;
  last_block    - format baseline: the multi_tool episodes, graded by the last code block each wrote;
  forced_submit - format baseline: the multi_tool episodes, plus one forced submit turn where none was submitted.
The two baselines (`baselines.FORMAT_BASELINES`) grade the episodes of `multi_tool` run in this evaluation, not new
ones (when multi_tool is not among the modes, or was resumed from results.jsonl, they run its episodes once, with
their own tool set, which the config composes from the same `tools/multi`).

Every mode gets the same budget of generated tokens, `rollout.max_turns x rollout.max_new_tokens`: a tool mode
spends it over up to `max_turns` turns, a mode without tools in its one turn (`mode_rollout`). Otherwise
no_tools would be compared at a third of the tool modes' budget (one turn of 96 tokens against three).
A mode without tools reports no `tools/*` metrics: it has no tools to call. (forced_submit may spend one turn more.)

Sampling (`EvalConfig.sample_plan`): each task gets `n_samples` episodes at `sample_temperature`/`sample_top_p`
(conf: the training temperature, `rollout.temperature`), and with `greedy` one more at temperature 0. The greedy
episode is sample 0 and the sampled ones follow (1..n); without `greedy` they are 0..n-1. Records say which
(`greedy`). pass@k (for each k in `ks`) is the unbiased estimator of Chen et al. (2021) (`passk.pass_at_k`) over
the sampled episodes, averaged over tasks, so pass@1 is the mean over a task's samples; the greedy episode is
reported apart as `greedy_pass@1`. With `n_samples: 0` the greedy episode is all there is and pass@1 is its score.
The tool and rollout metrics describe the same episodes as pass@k (the sampled ones, else the greedy ones).
Each batch of episodes samples under its own seed, from `seed`, the mode and the batch's jobs (`batch_seed`): the
rows of a batch draw distinct seeds from it, so samples differ, and the same evaluation draws the same samples
whatever ran before it (training steps, other modes).

Per task type (`task.metadata["task_type"]`, recorded as `task_type`; e.g. `docs` for tasks that need the
generated library), each mode also reports `pass@1/<type>`, `greedy_pass@1/<type>` and, for tool modes,
`tools/<tool>/episode_rate/<type>`: the share of the type's episodes that ran the tool at least once (next to
`tools/<tool>/episode_rate` over all). Records without a type count only in the overall numbers.

Each (task, mode, sample) triple becomes one record (`records.py`). Given a `ResultStore`, records are
appended to results.jsonl as each batch finishes and triples already there are skipped, so an interrupted
evaluation resumes where it stopped; pass@k and the tool metrics are computed from the records, old and new.

A mode's tool set may be any environment (`agentic_rl.envs.base.Environment`, a `ToolSet` being wrapped in the
default one): what the evaluator asks of it (`answers_once`, its hooks) is declared there. A policy adapts itself per
mode with `for_mode(env, rollout) -> (policy, rollout)` (the replay policy fences its answers for the mode and submits
once), and declares samples it does not have with `has_sample(task_id, index)`: those triples are recorded as
failures with status "no_sample", not run; both have defaults on the `Policy` base class (agentic_rl.rollout.policy).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from tqdm.auto import tqdm

from agentic_rl.envs.base import Environment
from agentic_rl.evaluation.baselines import BASELINE_SOURCE, FORMAT_BASELINES
from agentic_rl.evaluation.records import (
    ResultStore,
    metrics_from_records,
    missing_sample_record,
    record_from_trajectory,
    task_type,
)
from agentic_rl.evaluation.scores import by_task_type, episode_rates, greedy_pass, pass_at, scored_records
from agentic_rl.registry import Registry
from agentic_rl.rollout.agent import (
    RolloutConfig,
    RolloutResult,
    RolloutStats,
    ToolSet,
    merge_rollout_stats,
    run_episodes,
)
from agentic_rl.rollout.policy import Policy
from agentic_rl.tracking.metrics import rollout_metrics
from agentic_rl.types import Task, Trajectory

logger = logging.getLogger(__name__)

MODES = ("no_tools", "code_only", "multi_tool")  # the modes that roll out their own episodes
# evaluator.name -> evaluate(tasks, policy, toolsets, rollout, cfg, *, progress, store) -> {mode: ModeResult}
EVALUATORS: Registry[Callable[..., dict[str, ModeResult]]] = Registry("evaluator")
Job = tuple[Task, int]  # (task, sample index)
ModeEnv = ToolSet | Environment  # what a mode's episodes run in (a plain tool set: the default environment's)


@dataclass
class EvalConfig:
    """Evaluation settings (conf/evaluator/*.yaml; the mode -> tool set map `toolsets` is read separately).

    name: the evaluator, a function with `evaluate`'s signature in the "evaluator" registry (`EVALUATORS`):
        pass_at_k (this module's `evaluate`), or one another package declares (`agentic_rl.registry`).
    modes: which modes to run, in order (the format baselines after the modes they grade).
    n_samples: episodes per task sampled at `sample_temperature` / `sample_top_p`; pass@k is computed from them.
        0: none (only the greedy episode).
    greedy: one more episode per task at temperature 0 (sample 0), reported as `greedy_pass@1`.
    ks: the k of pass@k to report; each must be <= n_samples (k = 1 only, from the greedy episode, when 0).
    sample_temperature / sample_top_p: the sampled episodes' sampling (conf: the training run's, `rollout.*`).
    seed: where the sampled episodes' randomness starts (conf: the run's `seed`); see `batch_seed`.
    batch_tasks: tasks whose sampled episodes form one generation batch (`episodes_per_batch`; greedy episodes
        are batched as many at a time); results are written after each batch.
    limit: evaluate only the first N tasks (null = all).
    The schema's defaults are one greedy episode per task (what code that builds an EvalConfig by hand gets);
    conf/evaluator/default.yaml sets the runs' default (4 samples at the training temperature, plus greedy).
    """

    name: str = "pass_at_k"
    modes: list[str] = field(default_factory=lambda: list(MODES))
    n_samples: int = 0
    greedy: bool = True
    ks: list[int] = field(default_factory=lambda: [1])
    sample_temperature: float = 0.7
    sample_top_p: float = 0.95
    seed: int = 0
    batch_tasks: int = 8
    limit: int | None = None

    def validate(self, available: Sequence[str]) -> EvalConfig:
        if self.name not in EVALUATORS:
            raise ValueError(f"evaluator.name={self.name!r}: unknown; available: {EVALUATORS.names()}")
        unknown = [m for m in self.modes if m not in available]
        if unknown:
            raise ValueError(f"evaluator.modes has unknown mode(s) {unknown}; available: {list(available)}")
        if not self.modes:
            raise ValueError(f"evaluator.modes is empty; pick some of {list(available)}")
        if len(set(self.modes)) != len(self.modes):
            raise ValueError(f"evaluator.modes lists a mode twice: {self.modes}")
        if self.n_samples < 0 or self.n_samples + self.greedy < 1:
            raise ValueError(
                f"evaluator.n_samples={self.n_samples} with greedy={self.greedy} evaluates no episode. "
                "Fix: n_samples >= 1, or n_samples=0 with greedy=true"
            )
        bad = [k for k in self.ks if not 1 <= k <= max(self.n_samples, 1)]
        if bad or not self.ks:
            raise ValueError(
                f"evaluator.ks must be non-empty and within 1..n_samples={self.n_samples}, got "
                f"{self.ks}. Fix: raise evaluator.n_samples or drop the larger k."
            )
        if self.n_samples > 0 and self.sample_temperature <= 0:
            raise ValueError(
                "evaluator.n_samples > 0 with sample_temperature <= 0 would grade identical greedy "
                "samples; set evaluator.sample_temperature > 0 (e.g. 0.7), or n_samples=0 with greedy=true"
            )
        if self.batch_tasks < 1:
            raise ValueError(f"evaluator.batch_tasks must be >= 1, got {self.batch_tasks}")
        if self.limit is not None and self.limit < 0:
            raise ValueError(f"evaluator.limit must be null or >= 0, got {self.limit}")
        return self

    def scored_tasks(self, tasks: Sequence[Task]) -> list[Task]:
        """The tasks an evaluation scores: the first `limit` (all when null)."""
        return list(tasks)[: self.limit] if self.limit is not None else list(tasks)

    @property
    def episodes_per_batch(self) -> int:
        """Episodes generated together: `batch_tasks` tasks' samples (as many greedy episodes)."""
        return self.batch_tasks * max(self.n_samples, 1)

    def sample_plan(self) -> list[tuple[int, bool]]:
        """(sample index, greedy) of each task's episodes: the greedy one first (sample 0), then the sampled ones."""
        first = int(self.greedy)
        return [(0, True)] * first + [(first + i, False) for i in range(self.n_samples)]

    def sampling(self, greedy: bool) -> tuple[float, float]:
        """(temperature, top_p) of the greedy or the sampled episodes."""
        return (0.0, 1.0) if greedy else (self.sample_temperature, self.sample_top_p)


@dataclass
class ModeResult:
    mode: str
    pass_at: dict[int, float]  # k -> mean pass@k over tasks (from the sampled episodes; see the module doc)
    # tool-usage and rollout metrics (episode_metrics' names), greedy_pass@1 and the per task type scores
    metrics: dict[str, float]
    trajectories: list[Trajectory]  # the episodes run now (not those resumed from results.jsonl)
    records: list[dict[str, Any]] = field(default_factory=list)  # every triple of this mode, task order
    n_tasks: int = 0

    @property
    def statuses(self) -> dict[str, int]:
        return dict(Counter(r["status"] for r in self.records))


def token_budget(rollout: RolloutConfig) -> int:
    """Generated tokens an episode may spend: `max_turns` turns of `max_new_tokens`."""
    return rollout.max_turns * rollout.max_new_tokens


def mode_rollout(rollout: RolloutConfig, toolset: ModeEnv, cfg: EvalConfig, greedy: bool = True) -> RolloutConfig:
    """The episode limits of a mode: the evaluation's sampling (greedy or sampled), and for a tool set without
    tools one turn holding the whole token budget (a tool mode may generate up to `max_turns x max_new_tokens`)."""
    temperature, top_p = cfg.sampling(greedy)
    rollout = replace(rollout, temperature=temperature, top_p=top_p)
    if toolset.answers_once:  # the no-tools mode: its one tool is the final answer
        rollout = replace(rollout, max_turns=1, max_new_tokens=token_budget(rollout))
    return rollout


@contextlib.contextmanager
def batch_seed(seed: int, stream: str, batch: Sequence[Job]) -> Iterator[int]:
    """Run a batch under the global torch RNG (CPU; the samplers draw each row's seed from it) seeded from `seed`,
    `stream` (the mode) and the batch's jobs, then restore the RNG: an evaluation's samples do not depend on what
    ran before it, and evaluating does not change a training run's randomness."""
    jobs = ",".join(f"{task.task_id}#{s}" for task, s in batch)
    digest = hashlib.blake2b(f"{seed}/{stream}/{jobs}".encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "big") >> 1
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(value)
        yield value


class EpisodeRunner:
    """The episodes of one tool set, greedy or sampled, each batch under its own seed (`batch_seed`); those run
    are kept by (task, sample), so that the format baselines grade them instead of generating them again."""

    def __init__(self, policy: Policy, toolset: ModeEnv, rollout: RolloutConfig, cfg: EvalConfig, stream: str):
        self.toolset, self.cfg, self.stream = toolset, cfg, stream
        self.policies = {g: policy.for_mode(toolset, mode_rollout(rollout, toolset, cfg, g)) for g in (True, False)}
        self.kept: dict[tuple[str, int], Trajectory] = {}

    def policy(self, greedy: bool) -> tuple[Policy, RolloutConfig]:
        return self.policies[greedy]

    def run(self, batch: Sequence[Job], greedy: bool, on_turn: Callable[[int, int], None] | None = None):
        """Roll the batch's episodes out now (kept for `get`)."""
        policy, rollout = self.policies[greedy]
        with batch_seed(self.cfg.seed, self.stream, batch):
            result = run_episodes(batch, policy, self.toolset, rollout, on_turn=on_turn)
        self.kept.update(((t.task_id, t.sample_index), t) for t in result)
        return result

    def get(self, batch: Sequence[Job], greedy: bool) -> RolloutResult:
        """The batch's episodes: those kept, the others rolled out now (the stats count only those)."""
        missing = [(task, s) for task, s in batch if (task.task_id, s) not in self.kept]
        stats = self.run(missing, greedy).stats if missing else RolloutStats()
        return RolloutResult([self.kept[(task.task_id, s)] for task, s in batch], stats)


def baseline_batches(
    name: str, source: EpisodeRunner, toolset: ToolSet
) -> Callable[[Sequence[Job], bool, Any], RolloutResult]:
    """A format baseline's batch: the source's episodes of the batch, graded by the baseline (`FORMAT_BASELINES`);
    a forced turn samples under the baseline's own seed."""
    grade = FORMAT_BASELINES[name]

    def run(batch: Sequence[Job], greedy: bool, on_turn: Any = None) -> RolloutResult:
        policy, rollout = source.policy(greedy)
        episodes = source.get(batch, greedy)
        with batch_seed(source.cfg.seed, name, batch):
            return grade(episodes, [task for task, _ in batch], policy, toolset, rollout)

    return run


def hooks_of(toolset: ModeEnv) -> Environment | None:
    """Whose record and metric hooks (`episode_counts`, `metrics`) a mode's episodes are read with: the environment
    the mode ran in, as training reads its own; None for a plain `ToolSet` (records.py's default hooks, which are
    what the default environment it would be wrapped in has)."""
    return toolset if isinstance(toolset, Environment) else None


def mode_metrics(records: Sequence[dict[str, Any]], toolset: ModeEnv) -> dict[str, float]:
    """The metrics of a mode's records (`scores`): those of the scored episodes (`metrics_from_records`, the
    share of episodes calling each tool, and the mode's environment's own metrics of their counts),
    `greedy_pass@1`, and the per task type scores.

    A tool set without tools gets no `tools/*` metrics. They are meaningless there: the answer is graded without
    a call, so `tools/none_rate` ("turns with no valid call") would read 1.0 and every call rate 0, as if the model
    had failed to use tools it was never given."""
    scored = scored_records(records)
    metrics = {**metrics_from_records(scored, hooks_of(toolset)), **episode_rates(scored), **greedy_pass(records)}
    metrics.update(by_task_type(records, tools=not toolset.answers_once))
    if toolset.answers_once:  # the no-tools mode: its one tool is the final answer
        metrics = {k: v for k, v in metrics.items() if not k.startswith("tools/")}
    return metrics


def evaluate_mode(
    tasks: Sequence[Task],
    policy: Policy,
    toolset: ModeEnv,
    rollout: RolloutConfig,
    cfg: EvalConfig,
    mode: str,
    progress: bool = True,
    store: ResultStore | None = None,
    batches: Callable[..., RolloutResult] | None = None,
) -> ModeResult:
    """Roll out every (task, sample) of `mode`, skipping triples already in `store`; grade; score.

    `batches(jobs, greedy, on_turn) -> RolloutResult` makes a batch's graded episodes: by default an
    `EpisodeRunner` of the mode's tool set; a format baseline passes `baseline_batches`."""
    batches = batches or EpisodeRunner(policy, toolset, rollout, cfg, mode).run
    env = hooks_of(toolset)  # its records and metrics are read with the hooks of the environment they ran in
    plan = cfg.sample_plan()
    records = _resumed(tasks, plan, mode, store)
    todo = [(t, s, g) for t in tasks for s, g in plan if (t.task_id, s) not in records]
    todo = _drop_missing(todo, policy, mode, records, store)

    total = len(tasks) * len(plan)
    bar = tqdm(total=total, initial=len(records), desc=f"eval {mode}", disable=not progress, leave=False)
    trajs: list[Trajectory] = []
    stats: list[RolloutStats] = []
    for greedy in (True, False):
        jobs = [(t, s) for t, s, g in todo if g == greedy]
        step = cfg.episodes_per_batch
        for start in range(0, len(jobs), step):
            batch = jobs[start : start + step]
            chunk = batches(batch, greedy, _advancing(bar))
            new = [
                record_from_trajectory(t, mode, task, greedy=greedy, environment=env)
                for t, (task, _) in zip(chunk, batch)
            ]
            _keep(records, new, store)
            trajs.extend(chunk)
            stats.append(chunk.stats)
            bar.update(len(records) - bar.n)  # episodes still running at the turn cap end with the batch
            bar.set_postfix(pass_rate=f"{sum(r['passed'] for r in records.values()) / len(records):.3f}")
    bar.close()

    ordered = [records[(t.task_id, s)] for t in tasks for s, _ in plan]
    metrics = mode_metrics(ordered, toolset)
    generated = [st for st in stats if st.rollout_s > 0]  # a baseline that only graded generated nothing
    if generated:  # throughput and prefill counters of the episodes run now (resumed ones have none)
        metrics.update(rollout_metrics(merge_rollout_stats(generated)))
    pass_k = pass_at(scored_records(ordered), cfg.ks)
    return ModeResult(mode, pass_k, metrics, trajectories=trajs, records=ordered, n_tasks=len(tasks))


def _advancing(bar: Any) -> Callable[[int, int], None]:
    """`on_turn` for a batch: moves the bar as each of its episodes ends."""
    base = bar.n

    def advance(_n_active: int, n_done: int) -> None:
        bar.update(base + n_done - bar.n)

    return advance


def _resumed(
    tasks: Sequence[Task], plan: Sequence[tuple[int, bool]], mode: str, store: ResultStore | None
) -> dict[tuple[str, int], dict[str, Any]]:
    """The records of `mode` already in `store`, by (task id, sample)."""
    if store is None:
        return {}
    found = {(t.task_id, s): store.get((t.task_id, mode, s)) for t in tasks for s, _ in plan}
    records = {key: r for key, r in found.items() if r is not None}
    if records:
        logger.info(
            "eval %s: %d of %d episodes already in %s; running the others", mode, len(records), len(found), store.path
        )
    return records


def _drop_missing(
    todo: list[tuple[Task, int, bool]], policy: Policy, mode: str, records: dict, store: ResultStore | None
) -> list[tuple[Task, int, bool]]:
    """`todo` without the samples the policy declares it does not have (`has_sample`), recorded as failures."""
    source = policy.source
    missing = [
        missing_sample_record(t.task_id, mode, s, source, task_type=task_type(t), greedy=g)
        for t, s, g in todo
        if not policy.has_sample(t.task_id, s)
    ]
    if missing:
        logger.warning(
            "eval %s: %d episodes have no sample in %s (recorded as failures): %s",
            mode,
            len(missing),
            source,
            sorted({r["task_id"] for r in missing})[:10],
        )
        _keep(records, missing, store)
    return [(t, s, g) for t, s, g in todo if policy.has_sample(t.task_id, s)]


def _keep(records: dict, new: list[dict[str, Any]], store: ResultStore | None) -> None:
    for r in new:
        records[(r["task_id"], r["sample"])] = r
    if store is not None:
        store.append(new)


def evaluate(
    tasks: Sequence[Task],
    policy: Policy,
    toolsets: dict[str, ModeEnv],
    rollout: RolloutConfig,
    cfg: EvalConfig,
    progress: bool = True,
    store: ResultStore | None = None,
) -> dict[str, ModeResult]:
    """Evaluate `policy` on `tasks` in each of `cfg.modes` (tool set `toolsets[mode]`); see the module doc.

    The mode that the format baselines grade (`BASELINE_SOURCE`) keeps its episodes in an `EpisodeRunner` that
    the baselines read; they run after it, whatever the order of `cfg.modes`, which the result keeps."""
    cfg.validate(list(toolsets))
    tasks = cfg.scored_tasks(tasks)
    baselines = [m for m in cfg.modes if m in FORMAT_BASELINES]
    source_set = toolsets.get(BASELINE_SOURCE) or (toolsets[baselines[0]] if baselines else None)
    source = EpisodeRunner(policy, source_set, rollout, cfg, BASELINE_SOURCE) if source_set is not None else None
    results: dict[str, ModeResult] = {}
    for mode in sorted(cfg.modes, key=lambda m: m in FORMAT_BASELINES):
        run = source.run if mode == BASELINE_SOURCE and source is not None else None
        if mode in FORMAT_BASELINES:
            run = baseline_batches(mode, source, toolsets[mode])
        results[mode] = evaluate_mode(tasks, policy, toolsets[mode], rollout, cfg, mode, progress, store, run)
    return {mode: results[mode] for mode in cfg.modes}


def flat_metrics(results: dict[str, ModeResult]) -> dict[str, float]:
    """`eval/<mode>/pass@k` and `eval/<mode>/<metric>` (tool, rollout, greedy and per task type) for logging."""
    out: dict[str, float] = {}
    for mode, res in results.items():
        for k, v in res.pass_at.items():
            out[f"eval/{mode}/pass@{k}"] = v
        for name, v in res.metrics.items():
            out[f"eval/{mode}/{name}"] = v
    return out
