"""Sampling as a service: sampler servers (`server`, around `engines`), the protocol they speak (`protocol`), the
router in front of them (`router`) and the rollout's `Policy` on them (`remote`, `local`). See docs/scaling.md."""
