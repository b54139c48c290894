"""What the synthesis asks the model, and how its replies are read.

Three requests per problem, each a system and a user message:
  1. `environment_messages`: the problem and its reference solution; the model extracts the solution's steps as
     tools (methods of a `ToolEnv` subclass, each with a docstring: the documentation the agent will read) and
     writes `load(options)`, `Observe` and `get_ref_answer`. `ToolEnv` (agentic_rl/envs/builtin/gym_base.py)
     supplies the paper's format around them: `func_mapping`, `step`, `reset`, `Done`.
  2. `inputs_messages`: unit-test inputs, a JSON list of objects, each the keyword arguments of the solution's
     entry point (the configuration `reset(options)` receives). Their outputs are never the model's: the
     original solution computes them in the sandbox.
  3. `solver_messages`: a candidate solution that uses the tools alone, `def solve(call)`; K of them are asked for.
Every reader raises `ReplyError` (a malformed reply, recorded as that problem's failure) instead of guessing.
Nothing here runs the model's code: classes and functions are found with `ast`, which only parses.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)
BASE_CLASS = "ToolEnv"
SOLVER = "solve"

ENVIRONMENT_SYSTEM = f"""You turn a coding problem and its reference solution into an interactive environment
in which an agent solves the problem by calling tools, one call at a time, instead of writing code.
Write one Python class that subclasses {BASE_CLASS} (it is already defined; do not import or redefine it):
- load(self, options): store the task's input from the dict options (the keyword arguments of the solution's
  function) in JSON-serializable attributes (lists, dicts, numbers, strings, booleans);
- Observe(self): return what the agent may see of the input (its size, or the input itself if it is small);
- 3 to 7 more tools: methods whose names start with a capital letter, each one step of the reference solution
  (read an element, compare, combine, update a running value); each takes JSON values and returns one;
- every tool has a docstring saying what it does, its parameters and what it returns;
- get_ref_answer(self): the answer the reference solution gives for the stored input.
{BASE_CLASS} supplies Done(answer), step and reset. Answer with one ```python block and nothing else."""

INPUTS_SYSTEM = """You write unit-test inputs for a Python function. Answer with one ```json block holding a
JSON list of objects; each object maps the function's parameter names to argument values. Vary the sizes and
include edge cases. Write only inputs, never expected outputs."""

SOLVER_SYSTEM = """You solve a task only by calling the tools of an environment. Write a Python function
`def solve(call):` where `call(name, **parameters)` runs the tool `name` and returns its result as a string
(JSON text for numbers, lists, dicts and booleans: decode it with json.loads). Start with Observe. Return the
final answer (do not call Done). Do not compute the answer without the tools. You may import json.
Answer with one ```python block and nothing else."""


class ReplyError(ValueError):
    """A reply that does not hold what was asked for (recorded as the problem's failure `malformed_reply`)."""


def environment_messages(question: str, solution: str, entry_point: str, problem_id: str) -> list[dict[str, str]]:
    user = (
        f"Problem {problem_id}:\n{question.strip()}\n\nReference solution (its entry point is `{entry_point}`):\n"
        f"```python\n{solution.strip()}\n```"
    )
    return [{"role": "system", "content": ENVIRONMENT_SYSTEM}, {"role": "user", "content": user}]


def inputs_messages(question: str, solution: str, entry_point: str, n: int, problem_id: str) -> list[dict[str, str]]:
    user = (
        f"Problem {problem_id}:\n{question.strip()}\n\nFunction:\n```python\n{solution.strip()}\n```\n"
        f"Write {n} inputs for `{entry_point}`."
    )
    return [{"role": "system", "content": INPUTS_SYSTEM}, {"role": "user", "content": user}]


def solver_messages(question: str, tool_docs: dict[str, str], problem_id: str) -> list[dict[str, str]]:
    tools = "\n".join(f"- {name}: {doc or '(no documentation)'}" for name, doc in tool_docs.items())
    user = f"Task {problem_id}:\n{question.strip()}\n\nTools:\n{tools}"
    return [{"role": "system", "content": SOLVER_SYSTEM}, {"role": "user", "content": user}]


def fenced(text: str, languages: tuple[str, ...]) -> str:
    """The first fenced block in one of `languages` ('' matches an unlabelled fence)."""
    for lang, body in FENCE.findall(text):
        if lang.lower() in languages:
            return body
    raise ReplyError(f"no ```{languages[0]} block in the reply (it starts {text[:80]!r})")


def parse_tree(code: str, what: str) -> ast.Module:
    try:
        return ast.parse(code)
    except SyntaxError as exc:
        raise ReplyError(f"the {what} is not valid Python: {exc.msg} (line {exc.lineno})") from None


def read_environment(text: str) -> tuple[str, str]:
    """(the class's source, its name) from an environment reply: the first class that subclasses ToolEnv."""
    code = fenced(text, ("python", "py", ""))
    for node in parse_tree(code, "environment").body:
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", None) == BASE_CLASS for b in node.bases):
            return code, node.name
    raise ReplyError(f"the reply defines no class that subclasses {BASE_CLASS}")


def read_inputs(text: str) -> list[dict[str, Any]]:
    """The list of keyword-argument objects of an inputs reply."""
    try:
        inputs = json.loads(fenced(text, ("json", "")))
    except ValueError as exc:
        raise ReplyError(f"the inputs are not JSON ({exc})") from None
    if not isinstance(inputs, list) or not inputs or not all(isinstance(i, dict) for i in inputs):
        raise ReplyError("the inputs must be a non-empty JSON list of objects (keyword arguments)")
    return inputs


def read_solver(text: str) -> str:
    """The source of a candidate solution: it must define `solve`."""
    code = fenced(text, ("python", "py", ""))
    tree = parse_tree(code, "solution")
    if not any(isinstance(n, ast.FunctionDef) and n.name == SOLVER for n in tree.body):
        raise ReplyError(f"the reply defines no function {SOLVER}(call)")
    return code
