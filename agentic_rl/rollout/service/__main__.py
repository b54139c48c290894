"""`python -m agentic_rl.rollout.service ...`: one sampler server (see `server.py`)."""

from agentic_rl.rollout.service.server import main

if __name__ == "__main__":
    main()
