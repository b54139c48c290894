"""`python -m agentic_rl.envs.synthesize`: the command line of the synthesis (see agentic_rl/envs/synthesize)."""

from agentic_rl.envs.synthesize.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
