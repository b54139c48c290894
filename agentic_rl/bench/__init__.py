"""Benchmarks and one-off checks, each run by a `make` target; library code never imports this package (an
import-linter contract in pyproject.toml says so).

- `sandbox` (`make bench-sandbox`): the sandbox's worker pool against naive one-process-per-run execution.
- `search` (`make bench-search`): recall and latency of the doc-search backends on the query sets.
- `rollout` (`make bench-rollout`): the multi-tool rollout against a notebook-style loop and raw `generate`.
- `trainer` (`make bench-trainer`): one single-turn GRPO step against TRL's GRPOTrainer.
- `algo` (`make bench-update`): time and peak memory of one GRPO update, per memory setting.
- `check_bcb` (`make check-bcb`): BigCodeBench-Hard's canonical solutions through the sandbox's grader;
  `bcb` holds what it shares with `sandbox` (the data, the interpreter, the official program layout).
- `dtype` (`python -m agentic_rl.bench.dtype`): the GRPO update in bf16 autocast against fp32, time and gradients.
- `vllm_check` (`python -m agentic_rl.bench.vllm_check`): the vLLM backend's greedy agreement and log-prob gap
  against the HF model, and its weight-sync time.
- `trust_report` (`python -m agentic_rl.bench.trust_report`): how many tasks of a dataset are graded out of the
  candidate's process, and whether the verdicts agree.
"""
