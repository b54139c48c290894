"""The warm-up stage (`warmup=sft`): supervised fine-tuning of the LoRA adapter on scripted demonstrations of the
training tasks, before GRPO, in the same run.

- `demos`: the scripted agent, played through the run's own rollout loop and environment (`build_demonstrations`);
- `stage`: the stage itself (`run_warmup`): demonstrations, SFT steps (`agentic_rl.algo.warmup`), metrics.
"""

from agentic_rl.warmup.demos import Demonstrations, build_demonstrations, call_text, demo_calls
from agentic_rl.warmup.stage import run_warmup

__all__ = ["Demonstrations", "build_demonstrations", "call_text", "demo_calls", "run_warmup"]
