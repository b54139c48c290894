"""An out-of-process pytest verdict's failure text, worded as the in-process harness words it.

The model reads a failed submission's text in its next turn, so where the verdict was computed must not
change that text. Out of process, pytest would word a failure from the trusted process's point of view:
the test file as `../trusted/test_solution.py`, and an exception raised in the candidate's code as the
channel's frames (`remote.py: in request`). This plugin rewrites each failing report (and so both the
detail the model reads and pytest's own output) to what the in-process harness shows: the test file
by the name the candidate's process sees, the channel's frames left out, and the candidate's own
frames (`solution.py:3: in f`, its line and the column marks), which crossed the channel as data
(remote.exception_frames), in their place.

Loaded by path by harness.py in the trusted process, after pytest was imported there.
"""

from __future__ import annotations

import os

import pytest
from _pytest._code.code import ExceptionChainRepr, FormattedExcinfo, ReprEntry, ReprFileLocation
from _pytest._code.source import Source
from _pytest.reports import CollectErrorRepr

# pytest's line under a RecursionError's frames when one repeats an earlier one (same code, line, locals)
RECURSION_FOUND = "!!! Recursion detected (same locals & position)"
EXCEPTION_LINE_MARK = "E   "  # how pytest's short style starts the lines that state the exception
IMPORT_SYSTEM = "<frozen importlib._bootstrap"  # the import system's frames (and _bootstrap_external's)


class InProcessWording:
    """pytest plugin for the trusted process of an out-of-process verdict."""

    def __init__(self, trusted_dir: str, workdir: str, channel_files: tuple[str, ...]) -> None:
        self.trusted_prefix = os.path.relpath(trusted_dir) + os.sep
        self.trusted_dir, self.workdir = trusted_dir.rstrip(os.sep) + os.sep, workdir.rstrip(os.sep) + os.sep
        self.channel_files = {os.path.abspath(f) for f in channel_files}
        # the exception the candidate's program raised while it loaded (harness.py sets it), with its frames
        self.load_error: BaseException | None = None

    def display_path(self, path: str) -> str:
        """A path as the candidate's process would show it (the tests sit beside the candidate there)."""
        return path.removeprefix(self.trusted_prefix).replace(self.trusted_dir, self.workdir)

    def reword_text(self, text: str) -> str:
        """A report pytest gives as plain text (an import error of the test module): the test file's name
        line by line, and the candidate's frames before the lines that state the exception."""
        lines = [self.display_path(line) for line in _without_import_frames(text.split("\n"))]
        stated = next((i for i, line in enumerate(lines) if line.startswith(EXCEPTION_LINE_MARK)), len(lines))
        frames = []
        for entry in map(_short_entry, getattr(self.load_error, "candidate_frames", [])):
            location = entry.reprfileloc
            frames += [f"{location.path}:{location.lineno}: {location.message}", *entry.lines]
        return "\n".join(lines[:stated] + frames + lines[stated:])

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed and isinstance(report.longrepr, ExceptionChainRepr):
            self.reword(report.longrepr, call.excinfo.value if call.excinfo else None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector):
        outcome = yield
        report = outcome.get_result()
        if report.failed and isinstance(report.longrepr, CollectErrorRepr):  # an import error, as text
            report.longrepr.longrepr = self.reword_text(report.longrepr.longrepr)
        elif report.failed and isinstance(report.longrepr, ExceptionChainRepr):  # any other error at import
            self.reword(report.longrepr, self.load_error)

    def reword(self, longrepr: ExceptionChainRepr, raised: BaseException | None) -> None:
        """`longrepr` of the exception `raised` with the candidate's frames (and, where they end at the start
        of a recursion, pytest's line saying so) for the channel's."""
        candidate_frames = getattr(raised, "candidate_frames", [])
        last_element = len(longrepr.chain) - 1
        for i, (reprtraceback, reprcrash, _) in enumerate(longrepr.chain):
            entries = list(reprtraceback.reprentries)
            if not entries or not all(isinstance(e, ReprEntry) for e in entries):
                continue
            stated = [line for line in entries[-1].lines if line.startswith(EXCEPTION_LINE_MARK)]
            kept = [e for e in entries if not self._is_channel(e)]
            if i == last_element:
                kept.extend(_short_entry(frame) for frame in candidate_frames)
            if not kept:
                continue
            for entry in kept:
                entry.lines = [line for line in entry.lines if not line.startswith(EXCEPTION_LINE_MARK)]
                if entry.reprfileloc is not None:
                    entry.reprfileloc.path = self.display_path(entry.reprfileloc.path)
            kept[-1].lines = [*kept[-1].lines, *stated]
            reprtraceback.reprentries = kept
            if i == last_element and getattr(raised, "candidate_recursion", False):
                reprtraceback.extraline = RECURSION_FOUND
            if reprcrash is not None:
                reprcrash.path = self.display_path(reprcrash.path)

    def _is_channel(self, entry) -> bool:
        """The channel's frames, and the import system's under the loader that raises the candidate's
        load error (in process, Python leaves the import system's frames out of that traceback)."""
        location = getattr(entry, "reprfileloc", None)
        if location is None:
            return False
        return location.path.startswith(IMPORT_SYSTEM) or os.path.abspath(location.path) in self.channel_files


def _without_import_frames(lines: list[str]) -> list[str]:
    """Text lines less each frame of the import system (its location line and its `???` source line)."""
    kept: list[str] = []
    skip_source = False
    for line in lines:
        if line.startswith(IMPORT_SYSTEM):
            skip_source = True
            continue
        if skip_source and line.strip() == "???":
            skip_source = False
            continue
        skip_source = False
        kept.append(line)
    return kept


def _short_entry(frame: tuple) -> ReprEntry:
    """One of the candidate's frames as pytest's short style shows a frame it has the source of."""
    path, lineno, name, raw_line, end_lineno, colno, end_colno = frame
    source = Source(raw_line.rstrip("\r\n")) if raw_line.strip() else Source("???")
    if raw_line.strip():
        # pytest measures the column marks on the line as read from the file, its newline included
        source.raw_lines = [raw_line]
    single_line = end_lineno == lineno and raw_line.strip()
    lines = FormattedExcinfo(style="short").get_source(
        source,
        line_index=0,
        short=True,
        end_line_index=0 if single_line else None,
        colno=colno if single_line else None,
        end_colno=end_colno if single_line else None,
    )
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    shown = relative if len(relative) < len(path) else path
    return ReprEntry(lines, None, None, ReprFileLocation(shown, lineno, f"in {name}"), "short")
