"""CodeGym environments synthesized from coding problems through any OpenAI-compatible endpoint.

    python -m agentic_rl.envs.synthesize PROBLEMS.jsonl --endpoint URL --model NAME --out ENVS.jsonl

The paper's pipeline (Generalizable End-to-End Tool-Use RL with Synthetic CodeGym): the model extracts tools
from each problem's reference solution and documents them (an environment class in this project's CodeGym
format), writes unit-test inputs whose outputs the original solution computes in the sandbox, and writes K
tool-only candidate solutions; pass@K keeps a configuration. The paper's filters follow: complexity, the
constant-answer rule, difficulty. Modules: endpoint.py (the HTTP client), prompts.py (requests and reply
readers), problems.py (the input and the solution's outputs), stages.py (one problem, stage by stage),
reference.py (the difficulty filter's reference), store.py (resumable output, status and report), cli.py.
Deviation from the paper: the environment class subclasses the built-in `ToolEnv` (envs/builtin/gym_base.py),
which supplies `step`, `reset` and `Done`, so the model writes only the task's state, its tools and the
reference answer.
"""
