"""Evaluators (modes), pass@k, per-episode records (results.jsonl, resume), the replay policy and reports."""

from agentic_rl.evaluation.evaluator import MODES, EvalConfig, ModeResult, evaluate, evaluate_mode, flat_metrics
from agentic_rl.evaluation.passk import mean_pass_at_k, pass_at_k
from agentic_rl.evaluation.records import ResultStore, metrics_from_records, record_from_trajectory
from agentic_rl.evaluation.replay import ReplayPolicy, SamplesFileError, load_samples, write_samples

__all__ = [
    "MODES",
    "EvalConfig",
    "ModeResult",
    "ReplayPolicy",
    "ResultStore",
    "SamplesFileError",
    "evaluate",
    "evaluate_mode",
    "flat_metrics",
    "load_samples",
    "mean_pass_at_k",
    "metrics_from_records",
    "pass_at_k",
    "record_from_trajectory",
    "write_samples",
]
