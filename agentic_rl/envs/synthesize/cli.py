"""The synthesis command: arguments, the loop over problems (resumable), one status line per problem."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import asdict
from typing import Any

from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.synthesize.endpoint import ChatEndpoint, EndpointFailure
from agentic_rl.envs.synthesize.problems import Problem, read_problems
from agentic_rl.envs.synthesize.prompts import ReplyError
from agentic_rl.envs.synthesize.reference import EndpointReference, ResultsReference
from agentic_rl.envs.synthesize.stages import Dropped, Ledger, Settings, synthesize_problem
from agentic_rl.envs.synthesize.store import RunStore
from agentic_rl.envs.verify import Rules

logger = logging.getLogger(__name__)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agentic_rl.envs.synthesize", description=__doc__)
    p.add_argument("problems", help="JSON Lines of problems with a reference solution (KodCode rows)")
    p.add_argument("--endpoint", required=True, help="OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", required=True, help="the model name the endpoint serves")
    p.add_argument("--out", required=True, help="the environments (.jsonl, appended); status and report beside it")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding a bearer token")
    p.add_argument("--timeout-s", type=float, default=120.0, help="per endpoint request")
    p.add_argument("--temperature", type=float, default=0.7, help="environment and inputs requests")
    p.add_argument("--max-tokens", type=int, default=2048)
    p.add_argument("-k", "--k", type=int, default=10, help="candidate solutions per environment (pass@K)")
    p.add_argument("--solver-temperature", type=float, default=1.0)
    p.add_argument("--n-inputs", type=int, default=12, help="unit-test inputs asked for per problem")
    p.add_argument("--min-tools", type=int, default=Rules.min_tools)
    p.add_argument("--min-calls", type=int, default=Rules.min_calls)
    p.add_argument("--max-calls", type=int, default=Rules.max_calls)
    p.add_argument("--max-success", type=float, default=Rules.max_success, help="difficulty: the reference's cap")
    p.add_argument("--no-constant-answer", action="store_true", help="skip the constant-answer filter")
    p.add_argument("--sandbox-timeout-s", type=float, default=Rules.timeout_s, help="per sandbox call")
    p.add_argument("--reference-endpoint", help="difficulty: the reference model's endpoint (default: none)")
    p.add_argument("--reference-model", help="difficulty: the reference model's name")
    p.add_argument("--reference-results", help="difficulty: a results file (task_id, passed) instead of a model")
    p.add_argument("--reference-tries", type=int, default=4)
    p.add_argument("--reference-t-max", type=int, default=64, help="calls per reference episode")
    p.add_argument("--limit", type=int, default=None, help="only the first N problems")
    return p


def settings_of(args: argparse.Namespace) -> Settings:
    if args.k < 1 or args.n_inputs < 1:
        raise ValueError(f"-k and --n-inputs must be >= 1 (got {args.k}, {args.n_inputs})")
    rules = Rules(
        args.min_tools,
        args.min_calls,
        args.max_calls,
        args.max_success,
        args.sandbox_timeout_s,
        not args.no_constant_answer,
    )
    return Settings(k=args.k, n_inputs=args.n_inputs, rules=rules, solver_temperature=args.solver_temperature)


def reference_of(args: argparse.Namespace, runner: CodeGymRunner) -> Any:
    if args.reference_results and args.reference_endpoint:
        raise ValueError("give --reference-results or --reference-endpoint, not both")
    if args.reference_results:
        return ResultsReference(args.reference_results)
    if args.reference_endpoint:
        if not args.reference_model:
            raise ValueError("--reference-endpoint needs --reference-model")
        endpoint = ChatEndpoint(args.reference_endpoint, args.reference_model, args.timeout_s, 1.0, args.max_tokens)
        return EndpointReference(endpoint, runner, args.reference_tries, args.reference_t_max)
    return None


UNUSABLE_STAGE = "problem"  # the stage name of a problem dropped as read (problems.Problem.unusable)


def run_problem(problem: Problem, endpoint, runner, settings, reference) -> tuple[dict[str, Any], dict | None]:
    """(the problem's status line, its environment or None); a failure of the endpoint or a reply is recorded."""
    ledger, record = Ledger(), None
    status: dict[str, Any] = {"problem_id": problem.problem_id, "status": "kept", "stage": None, "reason": None}
    if problem.unusable is not None:  # before any stage: nothing was asked of the endpoint
        status.update(status="dropped", stage=UNUSABLE_STAGE, reason=problem.unusable, stages={}, dropped={})
        return status, None
    try:
        record = synthesize_problem(problem, endpoint, runner, settings, reference, ledger)
        status["configs_out"] = len(record["configs"])
        if not record["configs"]:  # the last stage kept nothing, without raising (a filter that emptied it)
            status.update(status="dropped", stage=list(ledger.stages)[-1], reason="no configuration left")
            record = None
    except Dropped as exc:
        status.update(status="dropped", stage=exc.stage, reason=exc.reason)
    except EndpointFailure as exc:
        status.update(status="failed", stage=next_stage(ledger), reason=exc.kind, detail=exc.detail)
        status["retry"] = exc.transient
    except ReplyError as exc:
        status.update(status="failed", stage=next_stage(ledger), reason="malformed_reply", detail=str(exc))
    status.update(stages=ledger.stages, dropped=dict(ledger.reasons))
    return status, record


def next_stage(ledger: Ledger) -> str:
    from agentic_rl.envs.synthesize.stages import STAGES

    return next((s for s in STAGES if s not in ledger.stages), STAGES[-1])


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        problems = read_problems(args.problems)[: args.limit]
        settings = settings_of(args)
        endpoint = ChatEndpoint(
            args.endpoint, args.model, args.timeout_s, args.temperature, args.max_tokens, args.api_key_env
        )
        runner = CodeGymRunner(timeout_s=args.sandbox_timeout_s)
        reference = reference_of(args, runner)
        store = RunStore(args.out)
    except (ValueError, FileNotFoundError) as exc:
        logger.error("%s", exc)
        return 2
    from tqdm.auto import tqdm

    described = {"endpoint": args.endpoint, "model": args.model, **asdict(settings)}
    todo = [p for p in problems if not store.done(p.problem_id)]
    logger.info("%d problems, %d finished before, %d to do", len(problems), len(problems) - len(todo), len(todo))
    for problem in tqdm(todo, desc="synthesize environments"):
        status, record = run_problem(problem, endpoint, runner, settings, reference)
        store.finish(status, record)
        store.write_report(len(problems), described)
    # configurations the results file does not measure are kept; say how many (this run's)
    extra = {"difficulty_not_measured": reference.not_measured} if isinstance(reference, ResultsReference) else {}
    report = store.write_report(len(problems), described, **extra)
    sys.stderr.write(
        f"{report['environments_out']} environments ({report['configs_out']} configurations) from "
        f"{report['problems_in']} problems; report: {store.report_path}\n"
    )
    return 0
