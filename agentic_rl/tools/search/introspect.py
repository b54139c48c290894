"""Standalone API introspection, run with the *sandbox's* interpreter (standard library only).

This file must not import agentic_rl nor any third-party package at module level: the pydoc
backend runs its source with `python -c` under the interpreter the agent's code will run with
(possibly a separate venv), so the index describes exactly the library versions the model can use.

Usage (what the backend does):
    python -c "<this source>" probe CONFIG.json OUT.json   # cheap: which modules exist, versions
    python -c "<this source>" build CONFIG.json OUT.json   # import + walk modules, emit entries

CONFIG.json keys (all optional except modules):
    modules: list of module names to index, e.g. ["collections", "pandas", "matplotlib.pyplot"]
    max_depth: how many levels of submodules to follow below a listed module (default 0)
    exclude: qualified names of submodules not to follow (e.g. "numpy.ma")
    max_entries_per_module: cap on entries contributed by one listed module (default 6000)
    max_members_per_class: cap on members indexed for one class (default 500)
    max_doc_chars: cap on the first docstring paragraph (default 400)
    max_extra_chars: cap on the further description text used for ranking only (default 300)
    module_timeout_s: wall-clock budget for importing and walking one listed module (default 60)
    usage: count how often names are used in the Python sources that ship with the standard
        library and the indexed packages (their own tests included), for the popularity prior
        (default true)
    usage_max_bytes: cap on the source bytes read per package, and for the standard library
        (default 40 MB)
    usage_aliases: {alias: name} read as the name when counting dotted uses (pd -> pandas)

Each entry: {"name", "module", "kind", "signature", "doc", "extra"} (module: the walked module
the name starts with); kind is one of
module | class | function | method | property | attribute | data.
"""

import contextlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import io
import json
import os
import re
import signal
import sys
import time
import types
import warnings
from typing import Any

SKIP_SUBMODULES = {
    "tests",
    "test",
    "testing",
    "conftest",
    "core",
    "compat",
    "internals",
    "libs",
    "setup",
    "version",
    "distutils",
    "f2py",
    "externals",
    "fixes",
    "tools",
    "lib",
    "config",
    "cbook",
    "backends",
    "sphinxext",
    "testing_utils",
    "deprecated",
}
SIMPLE_DATA = (int, float, complex, str, bytes, bool, frozenset, tuple, type(None))
SECTION_RE = re.compile(
    r"^\s*(Parameters|Returns|Yields|Raises|Examples?|See Also|Notes|References|Attributes|"
    r"Methods|Other Parameters|Args|Arguments|Keyword Arguments|Warnings?|Usage)\s*:?\s*$"
    r"|^\s*[-=]{3,}\s*$|^\s*:(param|type|return|rtype|raises)\b|^\s*>>>",
    re.MULTILINE,
)
# A dotted chain of identifiers in source text: np.linalg.norm, df.groupby, defaultdict
CHAIN_RE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
USAGE_SKIP_DIRS = {
    "site-packages",
    "dist-packages",
    "__pycache__",
    "idlelib",
    "tkinter",
    "turtledemo",
    "lib2to3",
    "ensurepip",
    "pydoc_data",
}
SIG_LINE_RE = re.compile(r"^[A-Za-z_][\w.]*\s*\(.*\)\s*(-+>.*)?$", re.DOTALL)


class ModuleTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise ModuleTimeout()


def first_paragraphs(doc):
    """(first paragraph, further description up to the first section header)."""
    if not doc:
        return "", ""
    m = SECTION_RE.search(doc)
    head = doc[: m.start()] if m else doc
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", head.strip()) if p.strip()]
    if not paras:
        return "", ""
    return paras[0], " ".join(paras[1:])


def safe_doc(obj):
    try:
        doc = inspect.getdoc(obj)
    except Exception:
        doc = None
    return doc if isinstance(doc, str) else ""


def safe_signature(obj):
    """The signature without annotations: '(self, by=None, *, sort=True)' reads better than the
    fully annotated form and costs the model fewer tokens."""
    try:
        sig = inspect.signature(obj)
    except Exception:
        return ""
    try:
        params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
        sig = sig.replace(parameters=params, return_annotation=inspect.Signature.empty)
    except Exception:
        pass
    try:
        return str(sig)
    except Exception:
        return ""


def clean_signature(sig):
    """One line, no '--> result' tail (from C docstrings), no memory addresses (stable index)."""
    sig = re.split(r"\s*-+>\s*", sig, maxsplit=1)[0] if "->" in sig else sig
    sig = re.sub(r" at 0x[0-9a-fA-F]+>", ">", sig)
    return " ".join(sig.split())


def clip(text, n):
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


class Walker:
    def __init__(self, cfg):
        self.max_depth = int(cfg.get("max_depth", 0))
        self.max_entries = int(cfg.get("max_entries_per_module", 6000))
        self.max_members = int(cfg.get("max_members_per_class", 500))
        self.max_doc = int(cfg.get("max_doc_chars", 400))
        self.max_extra = int(cfg.get("max_extra_chars", 300))
        self.entries = []
        self.names = set()
        self.seen_ids = {}  # id(object) -> names it was indexed under (functions, classes)
        self.keep_alive = []  # ids are only unique while the objects live
        self.visited_modules = set()
        self.public_classes = set()  # ids of classes exported by a walked module
        self.subclass_counts = {}
        self.exclude = set(cfg.get("exclude", ()))
        self.budget = 0
        self.module = ""  # the module being walked: entries record where they were found

    # -- entries -------------------------------------------------------------
    def add(self, name, kind, obj, signature=None, doc=None, module=None):
        if name in self.names or self.budget <= 0:
            return False
        if doc is None:
            doc = safe_doc(obj)
        first, extra = first_paragraphs(doc)
        if not first and kind == "data":
            first = f"{type(obj).__name__} instance."
        if signature is None:
            signature = safe_signature(obj) if kind in ("class", "function", "method") else ""
        short = name.rsplit(".", 1)[-1]
        # C functions often start their docstring with a signature line: use it, keep the prose.
        if first and SIG_LINE_RE.match(first) and first.split("(", 1)[0].strip().endswith(short):
            if not signature:
                signature = "(" + first.split("(", 1)[1]
                signature = signature.rstrip()
            first, _, extra = extra.partition(". ")
            first = (first + ".") if first and not first.endswith(".") else first
        signature = clean_signature(signature)
        self.entries.append(
            {
                "name": name,
                "module": module or self.module,
                "kind": kind,
                "signature": signature,
                "doc": clip(first, self.max_doc),
                "extra": clip(extra, self.max_extra),
            }
        )
        self.names.add(name)
        self.budget -= 1
        return True

    # -- walking -------------------------------------------------------------
    def public_names(self, mod):
        """(sorted public names, the subset the module declares in __all__).

        __all__ is often incomplete (pandas.api.types lists 6 of ~60 functions), so the other
        public attributes are kept too when they are defined in this module (see walk_module)."""
        declared = getattr(mod, "__all__", None)
        if not isinstance(declared, (list, tuple)) or not all(isinstance(n, str) for n in declared):
            declared = ()
        try:
            present = [n for n in dir(mod) if not n.startswith("_")]
        except Exception:
            present = []
        declared = set(n for n in declared if not n.startswith("_"))
        return sorted(declared | set(present)), declared

    def walk_module(self, mod, name, root, depth):
        """Index a module's public API (`module_objects`), then walk its submodules up to `max_depth`."""
        if name in self.visited_modules or self.budget <= 0:
            return
        self.visited_modules.add(name)
        self.module = name
        self.add(name, "module", mod, signature="")
        submodules = self.index_objects(self.module_objects(mod, name, root), mod, name, root, depth)
        for sub, qual in submodules:
            if qual not in self.exclude:
                self.walk_module(sub, qual, root, depth + 1)

    def module_candidates(self, mod, root):
        """(attr, obj, defined here?, defined in this package?) for each public name of the module."""
        names, declared = self.public_names(mod)
        # The module's own name decides what counts as "defined here" when there is no __all__:
        # matplotlib.pyplot re-exports Figure/Axes, which belong to matplotlib.figure/axes.
        own = mod.__name__
        candidates = []
        for attr in names:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    obj = getattr(mod, attr)
            except Exception:
                continue
            owner = getattr(obj, "__module__", None) if (inspect.isclass(obj) or callable(obj)) else None
            if attr in declared:
                candidates.append((attr, obj, True, True))
            elif isinstance(owner, str):
                owner = owner.lstrip("_")  # bisect's functions live in _bisect
                here = owner == own or owner.startswith(own + ".")
                if own == "builtins" and owner != "sitebuiltins":
                    here = True  # open is io.open, but code calls it as a builtin (site's exit/help are not API)
                candidates.append((attr, obj, here, owner.split(".")[0] == root))
            elif inspect.isbuiltin(obj) and owner is None:
                candidates.append((attr, obj, True, True))  # C functions that name no module: cv2.imread
            elif (
                isinstance(obj, (types.ModuleType,) + SIMPLE_DATA)
                or _is_enum_member(obj)
                or str(getattr(type(obj), "__module__", "")).split(".")[0] == root
            ):
                candidates.append((attr, obj, True, True))
        return candidates

    def module_objects(self, mod, name, root):
        """(attr, obj) for what the module defines, or for anything from its package where the module is a
        facade; the classes among them are remembered as public (`maybe_walk_instance`)."""
        candidates = self.module_candidates(mod, root)
        # A package's top level, `*.api` modules and pure facades (keras.layers re-exports
        # keras.src.*) define nothing themselves: there, anything from the package counts.
        broad = (
            "." not in name
            or name.endswith(".api")
            or not any(here for _, obj, here, _ in candidates if inspect.isclass(obj) or inspect.isroutine(obj))
        )
        objects = []
        for attr, obj, here, same_package in candidates:
            if not (here or (broad and same_package)):
                continue  # something the module merely imported from elsewhere
            objects.append((attr, obj))
            if inspect.isclass(obj) and id(obj) not in self.seen_ids:
                self.public_classes.add(id(obj))
                self.keep_alive.append(obj)
        return objects

    def index_objects(self, objects, mod, name, root, depth):
        """Add an entry per object (classes walked, constants and package-typed data described) and return the
        (submodule, qualified name) pairs to walk next."""
        submodules = []
        for attr, obj in objects:
            if self.budget <= 0:
                break
            qual = f"{name}.{attr}"
            if isinstance(obj, types.ModuleType):
                sub_name = getattr(obj, "__name__", "")
                if (
                    depth < self.max_depth
                    and attr not in SKIP_SUBMODULES
                    and sub_name.startswith(mod.__name__ + ".")
                    and not any(p.startswith("_") for p in sub_name.split("."))
                ):
                    submodules.append((obj, qual))
                continue
            if inspect.isclass(obj) or callable(obj):
                # One entry per object and exported name: numpy.argsort is also
                # numpy.core.fromnumeric.argsort (skipped), but the function numpy.concat is
                # an alias of numpy.concatenate (both kept, a model may look for either).
                seen = self.seen_ids.setdefault(id(obj), set())
                if attr in seen or (seen and inspect.isclass(obj)):
                    continue  # a class alias (typing.Text is str) would repeat every method
                seen.add(attr)
                self.keep_alive.append(obj)
                if inspect.isclass(obj):
                    if self.add(qual, "class", obj):
                        self.walk_class(obj, qual, root, nested=0)
                else:
                    self.add(qual, "function", obj)
                    self.maybe_walk_instance(obj, qual, root)
            elif isinstance(obj, SIMPLE_DATA) or _is_enum_member(obj):
                self.add(qual, "data", obj, doc=f"Constant {attr} = {clip(repr(obj), 80)}")
            elif str(getattr(type(obj), "__module__", "")).split(".")[0] == root:
                self.add(qual, "data", obj)  # os.environ, pandas.NaT: documented by their class
        return submodules

    def maybe_walk_instance(self, obj, qual, root):
        """Callable module-level instances of a package's private class (scipy.stats.norm):
        index their methods under the instance's name (scipy.stats.norm.pdf)."""
        cls = type(obj)
        if (
            inspect.isroutine(obj)
            or isinstance(obj, (types.ModuleType, type))
            or id(cls) in self.public_classes
            or str(getattr(cls, "__module__", "")).split(".")[0] != root
        ):
            return
        self.walk_class(cls, qual, root, nested=1)

    def public_subclasses(self, cls):
        if id(cls) not in self.subclass_counts:
            subs: list[type]
            try:
                subs = type.__subclasses__(cls) if isinstance(cls, type) else []
            except Exception:
                subs = []
            self.subclass_counts[id(cls)] = sum(id(c) in self.public_classes for c in subs)
        return self.subclass_counts[id(cls)]

    def walk_class(self, cls, qual, root, nested):
        count = 0
        try:
            mro = inspect.getmro(cls)
            members = dir(cls)
        except Exception:
            return
        for attr in members:
            if attr.startswith("_") or count >= self.max_members or self.budget <= 0:
                continue
            owner = next((k for k in mro if attr in getattr(k, "__dict__", {})), None)
            if owner is None or owner is object:
                continue
            owner_root = str(getattr(owner, "__module__", "")).split(".")[0]
            if owner is not cls and (
                owner_root != root
                or (
                    id(owner) in self.public_classes
                    and (owner not in cls.__bases__ or self.public_subclasses(owner) > 3)
                )
            ):
                # inherited from another package or from builtins (dict.get on Counter), or
                # documented under its own public class (numpy.generic for every scalar type).
                # A direct public base with few public subclasses still counts:
                # datetime.datetime.strftime comes from datetime.date, Path.stem from PurePath.
                continue
            try:
                raw = inspect.getattr_static(cls, attr)
            except Exception:
                continue
            name = f"{qual}.{attr}"
            if isinstance(raw, property) or inspect.isdatadescriptor(raw) and not inspect.isclass(raw):
                doc = safe_doc(raw)
                if count < self.max_members and self.add(name, "property", raw, signature="", doc=doc):
                    count += 1
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    obj = getattr(cls, attr)
            except Exception:
                continue
            if inspect.isclass(obj):
                # nested classes and pandas-style accessors (DataFrame.plot, Series.str)
                if nested == 0 and str(getattr(obj, "__module__", "")).split(".")[0] == root:
                    if self.add(name, "class", obj, signature=""):
                        count += 1
                        self.walk_class(obj, name, root, nested=1)
                continue
            if callable(obj):
                if self.add(name, "method", obj):
                    count += 1
            elif isinstance(raw, SIMPLE_DATA) or _is_enum_member(raw):
                if self.add(name, "attribute", raw, doc=f"Constant {attr} = {clip(repr(raw), 80)}"):
                    count += 1


def _is_enum_member(obj):
    try:
        import enum

        return isinstance(obj, enum.Enum)
    except Exception:
        return False


def usage_source_dirs(modules):
    """Folders whose .py files show how names are used: the standard library, then the package
    folder of every indexed third-party module (with the tests it ships)."""
    import sysconfig

    dirs = [sysconfig.get_paths()["stdlib"]]
    stdlib_prefix = os.path.realpath(dirs[0]) + os.sep
    for name in modules:
        spec = module_root_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for loc in spec.submodule_search_locations:
            real = os.path.realpath(loc)
            if not real.startswith(stdlib_prefix) or "site-packages" in real:
                dirs.append(loc)
    return list(dict.fromkeys(dirs))


def usage_counts(cfg, entries):
    """How often the entries' names are used in the sources of usage_source_dirs().

    Returns {"last": {name: uses}, "pair": {"parent.name": uses}, "bytes": n}: `last` counts
    every appearance of an entry's last name component (defaultdict, groupby); `pair` counts a
    name right after its parent's (json.dumps, DataFrame.groupby, with aliases read as names:
    pd.read_csv counts as pandas.read_csv). Only names some entry has are counted.
    """
    aliases = cfg.get("usage_aliases") or {}
    max_bytes = int(cfg.get("usage_max_bytes", 40_000_000))
    lasts, pairs = set(), set()
    for entry in entries:
        parts = entry["name"].split(".")
        lasts.add(parts[-1])
        if len(parts) > 1:
            lasts.add(parts[-2])
            pairs.add(parts[-2] + "." + parts[-1])
    last_counts: dict[str, int] = {}
    pair_counts: dict[str, int] = {}
    total = 0
    for root in usage_source_dirs(cfg["modules"]):
        read = 0
        for folder, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d not in USAGE_SKIP_DIRS and not d.startswith("."))
            for fname in sorted(files):
                if not fname.endswith(".py") or read >= max_bytes:
                    continue
                try:
                    with open(os.path.join(folder, fname), encoding="utf-8", errors="ignore") as f:
                        text = f.read()
                except OSError:
                    continue
                read += len(text)
                for chain in CHAIN_RE.findall(text):
                    parts = chain.split(".")
                    for i, part in enumerate(parts):
                        if part in lasts:
                            last_counts[part] = last_counts.get(part, 0) + 1
                        if i:
                            prev = aliases.get(parts[i - 1], parts[i - 1]).rsplit(".", 1)[-1]
                            pair = prev + "." + part
                            if pair in pairs:
                                pair_counts[pair] = pair_counts.get(pair, 0) + 1
        total += read
    return {"last": last_counts, "pair": pair_counts, "bytes": total}


def module_root_spec(name):
    """(spec or None) for the top-level package of `name`, without importing it."""
    try:
        return importlib.util.find_spec(name.split(".")[0])
    except (ImportError, ValueError):
        return None


def dist_version(root):
    try:
        return importlib.metadata.version(root)
    except Exception:
        return None


def probe(cfg):
    """Cheap fingerprint of the listed modules as this interpreter would import them."""
    out: dict[str, dict[str, Any] | None] = {}
    for name in cfg["modules"]:
        root = name.split(".")[0]
        if root in out:
            continue
        spec = module_root_spec(root)
        if spec is None:
            out[root] = None
            continue
        origin = spec.origin if spec.origin not in (None, "built-in", "frozen") else None
        if origin is None and spec.submodule_search_locations:
            origin = list(spec.submodule_search_locations)[0]
        stat = None
        if origin and os.path.exists(origin):
            st = os.stat(origin)
            stat = [st.st_mtime_ns, st.st_size]
        out[root] = {"origin": origin or spec.origin, "stat": stat, "version": dist_version(root)}
    return {
        "executable": sys.executable,
        "version": sys.version,
        "implementation": sys.implementation.name,
        "modules": out,
    }


def build(cfg):
    walker = Walker(cfg)
    timeout = float(cfg.get("module_timeout_s", 60))
    statuses = {}
    use_alarm = hasattr(signal, "setitimer") and timeout > 0
    if use_alarm:
        signal.signal(signal.SIGALRM, _alarm)
    for name in cfg["modules"]:
        start = time.perf_counter()
        before = len(walker.entries)
        walker.budget = walker.max_entries
        status: dict[str, Any] = {"status": "ok"}
        try:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    mod = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                missing = exc.name or ""
                if missing and (name == missing or name.startswith(missing + ".")):
                    status = {"status": "absent", "error": f"No module named {missing!r}"}
                else:
                    status = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
                mod = None
            if mod is not None:
                with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    walker.walk_module(mod, name, name.split(".")[0], 0)
        except ModuleTimeout:
            status = {"status": "timeout", "error": f"gave up after {timeout:.0f}s (kept what was indexed)"}
        except BaseException as exc:  # a broken package must not sink the whole index
            if isinstance(exc, KeyboardInterrupt):
                raise
            status = {"status": "error", "error": f"{type(exc).__name__}: {clip(str(exc), 200)}"}
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
        status["entries"] = len(walker.entries) - before
        status["seconds"] = round(time.perf_counter() - start, 3)
        statuses[name] = status
    usage = usage_counts(cfg, walker.entries) if cfg.get("usage", True) else {}
    return {
        "executable": sys.executable,
        "version": sys.version,
        "modules": statuses,
        "entries": walker.entries,
        "usage": usage,
    }


def main(argv):
    mode, cfg_path, out_path = argv[:3]
    with open(cfg_path, encoding="utf-8") as f:
        cfg = json.load(f)
    result = probe(cfg) if mode == "probe" else build(cfg)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)


if __name__ == "__main__":
    # `python -c SOURCE mode cfg out` puts "-c" in argv[0]
    main(sys.argv[1:])
