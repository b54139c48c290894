"""`RemotePolicy`: the rollout's `Policy` on sampler servers behind a router, following the trainer's weights.

- **Turns.** Each turn is sent as token ids (the episode's so far) with the active tools' closing markers as stop
  strings, then cut and, where a marker closed no call, resumed, exactly as the in-process vLLM backend does
  (`EngineTurn`); the turns of one server go in one call, the servers are called in parallel. Seeds come from the
  global RNG, one per turn, as in the other backends.
- **Versioned weight sync.** At the start of a rollout (`session`), if the trainer's weights changed since the last
  sync, version v + 1 is written to the sync folder and every server loads it. Two paths (`weight_sync`, from
  `rollout.vllm.weight_sync`): `merged`, the merged weights of the modules LoRA touches (`synced_tensors`), loaded
  in place (`/load_weights`, which empties the prefix cache; what CPU serving wants, LoRA serving measured 10x
  slower there); `lora`, the adapter alone in a folder `adapter-v<N>` served under the name `policy-v<N>`
  (`/load_adapter`; a GPU with many adapters: vLLM's prefix cache is keyed by adapter). The time is
  `GenerationStats.sync_s` (`time/sync_s`), the bytes `last_sync_bytes` (and `take_sync_bytes`, per step); each
  turn records the version that sampled it (`turn_versions`).
- **Failures.** A server that fails costs its in-flight turns only: the router drops it and they are sent again to
  another (`router.retries`); with none left the rollout stops with one message.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

from agentic_rl.rollout.policy import GenerationStats, LogprobPolicy, SamplingParams, StopCondition, StopFn, TurnRequest
from agentic_rl.rollout.service.protocol import GenerateTurn, SamplerClient, SamplerDown
from agentic_rl.rollout.service.router import SamplerRouter
from agentic_rl.rollout.tokenizer import HFChatTokenizer
from agentic_rl.rollout.turns import EngineTurn
from agentic_rl.rollout.weights import synced_tensors, weights_fingerprint

logger = logging.getLogger(__name__)


WEIGHT_SYNCS = ("merged", "lora")


class WeightPublisher:
    """Versions of the trainer's weights, written to `folder` for the servers to load (only the newest is kept).

    `kind` merged: `policy-v<N>.safetensors`, the merged weights of the modules LoRA touches (`synced_tensors`).
    `kind` lora: `adapter-v<N>/`, the adapter as peft saves it (its A and B matrices only), served by name."""

    def __init__(self, model: Any, folder: Path, synced: bool = True, kind: str = "merged") -> None:
        if kind not in WEIGHT_SYNCS:
            raise ValueError(f"a weight sync is one of {WEIGHT_SYNCS}, got {kind!r}")
        if kind == "lora" and not hasattr(model, "peft_config"):
            raise ValueError(
                "rollout.vllm.weight_sync=lora sends a LoRA adapter, and this model has none: train with LoRA or set "
                "rollout.vllm.weight_sync=merged"
            )
        self.model, self.folder, self.kind = model, Path(folder), kind
        self.folder.mkdir(parents=True, exist_ok=True)
        self.version = 0  # servers started from the exported weights hold version 0
        # not `synced`: servers started elsewhere, whose weights are not known to be the trainer's
        self._synced = weights_fingerprint(model) if synced else None

    @property
    def op(self) -> str:
        """The server operation that loads a published version."""
        return "load_adapter" if self.kind == "lora" else "load_weights"

    def changed(self) -> bool:
        return weights_fingerprint(self.model) != self._synced

    def publish(self) -> tuple[int, Path]:
        """The next version's file or folder, written whole before it is named, so a server never reads half."""
        self.version += 1
        path = self.folder / self.name(self.version)
        partial = path.with_name(path.name + ".partial")
        if self.kind == "lora":
            shutil.rmtree(partial, ignore_errors=True)
            self.model.save_pretrained(str(partial))  # peft: the active adapter's weights and config only
            if not (partial / "adapter_config.json").is_file():
                raise RuntimeError(f"the model saved no adapter_config.json into {partial}: it holds no LoRA adapter")
        else:
            from safetensors.torch import save_file

            save_file({n: t.detach().contiguous() for n, t in synced_tensors(self.model)}, str(partial))
        os.replace(partial, path)
        old = self.folder / self.name(self.version - 1)
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)
        self._synced = weights_fingerprint(self.model)
        return self.version, path

    def name(self, version: int) -> str:
        return f"adapter-v{version}" if self.kind == "lora" else f"policy-v{version}.safetensors"


class RemotePolicy(LogprobPolicy):
    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        router: SamplerRouter,
        sync_folder: Path,
        synced: bool = True,
        weight_sync: str = "merged",
    ) -> None:
        self.tokenizer = HFChatTokenizer(tokenizer)
        self.router = router
        self.publisher = WeightPublisher(model, sync_folder, synced, weight_sync)
        self.last_sync_bytes = 0  # what the last sync's servers read, all together
        self.sync_bytes = 0  # since `take_sync_bytes` last took them (a training step's `rollout/sync_bytes`)
        self.turn_versions: list[int] = []  # per turn of the last `generate_with_logprobs`, the version that sampled it
        self.episode_versions: dict[int, int] = {}  # this rollout's episodes: the oldest version that sampled a turn
        self.samples_apart = True  # the servers hold their own weights: sampling may overlap the trainer's update
        self.sync_on_session = True  # False: the trainer sends weights itself, between updates (`sync_if_changed`)
        self._session: GenerationStats | None = None
        self._rollouts = 0

    @contextlib.contextmanager
    def session(self) -> Iterator[GenerationStats]:
        """One rollout: the servers are brought to the trainer's weights first (they must not change inside)."""
        outer, stats = self._session, GenerationStats()
        if outer is None:
            self._rollouts += 1
            self.episode_versions = {}
            if self.sync_on_session:
                stats.sync_s += self.sync_if_changed()
        self._session = stats
        try:
            yield stats
        finally:
            self._session = outer
            if outer is None:
                self.router.forget_episodes()

    def sync_if_changed(self) -> float:
        """`sync_weights` where the trainer's weights changed since the last sync; the seconds it took."""
        return self.sync_weights() if self.publisher.changed() else 0.0

    def sync_weights(self) -> float:
        """Publish the next version and load it on every server; returns the seconds it took."""
        started = time.perf_counter()
        version, path = self.publisher.publish()
        op = self.publisher.op
        sizes = self.router.broadcast(lambda c: c.post(op, {"version": version, "path": str(path)}))
        self.last_sync_bytes = sum(int(r.get("bytes", 0)) for r in sizes)
        self.sync_bytes += self.last_sync_bytes
        seconds = time.perf_counter() - started
        logger.info(
            "%s v%d sent to %d servers: %d bytes in %.2f s",
            "adapter" if op == "load_adapter" else "weights",
            version,
            len(sizes),
            self.last_sync_bytes,
            seconds,
        )
        return seconds

    def take_sync_bytes(self) -> int:
        """The bytes the servers read since the last call (and none are counted twice)."""
        taken, self.sync_bytes = self.sync_bytes, 0
        return taken

    def generate_with_logprobs(
        self, requests: Sequence[TurnRequest], sampling: SamplingParams, stop: StopCondition | StopFn
    ) -> list[tuple[list[int], list[float]]]:
        """Per request: this turn's new ids, cut as the HF backend cuts them, and their sampler log-probs."""
        if self._session is None:
            with self.session():
                return self.generate_with_logprobs(requests, sampling, stop)
        stats = self._session
        started = time.perf_counter()
        seeds = torch.randint(0, 2**62, (len(requests),)).tolist()  # one per turn, from the global RNG
        turns = [EngineTurn(request, seed, sampling, stop) for request, seed in zip(requests, seeds)]
        versions = self._run(turns)
        out = [t.cut(self.tokenizer) for t in turns]
        self.turn_versions = [versions[id(t)] for t in turns]
        for request, version in zip(requests, self.turn_versions):
            if request.episode is not None:
                known = self.episode_versions.get(request.episode, version)
                self.episode_versions[request.episode] = min(known, version)
        stats.generated_tokens += sum(len(ids) for ids, _ in out)
        stats.prefill_tokens += sum(len(r.history_ids) for r in requests)  # an upper bound: servers cache prefixes
        stats.generate_s += time.perf_counter() - started
        return out

    def _run(self, turns: list[EngineTurn]) -> dict[int, int]:
        """Every turn to its end, over as many calls as its marker rounds and server failures take; returns the
        oldest version that sampled each (by `id`)."""
        versions: dict[int, int] = {}
        pending = turns
        while pending:
            batches: dict[int, tuple[SamplerClient, list[EngineTurn]]] = {}
            for turn in pending:
                episode = turn.request.episode
                key = (self._rollouts, episode) if episode is not None else id(turn)  # unnamed: no stickiness
                client = self.router.server_for(key)
                batches.setdefault(id(client), (client, []))[1].append(turn)
            pending = []
            with ThreadPoolExecutor(max_workers=len(batches)) as pool:
                calls = [(pool.submit(c.generate, [_wire(t) for t in ts]), c, ts) for c, ts in batches.values()]
            for future, client, batch in calls:
                try:
                    replies = future.result()
                except SamplerDown as exc:
                    self.router.failed(client, exc, len(batch))  # raises when no server is left
                    pending += batch
                    continue
                for turn, reply in zip(batch, replies):
                    versions[id(turn)] = min(versions.get(id(turn), reply.version), reply.version)
                    if turn.extend(reply.ids, reply.logprobs, reply.stopped, self.tokenizer):
                        pending.append(turn)
        return versions


def _wire(turn: EngineTurn) -> GenerateTurn:
    sampling, markers = turn.sampling, turn.markers()
    return GenerateTurn(
        ids=turn.prompt(),
        max_tokens=turn.budget(),
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        seed=turn.call_seed(),
        stop=list(markers) if markers else None,
    )
