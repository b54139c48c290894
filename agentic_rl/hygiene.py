"""Test hygiene as a check: which tasks of a data set a trivial answer passes, with a report and the kept ids.

    python -m agentic_rl.hygiene data=pipelines-heldout
    python -m agentic_rl.hygiene data=kodcode-heldout data.path=<shared>/kodcode_sample.jsonl
    python -m agentic_rl.hygiene data=codegym-heldout --constant-baseline experiments/codegym/cpu/constant.jsonl
    python -m agentic_rl.hygiene data=bigcodebench-hard data.path=... python=.venv-bcb/bin/python --out DIR

The arguments other than the options below are overrides of the evaluation's config (`conf/evaluate.yaml`):
`data=<option>` and `data.<key>=...` choose the tasks exactly as an evaluation would, `sandbox.<key>=...` and
`python=...` the sandbox that grades them.

Code tasks (pytest, unittest, humaneval): each task's tests are run in the sandbox against trivial candidates
(`return None`, constants, the identity, a module that defines nothing), and its tests are read for definitions of
the function under test (`agentic_rl.data.hygiene`). A task any of them passes is flagged. Verdicts are cached per
task under the cache root; `--no-cache` grades again.
CodeGym tasks: a configuration that a constant `Done` answer solves above chance within its environment is flagged
(`agentic_rl.envs.verify.constant_answer_filter`), and the constant-answer baseline (the single constant that solves
most tasks) is reported for the tasks as loaded and for those kept; `--constant-baseline OUT.jsonl` writes its
per-task results (task_id, passed, answer), to be read beside an evaluation's.

Writes into `--out` (default outputs/hygiene/<data option>): flagged.jsonl (one record per flagged task: which
candidates passed, which names the tests define), summary.json (counts per candidate, flagged and kept, the
baseline) and kept.txt (the kept task ids, one a line). Exit code 2 on a config error.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from agentic_rl.config import register_configs
from agentic_rl.data.hygiene import drop_unhygienic
from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.verify import best_constant, constant_answer_filter, constant_results
from agentic_rl.hydra_main import CONFIG_ERRORS, EXIT_CONFIG_ERROR, config_error_message
from agentic_rl.paths import CONF_DIR
from agentic_rl.registry import build
from agentic_rl.runtime.files import SUMMARY_FILE
from agentic_rl.types import Task

logger = logging.getLogger(__name__)

CONFIG_NAME = "evaluate"  # its defaults list has the data and sandbox groups an evaluation is run with
CODEGYM = "codegym"


def compose_config(overrides: list[str]) -> Any:
    """The evaluation config with `overrides` (a ConfigError or Hydra's composition error when one is wrong)."""
    from hydra import compose, initialize_config_dir

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(CONFIG_NAME, overrides=overrides)


def data_option(overrides: list[str]) -> str:
    """The `data=` option chosen on the command line (the default data of the evaluation otherwise)."""
    chosen = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0].lstrip("+~") == "data"]
    return chosen[-1] if chosen else "default"


def check_code_tasks(tasks: list[Task], sandbox: Any, args: argparse.Namespace) -> tuple[list[dict], dict]:
    """(flagged records, summary) of the tasks graded by tests."""
    _, report = drop_unhygienic(tasks, sandbox, timeout_s=args.timeout_s, cache=not args.no_cache)
    return report["flagged"], report["summary"]


def check_codegym_tasks(tasks: list[Task], sandbox: Any, args: argparse.Namespace) -> tuple[list[dict], dict]:
    """(flagged records, summary with the constant-answer baseline) of CodeGym tasks."""
    runner = CodeGymRunner(sandbox=sandbox)
    kept, dropped = constant_answer_filter(tasks, runner)
    results = constant_results(tasks, runner, top=args.top)
    flagged = [{**d, "passed_by": [f"constant {json.dumps(d['answer'])}"], "flagged": True} for d in dropped]
    counts = Counter(name for d in flagged for name in d["passed_by"])
    summary: dict[str, Any] = {
        "tasks": len(tasks),
        "checked": len(tasks),
        "unchecked": 0,
        "flagged": len(flagged),
        "kept": len(kept),
        "by_candidate": dict(sorted(counts.items())),
        "flagged_ids": [d["task_id"] for d in flagged],
        "constant_scores": {key: sum(solved.values()) for key, solved in results.items()},
    }
    for name, chosen in (("constant_baseline", tasks), ("constant_baseline_kept", kept)):
        answer, rows = best_constant(results, [t.task_id for t in chosen])
        summary[name] = {"answer": answer, "passed": sum(r["passed"] for r in rows), "tasks": len(rows)}
        if name == "constant_baseline" and args.constant_baseline:
            write_jsonl(Path(args.constant_baseline), rows)
    return flagged, summary


def merge_summaries(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One summary of the code-task and CodeGym parts (counts added, each part's own keys kept)."""
    if len(parts) == 1:
        return parts[0]
    merged: dict[str, Any] = {k: sum(p[k] for p in parts) for k in ("tasks", "checked", "unchecked", "flagged", "kept")}
    merged["by_candidate"] = dict(sum((Counter(p["by_candidate"]) for p in parts), Counter()))
    merged["flagged_ids"] = [i for p in parts for i in p["flagged_ids"]]
    for p in parts:
        merged.update({k: v for k, v in p.items() if k.startswith("constant_")})
    return merged


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def run(cfg: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Check the tasks of `cfg.data` in the sandbox of `cfg.sandbox`; write the report into `args.out`."""
    tasks = list(build(cfg.data))
    if not tasks:
        raise ValueError("the data config selects no task: check data.split, data.limit and the file it reads")
    gym = [t for t in tasks if t.harness == CODEGYM]
    code = [t for t in tasks if t.harness != CODEGYM]
    sandbox = build(cfg.sandbox, **({"python": cfg.python} if cfg.get("python") else {}))
    flagged: list[dict[str, Any]] = []
    parts = []
    try:
        for part, check in ((code, check_code_tasks), (gym, check_codegym_tasks)):
            if part:
                rows, summary = check(part, sandbox, args)
                flagged += rows
                parts.append(summary)
    finally:
        sandbox.close()
    summary = merge_summaries(parts)
    out = Path(args.out)
    write_jsonl(out / "flagged.jsonl", flagged)
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    gone = set(summary["flagged_ids"])
    (out / "kept.txt").write_text("".join(f"{t.task_id}\n" for t in tasks if t.task_id not in gone))
    return summary


def report_lines(summary: dict[str, Any], out: Path) -> list[str]:
    """What the command prints: the counts, each candidate's, and the baseline."""
    lines = [f"{summary['tasks']} tasks: {summary['flagged']} flagged, {summary['kept']} kept"]
    lines += [f"  passed by {name}: {n}" for name, n in summary["by_candidate"].items()]
    for key, label in (("constant_baseline", "as loaded"), ("constant_baseline_kept", "kept")):
        if key in summary:
            b = summary[key]
            lines.append(
                f"constant-answer baseline ({label}): {json.dumps(b['answer'])} solves {b['passed']}/{b['tasks']}"
            )
    lines.append(f"report: {out / 'flagged.jsonl'}, {out / 'summary.json'}, kept ids: {out / 'kept.txt'}")
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m agentic_rl.hygiene", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("overrides", nargs="*", help="config overrides: data=<option>, data.<key>=..., sandbox.<key>=")
    parser.add_argument("--out", help="the report's directory (default: outputs/hygiene/<data option>)")
    parser.add_argument(
        "--constant-baseline", help="CodeGym: write the constant-answer baseline per task here (.jsonl)"
    )
    parser.add_argument("--timeout-s", type=float, default=10.0, help="per trivial candidate (default 10)")
    parser.add_argument("--top", type=int, default=8, help="CodeGym: the most common answers tried as constants")
    parser.add_argument("--no-cache", action="store_true", help="grade again instead of reading cached verdicts")
    args = parser.parse_args(argv)
    args.out = args.out or str(Path("outputs") / "hygiene" / data_option(args.overrides).replace("/", "_"))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        cfg = compose_config(args.overrides)
        summary = run(cfg, args)
    except CONFIG_ERRORS as exc:
        print(f"config error: {config_error_message(exc, CONFIG_NAME, args.overrides)}", file=sys.stderr)  # noqa: T201
        return EXIT_CONFIG_ERROR
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return EXIT_CONFIG_ERROR
    print("\n".join(report_lines(summary, Path(args.out))))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
