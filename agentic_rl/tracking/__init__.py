"""Metrics (one code path for training and evaluation), sinks (metrics.jsonl, W&B), figures and tables read back
from run dirs with their confidence intervals (`stats`), dashboard panels."""
