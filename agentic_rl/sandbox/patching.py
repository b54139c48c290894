"""A test's patches, applied in the candidate's process too (out of process; issue #47).

Standard library only (loaded by path by harness.py under the sandbox interpreter).

Out of process a test's `mock.patch('requests.get')` would replace `requests.get` in the tests' process
only, where the candidate's code never looks it up: its check "the URL was fetched once" would fail, and
"nothing was deleted" (`os.remove` patched) would pass vacuously. So every patch the test makes on a
module or a class is made in the candidate's process as well, through the channel:

* `unittest.mock`'s `patch`, `patch.object`, `patch.multiple` (its `_patch.__enter__` / `__exit__`,
  wrapped in the tests' process) and `patch.dict` on `os.environ` or on a dict named by a string;
* hand-made patches: an attribute of a module that the test code assigns (`os.remove = fake`), found
  in its syntax tree, whose module's class becomes one that forwards those assignments.

The target crosses as a reference the candidate's process resolves in its own modules (`requests.get`,
`matplotlib.axes._axes.Axes.hist`: the tests' words, never the candidate's), or as the candidate's own
object going home; the new value as data, as a reference (a library function), or as a handle to the
tests' object (a mock, a function of the test): the mock stays in the tests' process, the candidate's
calls of it arrive as requests with their arguments as data, and the test reads the calls it recorded
there. The candidate may call such a mock and read the attributes the test configured, never the mock's
own API (remote.py: `reset_mock`, `call_args_list`, `side_effect` are not served), so it cannot erase the
calls it made.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
import threading
import types

_MISSING = object()
# The names of the candidate's module in the tests' process (unittest/HumanEval, pytest).
CANDIDATE_MODULES = ("program", "solution")


# --------------------------------------------------------------------------------------------------
# the candidate's side


class CandidatePatches:
    """Applies the tests' patches to the candidate's own modules and objects, and undoes them."""

    def __init__(self, endpoint) -> None:
        self.endpoint = endpoint
        self._undo: dict[int, tuple] = {}
        endpoint.extra_ops = {
            "patch": self.patch,
            "patch_dict": self.patch_dict,
            "unpatch": self.unpatch,
            "bind_imports": self.bind_imports,
        }
        endpoint.resolve_ref = resolve_ref
        endpoint.resolve_exception = _own_exception_class

    def patch(self, msg: dict) -> int:
        """Set (or delete) one attribute; the token that undoes it."""
        target = self.endpoint.codec.decode(msg.get("target"))
        name = msg.get("name")
        if type(name) is not str:
            raise TypeError("malformed patch")
        old = _current(target, name)
        if msg.get("delete") is True:
            delattr(target, name)
        else:
            setattr(target, name, self.endpoint.codec.decode(msg.get("value")))
        return self._keep(("attr", target, name, old))

    def patch_dict(self, msg: dict) -> int:
        """`patch.dict`: update (after clearing, if asked) one of the candidate's dicts."""
        target = self.endpoint.codec.decode(msg.get("target"))
        values = self.endpoint.codec.decode(msg.get("values"))
        original = dict(target)
        if msg.get("clear") is True:
            target.clear()
        target.update(values)
        return self._keep(("dict", target, None, original))

    def unpatch(self, msg: dict) -> None:
        kind, target, name, old = self._undo.pop(msg.get("token"), (None, None, None, None))
        if kind == "dict":
            target.clear()
            target.update(old)
        elif kind == "attr" and old is _MISSING:
            try:
                delattr(target, name)
            except AttributeError:
                pass
        elif kind == "attr":
            setattr(target, name, old)

    def bind_imports(self, msg: dict) -> None:
        """The tests' top-level imports, bound in the candidate's module as well (test_imports)."""
        namespace = vars(sys.modules[CANDIDATE_MODULES[0]])
        for entry in msg.get("imports") or []:
            try:
                module, name, bound = entry
                value = importlib.import_module(module)
                if name is not None and hasattr(value, name):
                    value = getattr(value, name)
                elif name is not None:  # `from a import b` of a submodule not yet imported
                    value = importlib.import_module(f"{module}.{name}")
                namespace[bound] = value
            except Exception:  # noqa: BLE001 - the tests' side raises the same import error where the tests load
                continue

    def _keep(self, entry: tuple) -> int:
        token = max(self._undo, default=0) + 1
        self._undo[token] = entry
        return token


def _current(target, name: str):
    """The attribute as the target itself holds it (a class's own, not inherited), for the undo."""
    if isinstance(target, (type, types.ModuleType)):
        return vars(target).get(name, _MISSING)
    return getattr(target, name, _MISSING)


def top_level_imports(source: str | ast.AST):
    """(the module's full name, the name imported from it or None, the alias or None) for each name the test code's
    top-level import statements import, absolute ones only (`import os.path` -> ("os.path", None, None);
    `from string import punctuation as p` -> ("string", "punctuation", "p"))."""
    for node in parse(source).body:
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None, a.asname
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                yield node.module, a.name, a.asname


def test_imports(source: str) -> list[list]:
    """[module, name or None, the name bound] for each import statement at the top level of the test code
    (`from string import punctuation` -> ["string", "punctuation", "punctuation"]; `import os.path` ->
    ["os", None, "os"]). BigCodeBench's tests are appended to the program, so a program may use a name only
    the tests import (BigCodeBench/1085 uses `punctuation`): out of process these imports are bound in the
    candidate's module too, before the tests run, as they were when the two were one file. The candidate
    learns the names of modules the tests import, none of their values."""
    out = []
    for module, name, alias in top_level_imports(source):
        if name is None:
            out.append([module, None, alias] if alias else [module.split(".")[0], None, module.split(".")[0]])
        elif name != "*":
            out.append([module, name, alias or name])
    return out


def _own_exception_class(module: str, name: str) -> type | None:
    """The candidate's process's class of an exception the tests' side raised into it (a mock's side effect)."""
    try:
        cls = resolve_ref(f"{module}.{name}")
    except Exception:  # noqa: BLE001 - no such class here: a stand-in
        return None
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


def resolve_ref(dotted: str):
    """The candidate's object a reference of the tests names (`os.path.exists`): resolved in the
    candidate's own process, where importing is only what its code could do anyway."""
    return pkgutil.resolve_name(dotted)


# --------------------------------------------------------------------------------------------------
# the tests' side


class PatchForwarding:
    """Forwards the tests' patches to the candidate's process (see the module's docstring)."""

    def __init__(self, endpoint, remote) -> None:
        self.endpoint, self.remote = endpoint, remote
        self._tokens: dict[int, list[int]] = {}  # id(patcher) -> the candidate's undo tokens, innermost last
        self._assigned: dict[int, set[str]] = {}  # id(module) -> the attribute names the test assigns

    def install(self) -> None:
        """Wrap unittest.mock's patchers in this (the tests') process."""
        import unittest.mock as mock

        forwarding = self
        enter, exit_, patch_dict, unpatch_dict = (
            mock._patch.__enter__,
            mock._patch.__exit__,
            mock._patch_dict._patch_dict,
            mock._patch_dict._unpatch_dict,
        )

        def patch_enter(patcher):
            result = enter(patcher)
            forwarding._forward_attribute(patcher, patcher.target, patcher.attribute)
            return result

        def patch_exit(patcher, *exc_info):
            try:
                return exit_(patcher, *exc_info)
            finally:
                forwarding._undo(patcher)

        def dict_enter(patcher):
            named = patcher.in_dict if isinstance(patcher.in_dict, str) else None
            patch_dict(patcher)
            forwarding._forward_dict(patcher, named)

        def dict_exit(patcher):
            try:
                unpatch_dict(patcher)
            finally:
                forwarding._undo(patcher)

        mock._patch.__enter__, mock._patch.__exit__ = patch_enter, patch_exit
        mock._patch_dict._patch_dict, mock._patch_dict._unpatch_dict = dict_enter, dict_exit

    def bind_test_imports(self, source: str) -> None:
        """Bind the tests' top-level imports in the candidate's module (test_imports)."""
        imports = test_imports(source)
        if imports:
            self.endpoint.request("bind_imports", imports=imports)

    def forward_assignments(self, namespace: dict, source: str) -> None:
        """Hand-made patches: each module whose attribute the test code assigns or deletes (`os.remove =
        fake`, `setattr(os, 'remove', fake)`) forwards those assignments from now on."""
        forwarding = self

        class ForwardingModule(types.ModuleType):
            def __setattr__(self, name, value):
                types.ModuleType.__setattr__(self, name, value)
                if name in forwarding._assigned.get(id(self), ()):
                    forwarding._send_patch(self, name, value)

            def __delattr__(self, name):
                types.ModuleType.__delattr__(self, name)
                if name in forwarding._assigned.get(id(self), ()):
                    forwarding._send_patch(self, name, _MISSING)

        for chain, name in assigned_attributes(source):
            module = _module_at(namespace, chain)
            if module is not None and type(module) is types.ModuleType:
                self._assigned.setdefault(id(module), set()).add(name)
                module.__class__ = ForwardingModule

    def _forward_attribute(self, patcher, target, name: str) -> None:
        ref = self.reference(target)
        if ref is None:
            return  # the tests' own object: nothing of the candidate's to patch
        value = _current(target, name)
        token = self._send_patch(target, name, getattr(target, name, _MISSING) if value is _MISSING else value)
        if token is not None:
            self._tokens.setdefault(id(patcher), []).append(token)

    def _forward_dict(self, patcher, named: str | None) -> None:
        import os

        ref = {"$ref": named} if named is not None else None
        if patcher.in_dict is os.environ:
            ref = {"$ref": "os.environ"}
        if ref is None:
            return  # a dict of the tests' own
        values = self.endpoint.codec.encode(dict(patcher.values))
        token = self.endpoint.request("patch_dict", target=ref, values=values, clear=bool(patcher.clear))
        self._tokens.setdefault(id(patcher), []).append(token)

    def _send_patch(self, target, name: str, value) -> int | None:
        ref = self.reference(target)
        if ref is None:
            return None
        if value is _MISSING:
            return self.endpoint.request("patch", target=ref, name=name, delete=True)
        encoded = self.value(value)
        if encoded is None:
            return None  # a value the candidate may not hold (a builtin of the tests' process)
        return self.endpoint.request("patch", target=ref, name=name, value=encoded)

    def _undo(self, patcher) -> None:
        tokens = self._tokens.get(id(patcher))
        if tokens:
            try:
                self.endpoint.request("unpatch", token=tokens.pop())
            except self.remote.ChannelClosed:
                pass  # the candidate is gone: nothing left to undo there

    def reference(self, obj) -> object | None:
        """How the candidate's process finds its own counterpart of `obj`: one of its objects going home,
        or a module or library class or function by its dotted name; None for the tests' own objects."""
        if isinstance(obj, self.remote.RemoteObject):
            return self.endpoint.codec.encode(obj) if obj._endpoint is self.endpoint else None
        if isinstance(obj, types.ModuleType):
            name = getattr(obj, "__name__", None)
            return {"$ref": name} if type(name) is str and sys.modules.get(name) is obj else None
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if type(module) is not str or type(qualname) is not str or "<" in qualname:
            return None
        if module.split(".")[0] in CANDIDATE_MODULES or _named(module, qualname) is not obj:
            return None
        return {"$ref": f"{module}.{qualname}"}

    def value(self, value) -> object | None:
        """A patch's new value, encoded for the candidate: a library object by reference, the test's own
        functions and mocks and data as the channel carries them; None for a builtin of this process
        (`os.system`'s counterpart is the candidate's own; a handle to ours would run its calls here)."""
        ref = self.reference(value)
        if ref is not None:
            return ref
        if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType, types.ModuleType)):
            return None
        return self.endpoint.codec.encode(value)


def _named(module: str, qualname: str):
    """The object `module`.`qualname` of an already imported module (nothing imported), else None."""
    value = sys.modules.get(module)
    for part in qualname.split("."):
        value = vars(value).get(part) if isinstance(value, (type, types.ModuleType)) else None
    return value


def _module_at(namespace: dict, chain: str):
    """The module a dotted name of the test's namespace means (`os.path`), through modules only."""
    head, *rest = chain.split(".")
    value = namespace.get(head)
    for part in rest:
        value = vars(value).get(part) if isinstance(value, types.ModuleType) else None
    return value if isinstance(value, types.ModuleType) else None


def assigned_attributes(source: str | ast.AST) -> set[tuple[str, str]]:
    """(dotted base, attribute) for each attribute of a dotted name the test code (its source or syntax
    tree) assigns or deletes (`os.path.exists = f` -> ("os.path", "exists"); `setattr(os, "remove", f)`)."""
    tree = parse(source)
    out = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            base, name = (node.args + [None, None])[:2]
            chain = dotted(base)
            if chain and isinstance(name, ast.Constant) and isinstance(name.value, str):
                out.add((chain, name.value))
        for target in targets:
            chain = dotted(target.value) if isinstance(target, ast.Attribute) else None
            if chain:
                out.add((chain, target.attr))
    return out


def dotted(node) -> str | None:
    """`a.b.c` for a name or an attribute chain rooted at a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def patched_names(source: str) -> set[str]:
    """The candidate's names the test patches by a literal target in its module (`patch('program.randint')`,
    `patch(__name__ + '.randint')`): the tests' namespace needs them bound, as the candidate's process has."""
    tree = parse(source)
    out = set()
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            head, _, rest = node.value.partition(".")
            text = rest if head in CANDIDATE_MODULES else None
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and dotted(node.left) == "__name__":
            right = node.right
            if isinstance(right, ast.Constant) and isinstance(right.value, str) and right.value.startswith("."):
                text = right.value[1:]
        if text and text.split(".")[0].isidentifier():
            out.add(text.split(".")[0])
    return out


# CPython 3.11's ast.parse is not safe to call from several threads at once ("SystemError: AST constructor
# recursion depth mismatch"), and the trusted process's grading threads parse tests concurrently (routing in
# trust.py, splitting in split.py, the patches here): every parse there goes through this one lock.
PARSE_LOCK = threading.Lock()


def parse(source: str | ast.AST) -> ast.AST:
    """The source's syntax tree, one parse at a time; an empty module when it does not parse."""
    if isinstance(source, ast.AST):
        return source
    try:
        with PARSE_LOCK:
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ast.Module(body=[], type_ignores=[])
