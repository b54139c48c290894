"""Dataset loaders: each maps its dataset's own schema to `agentic_rl.types.Task`."""
