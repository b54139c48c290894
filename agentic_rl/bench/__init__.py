"""Benchmarks and one-off checks, each run by a `make` target; library code never imports this package (an
import-linter contract in pyproject.toml says so).

- `sandbox` (`make bench-sandbox`): the sandbox's worker pool against naive one-process-per-run execution.
- `search` (`make bench-search`): recall and latency of the doc-search backends on the query sets.
- `rollout` (`make bench-rollout`): the multi-tool rollout against a notebook-style loop and raw `generate`.
- `trainer` (`make bench-trainer`): one single-turn GRPO step against TRL's GRPOTrainer.
- `algo` (`make bench-update`): time and peak memory of one GRPO update, per memory setting.
- `check_bcb` (`make check-bcb`): BigCodeBench-Hard's canonical solutions through the sandbox's grader;
  `bcb` holds what it shares with `sandbox` (the data, the interpreter, the official program layout).
"""
