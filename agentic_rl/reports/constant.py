"""The constant-answer baseline beside every CodeGym score of the tables (issue #50).

A CodeGym task is solved by `Done` with the right answer. Where the answers of a set of configurations repeat (a
yes/no task, a count that is often 0), a policy that always answers the same value scores without reading anything.
So every CodeGym success rate in `table.md` stands beside what that policy scores on the same tasks.

The baseline is `agentic_rl.envs.verify`'s, computed the same way (`constant_results`, `best_constant`): the values
the evaluated configurations' reference answers take, each run as `Done` in the sandbox as an episode's would be, and
the one constant that solves most of the *evaluated* tasks (the arm's CodeGym task ids in its evaluation records,
before and after training). Not the environments file's other configurations, not the training split: the best
constant of another set can be another value and scores another rate.

Where the environments come from: the run's resolved config (`.hydra/config.yaml`: a training run's `eval_data`, an
evaluation run's `data`; every `load_codegym` node in it, e.g. the CodeGym sources of `data=mix`), the built-in set
when the run kept no config (the records in experiments/ keep none), or `--environments FILE|builtin` for every arm.
A task id that is not a configuration of those environments is an error that says so: the baseline of other
environments would be a number about something else.

Per arm, `constant_rows` sets each mode's success (tasks as the unit) before and after training against the
baseline on the same tasks, over every evaluated task and over each held-out set (`env/seen_envs`, `env/unseen_envs`),
with the paired task-level test of the other sections (policy - constant; one Holm family over the table), and
`set_rates` gives the baseline's own rate per set.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_rl.envs.metrics import HELD_OUT_SETS
from agentic_rl.envs.tasks import environment_tasks, read_environments
from agentic_rl.envs.verify import best_constant, constant_results
from agentic_rl.reports.run_files import is_evaluation_run, read_config
from agentic_rl.reports.stats import task_rate
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

CODEGYM_PREFIX = "codegym/"  # envs.tasks.environment_tasks names every CodeGym task codegym/<env_id>/<index>
LOADER = "agentic_rl.envs.tasks.load_codegym"  # the _target_ of a CodeGym data node
BUILTIN = "builtin"
SEEN_SPLIT = dict(zip(HELD_OUT_SETS, ("train", "heldout")))  # set -> the env_split of its tasks (envs.metrics)

Source = tuple[str | None, str | None]  # (environments file, or None for the built-in set; its env_dir)


def is_codegym(task_id: str) -> bool:
    return task_id.startswith(CODEGYM_PREFIX)


def loader_nodes(node: Any) -> list[dict[str, Any]]:
    """Every config node under `node` that loads CodeGym tasks (a `data=codegym` node, or the CodeGym sources inside
    a mixture), in config order."""
    if isinstance(node, Mapping):
        own = [dict(node)] if node.get("_target_") == LOADER else []
        return own + [n for value in node.values() for n in loader_nodes(value)]
    if isinstance(node, list):
        return [n for value in node for n in loader_nodes(value)]
    return []


def run_sources(run: Path) -> list[Source]:
    """The CodeGym environments a run evaluated on, from its resolved config: an evaluation run's `data`, a
    training run's `eval_data` (where its held-out records come from). [] when it kept no config."""
    config = read_config(run)
    node = config.get("data") if is_evaluation_run(run) else config.get("eval_data", config.get("data"))
    return [(n.get("path"), n.get("env_dir")) for n in loader_nodes(node)]


def source_of_option(environments: str) -> Source:
    """`--environments`: "builtin", or an environments file (the project's format or the public release's)."""
    return (None, None) if environments == BUILTIN else (environments, None)


def source_records(sources: Iterable[Source]) -> list[dict[str, Any]]:
    """The environment records of `sources` (a file's errors say which file and line)."""
    from agentic_rl.envs.builtin import builtin_records  # 60 environments' code: read only when a table needs them

    records: list[dict[str, Any]] = []
    for path, env_dir in sources:
        records += builtin_records() if path is None else read_environments(path, env_dir)
    return records


def tasks_of(task_ids: Iterable[str], sources: list[Source]) -> list[Task]:
    """The CodeGym tasks with these ids, rebuilt from the environments' own configurations (sorted by id)."""
    wanted = sorted(set(task_ids))
    by_id: dict[str, Task] = {}
    for record in source_records(sources):
        for task in environment_tasks(record):
            by_id.setdefault(task.task_id, task)
    missing = [t for t in wanted if t not in by_id]
    if missing:
        named = ", ".join("the built-in set" if p is None else str(p) for p, _ in sources)
        raise ValueError(
            f"{len(missing)} evaluated CodeGym task(s) are not configurations of {named} (e.g. {missing[:3]}), so "
            "their constant-answer baseline cannot be computed. Pass the environments the runs were evaluated on: "
            "python -m agentic_rl.table RUNS --environments FILE (or builtin)"
        )
    return [by_id[t] for t in wanted]


@dataclass
class Baseline:
    """The constant-answer baseline of one set of tasks: the constant, and per task whether it solves it."""

    answer: Any
    passed: dict[str, bool]
    tasks: list[Task]

    def rows(self) -> list[dict[str, Any]]:
        """One record per task (task_id, passed, answer): the form of `experiments/codegym/constant.jsonl`."""
        return [{"task_id": t, "passed": p, "answer": self.answer} for t, p in sorted(self.passed.items())]


@dataclass
class ConstantBaselines:
    """Computes (once per set of tasks) the baseline of the arms' CodeGym tasks.

    environments: `--environments` (a file, or "builtin") for every arm, else each arm's runs' own config.
    runner: the `CodeGymRunner` whose sandbox runs the environments (built on first use: the default sandbox)."""

    environments: str | None = None
    runner: Any = None
    _cache: dict[tuple[frozenset[str], tuple[Source, ...]], Baseline] = field(default_factory=dict)

    def sources(self, runs: list[Path]) -> list[Source]:
        if self.environments is not None:
            return [source_of_option(self.environments)]
        for run in runs:  # the runs of an arm share their data: the first that kept a config says it
            if found := run_sources(run):
                return found
        return [(None, None)]

    def of(self, task_ids: Iterable[str], runs: list[Path]) -> Baseline | None:
        """The baseline of the CodeGym tasks among `task_ids` (None: there are none), from `runs`' environments."""
        ids = frozenset(t for t in task_ids if is_codegym(t))
        if not ids:
            return None
        sources = tuple(self.sources(runs))
        if (ids, sources) not in self._cache:
            tasks = tasks_of(ids, list(sources))
            if self.runner is None:
                from agentic_rl.envs.codegym import CodeGymRunner

                self.runner = CodeGymRunner()
            logger.info("constant-answer baseline: %d CodeGym tasks in the sandbox", len(tasks))
            answer, rows = best_constant(constant_results(tasks, self.runner), [t.task_id for t in tasks])
            self._cache[(ids, sources)] = Baseline(answer, {r["task_id"]: r["passed"] for r in rows}, tasks)
        return self._cache[(ids, sources)]


Outcomes = dict[tuple[str, str, int], bool]  # (mode, task id, sample) -> passed, as tables.Outcomes
PairedTest = Callable[[list[tuple[str, bool, bool]]], dict[str, Any]]


def constant_rows(
    label: str, by_phase: Mapping[str, list[Outcomes]], baseline: Baseline, paired_test: PairedTest
) -> list[dict[str, Any]]:
    """Per phase, mode and set (every evaluated task, then each held-out set that has tasks: `task_sets`), the
    arm's CodeGym success against the constant on the same tasks: `paired_test` of the (task, constant solved,
    policy passed) pairs, one per episode (side a the constant, side b the policy). The sets are rows of their own
    because a claim about held-out environments must rest on those tasks alone, not on the pooled set."""
    rows = []
    for phase, outcomes in by_phase.items():
        for mode in sorted({key[0] for run in outcomes for key in run}):
            for name, members in task_sets(baseline).items():
                pairs = [
                    (task, baseline.passed[task], passed)
                    for run in outcomes
                    for (m, task, _), passed in sorted(run.items())
                    if m == mode and task in members
                ]
                if pairs:
                    runs = sum(any(k[0] == mode and k[1] in members for k in run) for run in outcomes)
                    rows.append(
                        {"arm": label, "phase": phase, "mode": mode, "set": name, "runs": runs, **paired_test(pairs)}
                    )
    return rows


def task_sets(baseline: Baseline) -> dict[str, set[str]]:
    """ "all": every task of the baseline, then each held-out set (`SEEN_SPLIT`) that has tasks: its task ids."""
    split = {t.task_id: t.metadata.get("env_split", "train") for t in baseline.tasks}
    sets = {"all": set(baseline.passed)}
    for name, env_split in SEEN_SPLIT.items():
        if members := {t for t in baseline.passed if split[t] == env_split}:
            sets[name] = members
    return sets


def set_rates(baseline: Baseline) -> dict[str, dict[str, float | int]]:
    """The baseline's task-level rate over all its tasks and over each held-out set that has tasks."""
    return {
        name: task_rate([(t, baseline.passed[t]) for t in sorted(members)])
        for name, members in task_sets(baseline).items()
    }
