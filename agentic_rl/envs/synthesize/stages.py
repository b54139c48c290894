"""One problem through the synthesis, stage by stage; each stage says how many configurations it kept and why
it dropped the others (the report's yields).

Stages (a configuration is one unit-test input, the options `reset` receives):
  environment  the model writes the environment class (tools extracted from the solution, documented);
  inputs       the model writes unit-test inputs;
  outputs      the original solution runs on each input in the sandbox ("solution_failed": it raised, or its
               output is not JSON);
  reference    the environment resets on the input and its get_ref_answer() equals the solution's output
               ("env_error", "reference_mismatch");
  solvable     pass@K: K candidate tool-only solutions are asked for; a configuration is kept when one of them
               answers it right through the tools and `Done` scores 1 ("unsolved"; the loop stops early once
               every configuration is solved);
  complexity   at least `min_tools` tools ("too_few_tools", the whole environment), and the solving candidate's
               calls, Done included, in [min_calls, max_calls] ("too_few_calls", "too_many_calls");
  constant     a constant `Done` answer must not solve the configurations above chance ("constant_answer";
               agentic_rl.envs.verify's rule, reused);
  difficulty   a reference policy's success over its tries at most `max_success` ("too_easy"; reference.py).
The kept environment carries `oracle_calls`, and `oracle: "solve"` with that candidate in its code when one
candidate solves every kept configuration. All model-written code (environment, candidates) and the original
solution run only in the sandbox.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_rl.envs.codegym import CodeGymRunner
from agentic_rl.envs.synthesize import prompts
from agentic_rl.envs.synthesize.endpoint import ChatEndpoint
from agentic_rl.envs.synthesize.problems import Problem, solution_outputs
from agentic_rl.envs.verify import Rules, answer_key, config_verdicts, drop_constant_answers, reference_keys

STAGES = ("environment", "inputs", "outputs", "reference", "solvable", "complexity", "constant", "difficulty")
GYM_BASE = Path(__file__).resolve().parent.parent / "builtin" / "gym_base.py"


@dataclass
class Settings:
    """k: candidate solutions per environment (pass@K). n_inputs: unit-test inputs asked for. rules: the paper's
    filters (min_tools, min/max calls, max_success, sandbox timeout, constant_answer). solver_temperature: the
    candidates' sampling temperature (they must differ)."""

    k: int = 10
    n_inputs: int = 12
    rules: Rules = field(default_factory=lambda: Rules(constant_answer=True))
    solver_temperature: float = 1.0


class Dropped(Exception):
    """The problem ends without an environment at `stage` (every configuration dropped, or the environment)."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage, self.reason = stage, reason


class Ledger:
    """The per-stage yields of one problem: configurations in and out, and each drop's reason."""

    def __init__(self) -> None:
        self.stages: dict[str, dict[str, int]] = {}
        self.reasons: Counter[str] = Counter()

    def record(self, stage: str, n_in: int, reasons: list[str]) -> None:
        self.stages[stage] = {"in": n_in, "out": n_in - len(reasons)}
        self.reasons.update(reasons)
        if n_in and n_in == len(reasons):
            raise Dropped(stage, Counter(reasons).most_common(1)[0][0])


def gym_base_source() -> str:
    return GYM_BASE.read_text()


def ask(endpoint: ChatEndpoint, messages: list[dict[str, str]], read: Callable[[str], Any], **kw: Any) -> Any:
    """One request and its reader; EndpointFailure and prompts.ReplyError pass to the caller (the problem fails)."""
    return read(endpoint.complete(messages, **kw))


def build_environment(problem: Problem, endpoint: ChatEndpoint, ledger: Ledger) -> dict[str, Any]:
    """The environment record with no configurations yet (stage "environment")."""
    messages = prompts.environment_messages(problem.question, problem.solution, problem.entry_point, problem.problem_id)
    code, class_name = ask(endpoint, messages, prompts.read_environment)
    ledger.stages["environment"] = {"in": 1, "out": 1}
    return {
        "env_id": f"synth/{problem.problem_id}",
        "class_name": class_name,
        "code": gym_base_source() + "\n\n" + code,
        "configs": [],
        "description": problem.question.strip(),
        "source": {"problem_id": problem.problem_id, "entry_point": problem.entry_point},
    }


def unit_tests(
    problem: Problem, endpoint: ChatEndpoint, runner: CodeGymRunner, settings: Settings, ledger: Ledger
) -> list[tuple[dict[str, Any], Any]]:
    """(input, the original solution's output) pairs (stages "inputs" and "outputs")."""
    messages = prompts.inputs_messages(
        problem.question, problem.solution, problem.entry_point, settings.n_inputs, problem.problem_id
    )
    inputs = ask(endpoint, messages, prompts.read_inputs)
    unique = list({json.dumps(i, sort_keys=True): i for i in inputs}.values())
    ledger.record("inputs", len(inputs), ["duplicate_input"] * (len(inputs) - len(unique)))
    execute = runner.sandbox.execute if runner.sandbox is not None else default_execute
    outputs = solution_outputs(execute, problem, unique, settings.rules.timeout_s)
    ledger.record("outputs", len(unique), ["solution_failed" for ok, _ in outputs if not ok])
    return [(i, value) for i, (ok, value) in zip(unique, outputs) if ok]


def default_execute(code: str, timeout_s: float) -> Any:
    from agentic_rl.sandbox import execute

    return execute(code, timeout_s=timeout_s)


def check_references(
    record: dict[str, Any], tests: list[tuple[dict[str, Any], Any]], runner: CodeGymRunner, settings: Settings, ledger
) -> dict[str, Any]:
    """The record with the configurations whose reference answer is the solution's output (stage "reference")."""
    keys = reference_keys(runner, {**record, "configs": [i for i, _ in tests]}, settings.rules.timeout_s)
    kept, reasons = [], []
    for (options, expected), key in zip(tests, keys):
        if key is None:
            reasons.append("env_error")
        elif key != answer_key(expected):
            reasons.append("reference_mismatch")
        else:
            kept.append(options)
    ledger.record("reference", len(tests), reasons)
    return {**record, "configs": kept}


def tool_docs(record: dict[str, Any], runner: CodeGymRunner) -> dict[str, str]:
    """The environment's tools and their documentation, from a reset in the sandbox (what the agent will read)."""
    payload = {"op": "reset", "code": record["code"], "class_name": record["class_name"]}
    reply, _ = runner.call({**payload, "options": record["configs"][0]})
    if not reply.get("ok") or not isinstance(reply.get("tools"), dict):
        raise Dropped("reference", "env_error")
    return {str(k): str(v) for k, v in reply["tools"].items()}


@dataclass
class Solved:
    """The configurations some candidate solved: index -> (candidate index, its verdict), and the candidates."""

    by_config: dict[int, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    candidates: list[str] = field(default_factory=list)
    malformed: int = 0


def solve_configs(
    problem: Problem, record: dict[str, Any], endpoint: ChatEndpoint, runner: CodeGymRunner, settings: Settings
) -> Solved:
    """pass@K: up to K candidates, each run on every configuration in one sandbox call (the driver's verify op)."""
    messages = prompts.solver_messages(problem.question, tool_docs(record, runner), problem.problem_id)
    solved = Solved()
    for _ in range(settings.k):
        try:
            code = ask(endpoint, messages, prompts.read_solver, temperature=settings.solver_temperature)
        except prompts.ReplyError:
            solved.malformed += 1  # one bad candidate is one failed try of the K, not the problem's failure
            continue
        index = len(solved.candidates)
        solved.candidates.append(code)
        trial = {**record, "code": record["code"] + "\n\n" + code, "oracle": prompts.SOLVER}
        for i, v in enumerate(config_verdicts(runner, trial, settings.rules.timeout_s)):
            right = v.get("ok") and v.get("matches_ref") and float(v.get("reward") or 0.0) >= 1.0
            if right and i not in solved.by_config:
                solved.by_config[i] = (index, v)
        if len(solved.by_config) == len(record["configs"]):
            break
    return solved


def complexity_reason(verdict: dict[str, Any], rules: Rules) -> str | None:
    if verdict["calls"] < rules.min_calls:
        return "too_few_calls"
    if verdict["calls"] > rules.max_calls:
        return "too_many_calls"
    return None


def keep_solved(record: dict[str, Any], solved: Solved, rules: Rules, ledger: Ledger) -> tuple[list[int], dict]:
    """Stages "solvable" and "complexity": the indices kept and each one's solving verdict."""
    n = len(record["configs"])
    ledger.record("solvable", n, ["unsolved"] * (n - len(solved.by_config)))
    n_tools = max(v.get("n_tools", 0) for _, v in solved.by_config.values())
    if n_tools < rules.min_tools:
        ledger.record("complexity", len(solved.by_config), ["too_few_tools"] * len(solved.by_config))
    reasons = {i: complexity_reason(v, rules) for i, (_, v) in solved.by_config.items()}
    ledger.record("complexity", len(reasons), [r for r in reasons.values() if r])
    kept = sorted(i for i, r in reasons.items() if r is None)
    return kept, {i: solved.by_config[i] for i in kept}


def finish_record(record: dict[str, Any], kept: list[int], verdicts: dict, solved: Solved) -> dict[str, Any]:
    """The kept environment: its configurations, their oracle calls, and the oracle when one candidate solves all."""
    out = {**record, "configs": [record["configs"][i] for i in kept]}
    out["oracle_calls"] = [verdicts[i][1]["calls"] for i in kept]
    users = Counter(verdicts[i][0] for i in kept)
    best, count = users.most_common(1)[0]
    if count == len(kept):
        out["code"] = record["code"] + "\n\n" + solved.candidates[best]
        out["oracle"] = prompts.SOLVER
    return out


def synthesize_problem(
    problem: Problem, endpoint: ChatEndpoint, runner: CodeGymRunner, settings: Settings, reference: Any, ledger: Ledger
) -> dict[str, Any]:
    """The environment made from `problem`, every stage passed; raises Dropped (no configuration left), or
    EndpointFailure / prompts.ReplyError (the problem's failure)."""
    record = build_environment(problem, endpoint, ledger)
    tests = unit_tests(problem, endpoint, runner, settings, ledger)
    record = check_references(record, tests, runner, settings, ledger)
    solved = solve_configs(problem, record, endpoint, runner, settings)
    if solved.malformed:
        ledger.reasons["malformed_candidate"] += solved.malformed
    if not solved.by_config:
        ledger.record("solvable", len(record["configs"]), ["unsolved"] * len(record["configs"]))
    kept, verdicts = keep_solved(record, solved, settings.rules, ledger)
    record = finish_record(record, kept, verdicts, solved)
    if settings.rules.constant_answer:
        index, dropped = drop_constant_answers(
            runner, record, list(range(len(record["configs"]))), settings.rules.timeout_s
        )
        ledger.record("constant", len(record["configs"]), [d["reason"] for d in dropped])
        record = subset(record, index)
    if reference is not None:
        index, reasons = reference.judge(record, settings.rules.max_success)
        ledger.record("difficulty", len(record["configs"]), reasons)
        record = subset(record, index)
    return record


def subset(record: dict[str, Any], index: list[int]) -> dict[str, Any]:
    """The record with only the configurations at `index` (and their oracle calls)."""
    out = {**record, "configs": [record["configs"][i] for i in index]}
    if "oracle_calls" in record:
        out["oracle_calls"] = [record["oracle_calls"][i] for i in index]
    return out
