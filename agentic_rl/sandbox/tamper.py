"""Defences of the in-process graders against a candidate that tries to forge its verdict.

Standard library only; loaded by path by harness.py inside the sandboxed runner. The candidate must share
the process with the tests (they call it), so nothing here makes an in-process verdict unforgeable; each
piece closes a route that is cheap for a policy to find, and every route it closes is *reported*: a
refused or detected attempt becomes a `tamper` event on the result pipe at once, and the verdict
`tampered` (a failure). README.md ("Reward hacking") lists what is blocked, detected, and still possible.

* `AuditPolicy`: a `sys.addaudithook` hook, installed after the harness is set up and before candidate
  code runs (Python code cannot remove an audit hook). It refuses object-graph walks (gc), trace/profile
  hooks, raw-memory reads through ctypes, opening /proc/*/mem, writes to the attributes of harness-owned
  classes and to any function's `__code__`, and frames handed to untrusted code (sys._getframe,
  tb_frame/gi_frame/..., and the stdlib helpers that return frames: inspect.currentframe, ...). Library
  code keeps its frames (logging, namedtuple, unittest's and pytest's tracebacks need them): a frame
  request is refused only when the code asking is not part of the interpreter's installation.
* `Guard`: snapshots, taken before the candidate runs, of what the harness relies on by name (the
  attributes of harness classes, the dicts of builtins and of the unittest/pytest/pluggy modules, which
  module object each `sys.modules` name holds, the import hooks); compared at checkpoints (after
  loading, around every test, at the end) so a change made and undone between two of them is missed,
  one left in place is reported.
* `always_equal`: a returned object that claims an equality no value has (to equal fresh random sentinels,
  or two plausible values that differ) is reported.
* `encode`: the report's JSON, written with nothing but built-in types (json's encoder is mutable
  module state the candidate could rebind).
"""

from __future__ import annotations

import builtins
import os
import sys
import types
from _thread import get_ident as _get_ident

# Captured once, at load (before any candidate code): names the candidate could rebind later.
_type, _isinstance, _len, _str, _int, _ord = type, isinstance, len, str, int, ord
_getattr, _hasattr, _vars, _any, _bool, _id = getattr, hasattr, vars, any, bool, id
_set = set
_callable = callable
_getframe = sys._getframe
_urandom = os.urandom
_os_dirname, _normpath = os.path.dirname, os.path.normpath
_realpath = os.path.realpath
_ModuleType = types.ModuleType
_FunctionType = types.FunctionType
_MISSING = object()

MAX_TAMPER_NOTES = 20

# Audit events refused whoever asks: nothing a test needs, and each a way to the harness's objects.
ALWAYS_REFUSED = frozenset(
    {
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.settrace",
        "sys.setprofile",
        # an audit hook of the candidate's would be handed what the events carry: `sys._getframe` passes
        # the frame it returns (any library's or the harness's own), and from a frame `f_back` (no event)
        # leads up the stack to the harness and its reporter
        "sys.addaudithook",
    }
)
# The kind each is reported as (reports.TAMPER_KINDS).
ALWAYS_REFUSED_KINDS = {
    **dict.fromkeys(("gc.get_objects", "gc.get_referrers", "gc.get_referents"), "object_graph"),
    **dict.fromkeys(("sys._current_frames", "sys._current_exceptions"), "frame_access"),
    **dict.fromkeys(("sys.settrace", "sys.setprofile", "sys.addaudithook"), "trace_hook"),
}
# Signals sent by the process (maybe to itself): the exit hook runs first (see `checked_exits`).
KILL_EVENTS = frozenset({"os.kill", "os.killpg", "signal.pthread_kill"})
# Refused when untrusted code asks: ctypes reads of arbitrary memory.
UNTRUSTED_REFUSED = frozenset({"ctypes.cdata", "ctypes.string_at", "ctypes.wstring_at", "ctypes.addressof"})
# ctypes looking up a symbol (args: the library, the name): refused to untrusted code for the interpreter's
# own C API, which hands out what the audit events guard (PyEval_GetFrame: the current frame, with no event).
SYMBOL_EVENTS = frozenset({"ctypes.dlsym", "ctypes.dlsym/handle"})
C_API_PREFIXES = ("Py", "_Py")
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
# Library code that takes frames (a traceback's, a generator's) and returns none: text, states, nothing.
# While the candidate's code is on the stack, trusted code may read a frame attribute only below one of
# these (`AuditPolicy._kept_from_candidate`): any other library function that reads an attribute by name
# hands the frame back to its caller (`inspect.getmembers(tb)`, `string.Formatter().get_field`,
# `unittest.mock._dot_lookup`, `pandas.Series.apply(attrgetter)`), and from a frame `f_back` (no audit
# event) leads up the stack to the harness. An allow list: a library not on it that reads tracebacks while
# the candidate's call is running (keras' traceback filter) is refused, and the verdict says so.
FRAME_CONSUMERS = (
    # whole modules, but for the generators that yield frames to whoever iterates them
    ("traceback", None, ("walk_stack", "walk_tb", "_walk_tb_with_full_positions")),
    ("unittest.result", None, ()),
    ("logging", None, ("currentframe",)),
    # single functions
    ("inspect", ("getgeneratorstate", "getcoroutinestate", "getframeinfo", "getlineno"), ()),
    ("asyncio.coroutines", ("_format_coroutine",), ()),
    ("asyncio.base_tasks", ("_task_repr_info", "_task_print_stack"), ()),
    ("dis", ("distb",), ()),
)
# Stdlib helpers whose purpose is to hand frames to their caller.
FRAME_HELPERS = (
    ("inspect", ("currentframe", "stack", "trace", "getouterframes", "getinnerframes")),
    ("traceback", ("walk_stack", "walk_tb")),
    ("logging", ("currentframe",)),
)
# The same, in libraries imported only if the candidate asks (so not found at the policy's start): known by
# file and function name (a trusted file name cannot be claimed by the candidate's code: `code_swap`).
NAMED_FRAME_HELPERS = frozenset({("numpy/distutils/misc_util.py", "get_frame")})
# sys.modules names whose module object must stay the same (plus every guarded namespace's).
GUARDED_MODULE_PREFIXES = (
    "unittest",
    "_pytest",
    "pytest",
    "pluggy",
    "builtins",
    "os",
    "sys",
    "_signal",
    "signal",
    "json",
    "inspect",
    "traceback",
    "importlib",
    "types",
    "functools",
    "ctypes",
)
# Namespaces that honest tests patch while they run (mock.patch("os.remove"), "builtins.open"): compared
# only at the checkpoints between tests, never mid-test (Guard.changed's `live`).
PATCHED_BY_TESTS = ("builtins", "os")
# A function's attributes whose assignment raises `object.__setattr__` and that libraries.Genuine compares.
DEFAULTS_ATTRIBUTES = frozenset({"__defaults__", "__kwdefaults__"})
_SETATTR_EVENTS = frozenset({"object.__setattr__", "object.__delattr__"})
# Modules whose fresh import would undo a harness defence (`_signal`: the frame-less signal handlers).
REIMPORT_REFUSED = frozenset({"_signal"})
WATCHED = (
    ALWAYS_REFUSED
    | UNTRUSTED_REFUSED
    | frozenset(
        {
            "sys._getframe",
            "object.__getattr__",
            "object.__setattr__",
            "object.__delattr__",
            "open",
            "compile",
            "code.__new__",
            "import",
        }
    )
    | KILL_EVENTS
    | SYMBOL_EVENTS
)


def frameless_signal_handlers() -> None:
    """Python signal handlers get `frame=None` instead of the interrupted frame (an unaudited way to a
    frame, and from there up the stack to the harness). Called in the runner before candidate code;
    `_signal` cannot then be imported afresh by untrusted code (REIMPORT_REFUSED)."""
    import _signal

    original = _signal.signal

    def install(signalnum, handler):
        if callable(handler):
            user_handler = handler

            def handler(signum, frame):  # noqa: F811 - the frame stops here
                return user_handler(signum, None)

            handler.__wrapped__ = user_handler
        return original(signalnum, handler)

    install.__doc__, install.__name__ = original.__doc__, "signal"
    _signal.signal = install  # signal.signal calls _signal.signal at call time


# Called with no arguments just before the process ends by a route that skips every later checkpoint
# (`os._exit`, `os.abort`, `signal.raise_signal`, `os.kill`...): the harness sets it, in test mode, to its
# last check (see `checked_exits`). None in the server and in exec mode.
EXIT_HOOK: list = [None]
# The routes out of a process that run no Python code afterwards (no `finally`, no atexit): a change the
# candidate made and then left through one of them would otherwise reach no checkpoint. The kill routes
# (os.kill, os.killpg, signal.pthread_kill) raise audit events, which `AuditPolicy` turns into the same call.
_EXIT_ROUTES = (("posix", "os", ("_exit", "abort")), ("_signal", "signal", ("raise_signal",)))


def checked_exits() -> None:
    """Wrap the exit routes in place (`posix` and `os`, `_signal` and `signal`) so that `EXIT_HOOK` runs
    first. Called once in the server before the tamper snapshots, which then guard the wrappers (a
    candidate putting the originals back is reported); the harness keeps the originals for itself."""
    for low_name, high_name, names in _EXIT_ROUTES:
        low = __import__(low_name)
        for name in names:
            original = _getattr(low, name, None)
            if original is None or _hasattr(original, "__wrapped__"):
                continue
            wrapper = _exit_wrapper(original)
            setattr(low, name, wrapper)
            high = sys.modules.get(high_name)
            if high is not None and _getattr(high, name, None) is original:
                setattr(high, name, wrapper)


def _exit_wrapper(original):
    def leave(*args):
        run_exit_hook()
        return original(*args)

    leave.__name__, leave.__doc__, leave.__wrapped__ = original.__name__, original.__doc__, original
    return leave


def run_exit_hook() -> None:
    hook = EXIT_HOOK[0]
    if hook is not None:
        try:
            hook()
        except Exception:  # noqa: BLE001 - the process is leaving anyway; never stop it from doing so
            pass


def trusted_roots(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Directories whose code is the interpreter's own or installed libraries (not the candidate's)."""
    import site

    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(), *extra}
    return tuple(sorted({_realpath(d).rstrip("/") + "/" for d in dirs if d}))


def _named_helper(code) -> bool:
    return _any(code.co_name == name and code.co_filename.endswith("/" + file) for file, name in NAMED_FRAME_HELPERS)


_CONSUMER_CODES: list = []


def frame_consumers() -> frozenset:
    """The ids of the code objects of FRAME_CONSUMERS (nested functions and methods included), gathered once
    (warm_up calls this in the server, so every call inherits them)."""
    if not _CONSUMER_CODES:
        ids: set[int] = set()
        for module_name, names, left_out in FRAME_CONSUMERS:
            try:
                module = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
            except ImportError:
                continue
            for code in _module_codes(module, names, left_out):
                ids.add(_id(code))
        _CONSUMER_CODES.append((frozenset(ids), []))
    return _CONSUMER_CODES[0][0]


def _module_codes(module, names, left_out):
    """Code objects of a module's functions (`names`; all when None) and of its classes' methods, with the
    code nested in them; never those named in `left_out`."""
    values = [getattr(module, n, None) for n in names] if names is not None else list(_vars(module).values())
    stack = []
    for value in values:
        if _isinstance(value, type) and getattr(value, "__module__", None) == module.__name__:
            values += [v for k, v in _vars(value).items() if k not in left_out]
            continue
        value = getattr(value, "__func__", value)
        code = getattr(value, "__code__", None) if _isinstance(value, _FunctionType) else None
        if code is not None and code.co_name not in left_out and getattr(value, "__module__", None) == module.__name__:
            stack.append(code)
    while stack:
        code = stack.pop()
        yield code
        stack += [c for c in code.co_consts if _type(c) is types.CodeType and c.co_name not in left_out]


class AuditPolicy:
    """The audit hook; `notes` lists what was refused. `report(note, kind)` is called once per refusal
    (`kind`: one of reports.TAMPER_KINDS)."""

    def __init__(
        self,
        protected_types: list[type],
        report,
        roots: tuple[str, ...],
        workdir: str,
        framework_dirs: tuple[str, ...],
        sealed: tuple = (),
        sealed_code: tuple = (),
        kept_class: tuple = (),
        on_defaults=None,
    ) -> None:
        """`sealed`: the harness's generators that hold its report channel in their frame (harness.Sealed):
        their frame is refused to everyone, library code included (the harness never asks for it); so is that
        of every generator made by a function of `sealed_code` (the harness's records: ledger.py).
        `kept_class`: classes whose instances keep their class (`obj.__class__ = ...` from untrusted code is
        refused): a TestCase the tests hand over (a bound method's `__self__`) set to a class of the candidate's
        would run that class's assertions. `on_defaults(function)`: told of every assignment of a function's
        `__defaults__` or `__kwdefaults__` (libraries.Genuine reads that library's functions' defaults again only
        after one).
        Every collection here is frozen: this object is reachable from no name, but a frozen set cannot be
        emptied by whoever reaches it all the same."""
        self._protected = frozenset(_id(t) for t in protected_types)
        self._sealed = frozenset(_id(g) for g in sealed)
        self._sealed_code = frozenset(_id(f.__code__) for f in sealed_code)
        self._kept_class = frozenset(_id(c) for c in kept_class)
        self._consumers = frame_consumers()
        self._harness_dir = _os_dirname(_realpath(__file__)) + "/"
        self._framework_dirs = framework_dirs
        self._keep_alive = (protected_types, sealed, sealed_code, kept_class)
        self._report = report
        self._on_defaults = on_defaults
        self._roots = roots
        self._workdir = workdir.rstrip("/") + "/"
        ctypes = sys.modules.get("ctypes")
        # ctypes' own Python wrappers (string_at...) raise the events for their caller
        self._ctypes_dir = _os_dirname(ctypes.__file__) + "/" if ctypes is not None else "\0"
        import importlib

        self._importlib_dir = _os_dirname(importlib.__file__) + "/"
        self._busy: set[int] = set()  # threads inside the hook (our own sys._getframe raises an event too)
        self.notes: list[str] = []
        helpers = set()
        for module_name, names in FRAME_HELPERS:
            module = sys.modules.get(module_name) or __import__(module_name)
            for name in names:
                code = _getattr(_getattr(module, name, None), "__code__", None)
                if code is not None:
                    helpers.add(_id(code))
        self._helpers = frozenset(helpers)

    def install(self) -> None:
        sys.addaudithook(self)

    def refuse(self, note: str, kind: str) -> None:
        """Record an attempt (and report it now, so an exit or a hang afterwards cannot hide it), then stop it."""
        if _len(self.notes) < MAX_TAMPER_NOTES:
            self.notes.append(note)
            self._report(note, kind)
        raise PermissionError(f"sandbox: {note} is not allowed while grading")

    def __call__(self, event: str, args: tuple) -> None:
        if event not in WATCHED:
            return
        if event in _SETATTR_EVENTS and args[1] in DEFAULTS_ATTRIBUTES and self._on_defaults is not None:
            self._on_defaults(args[0])  # before the re-entry guard below: an assignment is never left uncounted
        thread = _get_ident()
        if thread in self._busy:
            return
        self._busy.add(thread)
        try:
            found = self._check(event, args)
        finally:
            self._busy.discard(thread)
        if found:
            self.refuse(found[1], found[0])

    def _check(self, event: str, args: tuple) -> tuple[str, str] | None:
        """(kind, note) of a refused event, or None."""
        if event in ALWAYS_REFUSED:
            return ALWAYS_REFUSED_KINDS[event], event
        if event in KILL_EVENTS:  # maybe this process's own end: the last check first
            run_exit_hook()
            return None
        if event == "open":
            return self._check_open(args[0])
        if event == "import":
            if args[0] not in REIMPORT_REFUSED:
                return None
            asking = self._asking_file(skip_importlib=True)
            if self._trusted_file(asking):
                return None
            return "signal_reimport", f"importing {args[0]} afresh from {asking}"
        if event in ("object.__setattr__", "object.__delattr__"):
            obj, name = args[0], args[1]
            if name == "__class__" and _any(_id(c) in self._kept_class for c in _mro_of(_type(obj))):
                writer = self._asking_file()
                if self._trusted_file(writer):
                    return None
                return "framework_patch", f"changing the class of a {_type(obj).__qualname__} from {writer}"
            if _id(obj) not in self._protected and name != "__code__":
                return None
            writer = self._asking_file()
            if _id(obj) not in self._protected:  # a __code__ swap: libraries do it (types.coroutine)
                if self._trusted_file(writer):
                    return None
                return "code_swap", f"replacing a function's __code__ from {writer}"
            if writer.startswith(self._framework_dirs) and not writer.endswith("/mock.py"):
                return None  # unittest, pytest, pluggy and the harness maintain their own classes
            return "framework_patch", f"changing {_getattr(obj, '__qualname__', '?')}.{name} from {writer}"
        if event == "object.__getattr__":
            if args[1] not in FRAME_ATTRIBUTES:
                return None
            if _id(args[0]) in self._sealed or (
                _type(args[0]) is types.GeneratorType and _id(args[0].gi_code) in self._sealed_code
            ):
                return "result_channel", f"the frame of the harness's report channel ({args[1]}) was asked for"
        if event in SYMBOL_EVENTS and not (_type(args[1]) is _str and args[1].startswith(C_API_PREFIXES)):
            return None
        asking = self._asking_file()
        if self._trusted_file(asking):
            if event != "object.__getattr__" or self._kept_from_candidate():
                return None
            return "frame_access", f"frame access ({args[1]}) through library code ({asking}) that returns it"
        if event in UNTRUSTED_REFUSED:
            return "memory_read", f"{event} from {asking}"
        if event in SYMBOL_EVENTS:
            return "memory_read", f"the interpreter's C API ({args[1][:80]}) through ctypes from {asking}"
        if event == "code.__new__":  # a code object made by hand could carry the tests' mark (judging.TESTS_MARK)
            return "code_swap", f"a code object made by hand ({args[2]!r}, {args[1]}) from {asking}"
        if event == "compile":  # args[1]: the file name the code will claim
            return ("code_swap", f"code disguised as {args[1]}") if self._looks_trusted(args[1]) else None
        what = f"{event} {args[1]}" if event == "object.__getattr__" else event
        return "frame_access", f"frame access ({what}) from {asking}"

    def _asking_file(self, skip_importlib: bool = False) -> str:
        """The file of the code this event comes from: the frame that raised it, or, when that is one
        of the frame-returning stdlib helpers (inspect.currentframe...), ctypes' own wrappers or (for
        imports) the import machinery, the code that called them."""
        frame = _getframe(3)  # 0: here, 1: _check, 2: __call__, 3: the code that raised the event
        while frame is not None and (
            _id(frame.f_code) in self._helpers
            or _named_helper(frame.f_code)
            or frame.f_code.co_filename.startswith(self._ctypes_dir)
            or (skip_importlib and frame.f_code.co_filename.startswith(("<frozen importlib", self._importlib_dir)))
        ):
            frame = frame.f_back
        return "<no frame>" if frame is None else frame.f_code.co_filename

    def _kept_from_candidate(self) -> bool:
        """A frame attribute asked for by library code: True where the frame cannot reach the candidate's code,
        i.e. no frame of untrusted code is on the stack above the asker (the framework's own work), or a frame
        consumer (FRAME_CONSUMERS, or the harness itself) stands between them and takes the frame."""
        frame = _getframe(3)  # 0: here, 1: _check, 2: __call__, 3: the code that raised the event
        while frame is not None:
            code = frame.f_code
            if _id(code) in self._consumers or code.co_filename.startswith(self._harness_dir):
                return True
            if not self._trusted_file(code.co_filename):
                return False
            frame = frame.f_back
        return True

    def _looks_trusted(self, filename) -> bool:
        return _isinstance(filename, _str) and self._trusted_file(filename)

    def _trusted_file(self, filename: str) -> bool:
        if filename.startswith("<frozen "):
            return True
        # A name with `..` in it (`<site-packages>/../../srv/x.py`, reached through a sys.path entry
        # the candidate added) only looks like library code.
        return (
            filename.startswith(self._roots)
            and not filename.startswith(self._workdir)
            and _normpath(filename) == filename
        )

    def _check_open(self, path) -> tuple[str, str] | None:
        if _isinstance(path, bytes):
            path = path.decode("utf-8", "replace")
        if not _isinstance(path, _str):
            return None  # an fd
        if not path.startswith(self._roots) or "/proc" in path:
            real = _realpath(path)
            if real.startswith("/proc/") and (real.endswith("/mem") or "/map_files/" in real):
                return "memory_read", f"opening {real}"
        return None


class Guard:
    """Snapshots of harness-relied-on state; `changed()` names what differs now (see the module doc).

    Attributes *added* to a class are not compared (unittest and pytest add their own at run time, e.g.
    `tearDown_exceptions`); the audit hook refuses additions by untrusted code as they happen.
    """

    def __init__(self, classes: list[type], namespaces: list[tuple[str, dict]], strict: tuple[str, ...] = ()) -> None:
        """`strict`: names of namespaces nothing may write to at all (the harness's own): any write is
        reported, even one undone since; in the others (builtins, which tests patch with mock and
        restore) only a name that differs at a checkpoint is."""
        self._strict = strict
        self._classes = [(cls, dict(vars(cls))) for cls in classes]
        # pytest adds flags to its own classes at run time (`_pytest_diamond_inheritance_warning_shown`), so
        # only classes outside _pytest/pluggy get the stricter version-tag check.
        tagged = [c for c in classes if not c.__module__.startswith(("_pytest", "pluggy"))]
        self._tags = [(cls, view, view.value) for cls, view in ((c, _version_tag_view(c)) for c in tagged) if view]
        # Each dict with a live view of its version (CPython bumps it on every write): an unchanged
        # version skips the name-by-name comparison, which is what makes a checkpoint cheap.
        views = [(name, ns, dict(ns), dict_version_view(ns)) for name, ns in namespaces]
        self._namespaces = [(n, ns, before, view, view.value if view else None) for n, ns, before, view in views]
        self._modules_view = dict_version_view(sys.modules)
        self._modules_version = self._modules_view.value if self._modules_view else None
        # Which module object each framework module name holds (not all of sys.modules: touching every
        # module would copy their pages in every forked call).
        names = {n for n, _ in namespaces} | {n for n in sys.modules if n.startswith(GUARDED_MODULE_PREFIXES)}
        self._sys_modules = {n: sys.modules[n] for n in names if n in sys.modules}
        self._meta_path, self._path_hooks = list(sys.meta_path), list(sys.path_hooks)
        self._builtins_dict = vars(builtins)

    def changed(self, namespace: dict | None = None, live: bool = False) -> list[str]:
        """What differs from the snapshots. `live`: only what no honest test changes while it runs, for a
        check made mid-test (the process is leaving, or hangs): not the names of builtins or os, which tests
        patch and restore, nor sys.modules, which `patch.dict` edits."""
        out = []
        unchanged = {_id(cls) for cls, view, tag in self._tags if view.value == tag}
        for cls, before in self._classes:
            if _id(cls) in unchanged:
                continue  # its version tag says nothing was written to it
            now = vars(cls)
            out += [f"{cls.__qualname__}.{k}" for k, v in before.items() if now.get(k, _MISSING) is not v]
            out += [
                f"{cls.__qualname__}.{k} (added)" for k in now.keys() - before.keys() if not k.startswith("_pytest")
            ]
        out += [
            f"{cls.__qualname__} (modified, maybe restored since)"
            for cls, view, tag in self._tags
            if view.value != tag and not any(s.startswith(cls.__qualname__ + ".") for s in out)
        ]
        for name, now, before, view, version in self._namespaces:
            if live and name in PATCHED_BY_TESTS:
                continue
            if view is None or view.value != version:
                diff = [f"{name}.{k}" for k, v in before.items() if now.get(k, _MISSING) is not v]
                out += diff or ([f"{name} (written to, maybe restored since)"] if name in self._strict else [])
        modules = sys.modules
        if not live and (self._modules_view is None or self._modules_view.value != self._modules_version):
            out += [f"sys.modules[{k!r}]" for k, v in self._sys_modules.items() if modules.get(k, _MISSING) is not v]
        for name, before, now in (
            ("sys.meta_path", self._meta_path, sys.meta_path),
            ("sys.path_hooks", self._path_hooks, sys.path_hooks),
        ):
            if [h for h in before if h not in now]:
                out.append(f"{name} (an import hook was removed)")
        if namespace is not None:
            b = namespace.get("__builtins__", _MISSING)
            if b is not builtins and b is not self._builtins_dict:
                out.append("the program's __builtins__")
        return sorted(out)

    def new_import_hooks(self, untrusted) -> list[str]:
        """Import hooks added since the snapshot whose code is untrusted (`untrusted(filename)`)."""
        out = []
        for name, before, now in (
            ("sys.meta_path", self._meta_path, sys.meta_path),
            ("sys.path_hooks", self._path_hooks, sys.path_hooks),
        ):
            for hook in now:
                if hook not in before and untrusted(_code_file(hook)):
                    out.append(f"{name} (an import hook was added)")
        return out


def _find_version_tag_offset() -> int | None:
    """Byte offset of `tp_version_tag` in a type object, found by experiment (not hard-coded per version).

    CPython gives a class a fresh version tag (from a global counter) on the first attribute lookup after
    any change to the class, and zeroes it on every change: a tag that differs between two checkpoints
    means the class was written to in between, even if the old value was put back.
    """
    import ctypes

    class Probe:
        pass

    n = type.__basicsize__ // 4
    words = lambda: list((ctypes.c_uint * n).from_address(id(Probe)))  # noqa: E731
    getattr(Probe, "probe", None)
    before = words()
    Probe.probe = 1
    changed = words()
    getattr(Probe, "probe", None)
    after = words()
    offsets = [4 * i for i in range(n) if before[i] and not changed[i] and after[i] not in (0, before[i])]
    return offsets[0] if len(offsets) == 1 else None


_VERSION_TAG_OFFSET = _find_version_tag_offset()


def _find_dict_version_offset() -> int | None:
    """Byte offset of a dict's `ma_version_tag` (PEP 509; CPython 3.11), found by experiment: the one
    8-byte word that grows on every write and stays put on reads."""
    import ctypes

    probe: dict = {}
    n = 6  # the dict header: refcount, type, used, version, keys, values
    words = lambda: list((ctypes.c_uint64 * n).from_address(id(probe)))  # noqa: E731
    samples = [words()]
    for i in range(3):
        probe["k"] = i
        samples.append(words())
    _ = probe.get("k")
    samples.append(words())
    offsets = [
        8 * i
        for i in range(n)
        if all(a[i] < b[i] for a, b in zip(samples[:4], samples[1:4])) and samples[4][i] == samples[3][i] and i != 2
    ]  # word 2 is ma_used, which grows only with new keys
    return offsets[0] if len(offsets) == 1 else None


_DICT_VERSION_OFFSET = _find_dict_version_offset()


def dict_version_view(d: dict):
    if _DICT_VERSION_OFFSET is None:
        return None
    import ctypes

    return ctypes.c_uint64.from_address(id(d) + _DICT_VERSION_OFFSET)


def _find_cell_contents_offset() -> int | None:
    """Byte offset of a closure cell's pointer to what it holds (`ob_ref`), found by experiment: the one 8-byte
    word that is the address of its contents before and after they are replaced."""
    import ctypes

    first, second = object(), object()
    ids = id(first), id(second)  # `first` is the cell's own variable: read after the change, it is `second`
    cell = (lambda: first).__closure__[0]
    n = type(cell).__basicsize__ // 8
    words = lambda: list((ctypes.c_uint64 * n).from_address(id(cell)))  # noqa: E731
    before = words()
    cell.cell_contents = second
    after = words()
    offsets = [8 * i for i in range(n) if before[i] == ids[0] and after[i] == ids[1]]
    return offsets[0] if len(offsets) == 1 else None


_CELL_CONTENTS_OFFSET = _find_cell_contents_offset()


def cell_contents_view(cell):
    """A live view of the address of what `cell` holds (0 while empty), None where the offset is unknown: read
    without taking a reference to the contents, so reading it in a forked call copies none of their pages."""
    if _CELL_CONTENTS_OFFSET is None:
        return None
    import ctypes

    return ctypes.c_uint64.from_address(id(cell) + _CELL_CONTENTS_OFFSET)


def _version_tag_view(cls: type):
    """A live view of `cls`'s version tag (None where the offset is unknown); made before any candidate
    runs, so reading it later needs no ctypes call the audit hook would see."""
    if _VERSION_TAG_OFFSET is None:
        return None
    import ctypes

    getattr(cls, "_sandbox_no_such_attribute", None)  # a lookup in the class assigns a tag if it has none
    return ctypes.c_uint.from_address(id(cls) + _VERSION_TAG_OFFSET)


def _code_file(obj) -> str:
    """Where an object's code comes from: a function's file, or that of a method of its class."""
    target = obj if _isinstance(obj, _FunctionType) else None
    if target is None:
        for value in vars(_type(obj)).values() if not _isinstance(obj, type) else vars(obj).values():
            if _isinstance(value, (_FunctionType, classmethod, staticmethod)):
                target = getattr(value, "__func__", value)
                break
    code = getattr(target, "__code__", None)
    return code.co_filename if code is not None else "<unknown>"


# ------------------------------------------------------------------------------------- sentinels

_EXACT_BUILTINS = (int, float, complex, str, bytes, bool, type(None))
_CONTAINERS = (list, tuple, set, frozenset)


class _Sentinel:
    """A fresh object nothing honest equals."""

    __slots__ = ()


def always_equal(value) -> bool:
    """True if `value` (or an element of a list/tuple/set/dict value, or of a numpy array of objects) claims
    an equality no value has: to equal a private sentinel object, a random 64-bit int or a random string, or
    to equal two plausible values that differ from each other (`_claims_two`). Honest values (numbers,
    strings, arrays, frames, axes, mocks) equal at most one of any values that differ, or refuse to say."""
    return _any_part(value, _claims_impossible) is not None


def _any_part(value, test, depth: int = 0, budget: list | None = None):
    """The first non-None `test(part)` over `value` and its elements (lists, tuples, sets, dicts' keys and
    values, numpy arrays of objects; 4 levels, 200 parts at most), skipping exact built-in scalars."""
    budget = [200] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0 or depth > 3:
        return None
    t = _type(value)
    if t in _EXACT_BUILTINS:
        return None
    if t in _CONTAINERS or t is dict or _object_array(value):
        items = value.flat[:64] if _object_array(value) else [*value.keys(), *value.values()] if t is dict else value
        for item in items:
            found = _any_part(item, test, depth + 1, budget)
            if found is not None:
                return found
        return None
    return test(value)


def _claims_impossible(value) -> bool | None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Probes that say nothing about where they come from: an instance of a class with a random name,
        # a random 64-bit int, a random hex string of random length.
        anonymous = _type(f"C{_random_int():x}", (), {"__slots__": ()})()
        for probe in (anonymous, _random_int() + 7, f"{_random_int():x}" * (1 + _random_int() % 3)):
            if _claims(value, probe):
                return True
        return True if _claims_two(value) else None


def _claims(value, probe) -> bool:
    try:
        return _truth(value == probe) or not _truth(value != probe, default=True)
    except Exception:  # noqa: BLE001 - a comparison that raises claims nothing
        return False


def _claims_two(value) -> bool:
    """An equality that answers "equal" only to plausible values (small numbers, short strings) passes the
    sentinels above; it cannot pass this: values a test plausibly expects, pairwise different, drawn afresh
    and asked in a random order and number, of which an honest value equals at most one (`==` is an
    equivalence: equal to both, the two would be equal)."""
    claimed = [p for p in _plausible_probes() if _says_equal(value, p)]
    return any(not _truth(a == b) for i, a in enumerate(claimed) for b in claimed[i + 1 :])


def _says_equal(value, probe) -> bool:
    """`value == probe` answered with a plain True (a bool, or numpy's): numpy values broadcast against a
    container probe into arrays (`np.float64(2) != []` is an empty array), which claim nothing."""
    try:
        result = value == probe
    except Exception:  # noqa: BLE001
        return False
    return result is True or (_type(result).__name__ == "bool_" and _truth(result))


def _plausible_probes() -> list:
    r = _random_int
    word = "".join(chr(97 + r() % 26) for _ in range(1 + r() % 6))
    probes = [0, 1, -1, 2, 3 + r() % 97, 100 + r() % 9900, -(2 + r() % 999), 0.5, (r() % 10**6) / 997 + 0.25]
    # scalars only: a container probe would be broadcast by numpy values into an array of answers
    probes += ["", "a", word, " ", word.upper() + "1", None, b"", float(r() % 1000) + 0.125]
    # a random share of them, in a random order: how many and which come is nothing a value can count on
    chosen = [p for p in probes if r() % 8]
    for i in range(len(chosen) - 1, 0, -1):
        j = r() % (i + 1)
        chosen[i], chosen[j] = chosen[j], chosen[i]
    return chosen


def _object_array(value) -> bool:
    numpy = sys.modules.get("numpy")
    if numpy is None or not _isinstance(value, numpy.ndarray):
        return False
    try:
        return value.dtype.kind == "O"
    except Exception:  # noqa: BLE001
        return False


# The operators an assertion asks of its operands (unittest's, in process): a class of the candidate's that
# defines one of them would answer for the test (`answered_by`).
JUDGING_OPERATORS = {
    "equality": ("__eq__", "__ne__"),
    "order": ("__lt__", "__le__", "__gt__", "__ge__"),
    # assertAlmostEqual: first == second, then round(abs(first - second), places) == 0, or diff <= delta
    "closeness": ("__eq__", "__ne__", "__sub__", "__rsub__", "__abs__", "__round__", "__le__", "__ge__", "__float__"),
    "membership": ("__contains__", "__iter__", "__getitem__", "__eq__", "__ne__"),
}
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time (by `class`), not a built-in or C type
_mro_of = type.__dict__["__mro__"].__get__  # read past a metaclass that could answer `cls.__mro__` itself
_dict_of = type.__dict__["__dict__"].__get__
_flags_of = type.__dict__["__flags__"].__get__
_C_DESCRIPTORS = (types.WrapperDescriptorType, types.MethodDescriptorType, types.BuiltinFunctionType)


def answered_by(value, operators: tuple, untrusted, is_tests=None) -> str | None:
    """The name of the class whose `operators` would be answered by untrusted code (`untrusted(filename)`):
    `value`'s, or that of an element of a list/tuple/set/dict value (keys too) or numpy object array; None
    where every such operator is the interpreter's or an installed library's (`_answers_for_candidate`)."""
    return _any_part(value, lambda part: answering_class(_type(part), operators, untrusted, is_tests))


def answering_class(t: type, operators: tuple, untrusted, is_tests=None, memo: dict | None = None) -> str | None:
    """The name of `t` where one of its `operators` (looked up in its MRO as the interpreter does, past any
    metaclass) would be answered by untrusted code; else None. `is_tests(code)`: code of the tests' own, which
    is not the candidate's though it is in an untrusted file (BigCodeBench appends the tests to the program).
    `memo`: a dict kept by the caller, where the answer for an entry that cannot change (a function, whose
    `__code__` no one may swap, or a built-in slot) is kept by the entry itself: a class given another entry
    is asked afresh."""
    wanted = _set(operators)
    for cls in _mro_of(t):  # the first class that defines a name is what the interpreter calls: later ones are not
        namespace = _dict_of(cls)
        here = wanted.intersection(namespace)  # at C speed: a library's class defines few of many operators
        for name in here:
            entry = namespace[name]
            if entry is not None and _answers(entry, cls, untrusted, is_tests, memo):
                return _getattr(t, "__qualname__", "?")
        wanted -= here
        if not wanted:
            break
    return None


def _answers(entry, cls, untrusted, is_tests, memo: dict | None) -> bool:
    if memo is None or _type(entry) not in _FIXED_ENTRIES:
        return _answers_for_candidate(entry, cls, untrusted, 0, is_tests)
    known = memo.get((_id(entry), _id(cls)))
    if known is None:  # the entry and its class are kept alive by the memo: their ids are not reused
        known = memo[(_id(entry), _id(cls))] = (entry, cls, _answers_for_candidate(entry, cls, untrusted, 0, is_tests))
    return known[2]


_FIXED_ENTRIES = frozenset({types.FunctionType, types.WrapperDescriptorType, types.MethodDescriptorType})


def _answers_for_candidate(entry, cls, untrusted, depth: int = 0, is_tests=None) -> bool:
    """Whether a class's operator `entry` is the candidate's: a function of untrusted code (also inside a
    staticmethod or classmethod), or, on a class made at run time, a built-in callable the class merely
    holds (`staticmethod(partial(operator.gt, 10**6))`), whose arguments the class's maker chose, or an object
    that wraps such a callable (a property's getter, a partialmethod's function) or whose own class answers the
    call with untrusted code (an instance of a callable class of the candidate's: the interpreter calls it as
    the operator). Other objects (a library's descriptor, such as the proxies unittest.mock puts on a
    MagicMock's class) answer with their own library's code."""
    if _isinstance(entry, (staticmethod, classmethod)):
        entry = entry.__func__
    if _isinstance(entry, _FunctionType):
        return untrusted(entry.__code__.co_filename) and not (is_tests is not None and is_tests(entry.__code__))
    if not _flags_of(cls) & _HEAPTYPE or _isinstance(entry, _C_DESCRIPTORS[:2]):
        return False
    import functools
    import operator

    held = (functools.partial, types.BuiltinFunctionType, types.MethodWrapperType, types.MethodType)
    if _isinstance(entry, held) or _type(entry) in (operator.attrgetter, operator.itemgetter, operator.methodcaller):
        return True
    if depth > 2 or _any(c.__module__ == "_ctypes" for c in _mro_of(_type(entry))):
        return True  # a ctypes function pointer (its target is the maker's choice), or callables nested deeper
    for name in ("fget", "func", "__func__", "__wrapped__"):
        inner = _getattr_static(entry, name)
        if _callable(inner) and _answers_for_candidate(inner, cls, untrusted, depth + 1, is_tests):
            return True
    own = _type(entry)
    for klass in _mro_of(own) if _flags_of(own) & _HEAPTYPE else ():
        for name in ("__call__", "__get__"):
            inner = _dict_of(klass).get(name, _MISSING)
            if inner is not _MISSING and _answers_for_candidate(inner, klass, untrusted, depth + 1, is_tests):
                return True
    return False


def _getattr_static(obj, name: str):
    """An attribute as stored (instance dict, slot or a built-in type's member), never computed by the object's
    own `__getattr__`/`__getattribute__`."""
    import inspect

    try:
        value = inspect.getattr_static(obj, name)
    except AttributeError:
        return _MISSING
    getter = getattr(_type(value), "__get__", None)
    if _isinstance(value, (types.MemberDescriptorType, types.GetSetDescriptorType)) and getter is not None:
        try:
            return value.__get__(obj, _type(obj))
        except Exception:  # noqa: BLE001
            return _MISSING
    return value


def _random_int() -> int:
    return _int.from_bytes(_urandom(8), "little")


def _truth(result, default: bool = False) -> bool:
    if result is True or result is False:
        return result
    try:
        return bool(result)
    except Exception:  # noqa: BLE001 - arrays and frames refuse to be truth-tested: no claim
        return default


# ------------------------------------------------------------------------------------- encoder

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def encode(value) -> str:
    """JSON text of None/bool/int/str/list/tuple/dict (str keys), ASCII only, from built-in types alone."""
    t = _type(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if t is _int:
        return _int.__repr__(value)
    if t is _str:
        return _encode_str(value)
    if t is list or t is tuple:
        return "[" + ",".join([encode(v) for v in value]) + "]"
    if t is dict:
        return (
            "{"
            + ",".join(
                [
                    _encode_str(_str.__str__(k) if _type(k) is _str else "?") + ":" + encode(v)
                    for k, v in dict.items(value)
                ]
            )
            + "}"
        )
    return "null"  # the harness sends nothing else


def _encode_str(s: str) -> str:
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    out = []
    for ch in s:
        code = _ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:  # a surrogate pair, as JSON spells characters outside the basic plane
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
    return '"' + "".join(out) + '"'
