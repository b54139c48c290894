"""Evaluators (modes), pass@k and reports."""
