"""The evaluator reads each mode's episodes with the hooks of the environment they ran in (`episode_counts` into the
record's "env" field, `metrics` into the mode's metrics), as training does, not with the default environment's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agentic_rl.envs.toolset import ToolSetEnvironment
from agentic_rl.evaluation.evaluator import EvalConfig, evaluate, flat_metrics
from agentic_rl.evaluation.records import ResultStore
from agentic_rl.rollout.policy import ScriptedPolicy
from tests.evaluation.test_evaluator import GOOD, ROLLOUT, FakeSandbox, compose_cfg, tasks, toolsets


@pytest.fixture(scope="module")
def cfg():
    return compose_cfg("evaluator.toolsets.multi_tool.search.backend=docstore")


@dataclass
class CountingEnvironment(ToolSetEnvironment):
    """The default environment with its own hooks: it counts each episode's turns under its label."""

    label: str = "counting"

    def episode_counts(self, traj, task):
        return {"label": self.label, "turns": len(traj.turns)}

    def metrics(self, counts):
        counts = [c for c in counts if c is not None]
        return {f"env/{self.label}_turns": float(sum(c["turns"] for c in counts)), "env/episodes": float(len(counts))}


def environments(cfg, modes):
    return {m: CountingEnvironment.of(ts, sandbox=None) for m, ts in toolsets(cfg, FakeSandbox(), modes).items()}


def test_records_and_metrics_come_from_the_modes_own_environment(cfg, tmp_path):
    envs = environments(cfg, ("code_only", "last_block"))
    envs["last_block"].label = "baseline"  # each mode is read with its own environment, the baseline's included
    script = ScriptedPolicy(
        lambda req: "```python\nprint(1)\n```" if req.turn_index == 0 else f"```submit\n{GOOD}\n```"
    )
    store = ResultStore.in_dir(tmp_path)
    results = evaluate(
        tasks(2), script, envs, ROLLOUT, EvalConfig(modes=["code_only", "last_block"]), progress=False, store=store
    )

    code = results["code_only"]
    assert [r["env"] for r in code.records] == [{"label": "counting", "turns": 2}] * 2
    assert code.metrics["env/counting_turns"] == 4.0 and code.metrics["env/episodes"] == 2.0
    assert [r["env"]["label"] for r in results["last_block"].records] == ["baseline"] * 2
    assert flat_metrics(results)["eval/last_block/env/baseline_turns"] == 4.0
    assert all(
        r["env"] == {"label": "counting", "turns": 2} for r in store.records.values() if r["mode"] == "code_only"
    )


def test_a_resumed_mode_reads_its_stored_records_with_the_same_environment(cfg, tmp_path):
    """Metrics come from records, so a mode resumed from results.jsonl reports what the first run did."""
    never = ScriptedPolicy(lambda req: (_ for _ in ()).throw(AssertionError("a stored episode was run again")))
    turns = []
    for policy in (ScriptedPolicy(lambda req: f"```submit\n{GOOD}\n```"), never):  # the first run, then its resume
        envs, store = environments(cfg, ["code_only"]), ResultStore.in_dir(tmp_path)
        result = evaluate(tasks(2), policy, envs, ROLLOUT, EvalConfig(modes=["code_only"]), progress=False, store=store)
        turns.append(result["code_only"].metrics["env/counting_turns"])
    assert turns == [2.0, 2.0]
