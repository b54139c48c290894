"""The warm-up's maths: supervised fine-tuning (SFT) of the LoRA adapter on demonstration trajectories.

A demonstration is a `Trajectory` built by the rollout loop itself (`agentic_rl.warmup`), so its `loss_mask` marks
exactly the agent's own tokens, as in RL. The objective is the mean negative log-likelihood of those tokens:

    loss = - Σ_b Σ_t mask[b, t] · log p(x[b, t+1] | x[b, ≤t]) / Σ_b Σ_t mask[b, t]

at temperature 1 (the model's own distribution; RL scores at its sampling temperature, SFT has none), averaged over
every agent token of the optimizer step's batch, not per sequence: a long demonstration weighs by its tokens,
as in TRL's SFTTrainer. Prompt and observation tokens get no gradient (their rows are never projected).
Micro-batches (`logprobs.token_budget_batches`, the GRPO update's budget) bound memory: each one back-propagates
its share Σ nll / N_batch, so the accumulated gradient is that of the batch mean. One optimizer step per batch,
gradients clipped like the GRPO step's (`algo.max_grad_norm`). Only parameters with `requires_grad` (the adapter)
are in the optimizer; the base weights never change.

`warmup/token_accuracy` is the share of agent tokens that are the model's argmax prediction, computed from the same
logits before the step (TRL's `mean_token_accuracy`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import torch
import torch.nn.functional as F

from agentic_rl.algo.logprobs import (
    PrefixPass,
    SharedPrefix,
    agent_hidden_states,
    group_prefix,
    padded_batch,
    token_budget_batches,
    trainer_precision,
)
from agentic_rl.types import Trajectory

T = TypeVar("T")


@dataclass
class WarmupConfig:
    """The warm-up stage (conf/warmup/*.yaml; `warmup=sft`): SFT of the LoRA adapter on scripted demonstrations of
    the training tasks, run once at the start of the training run, after the evaluation before and before GRPO.

    epochs: passes over the kept demonstrations (0 = no warm-up: `warmup=none`).
    batch_size: demonstrations per optimizer step (the last batch of an epoch may be smaller).
    lr: the warm-up's own learning rate; null = the run's optimizer as configured (`optimizer`, i.e. algo.lr).
        The warm-up always gets an optimizer of its own, so GRPO starts with fresh moments either way.
    tasks: demonstrate the first N training tasks (in the run's task order); null = all of them.
    micro_batch_tokens: padded tokens per forward/backward; null = algo.micro_batch_tokens.
    only: train the warm-up alone, with no GRPO step after it (`warmup=sft-only`): the study's warm-up arm, so
        that RL's own share of a gain is measured. The evaluations before and after run as usual.
    rl_tasks: which training tasks GRPO draws from: `all` of them, or the `rest` the warm-up did not demonstrate
        (needs `tasks`). On demonstrated tasks a warmed-up policy mostly passes every sample, so most groups have
        no reward spread and take no update; on the rest, RL has to carry the behaviour to tasks it was not shown.
    """

    epochs: int = 0
    batch_size: int = 8
    lr: float | None = None
    tasks: int | None = None
    micro_batch_tokens: int | None = None
    only: bool = False
    rl_tasks: str = "all"  # all | rest

    @property
    def enabled(self) -> bool:
        return self.epochs > 0

    def validate(self) -> WarmupConfig:
        checks = [
            (self.epochs >= 0, f"warmup.epochs must be >= 0 (0 = no warm-up), got {self.epochs}"),
            (self.batch_size >= 1, f"warmup.batch_size must be >= 1 (demonstrations per step), got {self.batch_size}"),
            (
                self.lr is None or self.lr > 0,
                f"warmup.lr must be > 0, or null for the run's optimizer settings (algo.lr), got {self.lr}",
            ),
            (
                self.tasks is None or self.tasks >= 1,
                f"warmup.tasks must be >= 1, or null for every training task, got {self.tasks}",
            ),
            (
                self.micro_batch_tokens is None or self.micro_batch_tokens >= 1,
                f"warmup.micro_batch_tokens must be >= 1, or null for algo.micro_batch_tokens, got "
                f"{self.micro_batch_tokens}",
            ),
            (
                self.rl_tasks in ("all", "rest"),
                f"warmup.rl_tasks must be all or rest (the tasks the warm-up did not demonstrate), got "
                f"{self.rl_tasks!r}",
            ),
            (
                self.rl_tasks == "all" or (self.enabled and self.tasks is not None),
                "warmup.rl_tasks=rest needs a warm-up of the first warmup.tasks=N training tasks, so that GRPO has the "
                "others. Fix: set warmup.tasks (e.g. half of data.limit), or warmup.rl_tasks=all",
            ),
            (
                self.enabled or not self.only,
                "warmup.only=true with warmup.epochs=0 would train nothing at all. Fix: warmup=sft-only "
                "(or set warmup.epochs >= 1)",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        return self

    def split(self, tasks: Sequence[T]) -> tuple[list[T], list[T]]:
        """(the tasks the warm-up demonstrates, the tasks GRPO draws from), both in the run's task order."""
        demonstrated = list(tasks)[: self.tasks] if self.enabled else []
        if self.rl_tasks == "all" or not self.enabled:
            return demonstrated, list(tasks)
        rest = list(tasks)[len(demonstrated) :]
        if not rest:
            raise ValueError(
                f"warmup.rl_tasks=rest leaves GRPO no task: the warm-up demonstrates all {len(tasks)} training tasks "
                f"(warmup.tasks={self.tasks}). Fix: lower warmup.tasks below {len(tasks)}, or raise data.limit"
            )
        return demonstrated, rest

    def steps_per_epoch(self, n_demos: int) -> int:
        return -(-n_demos // self.batch_size)  # ceil: the last batch may be smaller


def nll_and_hits(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, int]:
    """logits: (N, V) at the N agent-token predictions, targets: (N,) -> (Σ -log softmax(logits)[target], the
    number of targets that are the argmax). The sum, not the mean: the caller divides by the whole batch's N.

    >>> nll, hits = nll_and_hits(torch.tensor([[0.0, 0.0], [2.0, 0.0]]), torch.tensor([1, 0]))
    >>> round(float(nll), 4), hits   # log 2 + log(1 + e^-2)
    (0.82, 1)

    Ties count as misses unless the target is the first maximum (`argmax` picks the first).
    """
    nll = F.cross_entropy(logits.float(), targets, reduction="sum")
    return nll, int((logits.detach().argmax(dim=-1) == targets).sum())


def agent_token_logits(
    model: Any, ids: torch.Tensor, attn: torch.Tensor, mask: torch.Tensor, prefix: SharedPrefix | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """ids, attn: (B, L); mask: (B, L-1) (1 where token t+1 is the agent's) -> logits (N, V), targets (N,).

    Only the N agent positions go through the LM head (`logprobs.agent_hidden_states`); a model without a
    decoder/head split projects every position instead. The head runs in fp32 outside any autocast (as
    `core.head_logprobs` does): the NLL is summed over many tokens. `prefix`: keys/values of leading tokens every
    row shares (`logprobs.PrefixPass`), which then do not run again.
    """
    keep = mask.bool()
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    head = base.get_output_embeddings()
    if getattr(base, "model", None) is None or head is None:
        if prefix is not None:
            raise ValueError("a shared prefix needs a model with a decoder stack and an LM head (`model`, `lm_head`)")
        logits = model(input_ids=ids, attention_mask=attn, use_cache=False).logits[:, :-1]
        return logits[keep].float(), ids[:, 1:][keep]
    hidden, targets = agent_hidden_states(model, ids, attn, keep, prefix)
    with torch.autocast(device_type=hidden.device.type, enabled=False):
        return head(hidden.float()), targets


@dataclass
class SFTStats:
    """One warm-up optimizer step: the batch's mean NLL and argmax accuracy over its agent tokens (before the step)."""

    loss: float
    token_accuracy: float
    n_tokens: int
    grad_norm: float
    update_s: float

    def metrics(self) -> dict[str, float]:
        return {
            "warmup/loss": self.loss,
            "warmup/token_accuracy": self.token_accuracy,
            "warmup/model_tokens": self.n_tokens,
            "warmup/grad_norm": self.grad_norm,
            "warmup/update_s": self.update_s,
        }


def sft_step(
    model: Any,
    optimizer: torch.optim.Optimizer,
    demos: Sequence[Trajectory],
    pad_id: int,
    *,
    micro_batch_tokens: int,
    max_grad_norm: float,
    dtype: str = "fp32",
    lora_dropout: float = 0.0,
) -> SFTStats:
    """One optimizer step of the mean agent-token NLL over `demos`, micro-batch by micro-batch (module docstring).

    The leading tokens every demonstration shares (the system prompt and its worked examples, most of each one)
    run once per step (`logprobs.PrefixPass`, recomputed for the backward) instead of once per demonstration:
    the same loss and gradients, about half the work on the embedded default's prompts.
    `lora_dropout` > 0 turns that off (one dropout draw would be shared by every demonstration)."""
    started = time.perf_counter()
    n_tokens = sum(t.n_model_tokens for t in demos)
    if n_tokens == 0:
        raise ValueError("the warm-up batch has no agent tokens to train on (every loss_mask is 0)")
    device = next(model.parameters()).device
    model.train()
    optimizer.zero_grad(set_to_none=True)
    total_nll, hits = 0.0, 0
    with trainer_precision(dtype, device):
        prefix_ids = group_prefix(model, demos, device, lora_dropout)
        prefix = None if prefix_ids is None else PrefixPass(model, prefix_ids, recompute=True)
        start = 0 if prefix_ids is None else prefix_ids.shape[1]
        for idx in token_budget_batches([len(t.token_ids) - start for t in demos], micro_batch_tokens):
            ids, attn, mask = padded_batch([demos[i] for i in idx], pad_id, device)
            logits, targets = agent_token_logits(
                model, ids, attn, mask[:, 1:], None if prefix is None else prefix.leaves
            )
            nll, batch_hits = nll_and_hits(logits, targets)
            (nll / n_tokens).backward()  # this micro-batch's share of the batch mean
            total_nll, hits = total_nll + float(nll.detach()), hits + batch_hits
        if prefix is not None:
            prefix.backward()
    params = [p for p in model.parameters() if p.requires_grad]
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, max_grad_norm))
    optimizer.step()
    return SFTStats(total_nll / n_tokens, hits / n_tokens, n_tokens, grad_norm, time.perf_counter() - started)
