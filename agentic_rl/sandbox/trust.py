"""Where a grading runs: out of the candidate's process (the default), or in it where the tests need that.

Out of process (isolated.py), the tests run in a trusted process and call the candidate through a
channel that carries data (remote.py). Some tests cannot run that way, because they reach into the
candidate's process itself: they patch names the candidate's code looks up (`mock.patch`, pytest's
`monkeypatch`), or read what the candidate's process printed or logged (`capsys`, `capfd`, `caplog`,
`sys.stdout` swapped or `redirect_stdout`).
or check a library object the candidate made by reference (a matplotlib Axes or Figure, which the
channel carries only as a handle), or seed a global random generator the candidate draws from (one
generator per process out of process, one shared in the official harness), or turn the candidate's
data into code in the tests' process (unpickling a file it wrote, `eval` of a string it returned,
importing its file). Those are graded in
process, by today's harness with its tamper defences, and the verdict says so
(`TestReport.trust == "in_process"`).

The choice is made here, from the test source alone, before anything runs: the candidate cannot choose
it (a fallback decided after a run could be provoked by the candidate, by returning such an object).
"""

from __future__ import annotations

import re

OUT_OF_PROCESS, IN_PROCESS = "out_of_process", "in_process"

# Tests that turn what the candidate wrote into code in the tests' process (unpickling a file it wrote,
# eval of a string it returned, importing its file): out of process that code would run beside the report
# channel, so these run in process, where it is only what the candidate could do anyway.
_RUNS_CANDIDATE_DATA = (
    r"pickle|joblib|read_pickle|dill|shelve|marshal|allow_pickle|unsafe_load|yaml\.load|"
    r"torch\.load|load_model|eval|exec|import_module|__import__|runpy|spec_from_file_location"
)

# Tests that seed a global random generator: what the candidate draws from it (and what the tests draw
# after calling the candidate) depends on one generator that both share in one process, as the official
# harness runs them. Out of process each side would have its own.
_SEEDS_SHARED_RANDOM = r"(?:np\.random|numpy\.random|random)\.(?:seed|setstate|set_state)|set_seed|manual_seed"

# Test code that reaches into the candidate's process (word-boundary matches on the test source).
_IN_PROCESS_MARKERS = {
    "pytest": re.compile(
        r"\b(mock|Mock|MagicMock|patch|monkeypatch|mocker|capsys|capfd|capsysbinary|capfdbinary|"
        r"caplog|import solution|solution\.|sys\.modules|stdout|stderr|__class__|__module__|gc|"
        + _RUNS_CANDIDATE_DATA
        + "|"
        + _SEEDS_SHARED_RANDOM
        + r")\b"
    ),
    "unittest": re.compile(
        r"\b(mock|Mock|MagicMock|patch|assertLogs|stdout|stderr|"
        r"sys\.modules|__class__|__module__|gc|matplotlib|plt|Axes|Figure|axes|"
        + _RUNS_CANDIDATE_DATA
        + "|"
        + _SEEDS_SHARED_RANDOM
        + r")\b"
    ),
    "humaneval": None,  # check(candidate) only calls the candidate: always out of process
}


def plan(test: str, harness: str) -> tuple[str, str | None]:
    """(trust, why): OUT_OF_PROCESS, or IN_PROCESS with the construct of the test that needs it."""
    marker = _IN_PROCESS_MARKERS.get(harness)
    if marker is None:
        return OUT_OF_PROCESS, None
    found = marker.search(test)
    if found:
        return IN_PROCESS, found.group(0)
    return OUT_OF_PROCESS, None
