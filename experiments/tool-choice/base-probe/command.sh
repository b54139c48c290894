#!/bin/bash
# the base model in the five evaluation modes on the first 16 held-out tool-world tasks (commit 9763e3d's prompt)
cd <checkout>
time python -m agentic_rl.evaluate data=toolworld-heldout evaluator.limit=16 logger=none progress=false hydra.run.dir=<run dir>
