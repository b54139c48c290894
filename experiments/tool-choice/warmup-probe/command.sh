#!/bin/bash
# a 4-step warm-up, then GRPO (stopped by hand after step 8)
python -m agentic_rl.train warmup=sft warmup.tasks=16 warmup.batch_size=4 eval_before=false eval_after=false algo.tasks_per_epoch=8 logger=none progress=false checkpoint_every=0 hydra.run.dir=<run dir>
