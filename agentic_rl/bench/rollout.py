"""Multi-tool rollout throughput: the project's engine against a notebook-style loop, in one process.

    python -m agentic_rl.bench.rollout [--tasks 4] [--group 4] [--turns 2] [--max-new-tokens 128]
                                       [--modes episode turn] [--notebook-jobs N] [--ceiling-tokens 64]
                                       [overrides ...]          e.g. model=smollm2-135m tools=multi

Workload (the multi-tool training rollout at its default size): `--tasks` KodCode tasks from the shared sample x
G=`--group`, `--turns` turns of `--max-new-tokens` tokens, the tool set of `tools=` (multi), the model of `model=`
(SmolLM2-135M), real tools in the sandbox. The tasks and config are composed from conf/train.yaml exactly as
training does.

notebook: the reference notebook's loop, made faithful: one trajectory at a time, `model.generate` on the
          whole history every turn (full re-prefill), no stop at the tool call (it generates max_new_tokens or
          to EOS, then the first completed call is run); `--notebook-jobs` runs it on the first N episodes only
          (one per task first), since its rate per episode does not depend on how many run.
engine:   `run_episodes` with `HFPolicy(kv_cache=mode)` for each of `--modes` ("episode" is the default engine;
          "turn" re-prefills every turn, to show what the kept cache buys).
ceiling:  raw `model.generate`, batch 32, short prompts, `--ceiling-tokens` new tokens each (no early stop).
vllm:     with `--backends hf vllm`, `run_episodes` on `VLLMPolicy` (settings from `rollout.vllm`; a LoRA adapter
          r16 q/v is put on the model first, so the weight sync is the training one), turn by turn and with
          continuous batching (`rollout.vllm.continuous_batching`), after one untimed warm-up rollout, twice each
          in the order A B B A and each row
          the sum of its two rollouts (they sample with different seeds: the same workload, not the same
          tokens), then vLLM's own raw rate on a 16-sequence single-turn batch of `--ceiling-tokens` tokens
          (prefix cache reset first), on a short prompt and on the workload's own first-turn prompts (as long
          as the loop's contexts), and the time of a weight sync with `sync_tensors` touched and all. Runs
          last: the engine shares the process. For each vLLM loop also its engine steps and the requests each
          step held, which do not depend on the machine's load as times do.
tokens/s = generated tokens / wall time of the phase (tool calls included). prefill/context = tokens run through
the model / the episodes' final lengths. Peak RSS is the process's high-water mark after each phase.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import torch

from agentic_rl.data.shared_data import KODCODE_SAMPLE, shared_data_dir
from agentic_rl.paths import CONF_DIR
from agentic_rl.reports.run_files import markdown_header, markdown_row
from agentic_rl.rollout.agent import RolloutConfig, ToolSet, observation_ids, prompt_messages, run_episodes, run_tool
from agentic_rl.rollout.hf_policy import HFPolicy
from agentic_rl.runtime.memory import peak_rss_gib
from agentic_rl.tools.base import find_call
from agentic_rl.types import Task

logger = logging.getLogger(__name__)
CEILING_PROMPT = "Write a Python function that returns the sum of a list of numbers."
VLLM_TURN_BY_TURN, VLLM_CONTINUOUS = "vllm (turn by turn)", "vllm (continuous)"


def compose(args: argparse.Namespace) -> Any:
    defaults = [
        "data=kodcode",
        f"data.path={shared_data_dir() / KODCODE_SAMPLE}",
        f"data.limit={args.tasks}",
        f"rollout.max_turns={args.turns}",
        f"rollout.max_new_tokens={args.max_new_tokens}",
        "tools=multi",
        "model=smollm2-135m",
    ]
    given = {o.split("=", 1)[0] for o in args.overrides}
    return compose_overrides([o for o in defaults if o.split("=", 1)[0] not in given] + list(args.overrides))


def compose_overrides(overrides: list[str]) -> Any:
    """conf/train.yaml with these overrides, composed as training does."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from agentic_rl.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name="train", overrides=overrides)


def notebook_loop(
    model: Any, tok: Any, jobs: list[tuple[Task, int]], toolset: ToolSet, cfg: RolloutConfig
) -> dict[str, float]:
    """One trajectory at a time, full re-prefill each turn, no stop at the call (see the module doc)."""
    chat = HFPolicy(model, tok).tokenizer
    device = next(model.parameters()).device
    generated = prefill = context = 0
    tools_s = 0.0
    start = time.perf_counter()
    for task, _ in jobs:
        ids = chat.chat_prompt_ids(prompt_messages(toolset, task, cfg.observation_format))
        for _ in range(cfg.max_turns):
            prefill += len(ids)
            with torch.no_grad():
                out = model.generate(
                    input_ids=torch.tensor([ids], device=device),
                    attention_mask=torch.ones((1, len(ids)), dtype=torch.long, device=device),
                    max_new_tokens=cfg.max_new_tokens,
                    do_sample=cfg.temperature > 0,
                    temperature=cfg.temperature or None,
                    top_p=cfg.top_p,
                    top_k=None,
                    pad_token_id=tok.pad_token_id,
                )
            new = out[0, len(ids) :].tolist()
            generated += len(new)
            prefill += len(new) - 1  # decode steps feed each generated token but the last
            call = find_call(chat.decode(new), toolset.specs)  # the tool set's own tools
            obs_text, passed = "<feedback>No tool call found.</feedback>", False
            if call is not None:
                t0 = time.perf_counter()
                obs = run_tool(toolset.tools[call.name], call, task)
                tools_s += time.perf_counter() - t0
                obs_text, passed = obs.text, bool(obs.passed)
            ids = ids + new + observation_ids(chat, obs_text, new, cfg.observation_format)
            if passed:
                break
        context += len(ids)
    wall = time.perf_counter() - start
    return {
        "episodes": len(jobs),
        "generated": generated,
        "wall_s": wall,
        "tools_s": tools_s,
        "tokens_per_s": generated / wall,
        "prefill": prefill,
        "context": context,
    }


def engine(
    model: Any, tok: Any, jobs: list[tuple[Task, int]], toolset: ToolSet, cfg: RolloutConfig, kv_cache: str
) -> dict[str, float]:
    return engine_row(run_episodes(jobs, HFPolicy(model, tok, kv_cache=kv_cache), toolset, cfg), len(jobs))


def engine_row(result: Any, episodes: int) -> dict[str, float]:
    s = result.stats
    return {
        "episodes": episodes,
        "generated": s.generated_tokens,
        "wall_s": s.rollout_s,
        "tools_s": s.tools_s,
        "tokens_per_s": s.generated_tokens / s.rollout_s,
        "prefill": s.prefill_tokens,
        "context": s.context_tokens,
    }


def vllm_phase(
    model: Any, tok: Any, jobs: list[tuple[Task, int]], toolset: ToolSet, cfg: RolloutConfig, raw_tokens: int, seed: int
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """The multi-turn rollout on the vLLM backend, turn by turn and batched continuously, its raw 16-sequence rate
    and its weight-sync times."""
    from vllm import SamplingParams as EngineSampling
    from vllm.inputs import TokensPrompt

    from agentic_rl.models import add_lora
    from agentic_rl.rollout.vllm_policy import VLLMPolicy

    model = add_lora(model, 16, 32, 0.0, ["q_proj", "v_proj"], seed=seed)
    policy = VLLMPolicy(model, tok, cfg.vllm, cfg.max_context_tokens, cfg.max_new_tokens, cfg.max_turns, seed=seed)
    # both loops on the one engine, in the order A B B A (A: turn by turn), so that a load drifting evenly over the
    # phase weighs on both alike; each row sums its two rollouts
    runs: dict[str, list[dict[str, float]]] = {VLLM_TURN_BY_TURN: [], VLLM_CONTINUOUS: []}
    steps = count_engine_steps(policy.llm.llm_engine)
    logger.info("vLLM backend, a warm-up rollout (not timed) ...")
    run_episodes(jobs, policy, toolset, cfg)  # the engine's first calls (kernels, caches) are nobody's cost
    for continuous in (False, True, True, False):
        policy.cfg.continuous_batching = continuous
        logger.info("vLLM backend, %s ...", "continuous batching" if continuous else "turn by turn")
        steps.update(steps=0, requests=0)
        result = run_episodes(jobs, policy, toolset, cfg)
        row = {**engine_row(result, len(jobs)), "engine_steps": steps["steps"], "step_requests": steps["requests"]}
        runs[VLLM_CONTINUOUS if continuous else VLLM_TURN_BY_TURN].append(row)
    rows = {name: summed_rows(pair) for name, pair in runs.items()}
    for name, pair in runs.items():
        rows[name]["rollouts"] = pair  # each rollout's own row, in the order they ran (A B B A)
    prompt = policy.tokenizer.chat_prompt_ids([{"role": "user", "content": CEILING_PROMPT}])
    policy.set_logit_temperature(cfg.temperature)  # the engine applies T to the logits, as in the rollout
    params = EngineSampling(
        max_tokens=raw_tokens, min_tokens=raw_tokens, ignore_eos=True, temperature=1.0, top_p=cfg.top_p
    )
    # the same single-turn batch on the workload's own first-turn prompts (their length is the loop's context, which
    # a short prompt leaves out), reported beside the short prompt's rate
    workload = [
        policy.tokenizer.chat_prompt_ids(prompt_messages(toolset, task, cfg.observation_format)) for task, _ in jobs
    ]
    extra: dict[str, float] = {}
    for name, prompts in (("raw16_tokens_per_s", [prompt] * 16), ("raw16_workload_tokens_per_s", (workload * 16)[:16])):
        policy.llm.reset_prefix_cache()  # each batch computes its prompts, as a first turn does
        start = time.perf_counter()
        policy.llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
        extra[name] = 16 * raw_tokens / (time.perf_counter() - start)
    for tensors in ("touched", "all"):
        policy.cfg.sync_tensors = tensors
        extra[f"sync_s ({tensors})"] = policy.sync_weights()
    policy.close()
    return rows, extra


def count_engine_steps(engine: Any) -> dict[str, int]:
    """Count the engine's steps, and the requests it held at each (what a step decodes together), whoever calls
    `step` (`LLM.generate` turn by turn, the policy itself when batching continuously): numbers that, unlike
    times, do not depend on the machine's load."""
    counts = {"steps": 0, "requests": 0}
    step = engine.step

    def counted() -> Any:
        counts["steps"] += 1
        counts["requests"] += engine.get_num_unfinished_requests()
        return step()

    engine.step = counted
    return counts


def summed_rows(rows: list[dict[str, float]]) -> dict[str, float]:
    """Several rollouts' rows as one: counts and times added, tokens/s of the sums."""
    keys = ("episodes", "generated", "wall_s", "tools_s", "prefill", "context", "engine_steps", "step_requests")
    total = {key: sum(r[key] for r in rows) for key in keys}
    return {**total, "tokens_per_s": total["generated"] / total["wall_s"]}


def ceiling(model: Any, tok: Any, batch: int, new_tokens: int, cfg: RolloutConfig) -> float:
    """Raw batched `generate` tokens/s on short prompts: what this machine does at best at this batch size."""
    chat = HFPolicy(model, tok).tokenizer
    prompt = chat.chat_prompt_ids([{"role": "user", "content": CEILING_PROMPT}])
    device = next(model.parameters()).device
    ids = torch.tensor([prompt] * batch, device=device)
    start = time.perf_counter()
    with torch.no_grad():
        model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=True,
            temperature=cfg.temperature or 1.0,
            top_p=cfg.top_p,
            top_k=None,
            pad_token_id=tok.pad_token_id,
        )
    return batch * new_tokens / (time.perf_counter() - start)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--modes", nargs="+", default=["episode"], choices=["episode", "turn"])
    parser.add_argument("--notebook-jobs", type=int, default=None, help="notebook loop on the first N episodes")
    parser.add_argument("--ceiling-batch", type=int, default=32)
    parser.add_argument("--ceiling-tokens", type=int, default=64)
    parser.add_argument(
        "--backends",
        nargs="+",
        default=["hf"],
        choices=["hf", "vllm"],
        help="vllm adds the vLLM backend's rows (needs vllm installed)",
    )
    parser.add_argument("--json", default=None, help="also write the results (rows, rates, RSS) to this JSON file")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of conf/train.yaml")
    return parser.parse_args(argv)


def run_phases(args: argparse.Namespace, cfg: Any) -> dict[str, Any]:
    """Every phase on the composed workload: engine modes, notebook loop, ceiling, then vLLM if asked.

    Returns the rows by loop name, the peak RSS after each phase, the ceiling's tokens/s and vLLM's extra figures.
    """
    from agentic_rl.config import to_dataclass
    from agentic_rl.registry import build
    from agentic_rl.tools import build_toolset

    torch.manual_seed(cfg.seed)
    rollout_cfg = to_dataclass(cfg.rollout, RolloutConfig)
    tasks: list[Task] = build(cfg.data)[: args.tasks]
    if len(tasks) < args.tasks:
        raise ValueError(f"only {len(tasks)} tasks in {cfg.data.path}; lower --tasks")
    loaded = build(cfg.model)
    model, tok = loaded.model.eval(), loaded.tokenizer
    sandbox = build(cfg.sandbox)
    rows: dict[str, dict[str, float]] = {}
    rss: dict[str, float] = {"loaded": peak_rss_gib()}
    try:
        toolset = build_toolset(cfg.tools, sandbox)
        jobs = [(t, g) for t in tasks for g in range(args.group)]
        logger.info(
            "workload: %d tasks x G=%d, %d turns x %d tokens, tools=%s, model=%s",
            len(tasks),
            args.group,
            rollout_cfg.max_turns,
            rollout_cfg.max_new_tokens,
            toolset.name,
            loaded.name,
        )
        for mode in args.modes:
            logger.info("engine (kv_cache=%s) ...", mode)
            rows[f"engine ({mode})"] = engine(model, tok, jobs, toolset, rollout_cfg, mode)
            rss[f"engine ({mode})"] = peak_rss_gib()
        nb_jobs = sorted(jobs, key=lambda j: j[1])[: args.notebook_jobs or len(jobs)]  # one per task first
        logger.info("notebook loop on %d episodes ...", len(nb_jobs))
        rows["notebook loop"] = notebook_loop(model, tok, nb_jobs, toolset, rollout_cfg)
        rss["notebook loop"] = peak_rss_gib()
        logger.info("raw generate ceiling, batch %d ...", args.ceiling_batch)
        ceiling_tps = ceiling(model, tok, args.ceiling_batch, args.ceiling_tokens, rollout_cfg)
        vllm_extra: dict[str, float] = {}
        if "vllm" in args.backends:
            logger.info("vLLM backend ...")
            vllm_rows, vllm_extra = vllm_phase(model, tok, jobs, toolset, rollout_cfg, args.ceiling_tokens, cfg.seed)
            rows.update(vllm_rows)
            rss.update({name: peak_rss_gib() for name in vllm_rows})
    finally:
        sandbox.close()
    return {"rows": rows, "ceiling_tokens_per_s": ceiling_tps, "peak_rss_gib": rss, "vllm": vllm_extra}


def report_lines(args: argparse.Namespace, results: dict[str, Any]) -> list[str]:
    """The table of loops (rates against the notebook loop and the ceiling) and the ceiling's line."""
    rows, rss, ceiling_tps = results["rows"], results["peak_rss_gib"], results["ceiling_tokens_per_s"]
    notebook_tps = rows["notebook loop"]["tokens_per_s"]
    lines = markdown_header(
        ["loop", "episodes", "generated tok", "wall s", "tools s", "tok/s", "x notebook", "of ceiling"]
        + ["prefill / context tok", "peak RSS GiB"]
    )
    for name, r in rows.items():
        tps = r["tokens_per_s"]
        times = [f"{r['wall_s']:.1f}", f"{r['tools_s']:.1f}"]
        speeds = [f"{tps:.1f}", f"{tps / notebook_tps:.2f}", f"{tps / ceiling_tps:.2f}"]
        prefill = f"{r['prefill']} / {r['context']} = {r['prefill'] / r['context']:.2f}"
        lines.append(markdown_row([name, r["episodes"], r["generated"], *times, *speeds, prefill, f"{rss[name]:.2f}"]))
    lines.append(
        f"\nraw generate ceiling (batch {args.ceiling_batch}, {args.ceiling_tokens} new tokens): "
        f"{ceiling_tps:.1f} tok/s; peak RSS after loading: {rss['loaded']:.2f} GiB"
    )
    return lines


def vllm_lines(rows: dict[str, dict[str, Any]], vllm_extra: dict[str, float], hf_mode: str) -> list[str]:
    """vLLM's loops against the HF engine of `hf_mode` and against vLLM's own raw rates, engine steps, sync times."""
    hf_tps = rows[f"engine ({hf_mode})"]["tokens_per_s"]
    raw, raw_workload = vllm_extra["raw16_tokens_per_s"], vllm_extra["raw16_workload_tokens_per_s"]
    lines = []
    for name in (VLLM_TURN_BY_TURN, VLLM_CONTINUOUS):
        vllm_tps = rows[name]["tokens_per_s"]
        lines.append(
            f"{name} / HF engine ({hf_mode}): {vllm_tps / hf_tps:.2f}x; the multi-turn loop reaches "
            f"{vllm_tps / raw:.2f} of vLLM's raw 16-sequence single-turn rate ({raw:.1f} tok/s), "
            f"{vllm_tps / raw_workload:.2f} of the same on the workload's first-turn prompts "
            f"({raw_workload:.1f} tok/s)"
        )
    for name in (VLLM_TURN_BY_TURN, VLLM_CONTINUOUS):
        r = rows[name]
        lines.append(
            f"{name}: {r['engine_steps']} engine steps, {r['step_requests'] / r['engine_steps']:.1f} requests "
            f"per step, {r['generated'] / r['engine_steps']:.2f} generated tokens per step; each rollout: "
            + ", ".join(f"{one['tokens_per_s']:.1f}" for one in r["rollouts"])
            + " tok/s"
        )
    gain = rows[VLLM_CONTINUOUS]["tokens_per_s"] / rows[VLLM_TURN_BY_TURN]["tokens_per_s"]
    lines.append(
        f"continuous / turn by turn: {gain:.2f}x; "
        f"time/sync_s touched {vllm_extra['sync_s (touched)']:.2f} s, all {vllm_extra['sync_s (all)']:.2f} s"
    )
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    from agentic_rl.config import register_configs

    register_configs()
    results = run_phases(args, compose(args))
    lines = report_lines(args, results)
    if results["vllm"]:
        lines += vllm_lines(results["rows"], results["vllm"], args.modes[0])
    logger.info("\n%s", "\n".join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps({"argv": argv or sys.argv[1:], **results}, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
