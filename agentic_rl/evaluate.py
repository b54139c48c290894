"""Evaluate a policy (the base model, a trained adapter, or a replayed samples file) in the tool modes.

    python -m agentic_rl.evaluate [overrides]
    python -m agentic_rl.evaluate data=bigcodebench-hard data.path=<shared>/bigcodebench_hard.jsonl \\
        checkpoint=outputs/runs/2025-01-01/12-00-00            # a training run dir (its adapter/) or the adapter
    python -m agentic_rl.evaluate policy=replay samples=samples.jsonl data=humaneval evaluator.modes=[no_tools]
    python -m agentic_rl.evaluate resume_dir=outputs/evals/2025-01-01/12-00-00   # finish an interrupted run

With `checkpoint=RUN`, the episodes run under the training run's own rollout settings (turns, tool-call cap,
tokens per turn, context...: `rollout` of RUN/.hydra/config.yaml), so a checkpoint is judged under the limits
it was trained with; `rollout.<key>=...` on the command line still wins for that key, and `rollout=<file>`
for all of them. Sampling always comes from `evaluator` (4 samples at the temperature of `rollout`, plus greedy).
summary.json records the settings used and where they came from (`rollout`).

`main` only resolves the config; `run(cfg)` does the work and returns the summary (tests call it). Writes into
the run dir: results.jsonl (one record per task x mode x sample, append-only: a rerun in the same dir skips
what is there), summary.json, figures/eval_summary.png, metrics.jsonl, eval_run.json (what was evaluated, to
refuse resuming a different evaluation into the same dir) and the W&B files when logger=wandb.

On CodeGym tasks, summary.json's "constant_answer" (and the printed line under the table) is the constant-answer
baseline of the evaluated configurations beside each mode's success rate: the one constant `Done` answer that
solves most of them and its rate (agentic_rl.envs.verify `evaluation_constant`). A code-task evaluation has none.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from agentic_rl.config import register_configs, validate
from agentic_rl.envs.toolset import environment_from_config
from agentic_rl.envs.verify import evaluation_constant
from agentic_rl.evaluation.evaluator import EVALUATORS, EvalConfig, flat_metrics, token_budget
from agentic_rl.evaluation.policies import fit_to_policy, policy_source, resolve_adapter
from agentic_rl.evaluation.records import ResultStore
from agentic_rl.evaluation.report import FIGURE, format_table, mode_summary, plot_eval_summary
from agentic_rl.hydra_main import run_cli
from agentic_rl.paths import CONFIG_PATH
from agentic_rl.registry import build, to_dataclass
from agentic_rl.rollout.agent import RolloutConfig
from agentic_rl.rollout.backends import policy_class
from agentic_rl.runtime.allocator import loaded_allocator
from agentic_rl.runtime.files import RESULTS_FILE
from agentic_rl.runtime.jobs import run_job
from agentic_rl.runtime.memory import memory_metrics, upgrade_legacy_pin
from agentic_rl.runtime.stages import finish, open_run, pin_run_heap, run_dir_of, seed_everything
from agentic_rl.tools import build_toolset
from agentic_rl.tracking.sinks import open_tracker
from agentic_rl.types import Task

logger = logging.getLogger(__name__)
register_configs()
# hydra.run.dir is `resume_dir` when given (resolver `agentic_rl.or_else`, registered by runtime.stages), so
# resuming writes .hydra/ and the log into the same run dir.

RUN_INFO_FILE = "eval_run.json"
RUN_CONFIG = Path(".hydra") / "config.yaml"  # the resolved config Hydra writes into every run dir


def describe_policy(cfg: DictConfig) -> dict[str, Any]:
    """What identifies the evaluated policy (summary.json, resume checks), known before anything is loaded."""
    return policy_source(cfg.policy).describe(cfg)


def checkpoint_run_config(checkpoint: str | Path) -> Path | None:
    """The `.hydra/config.yaml` of the training run `checkpoint` belongs to (a run dir, or its adapter/), if any."""
    path = Path(checkpoint).expanduser()
    for run_dir in (path, resolve_adapter(path).parent):
        if (run_dir / RUN_CONFIG).is_file():
            return run_dir / RUN_CONFIG
    return None


def explicit_rollout_keys() -> set[str] | None:
    """The rollout keys set on this command line (`rollout.max_turns=5` -> {"max_turns"}); None when the whole
    group was chosen (`rollout=multi_turn`). Empty outside a Hydra app (tests call `run(cfg)` directly)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return set()
    keys = set()
    for override in HydraConfig.get().overrides.task:
        key = override.split("=", 1)[0].lstrip("+~")
        if key == "rollout":
            return None
        if key.startswith("rollout."):
            keys.add(key.split(".")[1])
    return keys


def known_settings(
    saved: dict[str, Any], current: dict[str, Any], prefix: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """`saved` without the keys `current` does not have, at any depth (a run's settings from an older version),
    and those keys' dotted paths."""
    kept: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in saved.items():
        if key not in current:
            unknown.append(f"{prefix}{key}")
            continue
        if isinstance(value, dict) and isinstance(current[key], dict):
            value, deeper = known_settings(value, current[key], f"{prefix}{key}.")
            unknown += deeper
        kept[key] = value
    return kept, sorted(unknown)


def use_run_rollout(cfg: DictConfig, explicit: set[str] | None) -> dict[str, Any]:
    """Set `cfg.rollout` to the rollout settings of the checkpoint's training run, except the `explicit` keys.

    Returns what summary.json records: where the settings came from, the keys taken from the run, and the
    keys kept from this command line. Without a checkpoint, or a run config next to it, `cfg.rollout` stays
    as composed (a warning says so for a checkpoint).
    """
    info: dict[str, Any] = {"source": "evaluate config"}
    if not cfg.get("checkpoint"):  # only a policy that loads a checkpoint has a training run's settings
        return info
    path = checkpoint_run_config(cfg.checkpoint)
    if path is None:
        logger.warning(
            "checkpoint=%s has no training run config (%s) next to it: evaluating with this command's "
            "rollout settings, which may differ from those it was trained with",
            cfg.checkpoint,
            RUN_CONFIG,
        )
        info["source"] = "evaluate config (no run config next to the checkpoint)"
        return info
    if explicit is None:
        logger.info("rollout=... given on the command line: not using the rollout settings of %s", path)
        info["source"] = "evaluate config (rollout= given on the command line)"
        return info
    run_rollout = OmegaConf.to_container(upgrade_legacy_pin(OmegaConf.load(path)).get("rollout") or {}, resolve=True)
    if not run_rollout:
        raise ValueError(
            f"{path} has no `rollout` section; checkpoint= must be a training run of this project "
            "(or pass rollout=<file> to evaluate with explicit settings)"
        )
    run_rollout, unknown = known_settings(run_rollout, OmegaConf.to_container(cfg.rollout, resolve=True))
    if unknown:
        logger.warning("%s: rollout keys this version does not know, ignored: %s", path, unknown)
    taken = {k: v for k, v in run_rollout.items() if k not in explicit}
    cfg.rollout.merge_with(taken)  # a nested node (`vllm`) is merged into its typed node, not assigned as a dict
    logger.info(
        "rollout settings of the training run %s: %s%s",
        path.parent.parent,
        taken,
        f" (kept from the command line: {sorted(explicit)})" if explicit else "",
    )
    return {"source": str(path), "from_run": sorted(taken), "from_command_line": sorted(explicit & set(cfg.rollout))}


def load_policy(cfg: DictConfig) -> Any:
    """The policy named by `cfg.policy` (the "policy" registry: model, replay, ...), checked first."""
    describe_policy(cfg)  # validates policy / samples / checkpoint
    return policy_source(cfg.policy).load(cfg)


def select_tasks(tasks: list[Task], exclude: list[str]) -> tuple[list[Task], list[str]]:
    """Drop the tasks listed in `exclude` (full ids, or the part after the last "/": `101` for BigCodeBench/101)."""
    if not exclude:
        return tasks, []
    by_id = {t.task_id: t for t in tasks}
    by_suffix = {t.task_id.rsplit("/", 1)[-1]: t.task_id for t in tasks}
    dropped, unknown = [], []
    for item in map(str, exclude):
        tid = item if item in by_id else by_suffix.get(item)
        (dropped if tid else unknown).append(tid or item)
    if unknown:
        raise ValueError(
            f"exclude names task ids not in the data: {unknown}. Ids look like {[t.task_id for t in tasks[:3]]}."
        )
    drop = set(dropped)
    return [t for t in tasks if t.task_id not in drop], sorted(drop)


def fingerprint(cfg: DictConfig, policy_info: dict[str, Any], eval_cfg: EvalConfig) -> dict[str, Any]:
    """What must not change between the runs that fill one results.jsonl (task subsets and modes may)."""
    data = OmegaConf.to_container(cfg.data, resolve=True)
    for key in ("limit", "exclude", "seed"):
        data.pop(key, None)
    return {
        **policy_info,
        "data": data,
        "n_samples": eval_cfg.n_samples,
        "greedy": eval_cfg.greedy,
        "sampling": list(eval_cfg.sampling(greedy=False)),
        "rollout": OmegaConf.to_container(cfg.rollout, resolve=True),
        "toolsets": {m: OmegaConf.to_container(cfg.evaluator.toolsets[m], resolve=True) for m in eval_cfg.modes},
    }


def check_resume(run_dir: Path, current: dict[str, Any]) -> None:
    """Refuse to add results of a different evaluation to an existing results.jsonl; record this one."""
    path = run_dir / RUN_INFO_FILE
    if path.is_file() and (run_dir / RESULTS_FILE).is_file():
        before = json.loads(path.read_text())
        differ = [k for k in current if k != "toolsets" and k in before and before[k] != current[k]]
        differ += [
            f"toolsets.{m}"
            for m, v in current["toolsets"].items()
            if m in before.get("toolsets", {}) and before["toolsets"][m] != v
        ]
        if differ:
            raise ValueError(
                f"{run_dir} holds results of a different evaluation ({', '.join(differ)} differ; see "
                f"{path}). Fix: evaluate into a new run dir, or delete {RESULTS_FILE} there."
            )
        current = {**current, "toolsets": {**before.get("toolsets", {}), **current["toolsets"]}}
    path.write_text(json.dumps(current, indent=2, default=str))


def run(cfg: DictConfig) -> dict[str, Any]:
    """Evaluate, write results.jsonl, summary.json, figures/eval_summary.png; return the summary.

    Stages as in training: build (tasks, policy; then the tracker and `open_run`: sandbox), loop (`evaluate`,
    appending to results.jsonl), finish (summary.json first, then the figure).
    """
    validate(cfg, "evaluate")
    eval_cfg = to_dataclass(cfg.evaluator, EvalConfig).validate(list(cfg.evaluator.toolsets))
    policy_info = describe_policy(cfg)
    eval_cfg = fit_to_policy(eval_cfg, cfg)  # a samples file is graded on its own samples
    rollout_info = use_run_rollout(cfg, explicit_rollout_keys())
    rollout_cfg = to_dataclass(cfg.rollout, RolloutConfig)
    seed_everything(cfg.seed)
    # after use_run_rollout: the backend may be the training run's
    pinned_kib = pin_run_heap(cfg, policy_class(cfg.rollout))
    run_dir = run_dir_of(cfg)
    run_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    tasks: list[Task] = build(cfg.data)
    tasks, excluded = select_tasks(tasks, list(cfg.get("exclude") or []))
    if eval_cfg.limit is not None:
        tasks = tasks[: eval_cfg.limit]
    if not tasks:
        raise ValueError("no tasks to evaluate: check data.limit / evaluator.limit / exclude")
    check_resume(run_dir, fingerprint(cfg, policy_info, eval_cfg))
    policy = load_policy(cfg)

    with open_run(
        cfg,
        run_dir,
        open_tracker(cfg, run_dir, job_type="eval"),
        sandbox_overrides={"python": cfg.python} if cfg.get("python") else None,
    ) as ctx:
        sandbox = ctx.sandbox
        # each mode's environment (the `env` group) with that mode's tool set, stepping in this run's sandbox, as
        # training does
        envs = {
            m: environment_from_config(cfg.get("env"), build_toolset(cfg.evaluator.toolsets[m], sandbox), sandbox)
            for m in eval_cfg.modes
        }
        store = ResultStore.in_dir(run_dir)
        evaluate = EVALUATORS.get(eval_cfg.name)
        results = evaluate(tasks, policy, envs, rollout_cfg, eval_cfg, progress=cfg.get("progress", True), store=store)
        summary: dict[str, Any] = {
            **policy_info,
            "data": cfg.data.get("_target_", "").rsplit(".", 1)[-1],
            "n_tasks": len(tasks),
            "n_samples": eval_cfg.n_samples,
            "greedy": eval_cfg.greedy,
            "modes": list(eval_cfg.modes),
            "rollout": {
                **rollout_info,
                "settings": OmegaConf.to_container(cfg.rollout, resolve=True),
                "token_budget": token_budget(rollout_cfg),
            },
            "eval": {mode: mode_summary(res) for mode, res in results.items()},
            "excluded": {"count": len(excluded), "ids": excluded},
        }
        summary.update(task_set_reports(next(iter(envs.values())), tasks, results, sandbox, excluded))
        summary["results"] = str(run_dir / RESULTS_FILE)
        summary["seconds"] = round(time.perf_counter() - start, 1)
        memory = memory_metrics()
        summary["peak_rss_gib"] = memory["memory/peak_rss_gib"]
        summary["mmap_threshold_kib"] = pinned_kib  # null: glibc's own threshold (memory.mmap_threshold_kib)
        summary["allocator"] = loaded_allocator()  # the malloc the evaluation ran on (memory.allocator)
        constant_rates = {f"eval/{k}": v for k, v in summary.get("constant_answer", {}).items() if k.startswith("env/")}
        ctx.tracker.log({**flat_metrics(results), **constant_rates, **memory}, step=0)
        for mode, res in results.items():
            logger.info("eval %s: pass@1 %.3f over %d tasks", mode, res.pass_at.get(1, float("nan")), res.n_tasks)
        return finish(ctx, summary, late=[("figure", lambda: plot_eval_summary(summary, run_dir / FIGURE), False)])


def task_set_reports(
    env: Any, tasks: list[Task], results: dict[str, Any], sandbox: Any, excluded: list[str]
) -> dict[str, Any]:
    """What summary.json says about the evaluated tasks beside their scores: "environment", the environment's report
    (BigCodeBench: tasks that need the network or missing libraries), and "constant_answer", the constant-answer
    baseline of CodeGym tasks (`envs.verify.evaluation_constant`); each only where there is one."""
    out: dict[str, Any] = {}
    records = {m: r.records for m, r in results.items()}
    report = env.report(tasks, records, python=getattr(sandbox, "python", None), excluded=excluded)
    if report is not None:
        out["environment"] = report
    # a CodeGym success rate means little without what a constant Done answer scores on the same tasks (issue #50:
    # the trained policies, which always answered `true`, scored below that constant); code tasks have none
    constant = evaluation_constant(tasks, sandbox)
    if constant is not None:
        out["constant_answer"] = constant
        logger.info("%s", constant_line(out))
    return out


def constant_line(summary: dict[str, Any]) -> str | None:
    """The summary's constant-answer baseline beside each mode's CodeGym success rate, as one line; None without
    one (no CodeGym task)."""
    constant = summary.get("constant_answer")
    if constant is None:
        return None
    modes = [
        f"{mode} {m['env/success_rate']:.3f}" for mode, m in summary.get("eval", {}).items() if "env/success_rate" in m
    ]
    return (
        f"constant-answer baseline (Done with {json.dumps(constant['answer'])} on every task): "
        f"{constant['env/constant_success_rate']:.3f} of {constant['n_tasks']} CodeGym tasks"
        + (f"; success rate: {', '.join(modes)}" if modes else "")
    )


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="evaluate")
def main(cfg: DictConfig) -> float | None:
    summary = run_job(cfg, run, entry="agentic_rl.evaluate", resume_key="resume_dir")
    if summary is None:  # a failed sweep job, recorded in the sweep's failures.json
        return None
    print(format_table(summary))  # noqa: T201 - the command's result table, for the terminal that ran it
    if (line := constant_line(summary)) is not None:
        print(line)  # noqa: T201 - part of the result: what a constant answer scores beside the CodeGym rates
    for key, found in summary.get("environment", {}).items():  # the environment report's lists of tasks
        if isinstance(found, dict) and found.get("count"):
            print(f"{key}: {found['count']} tasks (scored as failures unless excluded): {found['ids']}")  # noqa: T201 - part of the result
    print(f"results: {summary['results']}\nfigure:  {summary['figure']}")  # noqa: T201 - where the result files are
    return max((m.get("pass@1", 0.0) for m in summary["eval"].values()), default=0.0)


def cli() -> None:
    """`agentic-rl-eval` and `python -m agentic_rl.evaluate`: config errors as one message (exit 2)."""
    run_cli(main, "evaluate")


if __name__ == "__main__":
    cli()
