"""Check an environments file against the CodeGym paper's rules; keep what passes, report what was dropped.

    python -m agentic_rl.envs.verify FILE [--out KEPT.jsonl] [--report REPORT.json] [--success RESULTS.jsonl]
    python -m agentic_rl.envs.verify builtin        # the built-in set

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
    configuration the policy solves more often than `max_success` is dropped ("too_easy").
An environment left with no configuration, or with fewer than `min_tools` tools, is dropped whole. The kept
file carries `oracle_calls` per configuration (the metric `env/oracle_calls` compares episodes with it).
All environment code runs in the sandbox: one sandbox call per environment, all its configurations in it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.tasks import read_success

logger = logging.getLogger(__name__)


@dataclass
class Rules:
    min_tools: int = 4
    min_calls: int = 10
    max_calls: int = 256
    max_success: float = 0.25
    timeout_s: float = 120.0


def config_verdicts(runner: CodeGymRunner, record: dict[str, Any], timeout_s: float) -> list[dict[str, Any]]:
    """The driver's verdict for each configuration of `record` (one sandbox call)."""
    reply, _ = runner.call(
        {
            "op": "verify",
            "code": record["code"],
            "class_name": record["class_name"],
            "oracle": record.get("oracle"),
            "configs": record["configs"],
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
        keep_configs, keep_calls = [], []
        task_ids = [t.task_id for t in environment_tasks(record)]
        for i, (options, v) in enumerate(zip(record["configs"], verdicts)):
            reason = config_reason(v, (success or {}).get(task_ids[i]), bool(record.get("oracle")), rules)
            if reason is None:
                keep_configs.append(options)
                keep_calls.append(v.get("calls"))
            else:
                reasons[reason] += 1
                dropped_configs.append(
                    {
                        "env_id": record["env_id"],
                        "config_index": i,
                        "reason": reason,
                        "detail": v.get("error") or {k: v.get(k) for k in ("calls", "reward", "matches_ref")},
                    }
                )
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentic_rl.envs.verify", description=__doc__.split("\n")[0])
    parser.add_argument("file", help="an environments .jsonl file, or 'builtin'")
    parser.add_argument("--out", help="write the kept environments here (.jsonl)")
    parser.add_argument("--report", help="write the report here (.json); default: beside --out or stdout")
    parser.add_argument("--success", help="a policy's results (task_id, passed per line): pass@K and difficulty")
    parser.add_argument("--min-tools", type=int, default=Rules.min_tools)
    parser.add_argument("--min-calls", type=int, default=Rules.min_calls)
    parser.add_argument("--max-calls", type=int, default=Rules.max_calls)
    parser.add_argument("--max-success", type=float, default=Rules.max_success)
    parser.add_argument("--timeout-s", type=float, default=Rules.timeout_s, help="per environment, all configs")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    from agentic_rl.envs.tasks import read_environments

    try:
        if args.file == "builtin":
            from agentic_rl.envs.builtin import builtin_records

            records = builtin_records()
        else:
            records = read_environments(args.file)
        success = read_success(args.success) if args.success else None
    except (ValueError, FileNotFoundError) as exc:
        logger.error("%s", exc)
        return 2
    rules = Rules(args.min_tools, args.min_calls, args.max_calls, args.max_success, args.timeout_s)
    kept, report = verify_records(records, CodeGymRunner(), rules, success)
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
