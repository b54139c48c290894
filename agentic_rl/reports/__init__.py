"""Reports read back from run dirs after the fact: tables (`tables`), figures (`plots`), their statistics (`stats`),
runs grouped into arms (`runs`), `env/calls_vs_oracle` over training (`oracle_course`), two runs compared
(`compare`), the sweep-end hooks (`callbacks`), and the one module that reads a run dir's files and writes Markdown
tables (`run_files`). Run-time logging (metrics, sinks, W&B) is `agentic_rl.tracking`."""
