"""Resume and sweep bookkeeping around a run: which config a resume uses, which jobs a sweep rerun skips,
and how a failed or interrupted job is reported.

- `resolve_resume(cfg)`: `resume=RUN_DIR` continues that run with the config saved in `RUN_DIR/.hydra/`.
  Command-line overrides that would change the experiment are refused; `HARMLESS_KEYS` may change.
- `run_job(cfg, run, ...)`: the entry points' wrapper. An interrupted run prints one line and exits with
  128 + signal; in a multirun, a job that fails is recorded (`error.txt` in its dir, one entry in the sweep's
  `failures.json`) and the sweep goes on, and a job already complete in its dir is skipped.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import shlex
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from agentic_rl.runtime.files import SUMMARY_FILE, atomic_write_text
from agentic_rl.runtime.interrupt import RunInterrupted
from agentic_rl.runtime.memory import upgrade_legacy_pin
from agentic_rl.runtime.stages import in_hydra, in_multirun

logger = logging.getLogger(__name__)

# Keys that do not change what a run computes, so a resume may set them: display, checkpoint cadence,
# where metrics go besides metrics.jsonl, which heap pages stay resident, where the run lives, and where its episodes
# step (envs.servers: served rollouts are bit-identical to in-process ones, tests/envs/test_serve.py), and where the
# shared evaluation before training is kept (base_eval.cache: its entries are keyed by what they compute). A dotted
# entry names one key of a node; its siblings still count.
HARMLESS_KEYS = (
    "progress",
    "checkpoint_every",
    "checkpoint_keep",
    "logger",
    "memory",
    "resume",
    "run_dir",
    "envs",
    "base_eval.cache",
)
ERROR_FILE = "error.txt"
FAILURES_FILE = "failures.json"


def experiment_config(cfg: DictConfig) -> dict[str, Any]:
    """The resolved config without the harmless keys: what must be equal for two runs to be the same one."""
    container = OmegaConf.to_container(cfg, resolve=True)
    for key in HARMLESS_KEYS:
        *parents, leaf = key.split(".")
        node = container
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(leaf, None)
    container.pop("hydra", None)
    return container


def harmless_key(path: str) -> str | None:
    """The entry of HARMLESS_KEYS that covers the config path `path` (itself or a node above it), else None."""
    return next((key for key in HARMLESS_KEYS if path == key or path.startswith(key + ".")), None)


def experiment_hash(cfg: DictConfig) -> str:
    blob = json.dumps(experiment_config(cfg), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def command_line_overrides() -> list[str]:
    if not in_hydra():
        return []
    from hydra.core.hydra_config import HydraConfig

    return list(HydraConfig.get().overrides.task)


def resolve_resume(cfg: DictConfig, overrides: list[str] | None = None) -> DictConfig:
    """`cfg` itself, or with `resume=RUN_DIR` the config RUN_DIR was started with (plus harmless overrides).

    `overrides` are the command line's (default: Hydra's record of them). Each one that gives a key another
    value than the saved run has is refused, with the list of such keys and how to proceed.
    """
    if not cfg.get("resume"):
        return cfg
    run_dir = Path(cfg.resume).expanduser()
    saved_path = run_dir / ".hydra" / "config.yaml"
    if not saved_path.is_file():
        raise FileNotFoundError(
            f"resume={run_dir}: no {saved_path.relative_to(run_dir)} there. Fix: pass the "
            "dir of a training run (outputs/runs/<date>/<time>, or a sweep job's dir)"
        )
    saved = upgrade_legacy_pin(OmegaConf.load(saved_path))
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(overrides if overrides is not None else command_line_overrides())
    changed, harmless = [], []
    for override in parsed:
        key = override.get_key_element().lstrip("+~")
        path = override.package or key  # `data@eval_data=...` configures the node `eval_data`
        if key.startswith("hydra.") or key.startswith("hydra/"):
            continue
        if (covering := harmless_key(path)) is not None:  # the whole node is taken: `memory.mmap_threshold_kib=...`
            harmless.append(covering)
            continue
        if _value(cfg, path) != _value(saved, path):
            changed.append(f"{override.input_line} (the run has {path}={_value(saved, path)})")
    if changed:
        raise ValueError(
            f"resume={run_dir} continues that run with its own config, and these overrides would "
            f"change the experiment: {'; '.join(changed)}. Fix: drop them (only "
            f"{', '.join(k for k in HARMLESS_KEYS if k != 'run_dir')} may change on resume), or "
            "start a new run with them"
        )
    OmegaConf.set_struct(saved, False)
    for key in harmless:
        OmegaConf.update(saved, key, OmegaConf.select(cfg, key), merge=False, force_add=True)
    saved.resume = str(run_dir)
    return saved


def _value(cfg: DictConfig, path: str) -> Any:
    node = OmegaConf.select(cfg, path, default=None)
    return OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node


def multirun_dirs() -> tuple[Path, Path, int] | None:
    """(job dir, sweep dir, job number) inside a Hydra multirun, else None."""
    if not in_multirun():
        return None
    from hydra.core.hydra_config import HydraConfig

    hc = HydraConfig.get()
    return Path(hc.runtime.output_dir), Path(hc.sweep.dir), hc.job.num


def run_job(
    cfg: DictConfig, run: Callable[[DictConfig], dict[str, Any]], entry: str, resume_key: str
) -> dict[str, Any] | None:
    """Call `run(cfg)` as one job: interruption -> one line and exit 128+signal; sweep failure -> recorded.

    Returns the summary, or None for a multirun job that failed (its error is in `error.txt` and
    `failures.json`; the sweep's end reports it and a rerun of the same sweep retries it).
    """
    multirun = multirun_dirs()
    if multirun is not None:
        done = completed_summary(multirun[0], cfg)
        if done is not None:
            logger.info("job %d is complete in %s: skipped", multirun[2], multirun[0])
            return done
    try:
        summary = run(cfg)
    except RunInterrupted as e:
        at = "" if e.step is None else f" at step {e.step}"
        # the one bare line a user sees after Ctrl-C, to copy and run (a log record would prefix it)
        print(f"interrupted{at}; resume with: python -m {entry} {resume_key}={e.run_dir}", file=sys.stderr)  # noqa: T201
        raise SystemExit(e.exit_code) from None
    except Exception as e:
        if multirun is None:
            raise
        job_dir, sweep_dir, num = multirun
        record_failure(job_dir, sweep_dir, num, e)
        logger.error(
            "job %d failed (%s: %s); the sweep goes on. Details: %s", num, type(e).__name__, e, job_dir / ERROR_FILE
        )
        return None
    if multirun is not None:
        clear_failure(*multirun)
    return summary


def completed_summary(job_dir: Path, cfg: DictConfig) -> dict[str, Any] | None:
    """The summary of a job that already finished in `job_dir` with this same config, else None."""
    path = job_dir / SUMMARY_FILE
    if not path.is_file() or (job_dir / ERROR_FILE).is_file():
        return None
    try:
        summary = json.loads(path.read_text())
    except json.JSONDecodeError:
        return None
    if summary.get("status") != "complete" or "config_hash" not in summary:
        return None
    if summary.get("config_hash") != experiment_hash(cfg):
        raise ValueError(
            f"{job_dir} holds a finished run of a different experiment (another sweep command "
            "wrote this sweep dir). Fix: use a new hydra.sweep.dir, or rerun the original command"
        )
    return summary


def record_failure(job_dir: Path, sweep_dir: Path, num: int, error: BaseException) -> None:
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / ERROR_FILE).write_text("".join(traceback.format_exception(error)))
    overrides = command_line_overrides()
    with _locked_failures(sweep_dir) as failures:
        failures[str(num)] = {
            "job_dir": str(job_dir),
            "overrides": overrides,
            "error": f"{type(error).__name__}: {error}",
            "details": str(job_dir / ERROR_FILE),
        }


def clear_failure(job_dir: Path, sweep_dir: Path, num: int) -> None:
    (job_dir / ERROR_FILE).unlink(missing_ok=True)
    if (sweep_dir / FAILURES_FILE).is_file():
        with _locked_failures(sweep_dir) as failures:
            failures.pop(str(num), None)


class _locked_failures:
    """failures.json as a dict, read and rewritten under a file lock (parallel launchers share it)."""

    def __init__(self, sweep_dir: Path) -> None:
        self.path = sweep_dir / FAILURES_FILE
        sweep_dir.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> dict[str, Any]:
        self._lock = open(self.path.with_suffix(".lock"), "w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.data = json.loads(self.path.read_text()) if self.path.is_file() else {}
        return self.data

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                atomic_write_text(self.path, json.dumps(self.data, indent=2))
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()


def read_failures(sweep_dir: Path) -> dict[str, Any]:
    path = Path(sweep_dir) / FAILURES_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def rerun_command(entry: str, sweep_dir: Path, argv: list[str] | None = None) -> str:
    """The command that reruns this sweep into the same dir (running only its missing or failed jobs)."""
    args = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("hydra.sweep.dir=")]
    return shlex.join(["python", "-m", entry, *args, f"hydra.sweep.dir={sweep_dir}"])
