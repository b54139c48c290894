"""The server's reading of a harness report: the lines on the result pipe that carry the call's nonce,
kept to the known fields with their types (what travels on to the client)."""

from __future__ import annotations

import json

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
    "what": str,
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
            continue
        tampered += clean.pop("tampered", None) or []
        report.update(clean)
    if tampered:
        report["tampered"] = list(dict.fromkeys(tampered))[:MAX_REPORT_LIST]
    return report or None


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
