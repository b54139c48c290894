"""Environments: what an episode runs against (its tools, prompt, stop condition, parser and state).

`ToolSetEnvironment` gives every code task the tool set of `tools=` (none | code | multi); tasks loaded with
`data=codegym` are CodeGym environments (a `gymnasium.Env` per problem, stepped in the sandbox). See
`agentic_rl.envs.base` for the seam the agent loop uses.
"""

from agentic_rl.envs.base import Environment, Episode
from agentic_rl.envs.toolset import (
    ToolSetEnvironment,
    ToolSetEpisode,
    as_environment,
    build_environment,
)

__all__ = ["Environment", "Episode", "ToolSetEnvironment", "ToolSetEpisode", "as_environment", "build_environment"]
