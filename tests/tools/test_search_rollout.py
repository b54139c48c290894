"""The search tool inside a scripted rollout: what the model sees after `<search>`."""

from __future__ import annotations

from agentic_rl.rollout import ByteChatTokenizer, RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.rollout.agent import ToolSet
from agentic_rl.tools.search import NO_RESULTS, SearchTool
from tests.rollout.fakes import TASK, FakeTool


def run(query: str):
    log: list = []
    submit = FakeTool("submit", log)
    toolset = ToolSet(
        name="multi",
        tools={"search": SearchTool(backend="docstore", k=2, max_chars=400), "submit": submit},
        grader=submit,
        system_prompt="S",
    )
    replies = (f"<search>{query}</search>", "```submit\ndef add(a, b):\n    return a + b\n```")
    policy = ScriptedPolicy(lambda req: replies[req.turn_index])
    return run_episodes([(TASK, 0)], policy, toolset, RolloutConfig(observation_format="inline"))[0]


def test_search_observation_in_the_context():
    traj = run("Counter most_common")
    obs = traj.turns[0].observation
    assert obs.tool == "search" and obs.ok and obs.latency_ms >= 0
    seen = ByteChatTokenizer().decode(traj.turns[0].observation_ids)
    assert seen.startswith("\n<doc_result>\n[collections.Counter.most_common") and seen.endswith("</doc_result>\n")
    assert len(obs.text) <= 400 + len("<doc_result>\n\n</doc_result>") + 40  # capped body
    assert traj.loss_mask.count(0) == traj.prompt_len + sum(len(t.observation_ids) for t in traj.turns)
    assert traj.passed and traj.calls_by_kind()["search"] == 1


def test_nonsense_query_is_an_observation_not_a_crash():
    traj = run("zzqx qqqv")
    assert NO_RESULTS in traj.turns[0].observation.text
    assert traj.passed
