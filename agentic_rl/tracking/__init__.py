"""Run-time logging: metrics (one code path for training and evaluation), sinks (metrics.jsonl, W&B) and the
dashboard's panels. Tables, figures and comparisons read back from run dirs afterwards are `agentic_rl.reports`."""
