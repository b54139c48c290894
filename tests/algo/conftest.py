"""Fixtures shared by the tests of agentic_rl/algo: the tiny random model with the embedded tokenizer."""
from .test_objective import base_and_tokenizer  # noqa: F401  (a fixture, found by pytest under this name)
