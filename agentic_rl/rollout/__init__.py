"""Rollout: how episodes are generated.

- `policy`: the `Policy` interface (one batched call per turn, stopping at the first completed tool call, with
  the sampler's per-token log-probs), its HF reference sampler (`HFPolicy`, with the episodes' KV cache) and a
  scripted policy for tests;
- `tokenizer`: chat templates over token ids (HF tokenizers, and a byte-level one for tests);
- `agent`: the multi-turn agent loop (`run_episodes`), an explicit state machine that keeps token ids
  verbatim and builds the loss mask with them.
The replay policy (graded samples from a file) is `evaluation.replay`; the benchmarks are `agentic_rl.bench`.
"""

from agentic_rl.rollout.agent import RolloutConfig, extract_code, run_episodes
from agentic_rl.rollout.hf_policy import HFPolicy
from agentic_rl.rollout.policy import Policy, SamplingParams, ScriptedPolicy, TurnRequest
from agentic_rl.rollout.tokenizer import ByteChatTokenizer, HFChatTokenizer
from agentic_rl.tools.base import ToolSet

__all__ = [
    "RolloutConfig",
    "ToolSet",
    "extract_code",
    "run_episodes",
    "HFPolicy",
    "Policy",
    "SamplingParams",
    "ScriptedPolicy",
    "TurnRequest",
    "ByteChatTokenizer",
    "HFChatTokenizer",
]
