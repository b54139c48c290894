"""A built-in task world in which each tool has a job: a generated library to search (`library.py`) and the
tasks that need it, plain Python tasks and tasks where running code pays (`tasks.py`: `load_toolworld`).

Only the library's names are imported here: the tools ask a task for its library on every call, and must not pull
in the task generator (numpy, through the near-duplicate check).
"""

from agentic_rl.data.toolworld.library import (
    Library,
    LibraryFunction,
    candidate_preamble,
    generate_library,
    sandbox_preamble,
    task_library,
    world_library,
)

__all__ = [
    "Library",
    "LibraryFunction",
    "candidate_preamble",
    "generate_library",
    "sandbox_preamble",
    "task_library",
    "world_library",
]
