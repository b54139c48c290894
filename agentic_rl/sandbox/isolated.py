"""Out-of-process grading: the tests run in a trusted process, the candidate in a second process.

Standard library only (loaded by path by harness.py under the sandbox interpreter).

    runner (trusted tests)   holds the result pipe; made non-dumpable before the fork, so the candidate
       |                     (same uid) can neither ptrace it nor open its /proc files (memory, fds)
       +- candidate          forked before any candidate code runs; the result pipe closed; loads the
                             code and answers requests over one socket (remote.py): calls of its
                             functions, methods of its objects; nothing else of the tests reaches it

The test code, the framework (pytest/unittest), every assertion and comparison run in the trusted
process, on data decoded from the channel (remote.py: exact built-in, numpy and pandas values; objects
the channel cannot carry stay in the candidate and are used through handles). The candidate's process
has no test framework, no report channel and no nonce to forge, so no frame walk, patch or always-equal
object there can change a verdict.

Which names of the candidate the tests see: for HumanEval and BigCodeBench (whose tests run in the
candidate's namespace) the names the test code uses and does not define, never a builtin's name; for
KodCode, the public names of `solution`. A name bound to an installed module or library object in the
candidate is bound to the same one imported here, if it is what the name says (`np` is numpy, `Counter`
is a `Counter`) and not from a mocking library; anything else is the candidate's, through the channel.
"""

from __future__ import annotations

import ast
import builtins
import ctypes
import importlib
import importlib.util
import os
import signal
import socket
import sys
import types

PR_SET_DUMPABLE = 4
# Conventional aliases a test may use for a module the candidate imported (BigCodeBench's tests rely on them).
MODULE_ALIASES = {
    "np": "numpy",
    "pd": "pandas",
    "plt": "matplotlib.pyplot",
    "sns": "seaborn",
    "tf": "tensorflow",
    "mpl": "matplotlib",
    "sp": "scipy",
    "nx": "networkx",
    "dt": "datetime",
    "sm": "statsmodels.api",
    "ET": "xml.etree.ElementTree",
    "mcolors": "matplotlib.colors",
    "cv2": "cv2",
    "ss": "scipy.stats",
    "stats": "scipy.stats",
    "smf": "statsmodels.formula.api",
    "px": "plotly.express",
    "go": "plotly.graph_objects",
    "gpd": "geopandas",
    "ttest_ind": "scipy.stats",
}
REFUSED = "refused_name"  # the tamper kind of a name only a forgery supplies (reports.TAMPER_KINDS)
_FRAMEWORKS = ("unittest", "pytest", "_pytest", "program", "solution")
UNTRUSTED_LIBRARIES = ("unittest.mock", "mock", "pytest_mock", "builtins", "ctypes", "gc", "inspect", "sys")


def split(workdir: str, trusted_dir: str):
    """Fork the candidate's process (the fallback where the server could not fork it before it read the
    tests). Returns (endpoint, pid) in the trusted process, and (None, the candidate's socket) in the
    candidate's process."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    _not_dumpable()  # before the fork: never a moment when the candidate could attach
    pid = os.fork()
    if pid == 0:
        ours.close()
        return None, theirs
    theirs.close()
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a candidate gone mid-request is an error, not our death
    return ours, pid


def seal(candidate_fd: int) -> socket.socket:
    """The tests' side of a candidate the server forked: the trusted process made non-dumpable (no /proc
    file of it opens for the candidate's uid, no ptrace), SIGPIPE off. The channel's socket."""
    _not_dumpable()
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a candidate gone mid-request is an error, not our death
    return socket.socket(fileno=candidate_fd)


def _not_dumpable() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def candidate_main(sock: socket.socket, result_fds: tuple, req: dict, workdir: str, remote, patching=None) -> None:
    """The candidate's process: drop the report channel, load the code, serve requests (and apply the
    tests' patches: `patching`, patching.py). Never returns."""
    code = 0
    try:
        for fd in result_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # its own /proc stays its own (psutil, fd lists)
        sys.path.insert(0, workdir)
        endpoint = remote.Endpoint(sock.fileno(), send_frames=True)
        _pace_threads(endpoint)
        if patching is not None:
            patching.CandidatePatches(endpoint)
        if req["harness"] == "pytest":
            _stdin_as_under_pytest()
        module_name = "solution" if req["harness"] == "pytest" else "program"
        path = os.path.join(workdir, f"{module_name}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(req["code"])
        module = types.ModuleType(module_name)
        if req["harness"] == "unittest":  # as the official BigCodeBench harness: os and sys already bound
            module.__dict__.update(os=os, sys=sys)
        module.__file__ = path
        sys.modules[module_name] = module
        error, exception = None, None
        try:
            exec(compile(req["code"], path, "exec"), module.__dict__)
        except BaseException as e:  # noqa: BLE001 - SystemExit at import included: no tests can run
            error = _describe(e)
            exception = _encoded_exception(endpoint, e, remote)
        endpoint.root = dict(module.__dict__)
        names = _listing(module.__dict__)
        # the values come with the listing (functions and objects as handles): one round trip, not one per name
        values = {
            n: module.__dict__[n]
            for n, entry in names.items()
            if entry[0] in ("callable", "value") and _encodes(endpoint, module.__dict__[n])
        }
        endpoint.root["__listing__"] = {"error": error, "exception": exception, "names": names, "values": values}
        endpoint.serve()
    except BaseException:  # noqa: BLE001
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(code)


def _pace_threads(endpoint) -> None:
    """The candidate's threads start no faster than the channel serves them (Endpoint.pace_thread_start):
    its own process, so wrapping `Thread.start` there changes nothing the tests' side relies on."""
    import threading

    start = threading.Thread.start

    def paced_start(thread):
        endpoint.pace_thread_start()
        return start(thread)

    threading.Thread.start = paced_start


def _stdin_as_under_pytest() -> None:
    """In process, pytest's output capture stands in for stdin while the test module loads and the tests
    run, and reading it raises pytest's own error (`input()` included). The candidate's process reads the
    same object, so a program that reads stdin fails as it does in process (not with EOFError)."""
    try:
        from _pytest.capture import DontReadFromInput
    except ImportError:  # no pytest in this interpreter: the trusted side cannot run pytest either
        return
    sys.stdin = DontReadFromInput()


def _encoded_exception(endpoint, e: BaseException, remote) -> dict | None:
    """The exception the program raised while it loaded, as data with its frames (the tests' side words a
    failure to import it as pytest does in process); None where it cannot be encoded."""
    try:
        return {**endpoint.codec.encode_exception(e), **remote.exception_frames(e)}
    except BaseException:  # noqa: BLE001 - a hostile exception: the description alone goes
        return None


def _encodes(endpoint, value: object) -> bool:
    """Whether `value` can go with the listing (else the tests' side asks for it by name, and gets the
    error where it uses it)."""
    try:
        endpoint.codec.encode(value)
        return True
    except BaseException:  # noqa: BLE001 - whatever the candidate's object raises
        return False


def _listing(namespace: dict) -> dict:
    """What each name of the candidate's module is, as data: the trusted side decides what to bind."""
    out = {}
    for name, value in list(namespace.items()):
        if name.startswith("__") and name.endswith("__"):
            continue
        try:
            if isinstance(value, types.ModuleType):
                out[name] = ["module", str(getattr(value, "__name__", ""))]
            elif isinstance(value, type) and issubclass(value, BaseException):
                bases = [c.__name__ for c in value.__mro__ if getattr(builtins, c.__name__, None) is c]
                out[name] = ["exception", str(value.__module__), str(value.__qualname__), bases]
            elif isinstance(value, type) or callable(value):
                out[name] = [
                    "callable",
                    str(getattr(value, "__module__", "") or ""),
                    str(getattr(value, "__qualname__", "") or ""),
                ]
            else:
                out[name] = ["value"]
        except BaseException:  # noqa: BLE001 - a hostile class
            out[name] = ["value"]
    return out


# --------------------------------------------------------------------------------------------------
# trusted side


class Candidate:
    """The trusted side's view of the candidate's module: resolves names to data, trusted library objects
    or handles, and keeps the exception stand-ins (one class per name, so `raises(solution.Error)` works)."""

    def __init__(self, endpoint, remote, trusted_roots: tuple, refuse=None) -> None:
        """`refuse(note, kind)`: where a name the candidate supplied that only a forgery would supply is reported
        (a tamper event: the verdict `tampered`, counted in `tools/submit/tampered_rate`)."""
        self.endpoint, self.remote, self.trusted_roots = endpoint, remote, trusted_roots
        self.refuse = refuse or (lambda note, kind: None)
        self.patches = None  # the tests' side of patching.py, where the harness forwards the tests' patches
        endpoint.resolve_class = self.library_class
        endpoint.resolve_exception = self.library_exception
        listing = endpoint.request("lookup", name="__listing__")
        if type(listing) is not dict or type(listing.get("names")) is not dict:
            raise remote.Unsupported("the candidate's process sent no listing")
        self.error = listing.get("error") if type(listing.get("error")) is str else None
        # the exception behind `error`, as the channel sent it (load_exception() decodes it)
        self._load_exception = listing.get("exception") if type(listing.get("exception")) is dict else None
        self.names = listing["names"]
        self.values = listing["values"] if type(listing.get("values")) is dict else {}

    def load_exception(self) -> BaseException:
        """The exception the candidate's program raised while it loaded, rebuilt here from data (trusted
        classes, the candidate's frames as data); a RuntimeError with the description where none came."""
        if self._load_exception is None:
            return RuntimeError(self.error or "the program failed to load")
        return self.endpoint.codec.decode_exception(self._load_exception, self.endpoint.known_exceptions)

    def resolve(self, name: str):
        """The value for `name` (KeyError: the candidate has no such name)."""
        entry = self.names[name]
        if type(entry) is not list or not entry or type(entry[0]) is not str:
            raise KeyError(name)
        kind = entry[0]
        if kind == "module" and len(entry) == 2 and type(entry[1]) is str:
            module = self._trusted_module(name, entry[1])
            if module is not None:
                return module
            raise KeyError(name)  # a module under a misleading name: not bound
        if kind == "exception" and len(entry) == 4:
            library = self._library_object(name, entry[1], entry[2])
            if library is not None:
                return library
            bases = entry[3] if type(entry[3]) is list else []
            base = next(
                (
                    getattr(builtins, b)
                    for b in bases
                    if type(b) is str
                    and isinstance(getattr(builtins, b, None), type)
                    and issubclass(getattr(builtins, b), BaseException)
                ),
                Exception,
            )
            return self.remote.stand_in_exception(name, base, self.endpoint.known_exceptions)
        own_code = False
        if kind == "callable" and len(entry) == 3:
            library = self._library_object(name, entry[1], entry[2])
            if library is not None:
                return library
            own_code = entry[1] in ("program", "solution") and entry[2] == name
        value = self.values[name] if name in self.values else self.endpoint.request("lookup", name=name)
        if isinstance(value, self.remote.RemoteObject) and not own_code and self._module_like(name):
            # `np = MagicMock()`: an object of the candidate's under a module's name would answer every
            # `np.testing.assert_...` the tests make without raising. Only the real module is bound there.
            raise KeyError(name)
        return value

    def shadows(self, name: str) -> bool:
        """Whether the candidate bound `name` to a definition of its own (a class, function or object of
        its program, or one claiming a library it is not in), not to a module or an installed library's
        object."""
        entry = self.names.get(name)
        if type(entry) is not list or not entry or entry[0] == "module":
            return False
        if entry[0] in ("callable", "exception") and len(entry) >= 3:
            return self._library_object(name, entry[1], entry[2]) is None
        return True

    def _module_like(self, name: str) -> bool:
        """A name the tests would take for a module: a conventional alias, or an installed module's name."""
        if name in MODULE_ALIASES:
            return True
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):
            return False
        return spec is not None

    def library_class(self, module_name: str, qualname: str) -> type | None:
        """The class an installed library (not the candidate, not a mocking library) defines under this
        name, as this process has it already; None otherwise. Never imports anything: the name is the
        candidate's word (a class claiming the module `unittest.__main__` would run test discovery here).
        A claim only a forgery makes is refused and reported: a dunder in it (`math` / `pi.__class__`
        would reach `float`), or a class the channel always carries as data (a real DataFrame never comes
        as a handle, so a handle claiming to be one would pass `isinstance` and answer `df.equals`)."""
        if not module_name or module_name in ("program", "solution") or "<" in qualname:
            return None
        if _forged_name(module_name, qualname):
            self.refuse(f"an object of the candidate's claims the class {_clip_name(module_name, qualname)}", REFUSED)
            return None
        cls = self._loaded_class(module_name, qualname)
        if cls is not None and self.remote.carried_as_data(cls):
            self.refuse(f"an object of the candidate's claims the class {_clip_name(module_name, qualname)}", REFUSED)
            return None
        return cls

    def library_exception(self, module_name: str, name: str) -> type | None:
        """The exception class an installed library defines under this name, already imported here (the
        candidate chose only which library exception it raised, as it could in process); never a test
        framework's own (`unittest.SkipTest` would skip, `_pytest`'s outcomes end the run): a stand-in."""
        if module_name.split(".")[0] in _FRAMEWORKS or _forged_name(module_name, name):
            return None
        cls = _own_attribute(self._loaded_module(module_name), name)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return None
        return cls if (cls.__module__, cls.__qualname__) == (module_name, name) else None

    def _loaded_class(self, module_name: str, qualname: str) -> type | None:
        """The class `module_name`.`qualname` of a library module already imported here, found through the
        namespaces themselves (no module `__getattr__`, which may import), and only if the class says the
        same of itself; None otherwise (builtins and mocking libraries included)."""
        if module_name.split(".")[0] in UNTRUSTED_LIBRARIES:
            return None
        value = self._loaded_module(module_name)
        for part in qualname.split("."):
            value = _own_attribute(value, part)
            if not isinstance(value, type):
                return None
        same = getattr(value, "__module__", None) == module_name and getattr(value, "__qualname__", None) == qualname
        return value if same and not issubclass(value, BaseException) else None

    def _loaded_module(self, module_name: str):
        """`sys.modules[module_name]` if it is the interpreter's or an installed library's module; never imported."""
        module = sys.modules.get(module_name)
        if not isinstance(module, types.ModuleType):
            return None
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None) or ""
        if not (origin in ("built-in", "frozen") or (type(origin) is str and origin.startswith(self.trusted_roots))):
            return None
        return module

    def _trusted_module(self, name: str, module_name: str):
        """The module for a name the tests use, where the candidate bound a module to it. Imported only when
        the module is the one the tests' own name means (`json`, or `np` -> numpy): then the name chose it,
        not the candidate; any other module (`from matplotlib import pyplot`) only if already imported."""
        if _forged_name(module_name, ""):
            self.refuse(f"a name of the candidate's claims the module {_clip_name(module_name, '')}", REFUSED)
            return None
        if module_name.split(".")[0] in UNTRUSTED_LIBRARIES or module_name in UNTRUSTED_LIBRARIES:
            return None
        if name != module_name.rsplit(".", 1)[-1] and MODULE_ALIASES.get(name) != module_name:
            return None
        if module_name in (name, MODULE_ALIASES.get(name)):
            return self.import_library(module_name)
        return self._loaded_module(module_name)

    def _library_object(self, name: str, module_name: object, qualname: object):
        """An installed library's function or class the candidate bound to `name` (its `__module__` and
        `__qualname__` are the candidate's word): the same object of a module already imported here."""
        if type(module_name) is not str or type(qualname) is not str or not module_name or "." in qualname:
            return None
        if module_name in ("program", "solution"):
            return None
        if _forged_name(module_name, qualname):
            note = f"the candidate's {_clip_name(name, '')} claims to be {_clip_name(module_name, qualname)}"
            self.refuse(note, REFUSED)
            return None
        if module_name.split(".")[0] in UNTRUSTED_LIBRARIES or qualname != name:
            return None
        module = self._loaded_module(module_name)
        return _own_attribute(module, qualname) if module is not None else None

    def import_library(self, module_name: str):
        try:
            spec = importlib.util.find_spec(module_name)
        except (ImportError, ValueError, AttributeError):
            return None
        origin = getattr(spec, "origin", None) or ""
        if spec is None or not (origin in ("built-in", "frozen") or origin.startswith(self.trusted_roots)):
            return None  # only the interpreter's and installed libraries' modules
        try:
            return importlib.import_module(module_name)
        except BaseException:  # noqa: BLE001
            return None


def _forged_name(module_name: str, qualname: str) -> bool:
    """A module or class name no library object has: a dunder part (`unittest.__main__`, `pi.__class__`).
    (The candidate's own names, `program` and `solution`, are never asked about.)"""
    parts = module_name.split(".") + (qualname.split(".") if qualname else [])
    return any(len(p) > 4 and p.startswith("__") and p.endswith("__") for p in parts)


def _clip_name(module_name: str, qualname: str) -> str:
    return (module_name + ("." + qualname if qualname else ""))[:120]


_MISSING = object()


def _own_attribute(owner, name: str):
    """`name` from the namespace of a module or class itself (no `__getattr__`, no descriptors run)."""
    try:
        value = vars(owner).get(name, _MISSING) if owner is not None else _MISSING
    except TypeError:
        return None
    return None if value is _MISSING else value


def used_names(source: str) -> set[str]:
    """Names the test code reads but does not define at module level (candidate's names it relies on)."""
    tree = _parse(source)
    return set() if tree is None else _free_names(tree)


def modules_used(source: str) -> dict[str, str]:
    """The names the test code uses as modules (`np.testing...`) without importing or defining them, each
    with the module it means (`np` -> numpy, `json` -> json). Such a name must be that library in the
    tests' namespace: the candidate's own definition under it (a class `np` whose attributes do nothing)
    would turn the tests' checks into no-ops (BigCodeBench/241)."""
    tree = _parse(source)
    if tree is None:
        return {}
    bases = {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    out = {}
    for name in sorted(_free_names(tree) & bases):
        module = MODULE_ALIASES.get(name) or (name if _installed(name) else None)
        if module is not None:
            out[name] = module
    return out


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None  # a top-level name: finds, imports nothing
    except (ImportError, ValueError, AttributeError):
        return False


def _parse(source: str):
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _free_names(tree) -> set[str]:
    loaded, defined = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loaded.add(node.id)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in loaded - defined if not hasattr(builtins, n)}


def shadowed_module_note(name: str, module: str) -> str:
    """The tamper note for a candidate definition under a module's name the tests use (both paths)."""
    return f"shadowed module: the program's own {name!r} stands where the tests use the module {module}"


def shadows_in_process(namespace: dict, modules: dict[str, str]) -> list[str]:
    """In process: the names of `modules` (modules_used) the program bound to something that is neither a
    module the interpreter loaded nor an object an installed library defines under its own name."""
    return [name for name in sorted(modules) if name in namespace and not _library_value(namespace[name])]


def _library_value(value) -> bool:
    try:  # in process the candidate's own class answers these attribute reads
        if isinstance(value, types.ModuleType):
            return sys.modules.get(getattr(value, "__name__", None)) is value  # not a fresh module object
        module_name, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    except Exception:  # noqa: BLE001 - a value that refuses to say what it is is not a library's
        return False
    if type(module_name) is not str or type(qualname) is not str or module_name in ("program", "solution"):
        return False
    return _own_attribute(sys.modules.get(module_name), qualname) is value


def bind(namespace: dict, candidate: Candidate, names, keep_builtins: bool = True, modules=None) -> None:
    """Bind the candidate's `names` for the tests. `modules` (modules_used): names the tests use as modules,
    where a definition of the candidate's own is refused (reported) and not bound."""
    modules = modules or {}
    for name in sorted(names):
        if (keep_builtins and hasattr(builtins, name)) or name.startswith("__"):
            continue  # the tests keep the real builtins, whatever the candidate named its own things
        if name in modules and candidate.shadows(name):
            candidate.refuse(shadowed_module_note(name, modules[name]), "shadowed_module")
            continue
        try:
            namespace[name] = candidate.resolve(name)
        except KeyError:
            pass


def solution_module(candidate: Candidate, path: str, modules: dict | None = None) -> types.ModuleType:
    """`solution` for a KodCode test file: the candidate's public names, resolved. `path`: where the
    candidate's process wrote it (named in an import error, as in process)."""
    module = types.ModuleType("solution")
    module.__file__ = path
    public = [n for n in candidate.names if not n.startswith("_")]
    # `from solution import sum` gets the candidate's `sum`, as asked; `from solution import *` (every
    # KodCode test starts with it) never shadows a builtin the tests use (`abs(got - want) < eps`).
    bind(module.__dict__, candidate, public, keep_builtins=False, modules=modules)
    module.__all__ = [n for n in public if n in module.__dict__ and not hasattr(builtins, n)]
    return module


def _describe(e: BaseException) -> str:
    try:
        return f"{type(e).__name__}: {e}"[:600]
    except BaseException:  # noqa: BLE001
        return type(e).__name__
