"""A built-in task world in which each tool has a job: a generated library to search (`library.py`) and the
tasks that need it, plain Python tasks and tasks where running code pays (`tasks.py`)."""

from agentic_rl.data.toolworld.library import Library, LibraryFunction, generate_library, sandbox_preamble
from agentic_rl.data.toolworld.tasks import (
    TASK_TYPES,
    candidate_preamble,
    load_toolworld,
    task_library,
    world_library,
    world_summary,
)

__all__ = [
    "TASK_TYPES",
    "Library",
    "LibraryFunction",
    "candidate_preamble",
    "generate_library",
    "load_toolworld",
    "sandbox_preamble",
    "task_library",
    "world_library",
    "world_summary",
]
