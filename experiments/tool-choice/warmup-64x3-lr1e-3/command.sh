#!/bin/bash
/usr/bin/time -v python -m agentic_rl.train warmup=sft-only warmup.epochs=3 warmup.batch_size=4 warmup.lr=1e-3 eval_before=false evaluator.limit=16 "evaluator.modes=[multi_tool,code_only]" logger=none progress=false checkpoint_every=0 hydra.run.dir=<run dir>
