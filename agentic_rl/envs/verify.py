"""Check an environments file against the CodeGym paper's rules; keep what passes, report what was dropped.

    python -m agentic_rl.envs.verify FILE [--out KEPT.jsonl] [--report REPORT.json] [--success RESULTS.jsonl]
    python -m agentic_rl.envs.verify builtin        # the built-in set
    python -m agentic_rl.envs.verify starter --min-calls 3 --constant-answer   # the starter set (envs/starter)

Rules (each is a reason in the report):
  - the code runs and builds the environment in the sandbox, and every configuration resets ("error");
  - the environment has at least `min_tools` tools in func_mapping, Observe and Done included ("too_few_tools");
  - solvable: the scripted oracle, using the tools alone, returns an answer equal to get_ref_answer() and
    `Done` with it scores 1 ("oracle_failed"); or, without an oracle, a policy solved the configuration in
    some of its K samples (pass@K, from `--success`) ("unsolved");
  - `Done` with a wrong answer scores 0 ("wrong_answer_rewarded");
  - the oracle needs between `min_calls` and `max_calls` calls, its Done included ("too_few_calls",
    "too_many_calls");
  - difficulty: with `--success` (records with task_id and passed, e.g. an evaluation's results.jsonl), a
    configuration the policy solves more often than `max_success` is dropped ("too_easy");
  - with `--constant-answer`: a configuration that a constant `Done` answer solves above chance is dropped
    ("constant_answer"; `above_chance_drops` says what chance is). The constants are the values the environment's
    reference answers take; each is run as `Done` in the sandbox, as an episode's would be. Off by default: the
    built-in set's `oracle_calls.json` is measured without it.
An environment left with no configuration, or with fewer than `min_tools` tools, is dropped whole. The kept
file carries `oracle_calls` per configuration (the metric `env/oracle_calls` compares episodes with it).
All environment code runs in the sandbox: one sandbox call per environment, all its configurations in it (the
constant-answer rule adds one call per configuration, for its reference answer, and one per constant).

The constant-answer baseline (`constant_results`, `best_constant`): what a policy that always answers the same
value scores on a set of CodeGym tasks, per task. With `--success`, the report's `success_vs_constant` (and the log)
gives the policy's success rate on the measured configurations beside that baseline's on the same ones.
`python -m agentic_rl.hygiene data=codegym-heldout --constant-baseline OUT.jsonl` writes it beside the hygiene
report; `constant_metrics` gives it as metrics beside an evaluation's `env/` success rates, and `evaluation_constant`
as the "constant_answer" of `python -m agentic_rl.evaluate`'s summary.json; `python -m
agentic_rl.table` prints it beside every CodeGym score of its tables (agentic_rl/reports/constant.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_rl.envs.codegym import CodeGymRunner, record_of
from agentic_rl.envs.tasks import read_success
from agentic_rl.types import Task

logger = logging.getLogger(__name__)


@dataclass
class Rules:
    min_tools: int = 4
    min_calls: int = 10
    max_calls: int = 256
    max_success: float = 0.25
    timeout_s: float = 120.0
    constant_answer: bool = False


def config_verdicts(
    runner: CodeGymRunner, record: dict[str, Any], timeout_s: float, trace: bool = False
) -> list[dict[str, Any]]:
    """The driver's verdict for each configuration of `record` (one sandbox call); with `trace`, each verdict lists
    the oracle's actions (`actions`, its Done last)."""
    reply, _ = runner.call(
        {
            "op": "verify",
            "code": record["code"],
            "class_name": record["class_name"],
            "oracle": record.get("oracle"),
            "configs": record["configs"],
            "trace": trace,
        },
        timeout_s=timeout_s,
    )
    if (
        not reply.get("ok")
        or not isinstance(reply.get("results"), list)
        or len(reply["results"]) != len(record["configs"])
    ):
        error = reply.get("error", "no verdicts")
        return [{"ok": False, "error": error} for _ in record["configs"]]
    return reply["results"]


def config_reason(v: dict[str, Any], success: list[bool] | None, has_oracle: bool, rules: Rules) -> str | None:
    """Why a configuration is dropped (None: kept)."""
    if not v.get("ok") and not (not has_oracle and "no oracle" in str(v.get("error", ""))):
        return "error" if "oracle" not in str(v.get("error", "")) else "oracle_failed"
    if v.get("wrong_reward", 0.0) > 0:
        return "wrong_answer_rewarded"
    if has_oracle:
        if not (v.get("matches_ref") and v.get("reward", 0.0) >= 1.0):
            return "oracle_failed"
        if v["calls"] < rules.min_calls:
            return "too_few_calls"
        if v["calls"] > rules.max_calls:
            return "too_many_calls"
    elif not success or not any(success):
        return "unsolved"
    if success and sum(success) / len(success) > rules.max_success:
        return "too_easy"
    return None


def verify_records(
    records: list[dict[str, Any]], runner: CodeGymRunner, rules: Rules, success: dict[str, list[bool]] | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the kept records, the report)."""
    from agentic_rl.envs.tasks import environment_tasks

    kept, dropped_envs, dropped_configs = [], {}, []
    reasons: Counter[str] = Counter()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency

        def tqdm(x: Any, **_: Any) -> Any:
            return x

    for record in tqdm(records, desc="verify environments"):
        verdicts = config_verdicts(runner, record, rules.timeout_s)
        n_tools = max((v.get("n_tools", 0) for v in verdicts), default=0)
        if n_tools and n_tools < rules.min_tools:
            dropped_envs[record["env_id"]] = f"too_few_tools ({n_tools} < {rules.min_tools})"
            reasons["too_few_tools"] += len(verdicts)
            continue
        task_ids = [t.task_id for t in environment_tasks(record)]
        kept_index, dropped = [], []
        for i, v in enumerate(verdicts):
            reason = config_reason(v, (success or {}).get(task_ids[i]), bool(record.get("oracle")), rules)
            if reason is None:
                kept_index.append(i)
            else:
                detail = v.get("error") or {k: v.get(k) for k in ("calls", "reward", "matches_ref")}
                dropped.append({"env_id": record["env_id"], "config_index": i, "reason": reason, "detail": detail})
        if rules.constant_answer and kept_index:
            kept_index, by_constant = drop_constant_answers(runner, record, kept_index, rules.timeout_s)
            dropped += by_constant
        reasons.update(d["reason"] for d in dropped)
        dropped_configs += dropped
        keep_configs = [record["configs"][i] for i in kept_index]
        keep_calls = [verdicts[i].get("calls") for i in kept_index]
        if not keep_configs:
            dropped_envs[record["env_id"]] = "no configuration left"
            continue
        out = {**record, "configs": keep_configs}
        if all(c is not None for c in keep_calls):
            out["oracle_calls"] = keep_calls
        else:
            out.pop("oracle_calls", None)
        kept.append(out)
    report = {
        "rules": rules.__dict__,
        "environments_in": len(records),
        "environments_kept": len(kept),
        "configs_in": sum(len(r["configs"]) for r in records),
        "configs_kept": sum(len(r["configs"]) for r in kept),
        "dropped_reasons": dict(reasons),
        "dropped_environments": dropped_envs,
        "dropped_configs": dropped_configs,
        "kept_by_split": dict(Counter(r.get("split", "train") for r in kept)),
    }
    return kept, report


def oracle_actions(
    runner: CodeGymRunner, record: dict[str, Any], indices: Sequence[int], timeout_s: float = 120.0
) -> list[list[dict[str, Any]]]:
    """The oracle's actions (`{"name", "parameters"}`, its Done last) on each configuration `indices` of `record`,
    as played in the sandbox: the demonstrations a warm-up replays (agentic_rl.warmup). A configuration the oracle
    does not solve (its answer is not the reference, or Done with it does not score) is an error, since replaying it
    would teach a wrong episode."""
    chosen = {**record, "configs": [record["configs"][i] for i in indices]}
    out = []
    for i, v in zip(indices, config_verdicts(runner, chosen, timeout_s, trace=True)):
        if not (v.get("ok") and v.get("matches_ref") and float(v.get("reward") or 0.0) >= 1.0 and v.get("actions")):
            raise ValueError(f"{record['env_id']}, configuration {i}: the oracle does not solve it ({v})")
        out.append(v["actions"])
    return out


# ---------------------------------------------------------------- the constant-answer rule and baseline

PROBE_CLASS = "ConstantAnswerProbe"
REFERENCE_ATTRIBUTE = "constant_probe_reference_answer"
CONSTANT_ORACLE = "constant_answer_oracle"
CONSTANT_REASON = "constant_answer"


def answer_key(answer: Any) -> str:
    """An answer as canonical JSON, the form `Done` compares and the driver returns (a tuple is its list)."""
    return json.dumps(answer, sort_keys=True)


def _pool_map(runner: CodeGymRunner, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
    """`fn` over `items`, as many at a time as the runner's sandbox has workers (results in input order)."""
    with ThreadPoolExecutor(max(1, int(getattr(runner.sandbox, "workers", 2)))) as pool:
        return list(pool.map(fn, items))


def reference_keys(runner: CodeGymRunner, env: Mapping[str, Any], timeout_s: float) -> list[str | None]:
    """The reference answer (`answer_key`) of each configuration of `env` (code, class_name, configs): one reset
    per configuration, of a subclass whose reset keeps `get_ref_answer()` in a public attribute, which the driver
    sends back with the state (nothing of the environment runs here). None: the reset failed, or the answer is
    not JSON."""
    if not str(env["class_name"]).isidentifier():
        raise ValueError(f"{env.get('env_id')}: class_name {env['class_name']!r} is not a Python class name")
    code = (
        f"{env['code']}\n\n\nclass {PROBE_CLASS}({env['class_name']}):\n"
        "    def reset(self, *args, **kwargs):\n"
        "        out = super().reset(*args, **kwargs)\n"
        f"        self.{REFERENCE_ATTRIBUTE} = self.get_ref_answer()\n"
        "        return out\n"
    )

    def one(options: dict[str, Any]) -> str | None:
        payload = {"op": "reset", "code": code, "class_name": PROBE_CLASS, "options": options}
        state = runner.call(payload, timeout_s=timeout_s)[0].get("state")
        known = isinstance(state, dict) and REFERENCE_ATTRIBUTE in state
        return answer_key(state[REFERENCE_ATTRIBUTE]) if known else None

    return _pool_map(runner, one, env["configs"])


def constant_solved(runner: CodeGymRunner, env: Mapping[str, Any], key: str, timeout_s: float) -> list[bool]:
    """Whether `Done` with the answer `key` scores on each configuration of `env`: one sandbox call, the driver's
    verify operation with an oracle that answers the constant without calling a tool."""
    code = f"{env['code']}\n\n\ndef {CONSTANT_ORACLE}(call):\n    import json\n    return json.loads({key!r})\n"
    verdicts = config_verdicts(runner, {**env, "code": code, "oracle": CONSTANT_ORACLE}, timeout_s)
    return [bool(v.get("ok")) and float(v.get("reward") or 0.0) > 0 for v in verdicts]


def above_chance_drops(keys: Sequence[str | None], solved: Mapping[str, Sequence[bool]]) -> dict[int, str]:
    """The configurations a constant answer solves above chance: configuration index -> that constant's key.

    keys: each configuration's reference answer (None: unknown; such a configuration is neither judged nor
    counted). solved: for each value V the answers take, whether `Done(V)` solved each configuration.
    Chance is what a guess drawn uniformly from those values scores: 1/|V| of the configurations (1/2 where the
    answers take one value: two are conceivable). While some constant solves more than that share of the
    configurations left, the last one it solves is dropped; what is kept has each value about equally often, so no
    constant beats a guess. A lone configuration cannot be judged and is kept.
    Example: answers [true x 8, false x 4] -> the last 4 `true` configurations are dropped (4 and 4 kept);
    answers [3, 3] -> both are dropped; [1, 2, 3] -> none.
    """
    alive = [i for i, k in enumerate(keys) if k is not None]
    if len(alive) < 2:
        return {}
    share = 1 / max(len({keys[i] for i in alive}), 2)
    drops: dict[int, str] = {}
    while alive:
        counts = {c: sum(bool(row[i]) for i in alive) for c, row in sorted(solved.items())}
        best = max(counts, key=lambda c: counts[c])
        if counts[best] <= share * len(alive) + 1e-9:  # float residue of the share must not drop a balanced set
            break
        last = max(i for i in alive if solved[best][i])
        alive.remove(last)
        drops[last] = best
    return drops


def constant_answer_drops(runner: CodeGymRunner, env: Mapping[str, Any], timeout_s: float) -> dict[int, str]:
    """`above_chance_drops` of `env`'s configurations, each value its answers take run as `Done` in the sandbox."""
    keys = reference_keys(runner, env, timeout_s)
    values = sorted({k for k in keys if k is not None})
    solved = dict(zip(values, _pool_map(runner, lambda k: constant_solved(runner, env, k, timeout_s), values)))
    return above_chance_drops(keys, solved)


def drop_constant_answers(
    runner: CodeGymRunner, record: dict[str, Any], kept_index: list[int], timeout_s: float
) -> tuple[list[int], list[dict[str, Any]]]:
    """The constant-answer rule over the configurations of `record` that the other rules kept: (those it keeps,
    the report's entries for those it drops)."""
    drops = constant_answer_drops(runner, {**record, "configs": [record["configs"][i] for i in kept_index]}, timeout_s)
    dropped = [
        {
            "env_id": record["env_id"],
            "config_index": kept_index[j],
            "reason": CONSTANT_REASON,
            "detail": {"answer": json.loads(key)},
        }
        for j, key in sorted(drops.items())
    ]
    return [i for j, i in enumerate(kept_index) if j not in drops], dropped


def task_environments(tasks: Sequence[Task]) -> list[tuple[dict[str, Any], list[Task]]]:
    """CodeGym tasks grouped by environment: (an environment record whose configs are the tasks', the tasks)."""
    groups: dict[tuple[str, str, str], tuple[dict[str, Any], list[Task]]] = {}
    for task in tasks:
        record = record_of(task)
        env_id = str(task.metadata.get("env_id", record["class_name"]))
        env, members = groups.setdefault(
            (env_id, record["class_name"], record["code"]),
            ({"env_id": env_id, "code": record["code"], "class_name": record["class_name"], "configs": []}, []),
        )
        env["configs"].append(record["options"])
        members.append(task)
    return list(groups.values())


def constant_answer_filter(
    tasks: Sequence[Task], runner: CodeGymRunner, timeout_s: float = Rules.timeout_s, progress: bool = True
) -> tuple[list[Task], list[dict[str, Any]]]:
    """The constant-answer rule over a set of CodeGym tasks, environment by environment (a policy sees which
    environment it is in, so a constant per environment is open to it): (the tasks kept, in their order; one
    record per dropped task: task_id, env_id, reason, the constant that solves it)."""
    from tqdm.auto import tqdm

    dropped = []
    for env, members in tqdm(task_environments(tasks), desc="constant answers", disable=not progress):
        drops = constant_answer_drops(runner, env, timeout_s)
        dropped += [
            {"task_id": members[j].task_id, "env_id": env["env_id"], "reason": CONSTANT_REASON, "answer": json.loads(k)}
            for j, k in sorted(drops.items())
        ]
    gone = {d["task_id"] for d in dropped}
    return [t for t in tasks if t.task_id not in gone], dropped


def constant_results(
    tasks: Sequence[Task], runner: CodeGymRunner, top: int = 8, timeout_s: float = Rules.timeout_s
) -> dict[str, dict[str, bool]]:
    """answer key -> task id -> whether `Done` with that constant solves the task, for the `top` values the
    tasks' reference answers take most often (a value no answer takes solves nothing where `Done` compares)."""
    groups = task_environments(tasks)
    keys = [k for env, _ in groups for k in reference_keys(runner, env, timeout_s)]
    ranked = [k for k, _ in Counter(k for k in keys if k is not None).most_common(top)]
    pairs = [(key, env, members) for key in ranked for env, members in groups]
    solved = _pool_map(runner, lambda pair: constant_solved(runner, pair[1], pair[0], timeout_s), pairs)
    results: dict[str, dict[str, bool]] = {key: {} for key in ranked}
    for (key, _, members), row in zip(pairs, solved):
        results[key].update((t.task_id, p) for t, p in zip(members, row))
    return results


def best_constant(results: Mapping[str, Mapping[str, bool]], task_ids: Sequence[str]) -> tuple[Any, list[dict]]:
    """The constant-answer baseline over `task_ids`: (the constant that solves most of them, one record per task:
    task_id, passed, answer), the form of an evaluation's per-episode records. (None, all failed) without one."""
    if not results:
        return None, [{"task_id": t, "passed": False, "answer": None} for t in task_ids]
    key = max(results, key=lambda k: sum(results[k].get(t, False) for t in task_ids))
    answer = json.loads(key)
    return answer, [{"task_id": t, "passed": bool(results[key].get(t, False)), "answer": answer} for t in task_ids]


def constant_metrics(
    tasks: Sequence[Task], runner: CodeGymRunner, timeout_s: float = Rules.timeout_s
) -> tuple[Any, dict[str, float]]:
    """The constant-answer baseline of an evaluation's CodeGym tasks, as metrics to stand beside its `env/` success
    rates (`envs.metrics`): (the constant, {"env/constant_success_rate": the share of the tasks it solves, and, where
    the tasks mix both held-out sets as `env/seen_envs/...` does, `env/seen_envs/constant_success_rate` and
    `env/unseen_envs/constant_success_rate`}). The constant is the one that solves most of these tasks
    (`best_constant`). (None, {}) when no task is a CodeGym task."""
    gym = codegym_tasks(tasks)
    if not gym:
        return None, {}
    answer, rows = best_constant(constant_results(gym, runner, timeout_s=timeout_s), [t.task_id for t in gym])
    passed = {r["task_id"]: r["passed"] for r in rows}
    out = {"env/constant_success_rate": sum(passed.values()) / len(passed)}
    groups = {"seen_envs": [t for t in gym if t.metadata.get("env_split", "train") != "heldout"]}
    groups["unseen_envs"] = [t for t in gym if t.metadata.get("env_split", "train") == "heldout"]
    if all(groups.values()):  # the sets of envs.metrics: only where both are present
        for name, group in groups.items():
            out[f"env/{name}/constant_success_rate"] = sum(passed[t.task_id] for t in group) / len(group)
    return answer, out


def codegym_tasks(tasks: Sequence[Task]) -> list[Task]:
    """The tasks that are CodeGym configurations (a constant `Done` answer means something for them alone)."""
    return [t for t in tasks if t.harness == "codegym"]


def evaluation_constant(
    tasks: Sequence[Task], sandbox: Any, timeout_s: float = Rules.timeout_s
) -> dict[str, Any] | None:
    """An evaluation summary's constant-answer baseline (`python -m agentic_rl.evaluate`'s "constant_answer"): over
    the evaluated tasks' CodeGym configurations, the constant (`answer`), how many tasks (`n_tasks`) and
    `constant_metrics`' rates, run in the evaluation's `sandbox`; None when no task is a CodeGym task (a code
    task has no constant answer)."""
    answer, metrics = constant_metrics(tasks, CodeGymRunner(sandbox=sandbox), timeout_s=timeout_s)
    if not metrics:
        return None
    return {"answer": answer, "n_tasks": len(codegym_tasks(tasks)), **metrics}


def success_beside_constant(
    records: list[dict[str, Any]], success: Mapping[str, Sequence[bool]], runner: CodeGymRunner, timeout_s: float
) -> dict[str, Any]:
    """A policy's success rate on the configurations the results measure, and beside it the constant-answer
    baseline's on the same configurations (the constant that solves most of them), so that a score a constant
    explains reads as one."""
    from agentic_rl.envs.tasks import environment_tasks

    tasks = [t for r in records for t in environment_tasks(r) if success.get(t.task_id)]
    if not tasks:
        return {"configs": 0}
    episodes = [p for t in tasks for p in success[t.task_id]]
    answer, rows = best_constant(constant_results(tasks, runner, timeout_s=timeout_s), [t.task_id for t in tasks])
    return {
        "configs": len(tasks),
        "success_rate": sum(episodes) / len(episodes),
        "constant_answer": answer,
        "constant_success_rate": sum(r["passed"] for r in rows) / len(rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.envs.verify", description=__doc__.split("\n")[0])
    parser.add_argument("file", help="an environments .jsonl file, or a packaged set: 'builtin', 'starter'")
    parser.add_argument("--out", help="write the kept environments here (.jsonl)")
    parser.add_argument("--report", help="write the report here (.json); default: beside --out or stdout")
    parser.add_argument("--success", help="a policy's results (task_id, passed per line): pass@K and difficulty")
    parser.add_argument("--min-tools", type=int, default=Rules.min_tools)
    parser.add_argument("--min-calls", type=int, default=Rules.min_calls)
    parser.add_argument("--max-calls", type=int, default=Rules.max_calls)
    parser.add_argument("--max-success", type=float, default=Rules.max_success)
    parser.add_argument("--timeout-s", type=float, default=Rules.timeout_s, help="per environment, all configs")
    parser.add_argument(
        "--constant-answer",
        action="store_true",
        help="drop the configurations a constant Done answer solves above chance (reason constant_answer)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    from agentic_rl.envs.tasks import read_environments

    try:
        records = read_environments(args.file)  # a packaged set's name ('builtin', 'starter') reads that set
        success = read_success(args.success) if args.success else None
    except (ValueError, FileNotFoundError) as exc:
        logger.error("%s", exc)
        return 2
    rules = Rules(
        args.min_tools, args.min_calls, args.max_calls, args.max_success, args.timeout_s, args.constant_answer
    )
    runner = CodeGymRunner()
    kept, report = verify_records(records, runner, rules, success)
    if success:
        report["success_vs_constant"] = beside = success_beside_constant(records, success, runner, rules.timeout_s)
        if beside["configs"]:
            logger.info(
                "success %.3f on %d measured configurations; constant answer %s: %.3f",
                beside["success_rate"],
                beside["configs"],
                json.dumps(beside["constant_answer"]),
                beside["constant_success_rate"],
            )
    if args.out:
        Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in kept))
    text = json.dumps(report, indent=2)
    report_path = args.report or (str(Path(args.out).with_suffix(".report.json")) if args.out else None)
    if report_path:
        Path(report_path).write_text(text + "\n")
        logger.info(
            "kept %d of %d environments, %d of %d configurations; report: %s",
            report["environments_kept"],
            report["environments_in"],
            report["configs_kept"],
            report["configs_in"],
            report_path,
        )
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
