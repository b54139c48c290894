"""An environment server builds the run's environment (its `env` node, through `environment_from_config` as training
builds it), not the default one: episodes of a run with another `env` are stepped by that environment on the server,
in a thread here and in a server process the run starts; a server started for another environment refuses the run
with the option that fixes it."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, replace

import pytest
from omegaconf import OmegaConf

from agentic_rl.envs.serve import EnvClient, EnvServer, ServerPool, ServerRefused, Sessions, environment_servers, served
from agentic_rl.envs.serve.__main__ import environment_builder
from agentic_rl.envs.toolset import ToolSetEnvironment, ToolSetEpisode, environment_from_config
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.tools import build_toolset
from agentic_rl.types import Task
from tests.envs.serve_stubs import InProcessSandbox, tools_cfg

TAGGED = {"_target_": "tests.envs.test_serve_env.tagged_environment", "tag": "blue"}
TASK = Task(task_id="code/solve", prompt="Write solve().", tests="", harness="pytest", entry_point="solve")
REPLIES = ["```python\nprint(6 * 7)\n```", "```submit\ndef solve():\n    return 1\n```"]


class TaggedEpisode(ToolSetEpisode):
    def step(self, call):
        obs = super().step(call)
        return replace(obs, text=f"{obs.text} [{self.toolset.tag} in {os.getpid()}]")


@dataclass
class TaggedEnvironment(ToolSetEnvironment):
    """The default environment, but each observation says it was stepped here: the environment's tag and the pid of
    the process that stepped it."""

    tag: str = "tagged"

    def open(self, task, sample_index):
        if self.served is not None:
            return super().open(task, sample_index)  # on a server, which steps its own environment
        return TaggedEpisode(self, self._episode_tools, task)


def tagged_environment(toolset, sandbox=None, served=None, tag="tagged"):
    """An `env` `_target_`: the environment from the run's runtime objects, as conf/env/*.yaml builds one."""
    env = TaggedEnvironment.of(toolset, sandbox=sandbox, served=served)
    env.tag = tag
    return env


@pytest.fixture(scope="module")
def code_tools():
    return tools_cfg("code")


@contextlib.contextmanager
def server_for(env_cfg):
    """A server in a thread of this process, started as `python -m agentic_rl.envs.serve --env ...` starts one."""
    server = EnvServer("127.0.0.1", 0, Sessions(environment_builder(InProcessSandbox(), env_cfg)), None)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def observations(code_tools, pool, env_cfg):
    """The observation texts of one episode of the run whose environment is `env_cfg`, stepping on `pool`."""
    toolset = build_toolset(code_tools, InProcessSandbox())
    env = environment_from_config(env_cfg, toolset, None, served(pool, code_tools))
    policy = ScriptedPolicy(lambda req: REPLIES[min(req.turn_index, len(REPLIES) - 1)])
    traj = run_episodes([(TASK, 0)], policy, env, RolloutConfig(max_turns=3, max_new_tokens=200))[0]
    assert traj.passed and not traj.infra_retries()
    return [turn.observation.text for turn in traj.turns]


def test_a_server_steps_the_environment_the_run_configured(code_tools):
    tagged = OmegaConf.create(TAGGED)
    in_process = observations(code_tools, None, tagged)
    assert in_process[0].startswith("<exec_result>\n42") and all(
        t.endswith(f"[blue in {os.getpid()}]") for t in in_process
    )
    with server_for(tagged) as server:
        pool = ServerPool([EnvClient(server.url, None, 30.0)], env=TAGGED)
        assert observations(code_tools, pool, tagged) == in_process
        assert len(server.sessions) == 0


def test_a_server_started_for_another_environment_refuses_the_run_and_says_how_to_start_one(code_tools):
    tagged = OmegaConf.create(TAGGED)
    with server_for(None) as default_server:  # started without --env: the default environment
        pool = ServerPool([EnvClient(default_server.url, None, 30.0)], env=TAGGED)
        with pytest.raises(ServerRefused, match=r"start a server for the run with --env '\{.*tagged_environment"):
            observations(code_tools, pool, tagged)
    with server_for(tagged) as tagged_server:  # and a default run is not stepped by a tagged server either
        pool = ServerPool([EnvClient(tagged_server.url, None, 30.0)])
        with pytest.raises(ServerRefused, match="build_environment"):
            observations(code_tools, pool, None)


def test_local_servers_are_started_with_the_runs_environment(code_tools):
    envs = OmegaConf.create({"servers": 1, "startup_timeout_s": 600, "timeout_s": 60})
    sandbox = OmegaConf.create({"_target_": "tests.envs.serve_stubs.InProcessSandbox"})
    tagged = OmegaConf.create(TAGGED)
    with environment_servers(envs, sandbox, tagged) as pool:
        texts = observations(code_tools, pool, tagged)
        server_pid = pool.processes[0].pid
    assert server_pid != os.getpid() and all(t.endswith(f"[blue in {server_pid}]") for t in texts)
