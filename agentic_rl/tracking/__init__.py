"""Metrics (one code path for training and evaluation), sinks (metrics.jsonl, W&B), figures, dashboard panels."""
