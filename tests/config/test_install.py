"""`pip install .` into a fresh venv works outside the checkout: the console scripts find the configs that
ship inside the package, report config errors, and complete on Tab in bash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_rl.paths import CONF_DIR

REPO = Path(__file__).resolve().parents[2]
# Copied instead of built in place, so the checkout gets no build/ folder; outputs and records are not needed.
SKIP = shutil.ignore_patterns(
    ".git", "outputs", "experiments", "wandb", "build", "*.egg-info", "__pycache__", ".venv*", ".pytest_cache"
)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("install")
    src = root / "src"
    shutil.copytree(REPO, src, ignore=SKIP)
    env_dir = root / "venv"
    # --system-site-packages: torch and the other dependencies come from this interpreter (no download);
    # --without-pip: this interpreter's pip and setuptools build the package (no build isolation, offline).
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env_dir)], check=True)
    subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(src)],
        check=True,
        capture_output=True,
        text=True,
    )
    shutil.rmtree(src)  # the installed copy must not depend on the source tree
    return env_dir


def _env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HYDRA_FULL_ERROR")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.slow
def test_installed_console_scripts_work_from_another_directory(venv, tmp_path):
    def run(*args):
        return subprocess.run(list(args), cwd=tmp_path, env=_env(venv), capture_output=True, text=True, timeout=300)

    python_dir = f"python{sys.version_info.major}.{sys.version_info.minor}"
    installed = venv / "lib" / python_dir / "site-packages" / "agentic_rl"
    # every module of the source tree is in the installed copy (a folder without __init__.py would be left
    # out, and --system-site-packages could then hide it behind an editable install elsewhere)
    source = sorted(str(p.relative_to(REPO / "agentic_rl")) for p in (REPO / "agentic_rl").rglob("*.py"))
    assert sorted(str(p.relative_to(installed)) for p in installed.rglob("*.py")) == source
    where = run(str(venv / "bin" / "python"), "-c", "import agentic_rl.config as c; print(c.CONF_DIR)")
    assert where.stdout.strip() == str(installed / "conf"), where.stderr

    helped = run("agentic-rl-train", "--help")
    assert helped.returncode == 0, helped.stderr
    # the groups' options as Hydra lists them (sorted), read from the source tree's conf/
    experiments = ", ".join(sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml")))
    assert "reward: binary, shaped, torl" in helped.stdout and f"experiment: {experiments}" in helped.stdout
    assert "_target_: agentic_rl.rewards.shaped" in helped.stdout  # the composed default config

    typo = run("agentic-rl-train", "+algo.learning_rate=1e-5", f"hydra.run.dir={tmp_path / 'run'}")
    assert typo.returncode == 2 and "Closest valid keys: algo.lr" in typo.stderr and "Traceback" not in typo.stderr

    assert "modes" in run("agentic-rl-eval", "--help").stdout
    plot = run("agentic-rl-plot", str(tmp_path / "nothing-here"))
    assert plot.returncode == 2 and "no metrics.jsonl" in plot.stderr

    # Tab completion through the script Hydra installs (it follows console scripts, not `python -m`)
    script = (
        'eval "$(agentic-rl-train -sc install=bash)"; COMP_LINE="agentic-rl-train rew"; '
        'COMP_POINT=${#COMP_LINE}; COMP_CWORD=1; hydra_bash_completion; echo "${COMPREPLY[@]}"'
    )
    completed = run("bash", "-c", script)
    assert completed.stdout.split() == ["reward.", "reward="], completed.stderr
