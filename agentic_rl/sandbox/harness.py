"""What runs inside the sandboxed runner process: the program runner and the three test harnesses.

Standard library only (loaded by path by server.py under the sandbox interpreter; pytest is imported
only by the pytest harness). Every entry point ends the process with os._exit.

Reporting: results travel to the server as JSON lines on a dedicated pipe (RESULT_FD), each line
stamped with a per-call random nonce; stdout and stderr are separate pipes, so printing "OK" or
"3 passed" cannot change a verdict, and neither can an exit code. A harness reports
    {"event": "collected", "n_tests": N}                          once the tests are known, then
    {"event": "done", "n_tests", "n_passed", "failures", "error"} after the last test,
and the process exits right after "done" (no atexit handlers, no waiting for threads). A run that
exits, crashes or hangs before "done" has no verdict and is graded as a failure by the client.

What the harness counts as a pass, per test: unittest - addSuccess (or an expected failure) and no
failing subtest; pytest - setup, call and teardown all passed (skips and xfails do not pass);
humaneval - `check(candidate)` returned. The client passes a task only if n_tests >= 1 and all passed.

Tampering (tamper.py, README.md "Reward hacking"): in test mode an audit hook is installed before any
candidate code runs, framework state is compared at checkpoints (after loading, around every test,
at the end), hidden canary tests that must fail run with the real ones, and compared values are
checked for always-equal objects. Whatever is refused or detected is sent at once as a
{"event": "tamper", "what": ...} line and listed in "done" as "tampered": the client's status
`tampered`, a failure.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import importlib.util
import linecache
import os
import pkgutil  # noqa: F401  (runpy imports it lazily: import it once, in the server, not per call)
import runpy
import sys
import traceback
import types
import unittest

MAX_FAILURES_REPORTED = 20
MAX_MESSAGE_CHARS = 600
HERE = os.path.dirname(os.path.abspath(__file__))


def _load_sibling(name: str):
    """tamper.py sits next to this file, which is itself loaded by path (not as a package)."""
    spec = importlib.util.spec_from_file_location(f"agentic_rl_sandbox_{name}", os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tamper = _load_sibling("tamper")
ledger = _load_sibling("ledger")
remote = _load_sibling("remote")
isolated = _load_sibling("isolated")
patching = _load_sibling("patching")


class Reporter:
    """Writes nonce-stamped JSON lines to the result pipe. Built before any untrusted code runs.

    The pipe is known by its inode, not by its fd number: a candidate sharing the process can dup2
    another pipe of its own onto the result fd to read the nonce from the harness's next line. Every
    line is written only to an fd that still is the result pipe (searched for among the process's fds
    if the number changed, and then a tamper event is sent first); never to anything else.
    """

    def __init__(self, fd: int, nonce: str) -> None:
        self._fd, self._nonce = fd, nonce
        # Kept references the candidate cannot swap; the encoder uses built-in types only (not json,
        # whose encoder is module state a candidate could rebind to rewrite the report).
        self._write, self._encode, self._fstat, self._listdir = os.write, tamper.encode, os.fstat, os.listdir
        st = os.fstat(fd)
        self._pipe = (st.st_dev, st.st_ino)
        self.moved = False

    @property
    def fd(self) -> int:
        return self._fd

    def _is_pipe(self, fd: int) -> bool:
        try:
            st = self._fstat(fd)
        except (OSError, ValueError, TypeError):
            return False
        return (st.st_dev, st.st_ino) == self._pipe

    def _find_pipe(self) -> int | None:
        try:
            fds = [int(name) for name in self._listdir("/proc/self/fd")]
        except (OSError, ValueError):
            fds = list(range(1024))
        return next((fd for fd in fds if self._is_pipe(fd)), None)

    def send(self, **fields) -> None:
        if not self._is_pipe(self._fd):
            fd = self._find_pipe()
            if fd is None:
                return  # the result pipe is gone: no report, which grades as a failure
            self._fd = fd
            if not self.moved:
                self.moved = True
                moved = "the result channel was moved to another fd (dup2)"
                self._send({"event": "tamper", "what": moved, "kind": "result_channel"})
        self._send(fields)

    def _send(self, fields: dict) -> None:
        # A newline first as well: bytes the candidate wrote to the pipe without one (it shares the process)
        # would otherwise run into this line and make it unreadable (a tamper event lost, then an exit).
        data = ("\n" + self._encode({"nonce": self._nonce, **fields}) + "\n").encode()
        try:
            while data:
                data = data[self._write(self._fd, data) :]
        except OSError:
            pass  # the candidate closed the channel: no report, which grades as a failure


def main(req: dict, workdir: str, result_fd: int, nonce: str | list, candidate_fd: int | None = None) -> None:
    """The runner's program. `candidate_fd`: the channel to the candidate's process, where the server
    forked it already (out of process, before it read the tests). `nonce`: the call's nonce, or a list holding
    it, which this empties (isolation.py: then no frame below this one holds the nonce while the tests run)."""
    reporter = Reporter(result_fd, nonce.pop() if type(nonce) is list else nonce)
    del nonce
    sys.path.insert(0, workdir)
    sys.argv = [os.path.join(workdir, "main.py" if req["mode"] == "exec" else "program.py")]
    _fresh_process_state()
    if req["mode"] == "exec":
        code = run_program(os.path.join(workdir, "main.py"), req["code"], reporter)
    else:
        # in process, a frame the candidate gets handed (a library's sys._getframe: `f_back` has no audit event)
        # reaches this one too: the reporter travels in a list that run_tests empties (issue #47)
        box = [reporter]
        del reporter
        run_tests(req, workdir, box, candidate_fd)
        code = 0
    _flush_stdio()
    _os_exit(code)


def candidate(req: dict, workdir: str, sock) -> None:
    """The candidate's process the server forked (out of process, before the tests were read): as a fresh
    program, then the channel's candidate side (isolated.candidate_main). Never returns."""
    sys.argv = [os.path.join(workdir, "program.py")]
    _fresh_process_state()
    isolated.candidate_main(sock, (), req, workdir, remote, patching)


# The original: warm_up wraps os._exit (tamper.checked_exits) for the candidate, and this module is loaded first.
_os_exit = os._exit


def warm_up() -> None:
    """In the server, once, after the preload: import what pytest.main would otherwise import in every
    forked call, and take the tamper snapshots (see `_GUARDS`) there, where every call inherits them
    for free: taken per call, they would touch (and so copy) thousands of shared pages."""
    try:
        import _pytest.config

        for name in _pytest.config.default_plugins:
            try:
                __import__(f"_pytest.{name}")
            except ImportError:
                pass
        _WORDING.append(_load_sibling("wording"))  # by path: a call cannot read this directory
    except ImportError:
        pass
    JUDGE.contexts.learn()  # pytest.raises' managers, known by identity before any candidate (judging.Contexts)
    _watch_libraries()
    tamper.frameless_signal_handlers()  # before the snapshots: the wrapper is the state to keep
    tamper.checked_exits()  # the same
    GENUINE.settle()  # after those two, which put the harness's own wrappers over library functions
    for harness in ("pytest", "unittest", "humaneval"):
        _GUARDS[harness] = tamper.Guard(
            _framework_classes(harness), _framework_modules(harness), strict=("harness", tamper.__name__)
        )


def _watch_libraries() -> None:
    """What every loaded library holds, recorded before any candidate; later imports recorded as they finish;
    the tests' own patches kept for their reads (libraries.Genuine)."""
    import unittest.mock

    GENUINE.watch_patches(unittest.mock._patch, getattr(sys.modules.get("_pytest.monkeypatch"), "MonkeyPatch", None))
    GENUINE.watch_imports(sys.modules["_frozen_importlib"])
    GENUINE.record_loaded()


# harness -> its tamper.Guard, made by warm_up in the server before any call (run_tests makes one if not).
_GUARDS: dict = {}
# wording.py, loaded by warm_up where pytest is installed (the pytest harness loads it if not).
_WORDING: list = []


# --------------------------------------------------------------------------------------------------
# execute


def run_program(path: str, code: str, reporter: Reporter) -> int:
    """Run `code` like `python main.py` would; returns the exit status."""
    _write(path, code)
    status = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        status = _exit_status(e)
    except BaseException as e:  # noqa: BLE001 - an uncaught exception, as the interpreter reports it
        _print_exception(e, {path})
        status = 130 if isinstance(e, KeyboardInterrupt) else 1
        if isinstance(e, MemoryError) or (isinstance(e, OSError) and e.errno == errno.ENOMEM):
            reporter.send(event="exception", type="MemoryError")  # results.py: memory, from this, not stderr
    # Interpreter shutdown: wait for non-daemon threads, run atexit handlers.
    for shutdown in (_join_threads, _run_atexit):
        try:
            shutdown()
        except SystemExit as e:
            status = _exit_status(e)
        except BaseException as e:  # noqa: BLE001
            _print_exception(e, {path})
    return status


def _exit_status(e: SystemExit) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    # what the interpreter itself does with `sys.exit("message")`: the message to the candidate's stderr, status 1
    print(e.code, file=sys.stderr)  # noqa: T201 - the candidate's own stderr, as the interpreter writes it
    return 1


def _join_threads() -> None:
    import threading

    threading._shutdown()


def _run_atexit() -> None:
    import atexit

    atexit._run_exitfuncs()


# --------------------------------------------------------------------------------------------------
# tests


def _sealed(reporter: Reporter, event: str, keys: tuple, once: bool):
    """A generator that holds the reporter in its frame and sends only `event` lines with the fields `keys`
    (strings, ints, lists of strings): the one thing that objects the candidate can reach hold (issue #47).

    In process, the candidate walks whatever the harness keeps where a name leads: a class found through
    `object.__subclasses__()`, a function's `__globals__`, a closure's cells, a thread's target, a pytest
    plugin, `tamper.EXIT_HOOK`. None of these has an audit event, so none of them may lead to the reporter,
    which sends "done". They hold this instead: its frame (the reporter, the nonce behind it) is refused to
    everyone (`tamper.AuditPolicy`'s `sealed`), and what it sends can only fail a verdict (a tamper event)
    or, once, say how many tests were collected. It never ends: close() and throw() are swallowed, bad
    fields are dropped, so the candidate cannot silence the tamper events that follow either."""
    sent = False
    while True:
        try:
            fields = yield
        except BaseException:  # noqa: BLE001 - close()/throw() from whoever reached it: it stays open
            continue
        if sent and once:
            continue
        try:
            if _type(fields) is not dict:
                continue  # a dict subclass would run the sender's code in this frame (`__contains__`)
            clean = {k: fields[k] for k in keys if k in fields and _plain(fields[k])}
            if len(clean) == len(keys) or (event == "collected" and "n_tests" in clean):
                reporter.send(event=event, **clean)
                sent = True
        except BaseException:  # noqa: BLE001 - a field that fails to read is the sender's loss
            pass


def _plain(value) -> bool:
    if _type(value) is list:
        return _all(_type(v) is str for v in value)
    return _type(value) in (str, int)


# Captured at load: the sealed channel must not read builtins the candidate may have rebound in the meantime.
_type, _all = type, all
_sleep = __import__("time").sleep


def sealed_channel(reporter: Reporter, event: str, keys: tuple, once: bool = False):
    channel = _sealed(reporter, event, keys, once)
    next(channel)
    return channel


class Announcer:
    """What the runners report the collected tests with: `send(event="collected", n_tests=..)`, as the
    reporter's, but through a sealed channel that can send nothing else (in process, the pytest plugin
    holding it is reachable from the candidate's code: `_pytest.debugging.pytestPDB._config`)."""

    __slots__ = ("_channel",)

    def __init__(self, channel) -> None:
        self._channel = channel

    def send(self, event: str, **fields) -> None:
        self._channel.send(fields)


def _guarded(guard):
    """A generator holding the call's tamper.Guard in its frame (sealed like `_sealed`): each send of
    ("changed", namespace, live) or ("hooks",) answers the guard's comparison. The guard's snapshots are
    plain lists and dicts: held where the candidate can reach them (`_GUARDS`, a pytest plugin, a test
    result, the watch thread's closure), they could be edited to match what it changed."""
    answer = None
    while True:
        try:
            msg = yield answer
        except BaseException:  # noqa: BLE001 - close()/throw() from whoever reached it: it stays open
            answer = None
            continue
        try:
            if msg[0] == "changed":
                answer = guard.changed(msg[1], live=msg[2] is True)
            else:
                answer = guard.new_import_hooks(_untrusted_file)
        except BaseException:  # noqa: BLE001
            answer = ["the tamper snapshots (they could not be compared)"]


class SealedGuard:
    """The call's guard as everything but the frames of `run_tests` holds it: `changed` and
    `new_import_hooks` as tamper.Guard's, asked through a sealed generator (`_guarded`). A check that cannot
    get the generator (held by another thread for over a second: the candidate may hold the lock) answers
    that, which reports tampering. Slots only: no instance attribute can stand in for a method."""

    __slots__ = ("_channel", "_lock")

    def __init__(self, channel) -> None:
        import threading

        self._channel, self._lock = channel, threading.Lock()

    def _ask(self, msg: tuple) -> list:
        if not self._lock.acquire(timeout=1.0):
            return ["the tamper checks (blocked)"]
        try:
            answer = self._channel.send(msg)
        except BaseException:  # noqa: BLE001 - running in another thread, or replaced
            answer = ["the tamper checks (could not run)"]
        finally:
            self._lock.release()
        return list(answer) if _type(answer) is list else []

    def changed(self, namespace: dict | None = None, live: bool = False) -> list[str]:
        return self._ask(("changed", namespace, live))

    def new_import_hooks(self, untrusted=None) -> list[str]:
        return self._ask(("hooks",))


def sealed_guard(guard: tamper.Guard) -> SealedGuard:
    channel = _guarded(guard)
    next(channel)
    return SealedGuard(channel)


def _finisher(reporter: Reporter, tally):
    """A sealed generator holding the reporter, which sends "done" once, on ("done", error, notes, kinds), from
    what the tally (ledger.py) recorded: the counts come from nothing the caller says (issue #47). In process,
    frames of this call are reachable (a library's `sys._getframe` on the candidate's behalf, then `f_back`,
    which has no audit event): no local there may hold the reporter, or anything that says how many passed.
    Whoever reaches this can only end the report early, with what had really passed by then."""
    done = False
    while True:
        try:
            msg = yield
        except BaseException:  # noqa: BLE001 - close()/throw() from whoever reached it: it stays open
            continue
        if done or _type(msg) is not tuple or len(msg) != 4 or msg[0] != "done":
            continue
        done = True
        try:
            fields = _tallied(_tell(tally, ("outcome",)), msg[1])
            notes, kinds = [_clip(n) for n in msg[2] if _type(n) is str], [k for k in msg[3] if _type(k) is str]
            for anomaly, kind in fields.pop("anomalies"):
                notes.append(anomaly)
                kinds.append(kind)
                reporter.send(event="tamper", what=_clip(anomaly), kind=kind)
            reporter.send(event="done", tampered=notes, tamper_kinds=kinds, **fields)
        except BaseException as e:  # noqa: BLE001 - no "done": graded as a failure
            reporter.send(event="tamper", what=f"the report could not be made ({_describe(e)})", kind="result_channel")


def _tallied(outcome: tuple, error) -> dict:
    """The "done" fields from a tally's outcome (ledger.tally): counts, failures, canaries and anomalies."""
    names, passed, failed, canaries, anomalies = outcome
    failed = dict(failed)
    anomalies = list(anomalies)
    if any(state == "passed" for _, state in canaries):
        anomalies.append(("a hidden canary test that must fail was reported as passing", "canary"))
    elif passed and any(state == "not run" for _, state in canaries):
        anomalies.append(("a hidden canary test never ran", "canary"))
    n_passed = len([n for n in names if n in passed and n not in failed])
    fields = {"n_tests": len(names), "n_passed": n_passed, "failures": _failure_list(failed), "anomalies": anomalies}
    fields["error"] = error if _type(error) is str else None
    return fields


def _tell(generator, msg):
    """`generator.send(msg)`, waiting while another thread is inside it (a candidate's thread sending to a sealed
    generator it reached, so that the harness's own send would fail with "generator already executing")."""
    for _ in range(4000):
        try:
            return generator.send(msg)
        except ValueError:
            _sleep(0.0005)
    raise RuntimeError("the harness's records were held by another thread for two seconds")


class Tampering:
    """What the tamper defences found in this call: reported on the pipe at once, and in "done". It holds a
    sealed tamper-only channel (`_sealed`), never the reporter: it is reachable from the candidate's code.
    Slots only: no instance attribute can stand in for a method (`check`)."""

    __slots__ = ("_channel", "_lock", "notes", "kinds")

    def __init__(self, channel) -> None:
        import threading

        self._channel, self._lock = channel, threading.Lock()
        self.notes: list[str] = []
        self.kinds: list[str] = []

    def __call__(self, note: str, kind: str) -> None:
        """`kind`: one of reports.TAMPER_KINDS (what the verdict counts by)."""
        if note not in self.notes and len(self.notes) < tamper.MAX_TAMPER_NOTES:
            self.notes.append(note)
            if kind not in self.kinds:
                self.kinds.append(kind)
            if self._lock.acquire(timeout=1.0):  # the watch thread and the tests may report at once
                try:
                    self._channel.send({"what": _clip(note), "kind": kind})
                except BaseException:  # noqa: BLE001 - the note is still in "done"
                    pass
                finally:
                    self._lock.release()

    def check(
        self, guard, namespace: dict | None, when: str, live: bool = False, final: bool = False, libraries: bool = True
    ) -> None:
        """`live`: mid-test, where only what no honest test changes is compared (tamper.Guard.changed). `final`:
        the end of the run, where the libraries' functions are compared inside too (Genuine.rebound_internals).
        `libraries=False`: not the libraries at all, where the previous checkpoint saw them after the last code
        that ran since (before a test: the one after the test before it; about 11 ms with BigCodeBench's)."""
        for what in guard.changed(namespace, live=live)[:5]:
            self(f"{what} was changed ({when})", "framework_patch")
        for what in [] if live else guard.new_import_hooks(_untrusted_file)[:2]:
            self(f"{what} ({when})", "import_hook")
        if libraries:
            GENUINE.report_rebound_internals(insides=final)

    def watch(self, guard):
        """Check (live) whenever the process leaves by a route that skips every later checkpoint (os._exit,
        os.abort, a signal it sends: tamper.EXIT_HOOK) and every WATCH_S while the tests run, so a change
        left in place is reported even when the run then exits, gets itself killed or hangs until its
        deadline. Returns the function that ends the watch."""
        import threading

        stop = threading.Event()

        def check() -> None:
            self.check(guard, None, "while the tests ran", live=True)

        def loop() -> None:
            while not stop.wait(WATCH_S):
                check()

        tamper.EXIT_HOOK[0] = check
        threading.Thread(target=loop, name="sandbox-watch", daemon=True).start()

        def end() -> None:
            tamper.EXIT_HOOK[0] = None
            stop.set()

        return end


# How often a running in-process grading is checked for tampering between its checkpoints (Tampering.watch):
# a tamper left in place before a hang shows in the verdict, at the cost of one cheap check per tick.
WATCH_S = 0.2


def run_tests(req: dict, workdir: str, reporter: Reporter | list, candidate_fd: int | None = None) -> None:
    """`reporter`: the Reporter, or a list holding it, which this empties (main: no frame keeps it)."""
    if type(reporter) is list:
        reporter = reporter.pop()
    harness = req["harness"]
    if req.get("trust") == "out_of_process":
        return run_tests_out_of_process(req, workdir, reporter, candidate_fd)
    runner = {"pytest": _run_pytest, "unittest": _run_unittest, "humaneval": _run_humaneval}[harness]
    # What the candidate can reach holds sealed channels, never the reporter (`_sealed`), and frames of this call
    # hold none either (issue #47): the reporter is in the sealed generators' frames only, and what passed is in
    # the tally's (ledger.py), which `finish` reads itself.
    tamper_channel = sealed_channel(reporter, "tamper", ("what", "kind"))
    collected_channel = sealed_channel(reporter, "collected", ("n_tests", "names", "ran"), once=True)
    tally = new_tally(harness)
    finish = ledger.started(_finisher(reporter, tally))
    del reporter
    found = Tampering(tamper_channel)
    if harness not in _GUARDS:  # loaded without warm_up (not through server.py)
        warm_up()
    guard = sealed_guard(_GUARDS[harness])
    _GUARDS.clear()  # from here on the call's guard is in a sealed frame only (`_guarded`)
    guard_channel = guard._channel
    _install_policy(harness, found, workdir, (tamper_channel, collected_channel, guard_channel, finish))
    _SENTINEL_SINK[0] = found
    end_watch = found.watch(guard)
    try:
        error = runner(req, workdir, Announcer(collected_channel), guard, found, tally)
    except BaseException as e:  # noqa: BLE001 - SystemExit/KeyboardInterrupt included: no verdict
        error = f"the test run was aborted by {_describe(e)}"
    end_watch()
    found.check(guard, None, "at the end of the run", final=True)
    if found._channel is not tamper_channel or _SENTINEL_SINK[0] is not found or guard._channel is not guard_channel:
        found("the harness's tamper channel was replaced", "result_channel")  # later events could have gone nowhere
        tamper_channel.send({"what": "the harness's tamper channel was replaced", "kind": "result_channel"})
    _tell(finish, ("done", error, tuple(found.notes), tuple(found.kinds)))


def _install_policy(harness: str, found: Tampering, workdir: str, sealed: tuple) -> None:
    """The audit hook (tamper.AuditPolicy), from now until the process exits: no candidate code has run yet. No
    frame keeps the policy (its state decides what is refused)."""
    sealed_code = (_sealed, _guarded, _finisher, ledger.tally, ledger.part_errors, ledger.snapshot)
    classes = _framework_classes(harness)
    policy = tamper.AuditPolicy(
        classes, found, TRUSTED_ROOTS, workdir, FRAMEWORK_DIRS, sealed, sealed_code, (_TestCase,), GENUINE.defaults_set
    )
    policy.install()
    GENUINE.count_defaults()  # the hook now hears every assignment of a function's defaults


# --------------------------------------------------------------------------------------------------
# out of process (isolated.py): the tests here, the candidate in its own process


def run_tests_out_of_process(req: dict, workdir: str, reporter: Reporter, candidate_fd: int | None = None) -> None:
    """Run the tests here against the candidate's names as the channel resolves them (trust.py chose this
    before the run). The candidate's process (it never gets the report channel) is the one the server
    forked before it read the tests (`candidate_fd`), else it is forked here (the fallback without
    mount namespaces, where it is a copy of a process that holds the tests)."""
    if candidate_fd is not None:
        ours = isolated.seal(candidate_fd)
    else:
        ours, other = isolated.split(workdir, req.get("trusted_dir"))
        if ours is None:
            isolated.candidate_main(other, (reporter.fd,), req, workdir, remote, patching)  # never returns
    if workdir in sys.path:
        sys.path.remove(workdir)  # the tests import nothing the candidate wrote
    outcome = {"n_tests": 0, "n_passed": 0, "failures": [], "error": None}
    endpoint = remote.Endpoint(ours.fileno(), restricted=True)
    runners = {"pytest": _isolated_pytest, "unittest": _isolated_unittest, "humaneval": _isolated_humaneval}
    runner = runners[req["harness"]]
    # names refused on this side (isolated.Candidate): each one a tamper event
    found = Tampering(sealed_channel(reporter, "tamper", ("what", "kind")))
    endpoint.judged_by_handle = lambda note: found(note, "handle_operator")
    sys.addaudithook(_no_unpickling)
    try:
        candidate = isolated.Candidate(endpoint, remote, TRUSTED_ROOTS, refuse=found)
        candidate.patches = patching.PatchForwarding(endpoint, remote)
        candidate.patches.install()
        if candidate.error and req["harness"] != "pytest":  # pytest words it itself, as in process
            outcome["error"] = f"the program failed before any test ran: {_clip(candidate.error)}"
        else:
            if req["harness"] != "pytest":  # the tests were appended to the program: their imports are its names
                candidate.patches.bind_test_imports(req["test"])
            outcome.update(runner(req, workdir, reporter, candidate))
    except remote.ChannelClosed as e:
        outcome["error"] = f"the candidate's process ended before the tests finished ({e})"
    except BaseException as e:  # noqa: BLE001 - SystemExit/KeyboardInterrupt included: no verdict
        outcome["error"] = f"the test run was aborted by {_describe(e)}"
    reporter.send(event="done", tampered=list(found.notes), tamper_kinds=list(found.kinds), **outcome)


def _no_unpickling(event: str, args: tuple) -> None:
    """Out of process nothing is unpickled in the tests' process: a pickle the candidate wrote would run its
    code beside the report channel. trust.py sends the tests that unpickle in process; this refuses what
    it could not see (a library that unpickles inside, a deserializer it does not list)."""
    if event == "pickle.find_class":
        raise RuntimeError("unpickling is refused in the tests' process (out of process); the test needs in-process")


def _trusted_path(req: dict, name: str) -> str:
    return os.path.join(req.get("trusted_dir") or "/nonexistent", name)


def _program_lines(req: dict, workdir: str) -> tuple[str, str, set[str]]:
    """The tests as the in-process harness compiles them, below the candidate's code in `program.py`,
    so that a failure names the same file and line (the model reads it): (source, its file name,
    the files whose frames a failure names, the candidate's copy included)."""
    path = _trusted_path(req, "program.py")
    source = "\n" * (req["code"].count("\n") + 1) + req["test"]
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)  # no such file: its lines
    return source, path, {path, os.path.join(workdir, "program.py")}


def _isolated_humaneval(req: dict, workdir: str, reporter: Reporter, candidate) -> dict:
    entry = req["entry_point"]
    namespace = {"__name__": "program", "__builtins__": __builtins__}
    used = isolated.used_names(req["test"]) | {entry}
    isolated.bind(namespace, candidate, used, modules=isolated.modules_used(req["test"]))
    if entry not in namespace or not callable(namespace[entry]):
        return {"error": f"the program defines no function {entry!r}"}
    function = namespace[entry]
    source, path, files = _program_lines(req, workdir)
    try:
        exec(compile(source, path, "exec"), namespace)
    except BaseException as e:  # noqa: BLE001
        return {"error": f"the test code failed to load: {_short_error(e, files)}"}
    check = namespace.get("check")
    if not callable(check):
        return {"error": "the test code defines no check() function"}
    reporter.send(event="collected", n_tests=1)
    try:
        check(function)
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, remote.ChannelClosed):
            raise
        return {"n_tests": 1, "n_passed": 0, "failures": [f"check({entry}): {_short_error(e, files)}"]}
    return {"n_tests": 1, "n_passed": 1, "failures": []}


def _isolated_pytest(req: dict, workdir: str, reporter: Reporter, candidate) -> dict:
    try:
        import pytest
    except ImportError:
        return {"error": "pytest is not installed in the sandbox interpreter"}
    solution_path = os.path.join(workdir, "solution.py")
    test_file, ini = _trusted_path(req, "test_solution.py"), _trusted_path(req, "pytest.ini")
    collector = _PytestCollector(reporter, None, _NoTampering(), canaries=False, tally=new_tally("pytest"))
    import _pytest.assertion.rewrite

    judging.pytest_rewrite(None, _pytest.assertion.rewrite)  # the tests' code marked as theirs (_class_first)
    wording = (_WORDING or [_load_sibling("wording")])[0].InProcessWording(
        os.path.dirname(test_file), workdir, tuple(os.path.join(HERE, f) for f in ("remote.py", "isolated.py"))
    )
    if candidate.error:
        # the program failed to load: importing `solution` raises what it raised, so pytest reports it as
        # in process (a collection error naming the test's import, the candidate's line and the error)
        failed = candidate.load_exception()
        wording.load_error = failed
        sys.meta_path.insert(0, _FailingImport("solution", solution_path, failed))
    else:
        modules = isolated.modules_used(req["test"])
        sys.modules["solution"] = isolated.solution_module(candidate, solution_path, modules)
    args = [
        "-q",
        "--tb=short",
        "-p",
        "no:cacheprovider",
        "--noconftest",
        "-c",
        ini,
        "--rootdir",
        os.path.dirname(test_file),
        test_file,
    ]
    pytest.main(args, plugins=[wording, collector])
    return collector.outcome()


class _FailingImport:
    """A finder and loader for one module whose import raises `exception` (the candidate's program failed
    to load in its own process); its own frame is hidden from pytest, as the import system's are."""

    def __init__(self, name: str, origin: str, exception: BaseException) -> None:
        self.name, self.origin, self.exception = name, origin, exception

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        return importlib.util.spec_from_loader(name, self, origin=self.origin)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        __tracebackhide__ = True  # noqa: F841
        raise self.exception.with_traceback(None)


def _isolated_unittest(req: dict, workdir: str, reporter: Reporter, candidate) -> dict:
    source, path, files = _program_lines(req, workdir)
    namespace = {"__name__": "program", "__builtins__": __builtins__, "os": os, "sys": sys}
    # the names the test patches in the candidate's module (`patch(__name__ + '.randint')`) too: the patch
    # replaces them here and, forwarded, in the candidate's process (patching.py)
    used = (isolated.used_names(req["test"]) | patching.patched_names(req["test"])) - {"os", "sys"}
    isolated.bind(namespace, candidate, used, modules=isolated.modules_used(req["test"]))
    module = types.ModuleType("program")
    module.__dict__.update(namespace)
    module.__file__ = path
    sys.modules["program"] = module
    try:
        exec(judging.bind(compile(source, path, "exec"), None), module.__dict__)  # marked as the tests' (_class_first)
    except BaseException as e:  # noqa: BLE001
        return {"error": f"the test code failed to load: {_short_error(e, files)}"}
    candidate.patches.forward_assignments(module.__dict__, req["test"])
    _import_named_submodules(module.__dict__, req["test"], candidate)
    collected = _collect_test_cases(module, req, reporter)
    if isinstance(collected, str):
        return {"error": collected}
    suite, n_tests, share = collected
    tally = new_tally("unittest")
    xfail = lambda: _declared_expected_failures(req["test"])  # noqa: E731
    result = _UnittestResult(files, [], None, module.__dict__, _NoTampering(), xfail, tally)
    result.expect(list(suite))
    suite.run(result)
    fields = _tallied(_tell(tally, ("outcome",)), None)
    del fields["anomalies"], fields["error"]  # out of process the candidate never reached this process's objects
    return {**fields, **share}


def _import_named_submodules(namespace: dict, test: str, candidate) -> None:
    """`matplotlib.axes.Axes` in the tests, `matplotlib` bound to the library: in process the candidate's
    imports had loaded `matplotlib.axes`; here the tests' own words import it (a submodule of a library
    module bound in the tests' namespace, as the test names it; never a module the candidate names)."""
    for node in ast.walk(patching.parse(test)):
        chain = patching.dotted(node.value) if isinstance(node, ast.Attribute) else None
        head = chain.split(".")[0] if chain and "." in chain else None
        module = namespace.get(head) if head else None
        if isinstance(module, types.ModuleType) and type(module.__name__) is str:
            name = module.__name__ + chain[len(head) :]
            if name not in sys.modules:
                candidate.import_library(name)


class _NoTampering:
    """Out of process there is nothing to watch for in the tests' process: the candidate is not in it."""

    notes: list = []

    def __call__(self, note: str, kind: str) -> None:
        pass

    def check(self, guard, namespace, when: str, **flags) -> None:
        pass


def new_tally(harness: str):
    """A sealed tally (ledger.tally) for one run, believing starts and successes from `harness`'s runner only."""
    if harness == "unittest":
        runners = [unittest.case.TestCase.run]
    elif harness == "pytest":
        import _pytest.runner

        runners = [_pytest.runner.pytest_runtest_protocol, _pytest.runner.runtestprotocol]
        runners.append(_pytest.runner.call_and_report)
    else:
        runners = [_run_humaneval]
    codes = frozenset(id(f.__code__) for f in runners)
    keep = _KEEP_ALIVE.setdefault("runners", [])
    keep += runners  # the ids stay theirs
    errors = _PART_ERRORS if harness == "unittest" else None
    return ledger.started(ledger.tally(errors, codes, _trusted_code_file, frozenset({id(_tell.__code__)})))


def _trusted_code_file(filename: str) -> bool:
    return not _untrusted_file(filename)


_KEEP_ALIVE: dict = {}


def _run_unittest(req: dict, workdir: str, announcer: Announcer, guard, found: Tampering, tally) -> str | None:
    """BigCodeBench: the test code (defining `TestCases`) is appended to the candidate.

    Like the official harness, the program's namespace starts with `os` and `sys` already bound. Two
    hidden canary tests that must fail run first and last; one reported as passing means the test
    machinery was bent.
    """
    path = os.path.join(workdir, "program.py")
    # the program first, checked, then the tests in its namespace (_split_at_line)
    between = (req["code"].count("\n") + 1, lambda namespace: found.check(guard, namespace, "while the program loaded"))
    source = req["code"] + "\n" + req["test"]
    module = _load_program(path, source, "program", preset={"os": os, "sys": sys}, checkpoint=between)
    if isinstance(module, str):
        return module
    found.check(guard, module.__dict__, "while the tests loaded")
    _check_shadowed_modules(module.__dict__, req["test"], found)
    collected = _collect_test_cases(module, req, announcer)
    if isinstance(collected, str):
        return collected
    suite, n_tests, share = collected
    canaries = [_CanaryCase("runTest"), _CanaryCase("runTest")]
    xfail = lambda: _declared_expected_failures(req["test"])  # noqa: E731
    result = _UnittestResult({path}, canaries, guard, module.__dict__, found, xfail, tally)
    result.expect([canaries[0], *suite, canaries[1]])
    names = [ledger.started(ledger.snapshot(module.__dict__, _top_level_names(req["test"])))]
    names += [
        ledger.started(ledger.snapshot(vars(c), _methods(c))) for c in _tests_classes(module.__dict__.get("TestCases"))
    ]
    _tell(tally, ("watch", names))  # compared at every start and stop of a test, by the tally itself
    _TestSuite([canaries[0], suite, canaries[1]]).run(result)
    _check_tests_names(names, found, "at the end of the run")
    return None


def _tests_classes(cases) -> list[type]:
    """TestCases and its bases up to unittest's TestCase (the tests' classes whose methods the suite calls)."""
    return [c for c in type.__dict__["__mro__"].__get__(cases) if issubclass(c, _TestCase) and c is not _TestCase]


def _methods(cls: type) -> list[str]:
    kinds = (types.FunctionType, staticmethod, classmethod)
    return [k for k, v in vars(cls).items() if isinstance(v, kinds)]


def _top_level_names(test: str) -> list[str]:
    """The names the tests' part binds at its top level (helpers, constants, TestCases, imports)."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    declared = {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}
    return [n for n in names if n not in declared]  # a name the tests rebind themselves (`global`) is theirs to change


def _check_tests_names(snapshots, found, when: str) -> None:
    """In BigCodeBench the program shares the tests' module (and a bound method the tests hand over leads to it,
    `__func__.__globals__`, and to its class, `__self__`): a helper, constant or class of the tests', or a method
    of their TestCase classes (`TestCases.test_b = ...`: no audit event covers it), rebound by the program is
    tampering. Compared before and after every test: a test method replaced before it runs is seen."""
    for snapshot in snapshots or ():
        try:
            changed = _tell(snapshot, ("changed",))
        except BaseException:  # noqa: BLE001
            changed = ["the tests' names (they could not be compared)"]
        for name in changed[:5] if _type(changed) is list else ["the tests' names (no answer)"]:
            found(f"the tests' own name {name!r} was rebound ({when})", "framework_patch")


def _collect_test_cases(module: types.ModuleType, req: dict, reporter: Reporter | Announcer):
    """The suite of the program's `TestCases`, its size and, for one part of a split run (split.py: `only`),
    every test name and the ones this part runs; the count is reported as collected. A str: why not."""
    cases = module.__dict__.get("TestCases")
    if not (isinstance(cases, type) and issubclass(cases, _TestCase)):
        return "the test code defines no unittest.TestCase subclass named TestCases"
    suite = _TestLoader().loadTestsFromTestCase(cases)
    share = {}
    only = req.get("only")
    if only is not None:
        names = sorted(test._testMethodName for test in suite)
        suite = _TestSuite([test for test in suite if test._testMethodName in only])
        share = {"names": names, "ran": [test._testMethodName for test in suite]}
    n_tests = suite.countTestCases()
    reporter.send(event="collected", n_tests=n_tests, **share)
    return suite, n_tests, share


def _check_shadowed_modules(namespace: dict, test: str, found: Tampering) -> None:
    """In process: a name the tests use as a module (isolated.modules_used) that the program bound to a
    definition of its own is reported (the verdict `tampered`), as out of process (isolated.bind)."""
    modules = isolated.modules_used(test)
    for name in isolated.shadows_in_process(namespace, modules):
        found(isolated.shadowed_module_note(name, modules[name]), "shadowed_module")


class _CanaryCase(unittest.TestCase):
    """A hidden test that must fail, through the same TestCase machinery and assertion as the real ones."""

    def runTest(self) -> None:
        left = int.from_bytes(os.urandom(6), "little")
        self.assertEqual(left, left + 1)


_CanaryCase.__module__ = "program"  # run in the program's module: no extra setUpModule/tearDownModule


def _declared_expected_failures(test_source: str) -> set[str]:
    """Test methods the test source itself decorates with `expectedFailure`."""
    try:
        tree = ast.parse(test_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any("expectedFailure" in ast.unparse(d) for d in node.decorator_list):
                out.add(node.name)
    return out


def _run_humaneval(req: dict, workdir: str, announcer: Announcer, guard, found: Tampering, tally) -> str | None:
    """HumanEval: the test code defines `check(candidate)`; the harness calls check(entry_point).

    `check` is first called with a canary candidate that returns fresh objects: it must fail. The real
    candidate is wrapped so that a return value claiming to equal anything is reported.
    """
    path = os.path.join(workdir, "program.py")
    between = (req["code"].count("\n") + 1, lambda namespace: None)  # the tests' part is judged (_split_at_line)
    module = _load_program(path, req["code"] + "\n" + req["test"], "program", checkpoint=between)
    if isinstance(module, str):
        return module
    found.check(guard, module.__dict__, "while the program loaded")
    _check_shadowed_modules(module.__dict__, req["test"], found)
    check, entry = module.__dict__.get("check"), req["entry_point"]
    if not callable(check):
        return "the test code defines no check() function"
    if not callable(module.__dict__.get(entry)):
        return f"the program defines no function {entry!r}"
    announcer.send(event="collected", n_tests=1)
    _tell(tally, ("expect", [(1, f"check({entry})")], []))
    try:
        check(_canary_candidate)
    except BaseException:  # noqa: BLE001 - the expected outcome
        pass
    else:
        found("check() passed a canary candidate that returns meaningless objects", "canary")
    _tell(tally, ("start", 1))
    try:
        check(_sentinel_checked(module.__dict__[entry], entry))
    except BaseException as e:  # noqa: BLE001 - SystemExit in the candidate fails the check too
        _tell(tally, ("fail", 1, f"check({entry})", _short_error(e, {path})))
    else:
        _tell(tally, ("pass", 1))
    _tell(tally, ("stop", 1))
    return None


def _canary_candidate(*args, **kwargs) -> object:
    return tamper._Sentinel()


# Where a sentinel hit is reported in this call (set by run_tests; one call per process).
_SENTINEL_SINK: list = [None]


def _report_always_equal(where: str) -> None:
    sink = _SENTINEL_SINK[0]
    if sink is not None:
        sink(f"{where} returned an object that claims an equality no value has", "always_equal")


def _report_judged_by_candidate(note: str, kind: str = "handle_operator") -> None:
    sink = _SENTINEL_SINK[0]
    if sink is not None:
        sink(note, kind)


def _sentinel_checked(fn, name: str):
    """`fn`, whose return values are checked for always-equal objects (which then fail the test)."""

    def checked(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841 - pytest leaves this frame out of a failure's text
        value = fn(*args, **kwargs)
        if tamper.always_equal(value):
            _report_always_equal(name)
            raise AssertionError(f"{name} returned an object that claims an equality no value has")
        return value

    checked.__name__, checked.__qualname__, checked.__doc__ = name, name, getattr(fn, "__doc__", None)
    checked.__wrapped__ = fn
    return checked


def _run_pytest(req: dict, workdir: str, announcer: Announcer, guard, found: Tampering, tally) -> str | None:
    """KodCode: the candidate is solution.py; the test file imports from it."""
    try:
        import pytest
    except ImportError:
        return "pytest is not installed in the sandbox interpreter"
    _write(os.path.join(workdir, "solution.py"), req["code"])
    _write(os.path.join(workdir, "test_solution.py"), req["test"])
    ini = os.path.join(workdir, "pytest.ini")
    _write(ini, "[pytest]\n")
    collector = _PytestCollector(announcer, guard, found, tally=tally, test=req["test"])
    import _pytest.assertion.rewrite

    judging.pytest_rewrite(JUDGE, _pytest.assertion.rewrite)  # the test module's comparisons judged too
    args = [
        "-q",
        "--tb=short",
        "-p",
        "no:cacheprovider",
        "-c",
        ini,
        "--rootdir",
        workdir,
        "--confcutdir",
        workdir,
        os.path.join(workdir, "test_solution.py"),
    ]
    pytest.main(args, plugins=[collector])
    solution = sys.modules.get("solution")  # what `from solution import *` gave the tests
    if isinstance(solution, types.ModuleType):
        _check_shadowed_modules(vars(solution), req["test"], found)
    error = collector.outcome().get("error")
    if error == _PLUGIN_REGISTERED:  # a tamper event: it counts even where the report was ended early (_finisher)
        found(error, "framework_patch")
    return error


def _pytest_canary() -> None:
    left = int.from_bytes(os.urandom(6), "little")
    assert left == left + 1, "the canary fails, as it must"


_PLUGIN_REGISTERED = "a pytest plugin was registered during the run"


class _PytestCollector:
    """pytest plugin: per test, from the reports pytest itself produces, into a sealed tally (ledger.py; in process
    this plugin is reachable from the candidate's code: `_pytest.debugging.pytestPDB._config`)."""

    def __init__(
        self, reporter: Reporter | Announcer, guard, found, canaries: bool = True, tally=None, test: str = ""
    ) -> None:
        self.reporter, self.guard, self.found, self.test = reporter, guard, found, test
        self.use_canaries = canaries
        self.tally = tally if tally is not None else new_tally("pytest")
        self.items: list[str] | None = None
        self.collect_errors: list[str] = []
        self.plugins_at_start: set[int] = set()
        self.pluginmanager = None
        self.canaries: set[str] = set()  # the nodeids of the hidden tests that must fail

    def pytest_collection(self, session) -> None:
        # Registered after the built-in plugins, this runs first: after their session start-up (which
        # registers pytest's own late plugins), before collection imports the candidate.
        self.pluginmanager = session.config.pluginmanager
        self.plugins_at_start = {id(p) for p in self.pluginmanager.get_plugins()}

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.collect_errors.append(_clip(_last_lines(report.longreprtext, 8)))

    def pytest_collection_finish(self, session) -> None:
        self.items = [item.nodeid for item in session.items]
        self.found.check(self.guard, None, "while the tests were collected")
        if self.use_canaries:
            for module in {id(m): m for m in (getattr(item, "module", None) for item in session.items) if m}.values():
                _check_solution_returns(module.__dict__, getattr(module, "__file__", None) or "")
        # two hidden tests that must fail, first and last, through pytest's own runner
        if session.items and self.use_canaries:
            import _pytest.python

            parent = session.items[0].parent
            canaries = [
                _pytest.python.Function.from_parent(parent, name=f"test_{os.urandom(6).hex()}", callobj=_pytest_canary)
                for _ in range(2)
            ]
            self.canaries = {c.nodeid for c in canaries}
            session.items[:] = [canaries[0], *session.items, canaries[1]]
        modules = {id(m): m for m in (getattr(item, "module", None) for item in session.items) if m}.values()
        if self.use_canaries:  # in process: the test module's own names, compared at every start and stop (tally)
            names = _top_level_names(self.test)
            _tell(self.tally, ("watch", [ledger.started(ledger.snapshot(vars(m), names)) for m in modules]))
        _tell(self.tally, ("expect", [(i.nodeid, i.nodeid) for i in session.items], sorted(self.canaries)))
        self.reporter.send(event="collected", n_tests=len(self.items))

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        _tell(self.tally, ("start", nodeid))

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        _tell(self.tally, ("stop", nodeid))

    def pytest_runtest_logreport(self, report) -> None:
        nodeid = report.nodeid
        if report.failed:
            _tell(self.tally, ("fail", nodeid, nodeid, _clip(f"{report.when}: {_last_lines(report.longreprtext)}")))
        elif nodeid in self.canaries and (report.when == "call" or report.skipped):
            _tell(self.tally, ("xpass", nodeid))  # a canary that passed or was skipped: the machinery was bent
        elif report.skipped:
            _tell(self.tally, ("fail", nodeid, nodeid, "skipped"))
        elif report.when == "call" and report.passed:
            _tell(self.tally, ("pass", nodeid))

    def outcome(self) -> dict:
        """The counts (out of process, where the tests' process reports them itself) and the run's error."""
        out = _tallied(_tell(self.tally, ("outcome",)), None)
        for anomaly, kind in out.pop("anomalies"):
            self.found(anomaly, kind)
        if self.collect_errors:
            out["error"] = "collection failed: " + self.collect_errors[0]
        elif (
            self.pluginmanager is not None and {id(p) for p in self.pluginmanager.get_plugins()} - self.plugins_at_start
        ):
            out["error"] = _PLUGIN_REGISTERED
        return out


def _check_solution_returns(namespace: dict, test_file: str) -> None:
    """In a test module: wrap the candidate's functions it holds (those whose code is neither the test
    file's nor a library's) so their return values are checked for always-equal objects; the
    candidate's own calls, recursion included, stay unwrapped."""
    for name, value in list(namespace.items()):
        code = getattr(value, "__code__", None) if isinstance(value, types.FunctionType) else None
        if code is not None and code.co_filename != test_file and _untrusted_file(code.co_filename):
            namespace[name] = _sentinel_checked(value, name)


class _UnittestResult(unittest.TestResult):
    """Per-test verdicts and canary outcomes, kept in a sealed tally (ledger.py; this object is reachable from
    every test's `_outcome`), and a tamper checkpoint before and after every test."""

    def __init__(self, files: set[str], canaries: list, guard, namespace: dict, found, declared_xfail, tally) -> None:
        super().__init__()
        self.files, self.canaries = files, canaries
        self.guard, self.namespace, self.found, self.declared_xfail = guard, namespace, found, declared_xfail
        self.tally = tally

    def expect(self, tests: list) -> None:
        """The tests in the order the suite runs them (the canaries among them), before the run."""
        canaries = {id(c) for c in self.canaries}
        named = [(id(t), "" if id(t) in canaries else _test_name(t)) for t in tests]
        _tell(self.tally, ("expect", named, sorted(canaries)))

    @property
    def passed(self) -> set[str]:
        return set(_tell(self.tally, ("outcome",))[1])

    @property
    def failed(self) -> dict[str, str]:
        return dict(_tell(self.tally, ("outcome",))[2])

    def startTest(self, test) -> None:
        super().startTest(test)
        _tell(self.tally, ("start", id(test)))
        self.found.check(self.guard, self.namespace, "before a test", libraries=False)

    def stopTest(self, test) -> None:
        super().stopTest(test)
        _tell(self.tally, ("stop", id(test)))
        self.found.check(self.guard, self.namespace, "after a test")

    def _bad(self, test, message: str) -> None:
        _tell(self.tally, ("fail", id(test), _test_name(test), _clip(message)))

    def addSuccess(self, test) -> None:
        if getattr(getattr(test, "_outcome", None), "stopped", False):  # see _noting_stops
            note = "unittest's internal _ShouldStop was raised inside a test (it ends a test part as passed)"
            self.found(note, "framework_patch")
            self.addFailure(test, (AssertionError, AssertionError(note), None))
            return
        super().addSuccess(test)
        _tell(self.tally, ("pass", id(test)))

    def addExpectedFailure(self, test, err) -> None:
        super().addExpectedFailure(test, err)
        if id(test) in {id(c) for c in self.canaries}:
            _tell(self.tally, ("xpass", id(test)))
        elif getattr(test, "_testMethodName", None) in self.declared_xfail():  # parsed only when needed
            _tell(self.tally, ("xpass", id(test)))
        else:  # the flag was set at run time, not by the test source
            self.found("a test was turned into an expected failure at run time", "expected_failure")
            self._bad(test, "marked as an expected failure at run time")

    def addFailure(self, test, err) -> None:
        if id(test) not in {id(c) for c in self.canaries}:  # a canary fails as it must: no traceback to format
            super().addFailure(test, err)
        self._bad(test, _short_error(err[1], self.files))

    def addError(self, test, err) -> None:
        super().addError(test, err)
        self._bad(test, _short_error(err[1], self.files))

    def addSkip(self, test, reason) -> None:
        super().addSkip(test, reason)
        if id(test) in {id(c) for c in self.canaries}:
            _tell(self.tally, ("xpass", id(test)))  # a canary may not be skipped: as if it had passed
        else:
            self._bad(test, f"skipped: {reason}")

    def addUnexpectedSuccess(self, test) -> None:
        super().addUnexpectedSuccess(test)
        self._bad(test, "unexpected success")

    def addSubTest(self, test, subtest, err) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._bad(test, f"{subtest._subDescription()}: {_short_error(err[1], self.files)}")


# Captured at import time (before any candidate runs) so a candidate rebinding unittest.TestCase
# cannot make its own class pass the TestCases check.
_TestCase, _TestLoader, _TestSuite = unittest.TestCase, unittest.TestLoader, unittest.TestSuite
_ShouldStop = unittest.case._ShouldStop
_part_executor = unittest.case._Outcome.testPartExecutor


@contextlib.contextmanager
def _noting_stops(outcome, test_case, subTest=False):
    """unittest's executor of a test part (setUp, the method, a subTest, tearDown), noting on the outcome a
    `_ShouldStop` it swallows. unittest raises it itself only to end a failfast run after a failure or a
    subTest of an expected failure: neither ends in addSuccess. Raised by the program, it passed the part
    it ended; a test that saw one and reports success is failed (_UnittestResult.addSuccess)."""
    with _part_executor(outcome, test_case, subTest):
        try:
            yield
        except BaseException as e:
            # counted where nothing the test reaches can undo it (ledger.part_errors): `outcome.result` and
            # `outcome.success` are the test's own attributes, which the program may reach (issue #47)
            _tell(_PART_ERRORS, ("raised", id(getattr(test_case, "test_case", test_case))))
            if isinstance(e, _ShouldStop):
                outcome.stopped = True
            raise


# The methods of unittest's TestCase (its assertions, run, fail...), by name: looked up on the class (`_class_first`).
_TESTCASE_METHODS = frozenset(
    k
    for k, v in vars(_TestCase).items()
    if isinstance(v, (types.FunctionType, staticmethod, classmethod)) and k[:2] != "__"
)
_object_getattribute = object.__getattribute__


def _class_first(self, name: str):
    """TestCase.__getattribute__ (issue #47): a method of unittest's TestCase (an assertion, `fail`, `run`...) is
    looked up on the test's class, never on the instance. A test that hands the candidate one of its bound methods
    (`self.check` as a callback) hands it the instance (`__self__`): an instance attribute
    `assertEqual = lambda *a: None` would otherwise pass every later assertion of the test. On the class, an
    entry of the candidate's code is passed over for the framework's own (no audit event covers a write to a
    class's attributes)."""
    if name not in _TESTCASE_METHODS:
        return _object_getattribute(self, name)
    cls = type(self)
    for klass in _mro_of(cls):
        entry = _dict_of(klass).get(name, _MISSING)
        if entry is _MISSING or (klass is not _TestCase and _candidates(entry)):
            continue  # the candidate's (`type(t).assertEqual = ...`: no audit event covers a class's attributes)
        get = getattr(type(entry), "__get__", None)
        return entry if get is None else get(entry, self, cls)
    return _object_getattribute(self, name)


def _candidates(entry) -> bool:
    """A class's entry that is neither the framework's, an installed library's nor the tests' own code (the tests'
    code carries judging.TESTS_MARK, in process and out)."""
    func = entry.__func__ if isinstance(entry, (staticmethod, classmethod)) else entry
    if not isinstance(func, types.FunctionType):
        return True  # a callable object, a partial, a built-in (`print`): whoever set it chose what it does
    return _untrusted_file(func.__code__.co_filename) and not judging.is_tests_code(func.__code__)


_mro_of, _dict_of, _MISSING = type.__dict__["__mro__"].__get__, type.__dict__["__dict__"].__get__, object()
_TestCase.__getattribute__ = _class_first


# Installed as the harness loads: before any candidate code, and before warm_up's snapshots of the framework.
unittest.case._Outcome.testPartExecutor = _noting_stops
# Per test, how many of its parts raised (ledger.part_errors): made here, in the zygote, so every call has one.
_PART_ERRORS = ledger.started(ledger.part_errors())
# unittest trims from a failure's traceback the frames of modules that set this (the harness's wrappers
# of test parts and assertions are the framework's): a failure names the tests' line, not the harness's.
__unittest = True


def _framework_classes(harness: str) -> list[type]:
    """Classes whose attributes no candidate may change (writes refused, and snapshots compared)."""
    classes: list[type] = [Reporter, Tampering, SealedGuard, Announcer]
    if harness == "unittest":
        classes += [
            unittest.case.TestCase,
            unittest.case._Outcome,
            unittest.suite.BaseTestSuite,
            unittest.suite.TestSuite,
            unittest.suite._ErrorHolder,
            unittest.result.TestResult,
            unittest.loader.TestLoader,
            _UnittestResult,
        ]
    elif harness == "pytest":
        try:
            import _pytest.python
            import _pytest.reports
            import _pytest.runner
            import pluggy
        except ImportError:
            return classes
        classes += [
            _pytest.python.Function,
            _pytest.runner.CallInfo,
            _pytest.reports.TestReport,
            _pytest.reports.CollectReport,
            _pytest.reports.BaseReport,
            pluggy.PluginManager,
            _PytestCollector,
        ]
        classes += [
            c
            for c in (
                getattr(sys.modules.get("pluggy._hooks"), n, None) for n in ("HookCaller", "_HookCaller", "HookImpl")
            )
            if isinstance(c, type)
        ]
    return classes


def _framework_modules(harness: str) -> list[tuple[str, dict]]:
    """Namespaces whose global names the harness and the test framework rely on (snapshots compared):
    builtins, os, this harness and tamper.py themselves, and the test framework's modules."""
    import builtins

    names = {
        "unittest": [
            "unittest",
            "unittest.case",
            "unittest.result",
            "unittest.suite",
            "unittest.loader",
            "unittest.util",
        ],
        "pytest": [
            "pytest",
            "_pytest.runner",
            "_pytest.reports",
            "_pytest.python",
            "_pytest.main",
            "_pytest.outcomes",
            "pluggy._callers",
            "pluggy._hooks",
            "pluggy._manager",
        ],
        "humaneval": [],
    }[harness]
    import _signal

    modules = [builtins, os, tamper, judging, _signal, *(sys.modules[n] for n in names if n in sys.modules)]
    return [("harness", globals()), *((m.__name__, vars(m)) for m in modules)]


def _untrusted_file(filename: str) -> bool:
    """Code that is not the interpreter's or an installed library's (tamper.AuditPolicy's rule)."""
    trusted = filename.startswith(TRUSTED_ROOTS) and os.path.normpath(filename) == filename
    return not (filename.startswith("<frozen ") or trusted)


def _framework_dirs() -> tuple[str, ...]:
    """Where the code lives that may maintain the protected classes: unittest, pytest, pluggy, us."""
    dirs = [HERE, os.path.dirname(unittest.__file__)]
    for name in ("_pytest", "pluggy"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            dirs += list(spec.submodule_search_locations)
    return tuple(os.path.realpath(d).rstrip("/") + "/" for d in dirs)


TRUSTED_ROOTS = tamper.trusted_roots((HERE,))
FRAMEWORK_DIRS = _framework_dirs()


# unittest's comparing assertions -> the operators each asks of (first, second) (tamper.JUDGING_OPERATORS)
_JUDGING = {
    **dict.fromkeys(
        (
            "assertEqual",
            "assertListEqual",
            "assertTupleEqual",
            "assertDictEqual",
            "assertSetEqual",
            "assertSequenceEqual",
            "assertMultiLineEqual",
        ),
        ("equality", "equality"),
    ),
    "assertAlmostEqual": ("closeness", "closeness"),
    "assertCountEqual": ("membership", "membership"),  # it iterates both sides, then counts by equality
    "assertIn": ("equality", "membership"),
    **dict.fromkeys(("assertGreater", "assertGreaterEqual", "assertLess", "assertLessEqual"), ("order", "order")),
}


# An assertion that passed, asked again of what it asserts (issue #47): assertEqual and kin decide through the
# instance's own state (`_type_equality_funcs`, which the candidate can reach through a bound method the test hands
# it); the judgement itself is repeated here, by the rule of the tests' own comparisons (judging.Judge).
_VERIFIED = {
    **dict.fromkeys(
        ("assertEqual", "assertListEqual", "assertTupleEqual", "assertDictEqual", "assertSequenceEqual"), "Eq"
    ),
    "assertMultiLineEqual": "Eq",
    "assertIn": "In",
    "assertGreater": "Gt",
    "assertGreaterEqual": "GtE",
    "assertLess": "Lt",
    "assertLessEqual": "LtE",
}


def _is_tests_code(code) -> bool:
    return judging.is_tests_code(code)


def _verify(test, name: str, first, second) -> None:
    op = _VERIFIED.get(name)
    if op is None:
        return
    try:
        holds = JUDGE.compare(op, first, second)
        holds = holds if holds is True or holds is False else None  # an array's answer: unittest's own was taken
    except AssertionError:
        raise
    except Exception:  # noqa: BLE001 - what unittest could judge and this cannot: unittest's answer stands
        holds = None
    if holds is False:
        _report_judged_by_candidate(f"{name} passed a comparison that does not hold (the test's state was changed)")
        raise _TestCase.failureException(f"{name}: {_clip(repr(first))} and {_clip(repr(second))} do not compare so")


def _drawn_by_in(container) -> bool:
    """An iterator (a generator, `map`, `zip`) whose elements `in` draws one by one. Out of process a handle of
    the candidate's object is not drawn: its `in` reports the attempt (handle_operator), where drawing from an
    object that cannot be iterated would fail the test as an error and lose that signal."""
    return type(container) is not remote.RemoteObject and judging.next_of(type(container)) is not None


def _wrap_assertions() -> None:
    """Assertion methods that compare (assertEqual and kin) first check both sides; done once, in the
    zygote, before any candidate exists. A hit fails the test and is reported:
    * an always-equal object (tamper.always_equal: random sentinels, two plausible values that differ);
    * an operator the test judges by answered by a class of the candidate's on one side only
      (tamper.answered_by; issue #47, as out of process): `x - y` returning 0 under assertAlmostEqual, an
      ordering that always holds, a container that contains everything. Both sides the candidate's (the
      test built its expected value with the candidate's class) are compared as the candidate compares them."""

    def checked(name, original):
        families = [tamper.JUDGING_OPERATORS[f] for f in _JUDGING[name]]

        def method(self, first, second, *args, **kwargs):
            if name == "assertCountEqual":  # unittest lists both first: a generator's elements are judged too
                first, second = list(first), list(second)
            elif name == "assertIn" and _drawn_by_in(second):
                second = list(second)  # an iterator's elements, judged before unittest draws them (and again after)
            if tamper.always_equal(first) or tamper.always_equal(second):
                _report_always_equal(f"a value compared by {name}")
                raise self.failureException(f"{name}: a compared object claims an equality no value has")
            answering = [
                tamper.answered_by(v, ops, _untrusted_file, _is_tests_code) for v, ops in zip((first, second), families)
            ]
            if (answering[0] is None) != (answering[1] is None):
                cls = answering[0] or answering[1]
                _report_judged_by_candidate(f"{name}: an object of the candidate's class {cls} would judge the test")
                raise self.failureException(
                    f"{name}: an object of the candidate's class {cls} would decide this comparison with the "
                    "test's value: the test's values are compared as data"
                )
            answer = original(self, first, second, *args, **kwargs)
            _verify(self, name, first, second)
            return answer

        method.__name__ = method.__qualname__ = name
        method.__doc__ = original.__doc__
        method.__wrapped__ = original
        return method

    for name in _JUDGING:
        original = getattr(_TestCase, name)
        if getattr(original, "__wrapped__", None) is None:
            setattr(_TestCase, name, checked(name, original))


_wrap_assertions()

judging = _load_sibling("judging")
# The tests' own comparisons and operators (judging.py): bound into the tests' compiled code, never looked up.
libraries = _load_sibling("libraries")
# The library names the tests read (libraries.py): what the libraries held before the candidate ran (warm_up).
GENUINE = libraries.Genuine(
    _untrusted_file,
    judging.is_tests_code,
    lambda note, kind: _report_judged_by_candidate(note, kind),
    (__file__,),
    tamper.dict_version_view,
    tamper.cell_contents_view,
)
JUDGE = judging.Judge(tamper, _untrusted_file, lambda note, kind: _report_judged_by_candidate(note, kind), GENUINE)


def _wrap_truth_assertions() -> None:
    """assertTrue / assertFalse: the truth of an object of the candidate's class is not asked of that class
    (judging.Judge.truth: refused where it defines `__bool__` or `__len__`, as out of process)."""

    def checked(name, original):
        def method(self, expr, *args, **kwargs):
            JUDGE.truth(expr)
            return original(self, expr, *args, **kwargs)

        method.__name__ = method.__qualname__ = name
        method.__doc__, method.__wrapped__ = original.__doc__, original
        return method

    for name in ("assertTrue", "assertFalse"):
        original = getattr(_TestCase, name)
        if getattr(original, "__wrapped__", None) is None:
            setattr(_TestCase, name, checked(name, original))


_wrap_truth_assertions()
# unittest's assertions that judge their operands themselves (above): the judge's call rule leaves them to it
JUDGE.delegate([getattr(_TestCase, name) for name in (*_JUDGING, "assertTrue", "assertFalse")])


# --------------------------------------------------------------------------------------------------
# helpers


def _load_program(
    path: str, source: str, name: str, preset: dict | None = None, checkpoint=None
) -> types.ModuleType | str:
    """Execute `source` as module `name` (not __main__, so `if __name__ == "__main__"` blocks stay off).
    `checkpoint`: (the number of the program's lines at the top of `source`, a function called with the
    namespace once they ran and before the rest, the tests, runs).

    Returns the module, or a message when executing it raised (SystemExit included).
    """
    _write(path, source)
    module = types.ModuleType(name)
    module.__dict__.update(preset or {})
    module.__file__ = path
    sys.modules[name] = module
    try:
        parts = [compile(source, path, "exec")] if checkpoint is None else _split_at_line(source, path, checkpoint[0])
        for i, code in enumerate(parts):
            if i:
                checkpoint[1](module.__dict__)
            exec(code, module.__dict__)
    except BaseException as e:  # noqa: BLE001
        return f"the program failed before any test ran: {_short_error(e, {path})}"
    return module


def _split_at_line(source: str, path: str, last_line: int) -> list:
    """`source` compiled as two modules, the statements that start on lines up to `last_line` and the rest,
    each with its own line numbers: the same file run in two steps. A program whose class-creation hook
    empties the tests' TestCases and undoes itself as that class is made would otherwise leave nothing
    for a checkpoint to see, program and tests being one module."""
    tree = ast.parse(source, path)
    head = [n for n in tree.body if n.lineno <= last_line]
    tail = tree.body[len(head) :]
    # the tests' part with its comparisons judged on the trusted side (judging.py), the program's as written
    tests = judging.bind(judging.compile_judged(ast.Module(tail, []), path), JUDGE)
    return [compile(ast.Module(head, []), path, "exec"), tests]


def _fresh_process_state() -> None:
    """Undo what a fork inherits from the zygote but a fresh interpreter would not have."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:  # output printed before a timeout or crash still reaches the caller
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # a forked child would otherwise repeat the zygote's global random stream
        numpy.random.seed()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - the candidate may have replaced or closed it
            pass


def _print_exception(e: BaseException, files: set[str]) -> None:
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename not in files:
        tb = tb.tb_next  # drop the runner's own frames, as `python main.py` shows none
    try:
        traceback.print_exception(type(e), e, tb if tb is not None else e.__traceback__, file=sys.stderr)
    except BaseException:  # noqa: BLE001
        pass


def _short_error(e: BaseException, files: set[str]) -> str:
    """`AssertionError: 3 != 4 (program.py, line 57: self.assertEqual(f(2), 4))`."""
    try:
        message = traceback.format_exception_only(type(e), e)[-1].strip()
        where = [(fs.filename, fs.lineno, fs.line) for fs in traceback.extract_tb(e.__traceback__)]
        # out of process, the candidate's own frames came as data, deeper than this process's (remote.py)
        where += [(path, lineno, line) for path, lineno, _, line, *_ in getattr(e, "candidate_frames", ())]
        where = [w for w in where if w[0] in files]
        if where:
            filename, lineno, line = where[-1]
            message += f" ({os.path.basename(filename)}, line {lineno}: {(line or '').strip()})"
        return _clip(message)
    except BaseException:  # noqa: BLE001 - a hostile __str__ must not break reporting
        return type(e).__name__


def _describe(e: BaseException) -> str:
    return _short_error(e, set())


def _test_name(test) -> str:
    try:
        return test.id().rsplit(".", 1)[-1] if hasattr(test, "_testMethodName") else str(test)
    except BaseException:  # noqa: BLE001
        return "?"


def _failure_list(failed: dict[str, str]) -> list[str]:
    return [f"{name}: {message}" for name, message in list(failed.items())[:MAX_FAILURES_REPORTED]]


def _last_lines(text: str, n: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def _clip(text: str) -> str:
    text = str(text)
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."
