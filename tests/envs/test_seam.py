"""The environment seam: tool sets open stateless episodes with the old behaviour, a data record imports no
tools, and the tool set does not build its own answer tool through an import circle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agentic_rl
from agentic_rl.envs import ToolSetEnvironment, as_environment
from agentic_rl.envs.toolset import ToolSetEpisode
from agentic_rl.rollout import (
    ByteChatTokenizer,
    RolloutConfig,
    ScriptedPolicy,
    run_episodes,
)
from agentic_rl.tools.base import ToolSet
from agentic_rl.tools.code import SubmitTool
from agentic_rl.types import Observation, Task, ToolCall

TASK = Task(task_id="t/add", prompt="Write add(a, b).", tests="", harness="pytest", entry_point="add")


class Grader:
    name, description, spec = "submit", "submit", SubmitTool.spec

    def __call__(self, call: ToolCall, task: Task) -> Observation:
        ok = "a + b" in call.content
        return Observation(tool="submit", text="<test_result>ok</test_result>", ok=True, passed=ok)


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports, at its top or inside a function."""
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return names | {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}


def test_types_and_tool_base_import_nothing_they_should_not():
    root = Path(agentic_rl.__file__).parent
    assert not {m for m in imported_modules(root / "types.py") if m.startswith("agentic_rl")}
    assert "agentic_rl.tools.code" not in imported_modules(root / "tools" / "base.py")
    code = "import sys, agentic_rl.types; assert not [m for m in sys.modules if m.startswith('agentic_rl.tools')]"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def test_a_set_without_tools_answers_once_with_the_answer_tool():
    ts = ToolSet(name="none", tools={}, grader=Grader(), system_prompt="SYS")
    env = as_environment(ts)
    assert isinstance(env, ToolSetEnvironment) and env.answers_once and ts.tools == {}
    episode = env.open(TASK, 0)
    assert isinstance(episode, ToolSetEpisode) and episode.active == ("answer",)
    policy = ScriptedPolicy(lambda req: "```python\ndef add(a, b):\n    return a + b\n```")
    traj = run_episodes([(TASK, 0)], policy, ts, RolloutConfig(max_turns=3))[0]
    assert traj.passed and traj.finish_reason == "passed" and len(traj.turns) == 1
    assert traj.calls_by_kind()["answer"] == 1 and traj.tools[-1] == "answer"


def test_episodes_declare_the_counted_tools_and_trajectories_carry_them():
    ts = ToolSet(name="code", tools={"submit": Grader()}, grader=Grader(), system_prompt="SYS")
    traj = run_episodes(
        [(TASK, 0)], ScriptedPolicy(lambda req: "```submit\nreturn a + b\n```"), ts, RolloutConfig(max_turns=2)
    )[0]
    assert traj.tools[:3] == ("search", "execute", "submit")  # every declared tool, zeros included
    assert traj.calls_by_kind() == {"search": 0, "execute": 0, "submit": 1, "none": 0}
    assert ByteChatTokenizer().decode(traj.token_ids[: traj.prompt_len]).count("SYS") == 1
