"""Single-turn GRPO step time: this project against TRL's `GRPOTrainer` on the same workload, in one process.

    pip install -e .[bench]        # TRL, never a core dependency
    python -m agentic_rl.bench.trainer [--steps 3] [--max-new-tokens 128] [overrides ...]

Workload (a single-turn GRPO step as TRL runs one): one built-in task per step, G=4 completions of up to
`--max-new-tokens` tokens, no tools (one turn, the reply's code graded by the sandbox), LoRA r16 on q/v, KL
coefficient 0.05, one optimizer step per group, same model (`model=`, SmolLM2-135M), same prompt, temperature and top-p.

project: `run_episodes` (tools=none) -> reward -> `grpo_step`, with `algo.skip_zero_std_groups` off, since TRL
         runs its passes for every group (pass `--allow-skip` to time the project's default instead). The sampler
         is the one `rollout.backend` names (`rollout.backend=vllm`, from the vLLM interpreter: vLLM's rollouts,
         its weight sync before each step included).
TRL:     `GRPOTrainer` with the same LoRA, beta, sampling, generation batch = one group; the reward calls the
         same grader. Two configurations (`--trl`):
         matched  fp32 throughout and no gradient checkpointing, as the project's default runs: the like-for-like
                  comparison;
         defaults what `GRPOConfig` gives a new user on CPU: bf16 autocast (accelerate wraps the model's forward,
                  so generation runs in bf16 too) and gradient checkpointing on.
The first step of each is a warm-up and not counted; the median of the others is reported, with peak RSS.
"""

from __future__ import annotations

import argparse
import copy
import logging
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from agentic_rl.paths import CONF_DIR
from agentic_rl.reports.run_files import markdown_header, markdown_row
from agentic_rl.rollout.agent import RolloutConfig, extract_code, prompt_messages, run_episodes, run_tool
from agentic_rl.runtime.memory import peak_rss_gib
from agentic_rl.types import ToolCall

logger = logging.getLogger(__name__)
# GRPOConfig fields per TRL configuration; unset fields keep TRL's defaults (bf16 autocast and checkpointing on CPU)
TRL_CONFIGS: dict[str, dict[str, Any]] = {
    "matched": {"bf16": False, "gradient_checkpointing": False},
    "defaults": {},
}


def compose(overrides: list[str]) -> Any:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    defaults = [
        "tools=none",
        "model=smollm2-135m",
        "data=builtin",
        "rollout.max_turns=1",
        "algo.group_size=4",
        "algo.kl_coeff=0.05",
        "algo.lora.r=16",
        "algo.lora.alpha=32",
    ]
    given = {o.split("=", 1)[0] for o in overrides}
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(
            config_name="train", overrides=[o for o in defaults if o.split("=", 1)[0] not in given] + overrides
        )


def project_steps(
    cfg: Any, tasks: list, toolset: Any, rollout_cfg: RolloutConfig, allow_skip: bool
) -> tuple[list[float], list[float]]:
    """Step times and the mean completion length (tokens) of each step's group."""
    from dataclasses import replace

    from agentic_rl.algo.grpo import grpo_step
    from agentic_rl.config import algo_config
    from agentic_rl.models.lora import add_lora
    from agentic_rl.registry import build
    from agentic_rl.rollout.backends import make_policy

    algo = algo_config(cfg)
    if not allow_skip:
        algo = replace(algo, skip_zero_std_groups=False)
    loaded = build(cfg.model)
    model = add_lora(
        loaded.model, algo.lora.r, algo.lora.alpha, algo.lora.dropout, list(algo.lora.target_modules), seed=cfg.seed
    )
    policy = make_policy(model, loaded.tokenizer, rollout_cfg, seed=cfg.seed)  # rollout.backend=vllm: vLLM's steps
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=algo.lr)
    reward_fn = build(cfg.reward)
    times, lengths = [], []
    for task in tasks:
        start = time.perf_counter()
        group = run_episodes([(task, g) for g in range(algo.group_size)], policy, toolset, rollout_cfg)
        rewards = torch.tensor([reward_fn(t).total for t in group], dtype=torch.float64)
        grpo_step(
            model, optimizer, group, rewards, algo, loaded.tokenizer.pad_token_id, temperature=rollout_cfg.temperature
        )
        times.append(time.perf_counter() - start)
        lengths.append(sum(t.n_model_tokens for t in group) / len(group))
        logger.info(
            "project step %d: %.1f s, completions of %.0f tokens on average", len(times), times[-1], lengths[-1]
        )
    # a vLLM engine left running would keep its KV cache, weights and threads in the process during TRL's steps
    close = getattr(policy, "close", None)
    if close is not None:
        close()
    return times, lengths


def unflagged_copy(model: Any) -> Any:
    """The same weights in a model without a quantization flag.

    The embedded model's config still names its GGUF origin although its cached weights are plain floats, and
    transformers' Trainer refuses to train a model flagged as GGUF-quantized.
    """
    from transformers import AutoModelForCausalLM

    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    fresh = AutoModelForCausalLM.from_config(config, dtype=model.dtype)
    fresh.load_state_dict(model.state_dict())
    return fresh


def submit_grader(tasks: list, toolset: Any) -> Callable[..., list[float]]:
    """TRL's reward function: 1.0 when the reply's code passes the task's tests (the project's no-tools grader)."""
    by_prompt = {task.prompt: task for task in tasks}

    def graded(prompts: list, completions: list, **kwargs: Any) -> list[float]:
        out = []
        for prompt, completion in zip(prompts, completions):
            task = by_prompt[prompt[-1]["content"]]
            code = extract_code(completion[0]["content"])
            obs = run_tool(toolset.grader, ToolCall("submit", code, 0, 0), task) if code else None
            out.append(1.0 if obs is not None and obs.passed else 0.0)
        return out

    return graded


def step_timer() -> Any:
    """A TRL callback that keeps each step's wall time in `.times`."""
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []

        def on_step_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.times.append(time.perf_counter() - self.start)
            logger.info("TRL step %d: %.1f s", len(self.times), self.times[-1])

    return StepTimer()


def trl_grpo_config(cfg: Any, algo: Any, rollout_cfg: RolloutConfig, steps: int, trl_config: str) -> Any:
    """TRL's GRPOConfig with the project's group size, lengths, KL, lr and sampling, plus `TRL_CONFIGS[trl_config]`."""
    from trl import GRPOConfig

    G = algo.group_size
    return GRPOConfig(
        output_dir="outputs/bench_trainer_trl",
        use_cpu=not torch.cuda.is_available(),
        per_device_train_batch_size=G,
        num_generations=G,
        max_completion_length=rollout_cfg.max_new_tokens,
        beta=algo.kl_coeff,
        learning_rate=algo.lr,
        temperature=rollout_cfg.temperature,
        top_p=rollout_cfg.top_p,
        max_steps=steps,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        seed=cfg.seed,
        **TRL_CONFIGS[trl_config],
    )


def trl_steps(
    cfg: Any, tasks: list, toolset: Any, rollout_cfg: RolloutConfig, trl_config: str
) -> tuple[list[float], list[float]]:
    """Step times and the mean completion length (tokens, TRL's `completions/mean_length`) of each step, under
    one of `TRL_CONFIGS` (see the module doc)."""
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOTrainer

    from agentic_rl.config import algo_config
    from agentic_rl.registry import build

    algo = algo_config(cfg)
    loaded = build(cfg.model)
    model = unflagged_copy(loaded.model)
    args = trl_grpo_config(cfg, algo, rollout_cfg, len(tasks), trl_config)
    dataset = Dataset.from_list(
        [{"prompt": prompt_messages(toolset, task, rollout_cfg.observation_format)} for task in tasks]
    )
    timer = step_timer()
    lora = LoraConfig(
        r=algo.lora.r,
        lora_alpha=algo.lora.alpha,
        lora_dropout=algo.lora.dropout,
        target_modules=list(algo.lora.target_modules),
        task_type="CAUSAL_LM",
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[submit_grader(tasks, toolset)],
        args=args,
        train_dataset=dataset,
        processing_class=loaded.tokenizer,
        peft_config=lora,
        callbacks=[timer],
    )
    trainer.train()
    lengths = [
        entry["completions/mean_length"] for entry in trainer.state.log_history if "completions/mean_length" in entry
    ]
    return timer.times, lengths


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3, help="timed steps each (plus one warm-up)")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--allow-skip", action="store_true", help="time the project with skip_zero_std_groups on")
    parser.add_argument(
        "--trl",
        nargs="+",
        choices=list(TRL_CONFIGS),
        default=list(TRL_CONFIGS),
        help="TRL configurations to time (see the module doc)",
    )
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of conf/train.yaml")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        import trl  # noqa: F401
    except ImportError:
        raise SystemExit("TRL is not installed: pip install -e .[bench]") from None

    from agentic_rl.config import register_configs, to_dataclass
    from agentic_rl.registry import build
    from agentic_rl.tools import build_toolset

    register_configs()
    cfg = compose([f"rollout.max_new_tokens={args.max_new_tokens}", *args.overrides])
    torch.manual_seed(cfg.seed)
    rollout_cfg = to_dataclass(cfg.rollout, RolloutConfig)
    tasks = build(cfg.data)[: args.steps + 1]
    sandbox = build(cfg.sandbox)
    try:
        toolset = build_toolset(cfg.tools, sandbox)
        ours, our_lengths = project_steps(cfg, tasks, toolset, rollout_cfg, args.allow_skip)
        rss_ours = peak_rss_gib()
        trl_runs, trl_rss = {}, {}
        for name in args.trl:
            trl_runs[name] = trl_steps(cfg, tasks, toolset, rollout_cfg, name)
            trl_rss[name] = peak_rss_gib()
    finally:
        sandbox.close()
    ours_s = statistics.median(ours[1:] or ours)
    medians = {name: statistics.median(times[1:] or times) for name, (times, _) in trl_runs.items()}

    def listed(values: list[float]) -> str:
        return ", ".join(f"{v:.1f}" for v in values)

    # completion lengths differ between the two samplers' draws; a step's cost grows with them
    rows = [
        markdown_row(
            ["agentic_rl", len(ours) - 1, f"{ours_s:.1f}", listed(ours), listed(our_lengths), f"{rss_ours:.2f}"]
        )
    ]
    rows += [
        markdown_row(
            [f"TRL GRPOTrainer ({name})", len(times) - 1, f"{medians[name]:.1f}", listed(times), listed(lengths)]
            + [f"{trl_rss[name]:.2f}"]
        )
        for name, (times, lengths) in trl_runs.items()
    ]
    ratios = {name: ours_s / median for name, median in medians.items()}
    table = "\n".join(
        [
            *markdown_header(
                ["trainer", "steps timed", "median step s", "all steps s", "mean completion tokens per step"]
                + ["peak RSS GiB (process, cumulative)"]
            ),
            *rows,
            "",
            *[f"ratio agentic_rl / TRL ({name}): {ratio:.2f} (target <= 0.5)" for name, ratio in ratios.items()],
        ]
    )
    logger.info("\n%s", table)
    return {
        "project_s": ours,
        "project_tokens": our_lengths,
        "ratios": ratios,
        "trl": {name: {"s": times, "tokens": lengths} for name, (times, lengths) in trl_runs.items()},
    }


if __name__ == "__main__":
    main()
