"""In process (issue #47): the library names the tests read are the libraries, whatever the candidate rebound.

Standard library only; loaded by path by harness.py inside the sandboxed runner (next to judging.py).

The candidate shares the interpreter with the tests: `np.testing.assert_array_equal = lambda *a, **k: None`,
`math.isclose = print`, `vars(math)['pi'] = 0`, `pd.DataFrame.equals = lambda s, o: True` or a `mock.patch(...)
.start()` of its own turn the tests' checks into no-ops, or their expected values into its own. No audit event
covers a write to a module's or a class's attributes, so the writes are not watched: the reads are. `Genuine`
records, before any candidate runs, what every installed library module holds and what its classes hold (in the
zygote, for the preloaded libraries; as each later import finishes, for the rest), and the tests' code reads
its attributes through `attribute` (judging.py rewrites `a.b` in the tests' code; `from m import b` reads
`m.b` again after the import). A read from a recorded module, or from a recorded class in the MRO of the
object read (an instance's method, a class's attribute), that finds another value than the recorded one gets
the recorded value, unless the tests put that value there themselves (their `mock.patch`, pytest's
`monkeypatch.setattr`: `patched`; their own `m.name = v`: `wrote`); where the value found is the candidate's
code, the rebinding is reported (`tampered`, kind `shadowed_module`: a library name the tests use bound to the
candidate's definition). `sys` is not recorded: its attributes are the interpreter's state, which the test
frameworks rebind (`sys.stdout` under capture).
"""

from __future__ import annotations

import array
import builtins
import functools
import gc
import itertools
import operator
import sys
import types

_type, _id, _isinstance, _map, _tuple, _all, _is = type, id, isinstance, map, tuple, all, operator.is_
_ModuleType, _FunctionType, _MethodType = types.ModuleType, types.FunctionType, types.MethodType
_module_dict = types.ModuleType.__dict__["__dict__"].__get__  # past a module whose class the candidate replaced
_BuiltinFunctionType = types.BuiltinFunctionType
_mro = type.__dict__["__mro__"].__get__  # past a metaclass that could answer `cls.__mro__` itself
_class_dict = type.__dict__["__dict__"].__get__
_flags = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9  # a class made by `class`: its attributes can be set (built-in and C types cannot)
_MISSING = object()
_LOADED = "import {!r} # {!r}"  # importlib._bootstrap._load_unlocked's message once a module is loaded


class Genuine:
    """What the installed libraries held before the candidate ran, and the tests' reads judged against it.
    `untrusted(filename)`: code that is not the interpreter's or an installed library's; `is_tests(code)`: the
    tests' own code; `report(note, kind)`: a tamper event; `runner`: the harness's files (a patch made below them,
    by unittest's `@patch` decorator, with no code of the candidate's between, is the tests')."""

    def __init__(self, untrusted, is_tests, report, runner: tuple = (), version_view=None, cell_view=None) -> None:
        self._untrusted, self._is_tests, self._report, self._runner = untrusted, is_tests, report, runner
        self._modules: dict = {}  # id(module) -> (module, a copy of its namespace)
        self._classes: dict = {}  # id(class) -> (class, a copy of its namespace)
        self._chains: dict = {}  # id(type) -> (type, its MRO where a recorded class is in it, else None)
        self._patched: dict = {}  # (id(owner), name) -> the value the tests' own patch put there
        # what `rebound_internals` compares: (owner, its namespace's reader, the recorded names whose values are
        # code, a getter of them, those values), all of them and by top-level package; and each value's package
        self._slots: list = []
        self._slots_of: dict = {}  # top-level package -> its slots
        # the slots' namespaces' version tags (`version_view`: tamper.dict_version_view, a dict's live tag); None: none
        self._tags = _Tags(version_view) if version_view is not None else None
        self._cell_view = cell_view  # tamper.cell_contents_view: the insides compared through views (`_Insides`)
        self._package_of: dict = {}  # id(a recorded function or class) -> its module's top-level package
        self._mock_base = None  # unittest.mock's base of every mock (watch_patches)
        self._insides_parts: dict = {}  # top-level package -> its namespaces' _Insides, as recorded
        self._insides_of: dict = {}  # top-level package -> those merged (made when first compared)
        self._defaults = _DefaultsCount()  # which packages' defaults a comparison reads again

    # ------------------------------------------------------------------------------------------ recording

    def record_loaded(self) -> None:
        """Every library module loaded so far (the zygote's preload): once, before any candidate exists. Each
        package's insides are merged here too, so the calls forked from this process inherit them instead of
        merging them again each."""
        for module in list(sys.modules.values()):
            self.record(module)
        for package in self._insides_parts:
            self._insides(package)

    def record(self, module) -> None:
        """`module`'s namespace and its classes' as they are now, where it is an installed library's."""
        if _type(module) is not _ModuleType or _id(module) in self._modules or module is sys:
            return  # `sys` holds the interpreter's state, which the frameworks rebind (`sys.stdout` under capture)
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
        if not _isinstance(origin, str) or (origin not in ("built-in", "frozen") and self._untrusted(origin)):
            return  # the candidate's module, the tests', or one made at run time
        namespace = dict(vars(module))
        self._modules[_id(module)] = (module, namespace)
        name = namespace.get("__name__")
        package = str(name).partition(".")[0]
        if module is not builtins:  # compared at the harness's checkpoints already (tamper.Guard)
            self._watch(module, _module_dict, namespace, package)
        for value in namespace.values():
            if _isinstance(value, type) and _flags(value) & _HEAPTYPE and _id(value) not in self._classes:
                if getattr(value, "__module__", None) == name:  # a class defined there, not one imported
                    held = dict(_class_dict(value))
                    self._classes[_id(value)] = (value, held)
                    self._watch(value, _class_dict, held, package)

    def _watch(self, owner, read, namespace: dict, package: str) -> None:
        """`owner`'s names that hold code (functions, classes, descriptors: not plain data or modules), for
        `rebound_internals`; each such value known as `package`'s."""
        code = {name: value for name, value in namespace.items() if _type(value) not in _DATA}
        if not code:
            return
        names = _tuple(code)
        get = operator.itemgetter(*names) if len(names) > 1 else _single(names[0])
        slot = (owner, read, names, get, _tuple(code.values()))
        self._slots.append(slot)
        self._slots_of.setdefault(package, []).append(slot)
        if self._tags is not None and not self._tags.add(read(owner), slot, package):
            self._tags = None  # a namespace without a tag to read: every comparison walks every namespace
        tags = self._tags
        views = (tags.version_view, self._cell_view) if tags and not tags.settled and self._cell_view else None
        count = self._defaults.count(package)  # before reading them: an assignment meanwhile is compared next time
        insides = _Insides.of(owner, code, views)  # taken now, before any candidate
        if insides is not None:
            self._defaults.recorded(insides.functions, package, count, first=package not in self._insides_parts)
            self._insides_parts.setdefault(package, []).append(insides)
            self._insides_of.pop(package, None)  # merged again when next compared
        for value in code.values():
            self._package_of.setdefault(_id(value), package)

    def count_defaults(self) -> None:
        """From now on `defaults_set` hears of every assignment of a function's `__defaults__` or `__kwdefaults__`
        in this process (harness.py: the call's audit hook, installed before any candidate), the only way to
        change them short of raw memory, which the hook refuses. The packages `settle` found intact count as seen
        at 0: no candidate code has run since (nor ever in the process calls are forked from), and reading every
        function's defaults here, each read an audit event the call's hook handles in Python, cost about 0.2 s a
        call on 2 cores of an AMD EPYC (40,000 functions with BigCodeBench's libraries)."""
        self._defaults.start()

    def defaults_set(self, function=None) -> None:
        """`function`'s defaults were assigned (the audit event `object.__setattr__` / `__delattr__`)."""
        self._defaults.assigned(function)

    def settle(self) -> None:
        """Walk the namespaces changed since they were recorded, now that the harness's own wrappers are in place
        (tamper.checked_exits puts its `os._exit`, `signal.signal` over the libraries'): nothing of theirs is
        foreign, so those namespaces are seen clean here, in the process every call is forked from, and not again
        in each call. Each package's defaults are read here too, with no audit hook yet (`count_defaults`)."""
        if self._tags is not None:
            self._tags.settle(self._rebound_names)
        self._defaults.settled = _tuple(p for p in self._insides_parts if self._insides(p).intact(defaults=True))

    def watch_imports(self, bootstrap) -> None:
        """Record each module as its import finishes (`bootstrap`: importlib's `_bootstrap`), before the code that
        imported it runs on. The hook is the message `_load_unlocked` logs once a module's code ran and it is in
        `sys.modules`: a call after the module's code, so no frame of ours is below a failing import's."""
        original = bootstrap._verbose_message
        if getattr(original, "__wrapped__", None) is not None:
            return

        def message(text, *args, **kwargs):
            original(text, *args, **kwargs)
            if text == _LOADED and args:
                self.record(sys.modules.get(args[0]))

        message.__wrapped__ = original
        bootstrap._verbose_message = message

    def watch_patches(self, patch_class, monkeypatch_class=None) -> None:
        """The tests' own patches (unittest.mock's `_patch`, pytest's `MonkeyPatch.setattr`) are what the tests
        then read: their values are kept (`patched`) where the patch was started by the tests."""
        self._mock_base = getattr(sys.modules.get(patch_class.__module__), "NonCallableMock", None)
        enter = patch_class.__enter__
        if getattr(enter, "__wrapped__", None) is None:

            def entered(patch, *args, **kwargs):
                value = enter(patch, *args, **kwargs)
                target = getattr(patch, "target", None)
                if _isinstance(getattr(patch, "attribute", None), str) and target is not None:
                    self.patched(target, patch.attribute)
                return value

            entered.__wrapped__ = enter
            patch_class.__enter__ = entered
        setattr_ = getattr(monkeypatch_class, "setattr", None)
        if setattr_ is not None and getattr(setattr_, "__wrapped__", None) is None:

            def monkeypatched(patch, *args, **kwargs):
                setattr_(patch, *args, **kwargs)
                done = getattr(patch, "_setattr", None)
                if done:
                    self.patched(done[-1][0], done[-1][1])

            monkeypatched.__wrapped__ = setattr_
            monkeypatch_class.setattr = monkeypatched

    def wrote(self, owner, name: str) -> None:
        """`owner.name = value` in the tests' own code (judging.py adds this call after it): kept for their reads."""
        if _id(owner) in self._modules or _id(owner) in self._classes:  # recorded: alive, its id its own
            self._patched[(_id(owner), name)] = getattr(owner, name, _MISSING)

    def patched(self, owner, name: str) -> None:
        """`owner.name` was just set by a patch: kept for the tests' reads where the tests made it."""
        if self._by_tests(sys._getframe(2)):
            self._patched[(_id(owner), name)] = getattr(owner, name, _MISSING)

    def _by_tests(self, frame) -> bool:
        """Whether the first frame below that is not a library's is the tests' (or the harness's runner, with
        nothing of the candidate's between: a decorator's patch)."""
        while frame is not None:
            code = frame.f_code
            if code.co_filename in self._runner:
                return True
            if self._untrusted(code.co_filename):
                return bool(self._is_tests(code))
            frame = frame.f_back
        return False  # a thread of the candidate's: no runner below

    # ------------------------------------------------------------------------------------------ reading

    def attribute(self, owner, name: str):
        """`owner.name` read by the tests' code: the library's own value where the candidate rebound it."""
        value = getattr(owner, name)
        if _type(owner) is _ModuleType:
            known = self._modules.get(_id(owner))  # a recorded module is kept alive here: its id is its own
            if known is None:
                return value
            genuine = known[1].get(name, _MISSING)
            if genuine is _MISSING or genuine is value:
                return value
            return self._judged(owner, name, value, genuine, value)
        klass = owner if _isinstance(owner, type) else _type(owner)
        chain = self._chain(klass)
        return value if chain is None else self._from_classes(owner, klass, chain, name, value)

    def _from_classes(self, owner, klass: type, chain: list, name: str, value):
        """`name` of an instance or a class: looked up in its MRO, where a recorded class's entry that is not the
        one recorded (replaced, added over a base's, deleted) gives way to the recorded chain's."""
        for cls, namespace in chain:
            live = _class_dict(cls).get(name, _MISSING)
            if namespace is None:
                if live is not _MISSING:
                    return value  # a class that is not a library's holds it: its own (a subclass's method)
                continue
            genuine = namespace.get(name, _MISSING)
            if live is not genuine:
                return self._differs(owner, klass, chain, cls, name, value, live)
            if live is not _MISSING:
                if owner is not klass and self._shadows(owner, chain, name, value, live):
                    self._report(_SHADOWED.format(f"{_where(cls)}.{name}"), "shadowed_module")
                    return _bound(live, owner, klass)
                return value
        return value

    def report_shadowed_method(self, obj) -> None:
        found = self.shadowed_method(obj)
        if found is not None:
            self._report(_SHADOWED.format(found), "shadowed_module")

    def shadowed_method(self, obj) -> str | None:
        """`Class.name` where `obj`, an object of a recorded library class (not a subclass of the candidate's),
        holds in its own `__dict__` the candidate's code over a method of its class: whoever calls
        `obj.name(...)`, the tests or the library's own code they hand `obj` to, gets the candidate's answer
        (`df.equals = lambda other: True` on a frame the candidate returns, or on one of the tests' it was
        handed). Asked of each operand of the tests' library calls (judging.LibraryCalls.check)."""
        chain = self._chain(_type(obj))
        if chain is None or chain[0][1] is None:
            return None
        try:
            own = object.__getattribute__(obj, "__dict__")
        except Exception:  # noqa: BLE001 - no instance dictionary: nothing shadows its class
            return None
        if _type(own) is not dict:
            return None
        for name, value in list(own.items()):
            entry = _genuine_entry(chain, 0, name) if _type(name) is str else _MISSING
            if entry is not _MISSING and self._shadows(obj, chain, name, value, entry):
                return f"{_where(_type(obj))}.{name}"
        return None

    def _shadows(self, obj, chain: list, name: str, value, entry) -> bool:
        """`obj`'s own `name` (`value`) hides its library class's method `entry` with the candidate's code. Not a
        stand-in: tests put mocks on objects' methods all the time (`handler.wfile.write = MagicMock()`,
        BigCodeBench/273), and who set an object's attribute is not recorded."""
        return (
            chain[0][1] is not None  # the object's own class is the library's, not a subclass of the candidate's
            and _code_of(entry) is not None
            and _own_attribute(obj, name, entry)
            and self._candidates_code(value)
        )

    def _differs(self, owner, klass: type, chain: list, cls: type, name: str, value, live):
        """`cls` (recorded) holds `name` other than recorded: the recorded chain's entry, bound as read."""
        if owner is not klass and live is not _MISSING and _own_attribute(owner, name, live):
            return value
        genuine = _genuine_entry(chain, [c for c, _ in chain].index(cls), name)
        if genuine is _MISSING:
            return value  # a name the library never had: nothing of the tests' reads it
        return self._judged(cls, name, value, _bound(genuine, owner, klass), live)

    def rebound(self, t: type, names: tuple) -> str | None:
        """`Class.name` where one of the special methods `names` that an operator asks of a `t` is a recorded
        library class's entry the candidate rebound (`pd.DataFrame.__eq__ = ...`): the operator rules see that
        class as the candidate's on both sides, and would let it answer."""
        chain = self._chain(t)
        for name in () if chain is None else names:
            for i, (cls, namespace) in enumerate(chain):
                live = _class_dict(cls).get(name, _MISSING)
                if namespace is None and live is _MISSING:
                    continue
                if namespace is not None and live is not namespace.get(name, _MISSING):
                    if live is not _genuine_entry(chain, i, name):
                        return f"{getattr(cls, '__qualname__', '?')}.{name}"
                if live is not _MISSING:
                    break
        return None

    def imported(self, value, module: str, name: str):
        """`from module import name` in the tests' code: `module.name` read again as `attribute` reads it."""
        source = sys.modules.get(module)
        if _type(value) is _ModuleType or source is None:
            return value
        return self.attribute(source, name)

    def _chain(self, klass: type):
        known = self._chains.get(_id(klass))
        if known is not None and known[0] is klass:
            return known[1]
        mro = _mro(klass)
        chain = [(c, self._classes[_id(c)][1] if _id(c) in self._classes else None) for c in mro]
        chain = chain if any(n is not None for _, n in chain) else None
        self._chains[_id(klass)] = (klass, chain)
        return chain

    def _judged(self, owner, name: str, value, genuine, found):
        """`found` (what `owner.name` holds now) is not what the library held: the tests' own patch is kept, any
        other value is replaced by the library's, and the candidate's code there is reported."""
        if found is not _MISSING and self._patched.get((_id(owner), name), _MISSING) is found:
            return value
        if self._candidates_code(found):
            where = getattr(owner, "__name__", "?")
            self._report(f"the candidate rebound {where}.{name}, a library name the tests read", "shadowed_module")
        return genuine

    def _candidates_code(self, value) -> bool:
        return self._candidates(_code_of(value))

    def _candidates(self, code) -> bool:
        """`code` (None: no Python code) is the candidate's: not the interpreter's, a library's or the tests'."""
        return code is not None and self._untrusted(code.co_filename) and not self._is_tests(code)

    # ------------------------------------------------------------------------------------------ checkpoints

    def report_rebound_internals(self, function=None, insides: bool = False) -> None:
        """Each name `rebound_internals` finds, reported (`tampered`, kind `shadowed_module`)."""
        for what in self.rebound_internals(function, insides)[:2]:
            note = f"the candidate rebound {what}, a library's own name that its code looks up"
            self._report(note, "shadowed_module")

    def _insides(self, package: str):
        """`package`'s functions' insides as recorded, merged into one `_Insides` (one C pass over them)."""
        merged = self._insides_of.get(package)
        if merged is None and package in self._insides_parts:
            merged = self._insides_of[package] = _Insides.merge(self._insides_parts[package])
        return merged

    def rebound_internals(self, function=None, insides: bool = False) -> list[str]:
        """`module.name` / `Class.name` of the recorded library modules and classes (but `builtins`) that hold
        what the library would not have put there (`_foreign`: the candidate's code, or a builtin or mock where
        the library held Python code), unless the tests patched it there. The tests'
        reads are judged above, but library code looks its own helpers up as it finds them: with
        `numpy.testing._private.utils.assert_array_compare` rebound, `np.testing.assert_array_equal` read
        genuinely still calls the candidate. Called at the harness's checkpoints (after loading, after every test,
        and by its watch while they run), over every library; and before each call of the tests' that hands a
        library something other than plain values (judging.LibraryCalls.check), over the package `function` was
        recorded in (none for a builtin): a helper rebound by the candidate's code and put back before the test
        ends (an object's `__del__`, a timer) is still in place when the tests' call reaches it. `insides`: the
        recorded functions' defaults and closures too (`_Insides`), which that call also compares over its
        package; over every library they cost about 4x the names, so the checkpoints compare them once, at the
        end of the run. Only the namespaces whose dict's version tag moved since they were last seen clean are
        walked (`_Versions`; all of them where there is no tag), their code values compared by identity (kept alive
        here)."""
        slots, packages = self._slots, _tuple(self._insides_parts) if insides else ()
        versions = self._tags.every if self._tags is not None else None
        if function is not None:
            package = self._package_of.get(_id(function.__func__ if _type(function) is _MethodType else function))
            if package is None:
                return []  # a builtin, a method of a built-in type: no recorded package's helpers to compare
            slots, packages = self._slots_of.get(package, ()), (package,)
            versions = self._tags.of.get(package) if self._tags is not None else None
        found = []
        for package in packages:
            found += self._changed_insides(package)
        return found + (self._rebound_names(slots) if versions is None else versions.walk(self._rebound_names))

    def _changed_insides(self, package: str) -> list[str]:
        """What `_Insides.changed` finds in `package`'s functions; their defaults are read only where one was assigned
        since they were last seen intact (`count_defaults`)."""
        merged = self._insides(package)
        if merged is None:
            return []
        count = self._defaults.count(package)  # before comparing: an assignment meanwhile is compared next time
        if not merged.intact(defaults=not self._defaults.unchanged(package, count)):
            changes = merged.changed(self._foreign)
            if changes:
                return changes
        self._defaults.seen_intact(package, count)
        return []

    def _rebound_names(self, slots) -> list[str]:
        """`rebound_internals`' names of these namespaces, one by one."""
        found = []
        for owner, read, names, get, recorded in slots:
            live = read(owner)
            try:
                if _all(_map(_is, get(live), recorded)):
                    continue
            except KeyError:  # a name deleted (the library's call then fails: nothing is forged); others may differ
                pass
            for name, genuine in zip(names, recorded):
                value = live.get(name, genuine)
                if value is genuine or self._patched.get((_id(owner), name), _MISSING) is value:
                    continue
                if self._foreign(value, genuine):
                    found.append(f"{_where(owner)}.{name}")
        return found

    def _foreign(self, value, genuine) -> bool:
        """`value`, found where the library held `genuine`, is not the library's doing: the candidate's code, or,
        where the library held Python code, a stand-in that answers anything (a mock, a module's builtin such as
        `print`, a built-in class such as `slice`). A bound builtin method is not one: `warnings.catch_warnings
        (record=True)` puts its list's `append` in `warnings._showwarnmsg_impl`, honestly."""
        code = _code_of(value)
        if code is not None:
            return self._candidates(code)
        if _code_of(genuine) is None:
            return False
        t = _type(value)
        if t is _BuiltinFunctionType:
            return _type(value.__self__) is _ModuleType  # print, len, max: not a list's append
        if t is type:
            return not _flags(value) & _HEAPTYPE  # slice, object: a class the library never defined there
        return self._mock_base is not None and self._mock_base in _mro(t)


# values that are not code: a name holding one is not compared by `rebound_internals` (the candidate's code is
# what it looks for, and a library calls a helper, it does not call its constants)
_DATA = frozenset({int, float, complex, str, bytes, bool, type(None), tuple, list, dict, set, frozenset, _ModuleType})


def _single(name: str):
    return lambda namespace: (namespace[name],)


_SHADOWED = "the candidate put its own {} on an object of a library's class, over the library's method"

_get_defaults, _get_kwdefaults = operator.attrgetter("__defaults__"), operator.attrgetter("__kwdefaults__")
_get_contents = operator.attrgetter("cell_contents")
_flatten = itertools.chain.from_iterable


class _Versions:
    """Which of many namespaces changed since they were last seen clean, from their dicts' version tags: CPython
    (3.11 on) gives each dict a 64-bit tag that every change of it replaces with one never used before (PEP 509),
    and the tags of all of them are read in one C pass (`attrgetter("value")` over `ctypes` views of the tags).
    About 5,600 namespaces with BigCodeBench's libraries: 0.2 ms, where comparing their code values takes 10. A
    namespace is seen clean again once the walk finds nothing foreign in it (a cache filled, a test's own patch);
    one where it does find something stays changed, and is walked (and reported) at every comparison.
    Where the interpreter has no such tag (`version_view` None), every comparison walks every namespace."""

    __slots__ = ("slots", "dicts", "views", "seen", "late")

    def __init__(self) -> None:
        self.late: list = []  # slots without a tag: walked every time
        self.slots: list = []
        self.dicts: list = []  # kept alive here: a view reads the memory of a dict that must exist
        self.views: list = []
        self.seen = array.array("Q")  # compared with what the views read in C (`_addresses`), by memory

    def add(self, namespace: dict, view, slot: tuple) -> None:
        """Appended view last, tag first: a pass made meanwhile (the watch thread) sees fewer namespaces, never
        misaligned ones."""
        self.seen.append(view.value)
        self.slots.append(slot)
        self.dicts.append(namespace)
        self.views.append(view)

    def changed(self) -> list[int]:
        """Indices of the namespaces changed since last seen clean."""
        now = _addresses(self.views)
        seen = self.seen
        if now == seen[: len(now)]:
            return []
        return [i for i, (tag, last) in enumerate(zip(now, seen)) if tag != last]

    def walk(self, walk) -> list[str]:
        """What `walk` (Genuine._rebound_names) finds in the namespaces changed since last seen clean, and in those
        without a tag; those where it finds nothing seen clean."""
        found = walk(self.late)
        for i in self.changed():
            tag = self.views[i].value  # before the walk: a change made during it is walked next time
            rebound = walk((self.slots[i],))
            if rebound:
                found += rebound
            else:
                self.seen[i] = tag
        return found


class _DefaultsCount:
    """Which packages' recorded functions' defaults a comparison must read again. The assignments of a function's
    `__defaults__` or `__kwdefaults__` the call's audit hook hears (`assigned`) are counted, from `start` on, for the
    packages that recorded that function (one may re-export another's), for none where none did (a function made at
    run time, the candidate's: nothing recorded changed), or for every package where no function is named; a
    package's defaults are read until seen intact at its count, then not again until the count moves. Not counting
    (before `start`): every comparison reads them."""

    def __init__(self) -> None:
        self.unnamed: int | None = None  # assignments naming no function; None: not counting
        self.named: dict = {}  # package -> assignments of functions it recorded
        self.seen: dict = {}  # package -> its count when its defaults were last seen intact
        self.packages_of: dict = {}  # id(a recorded function) -> the packages that recorded it
        self.settled: tuple = ()  # the packages Genuine.settle found as recorded, before any call

    def start(self) -> None:
        """Counting from now: the packages found intact before any call are seen, no candidate code having run since
        (nor ever in the process calls are forked from)."""
        self.unnamed, self.named, self.seen = 0, {}, dict.fromkeys(self.settled, (0, 0))

    def assigned(self, function=None) -> None:
        if self.unnamed is None:
            return
        if function is None:
            self.unnamed += 1
            return
        for package in self.packages_of.get(_id(function), ()):
            self.named[package] = self.named.get(package, 0) + 1

    def count(self, package: str) -> tuple | None:
        return None if self.unnamed is None else (self.unnamed, self.named.get(package, 0))

    def unchanged(self, package: str, count: tuple | None) -> bool:
        """`package`'s defaults were seen intact at `count` (its count now): they need not be read."""
        return count is not None and self.seen.get(package) == count

    def seen_intact(self, package: str, count: tuple | None) -> None:
        if count is not None:
            self.seen[package] = count

    def recorded(self, functions: tuple, package: str, count: tuple | None, first: bool) -> None:
        """`functions` recorded for `package` at `count`; `first`: the package's first. Recorded in a call (counting),
        a new package's defaults are as recorded at that count (else its first comparison reads them all under the
        call's hook)."""
        for function in functions:
            packages = self.packages_of.setdefault(_id(function), [])
            if package not in packages:
                packages.append(package)
        if first:
            self.seen_intact(package, count)


class _Tags:
    """The version tags of every recorded namespace (`every`) and of each package's (`of`), each a `_Versions`."""

    def __init__(self, version_view) -> None:
        self.version_view = version_view
        self.every = _Versions()
        self.of: dict = {}
        self.settled = False  # settle() ran: this is the process calls are forked from, or a call

    def add(self, namespace, slot: tuple, package: str) -> bool:
        """`slot`'s namespace, read by its tag from now on; False where it has no tag to read."""
        versions = (self.every, self.of.setdefault(package, _Versions()))
        if self.settled:  # recorded in a call (an import of its own): a view made now would be ctypes and a class's
            for each in versions:  # dict gc.get_referents, which the call's audit policy watches: walked every time
                each.late.append(slot)
            return True
        dict_ = _namespace_dict(namespace)  # a module's, a class's: the same dict for the owner's life
        view = self.version_view(dict_) if dict_ is not None else None
        if view is None:
            return False
        for each in versions:
            each.add(dict_, view, slot)
        return True

    def settle(self, walk) -> None:
        for versions in (self.every, *self.of.values()):
            versions.walk(walk)
        self.settled = True


def _namespace_dict(namespace):
    """The dict behind a namespace: a module's is one; a class's mapping proxy refers to one (a subclass of dict for
    ctypes' classes, laid out as a dict first), and to nothing else. None where it is neither."""
    if _type(namespace) is dict:
        return namespace
    inner = gc.get_referents(namespace)
    return inner[0] if len(inner) == 1 and _isinstance(inner[0], dict) else None


_tag_value = operator.attrgetter("value")


class _Insides:
    """What the recorded functions of one namespace hold beyond their identity: their defaults, keyword defaults
    (the dict's values too: it can be changed in place) and closure cells' contents. A candidate that leaves
    `np.testing.assert_allclose` in place but sets its `__defaults__` to tolerances of its choosing, or a wrapper's
    cell to its own function, changed the library without rebinding a name. (A function's `__code__` is not
    compared here: assigning it is refused as it happens, `code_swap` in tamper.py.) Compared in C first, as the
    names are (`intact`): where recorded before any call (views made in the process calls are forked from), the
    cells by the address they hold and the keyword defaults' dicts by their version tags, read through `ctypes`
    views in one pass each. Read so, nothing recorded is referenced: reading the cells' contents themselves would
    write their reference counts, and so copy their pages into each forked call (about 16 ms a call cold for
    BigCodeBench's libraries, against 5 through the views, on 2 cores of an AMD EPYC)."""

    __slots__ = ("names", "functions", "defaults", "kwdefaults", "kw_values", "kw_counts", "cells", "contents") + (
        "of_cell",
        "cell_views",
        "cell_addresses",
        "kw_views",
        "kw_tags",
    )
    _RECORDED = __slots__[:9]

    @classmethod
    def of(cls, owner, code: dict, views=None):
        """`views`: (a dict's version-tag view, a cell's contents view), or None: compared by reading them."""
        pairs = [(name, _function_of(value)) for name, value in code.items()]
        pairs = [(f"{_where(owner)}.{name}", f) for name, f in pairs if f is not None]
        if not pairs:
            return None
        self = cls()
        self.names, self.functions = _tuple(n for n, _ in pairs), _tuple(f for _, f in pairs)
        self.defaults = _tuple(_map(_get_defaults, self.functions))
        self.kwdefaults = _tuple(_map(_get_kwdefaults, self.functions))
        self.kw_values = _tuple(_flatten(d.values() for d in self.kwdefaults if d is not None))
        self.kw_counts = _tuple(len(d) if d is not None else 0 for d in self.kwdefaults)  # the dicts change in place
        cells = [(c, n) for n, f in pairs for c in f.__closure__ or () if _filled(c)]
        self.cells, self.of_cell = _tuple(c for c, _ in cells), _tuple(n for _, n in cells)
        self.contents = _tuple(_map(_get_contents, self.cells))
        self.cell_views = self.kw_views = None
        if views is not None:
            version_view, cell_view = views
            kw_dicts = (d for d in self.kwdefaults if d is not None)
            self._viewed(_tuple(_map(cell_view, self.cells)), _tuple(_map(version_view, kw_dicts)))
        return self

    def _viewed(self, cell_views: tuple, kw_views: tuple) -> None:
        """Compared through these views from now on, against what they read now."""
        if None in cell_views or None in kw_views:
            return  # an interpreter whose layout tamper.py did not find: compared by reading them
        self.cell_views, self.cell_addresses = cell_views, _addresses(cell_views)
        self.kw_views, self.kw_tags = kw_views, _addresses(kw_views)

    @classmethod
    def merge(cls, parts: list):
        self = cls()
        for field in cls._RECORDED:
            setattr(self, field, _tuple(_flatten(getattr(p, field) for p in parts)))
        self.cell_views = self.kw_views = None
        if _all(p.cell_views is not None for p in parts):  # one recorded in a call has none: all read, then
            self._viewed(_tuple(_flatten(p.cell_views for p in parts)), _tuple(_flatten(p.kw_views for p in parts)))
        return self

    def intact(self, defaults: bool = True) -> bool:
        """Nothing changed; `defaults=False`: but for the functions' defaults and keyword defaults being other
        objects than recorded (the keyword defaults' values are compared either way: they change in place)."""
        functions, kwdefaults = self.functions, self.kwdefaults
        if defaults and not (
            _all(_map(_is, _map(_get_defaults, functions), self.defaults))
            and _all(_map(_is, _map(_get_kwdefaults, functions), kwdefaults))
        ):
            return False
        if self.cell_views is not None:
            return _addresses(self.cell_views) == self.cell_addresses and _addresses(self.kw_views) == self.kw_tags
        try:
            return _same(_flatten(d.values() for d in kwdefaults if d is not None), self.kw_values) and _all(
                _map(_is, _map(_get_contents, self.cells), self.contents)
            )
        except ValueError:  # a cell emptied
            return False

    def changed(self, foreign) -> list[str]:
        """The functions whose defaults or keyword defaults changed (no library changes its own), or whose closure
        cell now holds what `foreign` calls not the library's (a library may keep state in a cell: a cache, a
        module loaded on first use)."""
        found = []
        recorded_kw = iter(self.kw_values)
        recorded = zip(self.names, self.functions, self.defaults, self.kwdefaults, self.kw_counts)
        for name, f, defaults, kwdefaults, count in recorded:
            kw_values = [next(recorded_kw) for _ in range(count)]
            live_kw = f.__kwdefaults__
            if (
                f.__defaults__ is not defaults
                or live_kw is not kwdefaults
                or (live_kw is not None and not _same(live_kw.values(), kw_values))
            ):
                found.append(f"{name} (its defaults)")
        for cell, content, name in zip(self.cells, self.contents, self.of_cell):
            now = cell.cell_contents if _filled(cell) else _MISSING
            if now is not content and (now is _MISSING or foreign(now, content)):
                found.append(f"{name} (a value its closure holds)")
        return found


def _addresses(views: tuple) -> array.array:
    """What `views` read now (addresses, version tags), as one array: compared with another in C, by memory."""
    return array.array("Q", _map(_tag_value, views))


def _same(values, recorded: tuple) -> bool:
    """`values`, in order, are the `recorded` objects themselves, no more, no fewer."""
    values = _tuple(values)
    return len(values) == len(recorded) and _all(_map(_is, values, recorded))


def _filled(cell) -> bool:
    try:
        _get_contents(cell)
    except ValueError:
        return False
    return True


def _function_of(value):
    """The Python function `value` is or holds as a method (a static or class method's): None for any other."""
    t = _type(value)
    if t is staticmethod or t is classmethod:
        value, t = value.__func__, _type(value.__func__)
    return value if t is _FunctionType else None


def _where(owner) -> str:
    """A recorded module's or class's dotted name, for a note."""
    if _type(owner) is _ModuleType or not _isinstance(owner, type):
        return str(_module_dict(owner).get("__name__", "?"))
    return f"{_class_dict(owner).get('__module__', '?')}.{owner.__qualname__}"


def _genuine_entry(chain: list, start: int, name: str):
    """`name`'s entry in the MRO `chain` from `start` on, as recorded (a class not recorded: as it is)."""
    for cls, namespace in chain[start:]:
        entry = (_class_dict(cls) if namespace is None else namespace).get(name, _MISSING)
        if entry is not _MISSING:
            return entry
    return _MISSING


def _own_attribute(owner, name: str, entry) -> bool:
    """Whether the instance `owner` holds `name` itself, over its class's `entry` (not a data descriptor)."""
    if hasattr(_type(entry), "__set__") or hasattr(_type(entry), "__delete__"):
        return False
    try:
        return name in object.__getattribute__(owner, "__dict__")
    except Exception:  # noqa: BLE001 - no instance dictionary: the class's entry answers
        return False


def _bound(entry, owner, klass):
    get = getattr(_type(entry), "__get__", None)
    return entry if get is None else get(entry, None if owner is klass else owner, klass)


def _code_of(value):
    """The code `value` runs when called or read: a function's; through a method, a static or class method, a
    property's getter or a `functools.partial` (a few levels deep); a callable object's `__call__`, a descriptor's
    `__get__` where its class is not built in."""
    for _ in range(4):
        t = _type(value)
        if t is _MethodType or t is staticmethod or t is classmethod:
            value = value.__func__
        elif t is property:
            value = value.fget
        elif t is functools.partial:
            value = value.func
        else:
            break
    t = _type(value)
    if t is _FunctionType:
        return value.__code__
    if not _flags(t) & _HEAPTYPE:
        return None
    own = _class_dict(t)
    return getattr(own.get("__call__"), "__code__", None) or getattr(own.get("__get__"), "__code__", None)
