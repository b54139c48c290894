"""Task sources: every module here produces `agentic_rl.types.Task`s.

- loaders that map a dataset's own schema to `Task` (`kodcode`, `bigcodebench`, `humaneval`, `builtin`), through the
  one loading path and row validators of `records`, from the offline copies `paths` locates;
- generated task families (`pipelines`: list pipelines; `toolworld`: a generated library, its tasks and demonstrations)
  and `mix`, several sources in one training distribution;
- checks on task sets: near-duplicates between splits (`overlap`) and tests a trivial candidate passes (`hygiene`).
"""
