"""The server's reading of a harness report: the lines on the result pipe that carry the call's nonce,
kept to the known fields with their types (what travels on to the client)."""

from __future__ import annotations

import json

# What a blocked attempt was, one word per kind (issue #47): each tamper event carries one, and the verdict
# lists them (`TestReport.tamper_kinds`), counted as `tools/submit/tampered/<kind>` in training metrics. A
# word outside this list (a newer harness, junk) reads as "other", so metric names stay a known set.
TAMPER_KINDS = {
    # out of process (isolated.py, remote.py)
    "refused_name": "a module or class name only a forgery supplies (a dunder part, a class always sent as data)",
    "shadowed_module": "a definition of the candidate's under a module name the tests use (both paths)",
    # both paths: a handle out of process; in process an object of a class the candidate wrote, on one side only
    "handle_operator": "the tests asked the candidate's object to judge: ordering, arithmetic or membership",
    # in process: a library call of the tests' code handed the candidate's object beside the tests' values
    "handle_library": "library code called by the tests would have asked the candidate's object to judge",
    # in process (tamper.py, harness.py)
    "object_graph": "a walk of the object graph (gc.get_objects, get_referrers, get_referents)",
    "trace_hook": "a trace, profile or audit hook (sys.settrace, sys.setprofile, sys.addaudithook)",
    "frame_access": "frames handed to the candidate's code (sys._getframe, tb_frame, inspect.currentframe...)",
    "memory_read": "raw memory read or the interpreter's C API reached through ctypes, or /proc/*/mem opened",
    "code_swap": "a function's __code__ replaced, or code compiled under a library's file name",
    "signal_reimport": "_signal imported afresh (to get the unwrapped handler installer back)",
    "framework_patch": "state the harness relies on changed (test framework classes, builtins, os, sys.modules)",
    "import_hook": "an import hook added or removed",
    "result_channel": "the result pipe moved to another fd, or the harness's sealed channels reached",
    "canary": "a hidden test that must fail passed, or never ran",
    "always_equal": "a value that claims an equality no value has (random sentinels, two values that differ)",
    "expected_failure": "a test turned into an expected failure the source did not declare",
    "other": "a tamper event of no known kind",
}

# What a harness report line may carry (harness.py): field -> its type; anything else is dropped, so a
# malformed, deeply nested or oversized report never travels further than this function.
REPORT_FIELDS = {
    "event": str,
    "n_tests": int,
    "n_passed": int,
    "failures": list,
    "error": str,
    "type": str,
    "names": list,
    "ran": list,
    "tampered": list,
    "tamper_kinds": list,
    "what": str,
    "kind": str,
}
MAX_REPORT_TEXT = 2000
MAX_REPORT_LIST = 500


def parse_report(raw: bytes, nonce: str) -> dict | None:
    """Merge the runner's report lines that carry the call's nonce; anything else is ignored.

    Never raises: junk on the result pipe (not JSON, nested past the parser's depth, wrong types) is
    skipped line by line. `tamper` events accumulate into "tampered", so a tamper attempt reported
    before the run hung or exited still counts.
    """
    report: dict = {}
    tampered: list[str] = []
    kinds: list[str] = []
    stamp = nonce.encode()
    for line in raw.splitlines():
        if stamp not in line:
            continue  # not the harness's (and not worth parsing)
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError, MemoryError):
            continue
        if not isinstance(msg, dict) or msg.pop("nonce", None) != nonce:
            continue
        clean = {k: clean_field(v, REPORT_FIELDS[k]) for k, v in msg.items() if k in REPORT_FIELDS}
        clean = {k: v for k, v in clean.items() if v is not None or k == "error"}
        if clean.get("event") == "tamper":
            tampered.append(clean.get("what", "?"))
            kinds.append(tamper_kind(clean.get("kind")))
            continue
        tampered += clean.pop("tampered", None) or []
        kinds += [tamper_kind(k) for k in clean.pop("tamper_kinds", None) or []]
        report.update(clean)
    if tampered:
        report["tampered"] = list(dict.fromkeys(tampered))[:MAX_REPORT_LIST]
        report["tamper_kinds"] = list(dict.fromkeys(kinds or ["other"]))
    return report or None


def tamper_kind(kind: object) -> str:
    """`kind` if it is one of TAMPER_KINDS, else "other"."""
    return kind if isinstance(kind, str) and kind in TAMPER_KINDS else "other"


def clean_field(value: object, kind: type) -> object:
    """`value` if it is of `kind` (lists: of strings), capped in size; else None."""
    if kind is int:
        return value if type(value) is int and 0 <= value < 1 << 31 else None
    if kind is str:
        return value[:MAX_REPORT_TEXT] if isinstance(value, str) else None
    if isinstance(value, list):
        return [v[:MAX_REPORT_TEXT] for v in value[:MAX_REPORT_LIST] if isinstance(v, str)]
    return None


def reported(raw: bytes, nonce: str, event: str) -> bool:
    """Whether the harness has sent `event` yet (on the result pipe, with the call's nonce)."""
    report = parse_report(raw, nonce) or {}
    return report.get("event") == event or (event == "collected" and "n_tests" in report)
