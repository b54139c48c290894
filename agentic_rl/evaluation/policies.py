"""What `python -m agentic_rl.evaluate policy=NAME` evaluates: one class per name, in the "policy" registry.

A policy source subclasses `PolicySource`, which declares its three static methods:
  - `describe(cfg) -> dict`: checks the config's policy settings and says what identifies the evaluated policy
    (summary.json and the resume check record it), before anything is loaded;
  - `load(cfg) -> Policy`: the policy the rollout samples from (a `rollout.policy.Policy`);
  - `samples_per_task(cfg) -> int | None`: for a policy whose answers are fixed (nothing is sampled), how many
    per task; the evaluation then grades that many per task and no greedy episode (`fit_to_policy`). The default,
    None, is a policy that samples.
Built-ins (`agentic_rl.registry.BUILTINS["policy"]`):
  model:  the model (`cfg.model`) with the LoRA adapter of `checkpoint=` when given, sampled by the backend
          `rollout.backend` names (`rollout.backends`);
  replay: the samples of `samples=PATH`, one `{"task_id", "solution"}` object per line, graded as answers.
Another package adds one with the entry point `policy.<name>` (see `agentic_rl.registry`).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentic_rl.evaluation.evaluator import EvalConfig
from agentic_rl.registry import Registry, build, to_dataclass

logger = logging.getLogger(__name__)

POLICY_SOURCES: Registry[type] = Registry("policy")


class PolicySource:
    """What an evaluation evaluates (see the module docstring); `describe` and `load` are a subclass's to write."""

    @staticmethod
    def describe(cfg: Any) -> dict[str, Any]:
        raise NotImplementedError

    @staticmethod
    def load(cfg: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def samples_per_task(cfg: Any) -> int | None:
        return None


def policy_source(name: str) -> Any:
    """The policy source class named by `policy=`; an unknown name lists the available ones."""
    if name not in POLICY_SOURCES:
        raise ValueError(f"policy={name!r}: must be one of {POLICY_SOURCES.names()}")
    return POLICY_SOURCES.get(name)


def fit_to_policy(eval_cfg: EvalConfig, cfg: Any) -> EvalConfig:
    """`eval_cfg` for the policy `cfg.policy` names: one with fixed answers (a samples file) is graded on the
    samples it has, `samples_per_task`, and no greedy episode: a temperature means nothing to it, and the run's
    default of 4 samples would score a file of one answer per task as 3 missing samples out of 4."""
    n = policy_source(cfg.policy).samples_per_task(cfg)
    if n is None:
        return eval_cfg
    fitted = replace(eval_cfg, n_samples=n, greedy=False, ks=[k for k in eval_cfg.ks if k <= n] or [1])
    if (fitted.n_samples, fitted.greedy, fitted.ks) != (eval_cfg.n_samples, eval_cfg.greedy, eval_cfg.ks):
        logger.info("policy=%s: grading its %d sample(s) per task, no greedy episode, ks %s", cfg.policy, n, fitted.ks)
    return fitted


def resolve_adapter(path: str | Path) -> Path:
    """The LoRA adapter dir for `checkpoint=`: the adapter itself, or a training run dir holding `adapter/`."""
    path = Path(path).expanduser()
    for candidate in (path, path / "adapter"):
        if (candidate / "adapter_config.json").is_file():
            return candidate
    raise FileNotFoundError(
        f"checkpoint={path}: no adapter_config.json in {path} or {path / 'adapter'}. Fix: pass a training run dir "
        "(outputs/runs/<date>/<time>, saved with save_adapter=true) or the adapter dir inside it."
    )


class ModelPolicy(PolicySource):
    """The model, plus `checkpoint`'s LoRA adapter, sampled by the `rollout.backend` sampler."""

    @staticmethod
    def describe(cfg: Any) -> dict[str, Any]:
        adapter = resolve_adapter(cfg.checkpoint) if cfg.get("checkpoint") else None
        return {
            "policy": "model",
            "model": cfg.model.get("name") or cfg.model.get("_target_"),
            "checkpoint": str(adapter.resolve()) if adapter else None,
        }

    @staticmethod
    def load(cfg: Any) -> Any:
        loaded = build(cfg.model)
        model = loaded.model
        if cfg.get("checkpoint"):
            from peft import PeftModel

            adapter = resolve_adapter(cfg.checkpoint)
            model = PeftModel.from_pretrained(model, str(adapter))
            logger.info("loaded the LoRA adapter %s on %s", adapter, loaded.name)
        model.eval()
        from agentic_rl.rollout.agent import RolloutConfig
        from agentic_rl.rollout.backends import make_policy

        return make_policy(model, loaded.tokenizer, to_dataclass(cfg.rollout, RolloutConfig), seed=cfg.seed)


class ReplayPolicySource(PolicySource):
    """Answers from a samples file (`samples=PATH`), one episode per sample, graded like a model's."""

    @staticmethod
    def describe(cfg: Any) -> dict[str, Any]:
        if not cfg.get("samples"):
            raise ValueError(
                'policy=replay needs samples=PATH: a .jsonl file with one {"task_id", "solution"} object per line'
            )
        if cfg.get("checkpoint"):
            raise ValueError("policy=replay answers from samples; checkpoint= is for policy=model")
        return {"policy": "replay", "samples": str(Path(cfg.samples).expanduser().resolve())}

    @staticmethod
    def samples_per_task(cfg: Any) -> int:
        """The most samples the file has for a task (a task with fewer gets "no_sample" failures)."""
        from agentic_rl.evaluation.replay import load_samples

        return max(len(v) for v in load_samples(cfg.samples).values())

    @staticmethod
    def load(cfg: Any) -> Any:
        from agentic_rl.evaluation.replay import ReplayPolicy

        return ReplayPolicy.from_file(cfg.samples)
