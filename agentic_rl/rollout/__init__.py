"""Rollout: policies (HF model, scripted, replay) and the multi-turn agent loop."""
from agentic_rl.rollout.agent import RolloutConfig, extract_code, run_episodes
from agentic_rl.tools.base import ToolSet
from agentic_rl.rollout.hf_policy import HFPolicy
from agentic_rl.rollout.policy import Policy, SamplingParams, ScriptedPolicy, TurnRequest
from agentic_rl.rollout.tokenizer import ByteChatTokenizer, HFChatTokenizer

__all__ = ["RolloutConfig", "ToolSet", "extract_code", "run_episodes", "HFPolicy", "Policy", "SamplingParams",
           "ScriptedPolicy", "TurnRequest", "ByteChatTokenizer", "HFChatTokenizer"]
