python -m agentic_rl.train eval_before=false logger=none progress=false seed=1 rollout.backend=hf memory.allocator=jemalloc hydra.run.dir=<runs>/hf-jemalloc  (in <study-worktree>, nice 0)
