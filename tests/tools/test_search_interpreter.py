"""Running `introspect.py` in the sandbox interpreter (`interpreter.run_introspect`): what a failure reports,
and what counts as one. A shell script stands in for an interpreter that fails in a chosen way."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentic_rl.tools.search import interpreter


def fake_python(tmp_path: Path, body: str) -> str:
    """An "interpreter" that runs `body` as a shell script; it is called as `python -c SOURCE MODE CFG OUT`."""
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_the_probe_runs_in_the_given_interpreter_and_returns_its_answer():
    key = interpreter.version_key(sys.executable, ["json"])
    assert key["executable"] == sys.executable and key["version"] == sys.version
    assert key["modules"]["json"]["origin"] == json.__file__


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a shell script as the interpreter")
def test_a_failure_reports_the_exit_code_and_the_last_2000_characters_of_its_error_output(tmp_path):
    # 2600 characters of stderr, then a last line: the message keeps the end, where a traceback says what failed
    python = fake_python(tmp_path, "printf 'a%.0s' $(seq 2600) >&2\necho >&2\necho 'boom: the last line' >&2\nexit 3\n")
    with pytest.raises(RuntimeError) as err:
        interpreter.run_introspect(python, "probe", {}, timeout=60)
    message = str(err.value)
    tail = ("a" * 2600 + "\nboom: the last line")[-2000:]
    assert message.endswith(f"failed (exit 3): {tail}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a shell script as the interpreter")
@pytest.mark.parametrize(
    ("script", "mode", "message"),
    [
        # the standard output is reported when the error output is empty
        ("echo 'said on stdout'\nexit 2\n", "build", r"failed \(exit 2\): said on stdout$"),
        # a nonzero exit fails even with an answer written ($5 is the output path)
        ('echo \'{"python": "x"}\' > "$5"\necho half done >&2\nexit 1\n', "probe", r"failed \(exit 1\): half done"),
        # a clean exit without an answer is a failure
        ("echo nothing written >&2\nexit 0\n", "probe", r"failed \(exit 0\): nothing written"),
    ],
    ids=["stdout-when-stderr-empty", "nonzero-exit-with-answer", "clean-exit-without-answer"],
)
def test_what_counts_as_a_failure_and_what_it_reports(tmp_path, script, mode, message):
    python = fake_python(tmp_path, script)
    with pytest.raises(RuntimeError, match=message):
        interpreter.run_introspect(python, mode, {}, timeout=60)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a shell script as the interpreter")
def test_the_script_gets_the_mode_and_the_config_it_was_given(tmp_path):
    # the fake answers with its mode ($3) and the config file's text ($4)
    python = fake_python(tmp_path, 'printf \'{"mode": "%s", "cfg": %s}\' "$3" "$(cat "$4")" > "$5"\n')
    assert interpreter.run_introspect(python, "build", {"modules": ["a", "b"]}, timeout=60) == {
        "mode": "build",
        "cfg": {"modules": ["a", "b"]},
    }


def test_indexes_are_cached_under_the_cache_root(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTIC_RL_CACHE_DIR", str(tmp_path))
    assert interpreter.default_cache_dir() == tmp_path / "search"
