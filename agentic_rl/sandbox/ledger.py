"""In process (issue #47): what decides a unittest verdict, held where the candidate's code cannot rewrite it.

Standard library only; loaded by path by harness.py inside the sandboxed runner.

In process the candidate can reach the tests' objects: a bound method a test hands it (`self.check` as a
callback: `__self__` is the TestCase), or any frame a library hands it on its behalf (`f_back` has no audit
event; pandas' `Scope(level=n)` copies any caller's locals). From a TestCase it reaches `_outcome`, the result,
and from a frame of unittest's the suite and every test in it. So nothing mutable that such objects hold may
decide the verdict. The result keeps its per-test records in a generator (`tally`) whose frame is refused to
everyone (tamper.AuditPolicy's `sealed`): it can be told things, never edited, and it believes only what fits
unittest's own course of events (each collected test started once, one at a time, by the framework's own runner; a
success only for the test that is running and raised nothing in any of its parts, `part_errors`). Whatever
does not fit is an anomaly: the verdict is `tampered`.
"""

from __future__ import annotations

_type, _len, _set, _id, _list = type, len, set, id, list
_getframe = __import__("sys")._getframe


def tally(errors=None, runners: frozenset = frozenset(), trusted=None, relays: frozenset = frozenset()):
    """A sealed record of one run (unittest's tests, pytest's items, humaneval's check). Messages (tuples), each
    answered by the next `send`'s value:
    ("expect", [(key, name), ...], [canary keys])  once, before the run: the tests in the order they run;
    ("start", key) / ("stop", key)                  startTest / stopTest (pytest: logstart / logfinish);
    ("pass", key)                                   a success of the running test;
    ("xpass", key)                                  an expected failure the test's source declares;
    ("fail", key, name, message)                    a failure, error, skip... (an unknown key: `name`);
    ("watch", [snapshot(), ...])                    once, before the run: names compared at every start and stop;
    ("outcome",)                                    -> (the test names in order, passed names, ((name, message),
                                                     ...), ((canary key, outcome), ...), ((note, kind), ...)).
    `errors`: part_errors(), asked for the running test's count at its start and at its success (unittest).
    `runners`, `trusted(filename)`, `relays`: a start, stop or success is believed only when the framework's own
    runner sent it (`_from_runner`). Nothing can be taken back: a failure stays, a pass counts once, anomalies
    stay; the answers are immutable."""
    order, names, canaries, current, started, at_start = [], {}, {}, None, _set(), 0
    passed, failed, anomalies, answer, watched = _set(), {}, [], None, None
    while True:
        try:
            msg = yield answer
        except GeneratorExit:
            return  # closed (by whoever reached it): every later send fails, and with it the verdict
        except BaseException:  # noqa: BLE001 - throw() from whoever reached it: it stays open
            answer = None
            continue
        answer = None
        try:
            kind = msg[0] if _type(msg) is tuple and msg else None
            if kind in ("start", "stop", "pass", "xpass") and runners and not _from_runner(runners, trusted, relays):
                anomalies.append(
                    (f"a test's {kind} was reported by code other than the test framework's runner", "result_channel")
                )
                continue
            if kind in ("start", "stop") and watched:
                anomalies += _rebound(watched)
            if kind == "watch" and watched is None and not started:
                watched = _list(msg[1])
            elif kind == "expect" and not order:
                order = [i for i, _ in msg[1]]
                names = {i: n for i, n in msg[1]}
                canaries = {i: "not run" for i in msg[2]}
            elif kind == "start":
                if current is not None or msg[1] not in names or msg[1] in started:
                    anomalies.append(
                        ("a test was started twice, inside another, or was not collected", "result_channel")
                    )
                else:
                    current = msg[1]
                    started.add(current)
                    at_start = errors.send(("count", current)) if errors is not None else 0
            elif kind == "stop":
                if msg[1] != current:
                    anomalies.append(("a test was stopped that was not running", "result_channel"))
                current = None
            elif kind in ("pass", "xpass"):
                if msg[1] != current:
                    anomalies.append(("a success was reported for a test that was not running", "result_channel"))
                elif kind == "pass" and errors is not None and errors.send(("count", current)) != at_start:
                    anomalies.append(("a success was reported for a test a part of which raised", "result_channel"))
                elif msg[1] in canaries:
                    canaries[msg[1]] = "passed"
                else:
                    passed.add(names[msg[1]])
            elif kind == "fail":
                if msg[1] in canaries:
                    canaries[msg[1]] = "failed" if canaries[msg[1]] != "passed" else "passed"
                else:
                    failed.setdefault(names.get(msg[1], msg[2]), msg[3])
            elif kind == "outcome":
                in_order = tuple(names[k] for k in order if k not in canaries)
                answer = (in_order, frozenset(passed), tuple(failed.items()), tuple(canaries.items()), tuple(anomalies))
        except BaseException:  # noqa: BLE001 - a malformed message is the sender's loss
            answer = None


def _rebound(snapshots: list) -> list:
    """(note, kind) for each of the tests' names a snapshot() says was rebound (the tally asks them itself: no
    attribute of an object the candidate reaches decides whether they are asked)."""
    out = []
    for snap in snapshots:
        try:
            changed = snap.send(("changed",))
        except BaseException:  # noqa: BLE001 - closed or held by another thread: nothing can be said
            changed = ["(the tests' names could not be compared)"]
        for name in changed[:5] if _type(changed) is list else ["(no answer)"]:
            out.append((f"the tests' own name {name!r} was rebound while the tests ran", "framework_patch"))
    return out


def _from_runner(runners: frozenset, trusted, relays: frozenset) -> bool:
    """Whether the `send` being answered comes from the framework's runner (unittest's TestCase.run, pytest's
    runtestprotocol, the harness's humaneval runner) through the interpreter's and libraries' code only: the
    candidate's code calling the result's methods (`result.addSuccess(test)`), from wherever, is not."""
    frame = _getframe(2)  # 0: here, 1: the tally, 2: whoever sent
    for _ in range(16):
        if frame is None:
            return False
        code = frame.f_code
        if _id(code) in runners:
            return True
        if _id(code) not in relays and not trusted(code.co_filename):
            return False
        frame = frame.f_back
    return False


def part_errors():
    """Per test (its id), how many of its parts (setUp, the method, a subTest, tearDown) raised, as unittest's
    part executor saw it (harness._noting_stops): ("raised", id) counts one; ("count", id) -> the count.
    Counts only grow. A program that reaches the test's `_outcome` could point `outcome.result` at an object of
    its own (which is told of the failure) and set `outcome.success` back to True from there, and unittest
    would report a success: the tally compares the count at the test's start with the count at its success."""
    counts, answer = {}, None
    while True:
        try:
            msg = yield answer
        except GeneratorExit:
            return
        except BaseException:  # noqa: BLE001
            answer = None
            continue
        answer = None
        try:
            if _type(msg) is tuple and _len(msg) == 2 and _type(msg[1]) is int:
                if msg[0] == "raised":
                    counts[msg[1]] = counts.get(msg[1], 0) + 1
                elif msg[0] == "count":
                    answer = counts.get(msg[1], 0)
        except BaseException:  # noqa: BLE001
            answer = None


def snapshot(namespace: dict, names):
    """The objects `names` are bound to in `namespace` now (the tests' own module-level names: their helpers,
    constants, TestCases); each ("changed",) answers the names bound to another object since. In BigCodeBench
    the program and the tests share one module: the program could rebind a helper the tests call."""
    before = {n: namespace[n] for n in names if n in namespace}
    answer = None
    while True:
        try:
            yield answer
        except GeneratorExit:
            return
        except BaseException:  # noqa: BLE001
            pass
        try:
            answer = sorted(n for n, v in before.items() if namespace.get(n, before) is not v)
        except BaseException:  # noqa: BLE001
            answer = ["the tests' names (they could not be compared)"]


def started(generator):
    """`generator` advanced to its first `yield`, ready for `send`."""
    next(generator)
    return generator
