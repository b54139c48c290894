"""Environment servers (envs.serve): a served rollout is the in-process one bit for bit, episodes survive a dead
server by moving with their state, servers refuse requests without their token, bad servers are recorded failures,
and the servers a run starts are gone at its end."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import threading
from dataclasses import asdict

import pytest
from omegaconf import OmegaConf

from agentic_rl.envs.faults import InfraFailure
from agentic_rl.envs.serve import EnvClient, EnvServer, ServerPool, ServerRefused, Sessions, environment_servers, served
from agentic_rl.envs.toolset import build_environment
from agentic_rl.rewards import binary, shaped
from agentic_rl.rollout import RolloutConfig, ScriptedPolicy, run_episodes
from agentic_rl.serving import is_loopback
from agentic_rl.tools import build_toolset
from agentic_rl.types import Task
from tests.envs.serve_stubs import InProcessSandbox, counter_task, local_environment, thread_server, tools_cfg
from tests.envs.test_codegym import act

CODE_TASK = Task(task_id="code/solve", prompt="Write solve().", tests="", harness="pytest", entry_point="solve")
CODEGYM_REPLIES = [
    act("Observe"),
    act("Add", value=2),
    act("Add", value=-1),
    act("Add", value=3),
    act("Done", answer=5),
]
CODE_REPLIES = [
    "```python\nprint(6 * 7)\n```",
    "```python\nraise KeyError('k')\n```",
    "```submit\ndef solve():\n    return 1\n```",
]


def script(req):
    replies = CODE_REPLIES if req.task.harness == "pytest" else CODEGYM_REPLIES
    return replies[min(req.turn_index, len(replies) - 1)]


def jobs():
    return [(counter_task((2, 3)), 0), (counter_task((2, 3)), 1), (CODE_TASK, 0), (counter_task((4, 1)), 0)]


def roll(env, policy_script=script, workers=2):
    cfg = RolloutConfig(max_turns=6, max_new_tokens=300, tool_workers=workers)
    return run_episodes(jobs(), ScriptedPolicy(policy_script), env, cfg)


def record(traj):
    """Everything a trajectory says, but the latency of its calls and the retries (what a dead server changes)."""
    turns = []
    for turn in traj.turns:
        obs = None if turn.observation is None else {**asdict(turn.observation), "latency_ms": 0, "retries": ()}
        turns.append((turn.generated_ids, turn.text, turn.observation_ids, obs))
    rewards = (binary(traj).total, shaped(traj).total)
    return traj.token_ids, traj.loss_mask, traj.passed, traj.finish_reason, traj.infra_failure, turns, rewards


@pytest.fixture(scope="module")
def code_tools():
    return tools_cfg("code")


@pytest.fixture(scope="module")
def in_process(code_tools):
    return [record(t) for t in roll(local_environment(code_tools, InProcessSandbox()))]


def served_env(code_tools, urls, token=None, retries=2, timeout_s=30.0):
    pool = ServerPool([EnvClient(u, token, timeout_s) for u in urls], retries=retries)
    return build_environment(build_toolset(code_tools, InProcessSandbox()), None, served(pool, code_tools)), pool


def test_a_served_rollout_is_the_in_process_rollout_bit_for_bit(code_tools, in_process):
    with thread_server(InProcessSandbox()) as one, thread_server(InProcessSandbox()) as two:
        env, _ = served_env(code_tools, [one.url, two.url])
        trajs = roll(env)
        assert len(one.sessions) == 0 and len(two.sessions) == 0  # every session closed at the end
    assert [record(t) for t in trajs] == in_process
    # the rollout did what it says: a CodeGym pass through the state, a policy error typed as such, a graded submit
    codegym, code = trajs[0], trajs[2]
    assert codegym.passed and codegym.turns[2].observation.fault == "policy" and codegym.turns[3].observation.ok
    assert (
        code.passed and code.turns[0].observation.text.count("42") == 1 and code.turns[1].observation.fault == "policy"
    )
    assert all(t.infra_retries() == [] for t in trajs)


def test_a_served_episode_gives_its_final_answer_as_in_process(code_tools):
    """The forced_submit baseline asks an episode for its final answer: served, the environment's own (a code task's
    submit block, a CodeGym Done), never none."""
    local = local_environment(code_tools, InProcessSandbox())
    with thread_server(InProcessSandbox()) as one:
        env, _ = served_env(code_tools, [one.url])
        for task in (CODE_TASK, counter_task((2, 3))):
            served_episode, own = env.open(task, 0), local.open(task, 0)
            answer = served_episode.final_answer()
            assert answer is not None and type(answer) is type(own.final_answer())
            assert answer.prefix == own.final_answer().prefix
            served_episode.close()


def test_episodes_move_with_their_state_when_their_server_dies(code_tools, in_process):
    with thread_server(InProcessSandbox()) as one, thread_server(InProcessSandbox()) as two:
        env, pool = served_env(code_tools, [one.url, two.url])

        def killing(req):  # the first server goes away in the middle of every episode
            if req.turn_index == 2 and one.socket.fileno() >= 0:
                one.shutdown()
                one.server_close()
            return script(req)

        trajs = roll(env, killing, workers=1)
    assert [record(t) for t in trajs] == in_process  # nothing lost: same observations, same rewards
    moved = [t for t in trajs if t.infra_retries()]
    assert moved and all(t.infra_retries() == ["server_died"] for t in moved)
    assert [c.url for c in pool.live()] == [two.url]


def test_a_restarted_server_has_lost_its_sessions_and_the_episodes_open_again_from_their_state(code_tools, in_process):
    sandbox = InProcessSandbox()
    with thread_server(sandbox) as first, contextlib.ExitStack() as stack:
        env, pool = served_env(code_tools, [first.url])

        def restarting(req):  # the server restarts at the same address, holding no session
            if req.turn_index == 2 and first.socket.fileno() >= 0:
                first.shutdown()
                first.server_close()
                stack.enter_context(thread_server(sandbox, port=first.server_address[1]))
            return script(req)

        trajs = roll(env, restarting, workers=1)
    assert [record(t) for t in trajs] == in_process
    assert [t.infra_retries() for t in trajs if t.task_id.startswith("codegym")] == [["session_lost"]] * 3
    assert [c.url for c in pool.live()] == [first.url]  # a server that lost a session is still in the turn


def test_with_every_server_gone_in_flight_episodes_are_infrastructure_failures_and_opening_is_an_error(code_tools):
    with thread_server(InProcessSandbox()) as one:
        env, _ = served_env(code_tools, [one.url], retries=1)

        def killing(req):
            if req.turn_index == 1 and one.socket.fileno() >= 0:
                one.shutdown()
                one.server_close()
            return script(req)

        trajs = roll(env, killing)
        assert all(t.finish_reason == "infra_failure" and t.infra_failure == "server_died" for t in trajs)
        assert all(len(t.turns) == 2 and t.turns[-1].observation.fault == "infra" for t in trajs)
        with pytest.raises(RuntimeError, match="every environment server is down"):
            roll(env)


def test_a_server_refuses_requests_without_its_token():
    with thread_server(InProcessSandbox(), token="s3cret") as server:
        for token in (None, "wrong"):
            with pytest.raises(ServerRefused, match="401"):
                EnvClient(server.url, token).health()
        assert EnvClient(server.url, "s3cret").health()["ok"]
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
        conn.request("POST", "/open", body=b"{}", headers={"Content-Type": "application/json"})
        assert conn.getresponse().status == 401  # refused before the body is even read
        conn.close()


def test_a_server_for_other_machines_needs_a_token():
    sessions = Sessions(lambda spec: None)
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and not is_loopback("0.0.0.0")
    with pytest.raises(ValueError, match="needs a token"):
        EnvServer("0.0.0.0", 0, sessions, None)
    server = EnvServer("0.0.0.0", 0, sessions, "s3cret")  # with a token it may listen off loopback
    server.server_close()


def test_requests_that_are_not_the_protocol_get_clear_errors(code_tools):
    with thread_server(InProcessSandbox()) as server:
        client = EnvClient(server.url)
        spec = {"tools": OmegaConf.to_container(code_tools, resolve=True)}
        spec["tools"]["execute"]["_target_"] = "os.system"
        with pytest.raises(ServerRefused, match=r"builds only agentic_rl\.\* targets"):
            client.post("open", {"spec": spec, "task": {}, "sample_index": 0})
        with pytest.raises(ServerRefused, match="has no 'session'"):
            client.post("step", {"call": {}})
        with pytest.raises(InfraFailure, match="session_lost"):
            client.post("step", {"session": "feed", "call": {"name": "x", "content": "", "start": 0, "end": 0}})
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
        conn.request("POST", "/open", body=b"{not json", headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 400 and b"not JSON" in response.read()
        conn.close()


@pytest.fixture
def bad_server():
    """A socket that answers every connection with `reply` (None: accepts and never answers)."""
    servers = []

    def start(reply: bytes | None):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        held = []

        def serve():
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:
                    return
                held.append(conn)
                if reply is not None:
                    conn.recv(65536)
                    conn.sendall(reply)
                    conn.close()

        threading.Thread(target=serve, daemon=True).start()
        servers.append((sock, held))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    yield start
    for sock, held in servers:
        sock.close()
        for conn in held:
            conn.close()


def test_a_server_that_answers_garbage_or_hangs_is_a_recorded_failure(bad_server):
    garbage = bad_server(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    not_http = bad_server(b"SSH-2.0-OpenSSH\r\n")
    silent = bad_server(None)
    for url, cause in ((garbage, "bad_reply"), (not_http, "bad_reply"), (silent, "server_timeout")):
        with pytest.raises(InfraFailure) as failure:
            EnvClient(url, timeout_s=0.5).post("open", {})
        assert failure.value.cause == cause


def test_episodes_opened_past_a_garbage_server_are_the_in_process_ones(code_tools, in_process, bad_server):
    garbage = bad_server(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]")
    with thread_server(InProcessSandbox()) as good:
        env, pool = served_env(code_tools, [garbage, good.url], timeout_s=2.0)
        trajs = roll(env)
    assert [record(t) for t in trajs] == in_process
    assert [c.url for c in pool.live()] == [good.url]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_local_servers_serve_survive_a_killed_one_and_are_stopped_at_the_end(code_tools, in_process):
    envs = OmegaConf.create({"servers": 2, "startup_timeout_s": 600, "timeout_s": 60})
    sandbox = OmegaConf.create({"_target_": "tests.envs.serve_stubs.InProcessSandbox"})
    with pytest.raises(KeyError, match="the run failed"):  # whatever ends the run, its servers end with it
        with environment_servers(envs, sandbox) as pool:
            processes = list(pool.processes)
            assert len(processes) == 2 and all(c.url.startswith("http://127.0.0.1:") for c in pool.clients)
            env = build_environment(build_toolset(code_tools, InProcessSandbox()), None, served(pool, code_tools))

            def killing(req):  # SIGKILL: the server gets no chance to say anything
                if req.turn_index == 2 and processes[0].poll() is None:
                    os.kill(processes[0].pid, signal.SIGKILL)
                    processes[0].wait()
                return script(req)

            trajs = roll(env, killing, workers=1)
            assert [record(t) for t in trajs] == in_process
            assert any(t.infra_retries() == ["server_died"] for t in trajs)
            raise KeyError("the run failed")
    assert all(p.poll() is not None and _gone(p.pid) for p in processes)


def test_no_servers_is_the_default_and_bad_settings_say_how_to_fix_them():
    with environment_servers(None, None) as pool:
        assert pool is None
    with environment_servers(OmegaConf.create({"servers": 0}), None) as pool:
        assert pool is None
    for bad, message in (({"servers": -1}, ">= 0"), ({"servers": []}, "at least one URL"), ({"retries": -1}, ">= 0")):
        with pytest.raises(ValueError, match=message), environment_servers(OmegaConf.create(bad), None):
            pass
    with pytest.raises(ValueError, match="http://HOST:PORT"):
        EnvClient("ftp://example.org")
