"""In process (issue #47): the comparisons the tests' own code makes are judged here, never by the candidate's class.

Standard library only; loaded by path by harness.py inside the sandboxed runner (next to tamper.py).

An `__eq__` of the candidate's can tell the plausible-value probes (`tamper._claims_two`) from the test's own
`assert x == 3` by anything it can observe of its caller: the stack's depth (a recursion until RecursionError
needs no frame), `traceback.extract_stack()` (text, allowed), `warnings.warn(stacklevel=n)`, a counter of its
calls. No probe can be made indistinguishable from the test, so the test's comparison must not ask the
candidate at all. The tests' syntax tree is rewritten before it is compiled (`judged`): every comparison
(`==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in`; `is` cannot be overridden), every arithmetic or unary
operator, `abs()`/`round()` and every truth test (`assert`, `if`, `while`, `not`, `and`/`or`) in the tests' code
calls `compare`/`arithmetic`/`unary`/`builtin`/`truth` here, which first looks at both operands
(`answering`): where the operator would be answered by a class of the candidate's (its code, or a callable
its class holds; `tamper.answered_by`'s rule) on one side only, the test fails and the verdict is
`tampered` (kind `handle_operator`), whatever the candidate would have answered. Both sides the
candidate's (the test built its expected value with the candidate's class: `make() == Node(3)`) compare
as the candidate compares them, as the official harness does; equality with None is identity (an honest
`node != None` on a class with its own `__eq__` passes, as out of process).

An augmented assignment (`x -= y`) is judged as its operator is (`inplace`; the in-place method counts on both
sides). Every other call in the tests' code goes through `call`: library code handed the candidate's object beside
the tests' values would ask its special methods for the tests (`np.testing.assert_array_less(x, 4)`, `max(x, 3)`,
`set([x, 3])`); `LibraryCalls` says which such calls are refused (kind `handle_library`).

Beside calls (issue #47, the shapes left open): each manager of the tests' `with` is entered and exited here
(`Contexts`: the candidate's code swallows no failure); an attribute the tests read, and a name they import from a
module, is read through `libraries.Genuine` (the library's own value where the candidate rebound it); a store's key
(`expected[x] = 1`) is judged as a lookup's (`keyed`); `x in iterator` draws and compares one element at a time.

The calls are bound into the compiled code as constants (`bind`), not looked up by name: the candidate
shares the tests' module globals (BigCodeBench) and could rebind any name there.
"""

from __future__ import annotations

import ast
import copy
import dis
import operator
import sys
import types
import warnings

# Placeholders the rewritten tree calls; `bind` swaps them for the functions in the compiled code's constants.
COMPARE, ARITHMETIC, UNARY = "\0sandbox:compare", "\0sandbox:arithmetic", "\0sandbox:unary"
BUILTIN, TRUTH = "\0sandbox:builtin", "\0sandbox:truth"
CALL, INPLACE, SLICE = "\0sandbox:call", "\0sandbox:inplace", "\0sandbox:slice"
ITEM, SET_DISPLAY, DICT_DISPLAY = "\0sandbox:item", "\0sandbox:set", "\0sandbox:dict"
WITH, ATTRIBUTE, IMPORTED = "\0sandbox:with", "\0sandbox:attribute", "\0sandbox:imported"
KEYED, WROTE = "\0sandbox:keyed", "\0sandbox:wrote"

_type, _id, _isinstance, _set, _map, _any = type, id, isinstance, set, map, any


class _Mark:
    """The constant every code object of the tests carries (`bind`): what tells the tests' code from the
    candidate's in one file (BigCodeBench appends the tests to the program). The candidate cannot put it in code
    of its own: `compile` takes no such constant, and a code object made by hand (`code.replace`) is refused
    (tamper.AuditPolicy, `code.__new__`)."""

    __slots__ = ()


TESTS_MARK = _Mark()


def is_tests_code(code) -> bool:
    return _any(c is TESTS_MARK for c in code.co_consts)


_CodeType = types.CodeType

# ast operator class -> (the operator, the operators each side would be asked: tamper.JUDGING_OPERATORS keys)
COMPARISONS = {
    "Eq": (operator.eq, ("equality", "equality")),
    "NotEq": (operator.ne, ("equality", "equality")),
    "Lt": (operator.lt, ("order", "order")),
    "LtE": (operator.le, ("order", "order")),
    "Gt": (operator.gt, ("order", "order")),
    "GtE": (operator.ge, ("order", "order")),
    "In": (lambda a, b: a in b, ("equality", "membership")),
    "NotIn": (lambda a, b: a not in b, ("equality", "membership")),
}
_ARITH_NAMES = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift")
_ARITH_NAMES += ("and", "or", "xor")
ARITHMETIC_OPS = {
    "Add": "add", "Sub": "sub", "Mult": "mul", "Div": "truediv", "FloorDiv": "floordiv", "Mod": "mod",
    "Pow": "pow", "MatMult": "matmul", "LShift": "lshift", "RShift": "rshift", "BitAnd": "and",
    "BitOr": "or", "BitXor": "xor",
}  # fmt: skip
UNARY_OPS = {"USub": ("neg", operator.neg), "UAdd": ("pos", operator.pos), "Invert": ("invert", operator.invert)}
# The special methods an arithmetic operator asks of either side (both orders: `3 - x` asks x.__rsub__).
_ARITH_METHODS = {name: (f"__{name}__", f"__r{name}__") for name in _ARITH_NAMES}
_ARITH_FUNCS = {n: getattr(operator, n if n not in ("and", "or") else n + "_") for n in _ARITH_NAMES}
# `x -= y` asks x.__isub__, else x.__sub__, else y.__rsub__ (operator.isub does the same)
_INPLACE = {name: (getattr(operator, "i" + name), (f"__i{name}__", *_ARITH_METHODS[name])) for name in _ARITH_NAMES}


class Judge:
    """The calls the rewritten tests make, with what they need: `untrusted(filename)` (code that is not the
    interpreter's or an installed library's) and `report(note, kind)` (a tamper event: handle_operator, or
    handle_library for a call). Set once, in the zygote, before any candidate exists (harness.py)."""

    def __init__(self, tamper, untrusted, report, library=None) -> None:
        self._families = tamper.JUDGING_OPERATORS
        self._answering_class = tamper.answering_class
        self._untrusted, self._report = untrusted, report
        self._calls = LibraryCalls(self, untrusted)
        self.delegate = self._calls.delegate
        self.contexts = Contexts(self, tamper.answering_class, untrusted)
        self.library = library  # libraries.Genuine: the library names the tests read (None: read as written)

    def call(self, function, *args, **kwargs):
        """Every call in the tests' code (`f(x, y)`): where `f` is neither the candidate's code nor the tests',
        its operands are judged first (`LibraryCalls.check`)."""
        __tracebackhide__ = True  # noqa: F841 - pytest shows the tests' line, not this one
        if (
            _set(_map(_type, args)) <= _PLAIN
            and _type(function) not in _BOUND
            and (not kwargs or _set(_map(_type, kwargs.values())) <= _PLAIN)
        ):
            return function(*args, **kwargs)  # the common case: plain values to a function
        self._calls.check(function, args, kwargs)
        return function(*args, **kwargs)

    def item(self, container, key):
        """`container[key]` in the tests: a lookup in the tests' container compares the candidate's key with the
        container's keys (`expected[x]`: its `__hash__` and `__eq__`), as `set([x, 3])` would (`LibraryCalls`)."""
        if _type(key) not in _PLAIN and _type(key) is not slice:
            self._calls.check_lookup(container, key)
        return container[key]

    def keyed(self, container, key):
        """`container[key] = v` (and `del`, `op=`) in the tests: the store compares the candidate's key with the
        container's keys as a lookup does (`Judge.item`'s rule); returns the key."""
        if _type(key) not in _PLAIN and _type(key) is not slice:
            self._calls.check_lookup(container, key)
        return key

    def set_display(self, items: tuple) -> set:
        """`{a, b}` in the tests: its elements are compared with each other as `set([a, b])` compares them."""
        if not _set(_map(_type, items)) <= _PLAIN:
            self._calls.check(set, (items,), {})
        return _set(items)

    def dict_display(self, pairs: tuple) -> dict:
        """`{k: v, ...}` in the tests (no `**`): its keys are compared with each other, as a set's elements."""
        keys = tuple(k for k, _ in pairs)
        if not _set(_map(_type, keys)) <= _PLAIN:
            self._calls.check(set, (keys,), {})
        return dict(pairs)

    def inplace(self, name: str, left, right):
        """`left op= right` in the tests, judged as `left op right` is (the in-place method on the left too)."""
        op, methods = _INPLACE[name]
        if _type(left) in _PLAIN and _type(right) in _PLAIN:
            return op(left, right)
        sides = (self.answering(left, methods), self.answering(right, methods))
        if (sides[0] is None) != (sides[1] is None):
            self.refuse(sides[0] or sides[1], f"compute in place (i{name}) with a value of the tests'")
        return op(left, right)

    def compare(self, name: str, left, right):
        op, (left_family, right_family) = COMPARISONS[name]
        if _type(left) in _PLAIN and _type(right) in _PLAIN:
            return op(left, right)  # the common case: nothing of the candidate's on either side
        sides = (self.answering(left, self._families[left_family]), self.answering(right, self._families[right_family]))
        if (sides[0] is None) != (sides[1] is None):
            # as out of process, where the candidate's object is a handle: equal only to itself, and a member of
            # the tests' container only by identity; ordering it, or asking its container, is refused
            if name in ("Eq", "NotEq"):
                return (left is right) == (name == "Eq")
            if name in ("In", "NotIn") and sides[1] is None:
                return _any(item is left for item in _members(right)) == (name == "In")
            self.refuse(sides[0] or sides[1], f"compare ({_SYMBOLS[name]}) with a value of the tests'")
        if sides[0] is not None:
            self._library_rebound(left, right, self._families[left_family], _SYMBOLS[name])
        if name in ("In", "NotIn") and sides[1] is None and next_of(_type(right)) is not None:
            return self._drawn(left, right) == (name == "In")
        return op(left, right)

    def _drawn(self, left, iterator) -> bool:
        """`left in iterator` (a generator, `map`, `zip`...: its elements are not seen before they are drawn), as
        the interpreter does it (drawn until one is equal), each element compared by `compare`'s rule."""
        for item in iterator:
            if item is left or self.compare("Eq", left, item):
                return True
        return False

    def arithmetic(self, name: str, left, right):
        if _type(left) in _PLAIN and _type(right) in _PLAIN:
            return _ARITH_FUNCS[name](left, right)
        ops = _ARITH_METHODS[name]
        sides = (self.answering(left, ops), self.answering(right, ops))
        if (sides[0] is None) != (sides[1] is None):
            self.refuse(sides[0] or sides[1], f"compute ({name}) with a value of the tests'")
        if sides[0] is not None:
            self._library_rebound(left, right, ops, name)
        return _ARITH_FUNCS[name](left, right)

    def _library_rebound(self, left, right, names: tuple, what: str) -> None:
        """Both sides answered by the candidate's code: refused where that code is an operator the candidate put
        on a library's class (`pd.DataFrame.__eq__ = ...`), which then judges the tests' own values too."""
        if self.library is not None:
            found = self.library.rebound(_type(left), names) or self.library.rebound(_type(right), names)
            if found is not None:
                self.refuse(found, f"{what}: a library's operator, rebound by the candidate")

    def unary(self, name: str, operand):
        method, op = UNARY_OPS[name]
        if _type(operand) not in _PLAIN:
            found = self.answering(operand, (f"__{method}__",))
            if found is not None:
                self.refuse(found, f"compute ({method}) for the tests")
        return op(operand)

    def builtin(self, function, *args, **kwargs):
        """`abs(x)`, `round(x)` in the tests: the candidate's `__abs__`/`__round__` would pick the number the
        test then compares (`abs(x) < 1e-9`)."""
        method = _BUILTIN_METHODS.get(_id(function))
        if method is not None and args and _type(args[0]) not in _PLAIN:
            found = self.answering(args[0], (method,))
            if found is not None:
                self.refuse(found, f"compute ({method}) for the tests")
        return function(*args, **kwargs)

    def truth(self, value, kind: str = "handle_operator"):
        """`assert x`, `if x`, `not x`, `x and y` in the tests: the candidate's class does not say whether its object
        is true (a `__bool__` or `__len__` of its own would answer True to every check); one without either is true
        by Python's rule, as out of process. Returns `value`, whose truth Python then takes."""
        if _type(value) not in _PLAIN and _type(value) not in _BUILT_IN_CONTAINERS:
            found = self._answering_class(_type(value), ("__bool__", "__len__"), self._untrusted, is_tests_code)
            if found is not None:
                self.refuse(found, "say whether it is true", kind)
        return value

    def answering(self, value, operators: tuple) -> str | None:
        """The class of the candidate's whose `operators` would answer for `value` or any part of it (elements
        of lists, tuples, sets, dicts and their library subclasses, deques, numpy object arrays, pandas
        object columns), all of them, however many: a walk by distinct type, at C speed for plain data."""
        seen, stack, checked = {}, [value], {}
        while stack:
            item = stack.pop()
            t = _type(item)
            if t in _PLAIN or _id(item) in seen:
                continue
            seen[_id(item)] = item  # kept alive: a part made for the walk (a column's array) keeps its id
            if t not in checked:
                checked[t] = self._answering_class(t, operators, self._untrusted, is_tests_code)
            if checked[t] is not None:
                return checked[t]
            stack += _parts(item)
        return None

    def refuse(self, cls: str, what: str, kind: str = "handle_operator") -> None:
        note = f"the tests' own comparison would be decided by the candidate's class {cls} (asked to {what})"
        self._report(note, kind)
        raise AssertionError(
            f"an object of the candidate's class {cls} was asked to {what}: the tests compare the candidate's "
            "values as data (built-in, numpy or pandas values), not by the candidate's operators"
        )


_BUILTIN_METHODS = {_id(abs): "__abs__", _id(round): "__round__"}
_BUILT_IN_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
_PLAIN = frozenset({int, float, complex, str, bytes, bool, type(None), range, slice, type(Ellipsis)})
_SYMBOLS = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "In": "in", "NotIn": "not in"}


# ------------------------------------------------------------------------------------------ context managers


class Contexts:
    """The tests' `with` statements (issue #47): a context manager's `__exit__` that answers "suppress" ends the
    block early and swallows what it raised, the test's own failing assertion included. Each manager of the
    tests' `with` is entered and exited here (`_Judged`); an exception the block raised may be swallowed only
    where neither the candidate's code decided it nor a test's failure is swallowed by other than an assertion
    made to expect it (`assertRaises`, `pytest.raises`). Refused (`tampered`, `handle_operator`):
    * a manager whose `__exit__` is the candidate's code (its class, a `contextlib.contextmanager` generator of its
      own, an `ExitStack` holding either) swallowing anything but an exception the tests' own `raise` statement
      raised (what a test of a suppressing manager does: `with ignoring(ValueError): raise ValueError`), never a
      failure (AssertionError, or what is not an Exception: pytest's outcomes, SystemExit);
    * any other manager swallowing a failure (a `contextlib.suppress(Exception)` the candidate returned)."""

    _RAISES = ("_AssertRaisesContext", "RaisesContext", "RaisesExc", "RaisesGroup")  # expecting may swallow it

    def __init__(self, judge, answering_class, untrusted) -> None:
        self._judge, self._answering_class, self._untrusted = judge, answering_class, untrusted
        self._raises: set = set()  # the framework's context managers that expect an exception (learn)
        self.learn()

    def learn(self) -> None:
        """The framework's expecting managers, by identity (a class of the candidate's may take their names):
        called in the zygote, before any candidate (importing the test frameworks' modules that define them)."""
        for module in ("_pytest.python_api", "_pytest.raises"):
            try:
                __import__(module)
            except ImportError:  # pytest not installed, or a version without that module
                pass
        for module, name in (("unittest.case", "_AssertRaisesContext"), ("_pytest.python_api", "RaisesContext")):
            cls = getattr(sys.modules.get(module), name, None)
            if _isinstance(cls, type):
                self._raises.add(cls)
        for name in ("RaisesExc", "RaisesGroup"):  # pytest >= 8.4
            cls = getattr(sys.modules.get("_pytest.raises"), name, None)
            if _isinstance(cls, type):
                self._raises.add(cls)

    def enter(self, manager) -> _Judged:
        return _Judged(self, manager)

    def swallowing(self, manager, error, tb) -> None:
        """The manager's `__exit__` answered "suppress" for `error`: returns where it may, else refuses."""
        failure = _isinstance(error, AssertionError) or not _isinstance(error, Exception)
        deciding = self._deciding(manager, 0)
        if deciding is None:
            if not failure or _type(manager) in self._raises:
                return
            deciding = f"{_type(manager).__module__}.{_type(manager).__qualname__}"
        elif not failure and _raised_by_tests(tb):
            return
        note = f"a context manager ({deciding}) swallowed the exception the tests' with block raised ({_name(error)})"
        self._judge._report(note, "handle_operator")
        raise AssertionError(
            f"{note}: a test's failure, or an exception the tests did not raise themselves, is not swallowed by the "
            "candidate's code"
        ) from error

    def _deciding(self, manager, depth: int) -> str | None:
        """The candidate's class or function that decides what `manager`'s `__exit__` answers: its own `__exit__`,
        or what a library's manager holds and asks (a generator, an ExitStack's callbacks), a few levels deep."""
        found = self._answering_class(_type(manager), ("__exit__",), self._untrusted, is_tests_code)
        if found is not None or depth > 3:
            return found
        try:
            held = list(_instance_dict(manager).values())
        except Exception:  # noqa: BLE001 - no instance dict: a library's manager holding nothing of its own
            return None
        while held:
            part = held.pop()
            t = _type(part)
            if t is tuple or _type(part).__name__ == "deque":  # an ExitStack's (is_sync, callback) entries
                held += [p for p in part if _type(p) not in _PLAIN]
            elif t is types.GeneratorType or t is types.MethodType or t is types.FunctionType:
                code = getattr(part, "gi_code", None) or getattr(getattr(part, "__func__", part), "__code__", None)
                if code is not None and self._untrusted(code.co_filename) and not is_tests_code(code):
                    return getattr(part, "__qualname__", "?")
                owner = getattr(part, "__self__", None)
                if owner is not None and owner is not manager and _type(owner) is not types.ModuleType:
                    found = self._deciding(owner, depth + 1)
                inner = getattr(part, "__wrapped__", None)
                if found is None and inner is not None:
                    held.append(inner)
                if found is not None:
                    return found
        return None


class _Judged:
    """One manager of the tests' `with`, entered and exited as the interpreter would (its class's `__enter__`
    and `__exit__`, looked up past any metaclass), whose answer to "suppress" is judged (Contexts.swallowing)."""

    __slots__ = ("_rule", "_manager", "_exit")

    def __init__(self, rule: Contexts, manager) -> None:
        self._rule, self._manager = rule, manager
        self._exit = _special(manager, "__exit__")

    def __enter__(self):
        return _special(self._manager, "__enter__")()

    def __exit__(self, kind, error, tb):
        answer = self._exit(kind, error, tb)
        if kind is None or not answer:
            return False
        self._rule.swallowing(self._manager, error, tb)
        return True


def _special(manager, name: str):
    """`manager`'s special method `name`, bound, as `with` looks it up (on its class, in MRO order)."""
    cls = _type(manager)
    for klass in _mro(cls):
        entry = _class_dict(klass).get(name, _MISSING)
        if entry is not _MISSING:
            get = getattr(_type(entry), "__get__", None)
            return entry if get is None else get(entry, manager, cls)
    raise TypeError(f"'{cls.__name__}' object does not support the context manager protocol")


def _raised_by_tests(tb) -> bool:
    """Whether the exception was raised by a `raise` statement of the tests' own code (its innermost frame)."""
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or not is_tests_code(tb.tb_frame.f_code):
        return False
    code = tb.tb_frame.f_code.co_code
    return 0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] == _RAISE_VARARGS


def _name(error) -> str:
    return _type(error).__name__


_RAISE_VARARGS = dis.opmap["RAISE_VARARGS"]


def _instance_dict(value) -> dict:
    return object.__getattribute__(value, "__dict__")  # past a `__getattribute__` of the candidate's


# ------------------------------------------------------------------------------------------ library calls

# The special methods by which library code asks an object for a judgement, or for the values it then judges:
# comparison, hashing, truth, arithmetic, conversion, the container protocol, numpy's array protocols, and
# attribute lookup (a library's duck typing asks `obj.shape`, `obj.equals`).
LIBRARY_METHODS = tuple(
    sorted(
        {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__", "__iter__"}
        | {"__next__", "__reversed__", "__getitem__", "__contains__", "__neg__", "__pos__", "__abs__", "__invert__"}
        | {"__round__", "__trunc__", "__floor__", "__ceil__", "__float__", "__int__", "__index__", "__complex__"}
        | {"__array__", "__array_ufunc__", "__array_function__", "__array_interface__", "__array_struct__"}
        | {"__getattr__", "__getattribute__"}
        | {m for pair in _ARITH_METHODS.values() for m in pair}
        | {f"__i{name}__" for name in _ARITH_NAMES}
    )
)
# What a class of the candidate's says about a class it makes (`isinstance(x, Cls)` asks the metaclass)
_META_METHODS = ("__instancecheck__", "__subclasscheck__", "__eq__", "__ne__", "__hash__")
# Built-ins that take an object's truth: the candidate's class does not say it (Judge.truth)
_TRUTH_TAKERS = {_id(bool): "bool", _id(all): "all", _id(any): "any", _id(operator.truth): "truth"}
_TRUTH_TAKERS[_id(operator.not_)] = "not_"
# Built-ins that compare nothing: they hand an object on, name it, or ask it about itself (`len(cache)`)
_NEUTRAL = {_id(f) for f in (print, repr, str, format, getattr, hasattr, setattr, delattr, isinstance, issubclass)}
_NEUTRAL |= {_id(f) for f in (id, type, callable, iter, next, enumerate, zip, map, reversed, list, tuple, range, len)}
_NEUTRAL |= {_id(f) for f in (vars, dir, hash, super, object)}
_BOUND = frozenset({types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType})
_CALLABLES = frozenset(
    {types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType, types.ModuleType}
    | {types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType}
)
_MESSAGES = frozenset({"msg", "err_msg", "message"})  # an assertion's text, not one of its operands


class LibraryCalls:
    """The rule at the call boundary of the tests' code (issue #47). A call to code that is neither the
    candidate's nor the tests' (numpy.testing, pandas.testing, `sorted`, `max`, `set`, `dict.get`, `list.count`,
    unittest's assertions) may ask the special methods of every object it is handed, with the tests' values on
    the other side. It is refused (`tampered`, `handle_library`) where its operands (the arguments, the object a
    built-in or library method is bound to, and what they hold, walked as `Judge.answering` walks) hold both an
    object whose class of the candidate's defines one of LIBRARY_METHODS and a value that is not the candidate's;
    where a class of the candidate's answers for an operand's type (`__class__`, `__getattribute__`, a metaclass);
    where the truth of an object of the candidate's would be asked (`bool`, `all`, `any`: `Judge.truth`; a
    `__bool__` of its own, in any library call). The candidate's objects on their own (`len(cache)`,
    `sorted(nodes)`, `list(tree)`, `np.testing.assert_equal(node, Node(3))`) are asked as the official harness asks
    them: what they answer is the tests' value to judge next, as a method's return value is."""

    def __init__(self, judge, untrusted) -> None:
        self._judge, self._untrusted = judge, untrusted
        self._files: dict = {}  # filename -> whether it is untrusted (a file's kind does not change)
        self._messages: dict = {}  # id(code) -> (code, the positional index of its message parameter, or -1)
        self._static: dict = {}  # a type none of whose classes can change -> what `_classify` found
        self._memo: dict = {}  # what tamper.answering_class found of a class's entry that cannot change
        self._delegated: dict = {}  # id -> the harness's own assertions, which judge their operands themselves

    def delegate(self, functions) -> None:
        """Assertions that judge their operands themselves by the rule of the tests' operators (the harness's
        wrapped `assertEqual` and kin, `assertTrue`): their calls are theirs to refuse, under their own kinds."""
        self._delegated.update({_id(f): f for f in functions})

    def check(self, function, args: tuple, kwargs: dict) -> None:
        if _type(function) is types.MethodType and _id(function.__func__) in self._delegated:
            return
        if self._own(function):
            return  # the candidate's code (called with anything, as the tests mean to) or the tests' (judged too)
        library = self._judge.library
        if library is not None:  # the library's own helpers, and its objects' methods, as this call will find them
            library.report_rebound_internals(function)
            for value in (*args, *kwargs.values()):
                if _type(value) not in _PLAIN:
                    library.report_shadowed_method(value)
        taker = _TRUTH_TAKERS.get(_id(function))
        if taker is not None:
            for value in args[:1] if taker in ("bool", "truth", "not_") else _members_of_builtin(args[:1]):
                self._judge.truth(value, "handle_library")
        name = getattr(function, "__qualname__", None) or _type(function).__name__
        if _id(function) in _NEUTRAL:  # nothing compared: only what an operand says of its type (`isinstance`)
            for value in args:
                liar = None if _type(value) in _PLAIN or _isinstance(value, type) else self._lies(_type(value))
                if liar is not None:
                    self._judge.refuse(liar, f"say its type to {name}", "handle_library")
            return
        candidate, liar, tests = self._sides(self._operands(function, args, kwargs))
        if liar is not None:
            self._judge.refuse(liar, f"say its type to {name}", "handle_library")
        if candidate is not None:
            if tests or self._answering(candidate[1], ("__bool__",)):
                what = f"be compared by {name} with a value of the tests'" if tests else f"say its truth to {name}"
                self._judge.refuse(candidate[0], what, "handle_library")

    def check_lookup(self, container, key) -> None:
        """`container[key]` with the candidate's object in the key: refused where the lookup would compare it with
        a value not the candidate's: a key of a built-in dict or set that is not the candidate's, or any item of
        a container of the tests' or a library's (a list's index, a frame's labels). The candidate's container
        is asked about its own item (`tree[node]`), as its method would be."""
        found, liar, _ = self._sides([key])
        if found is None and liar is None:
            return
        if _type(container) in (dict, set, frozenset):
            refused = self._sides(list(container))[2]
        else:
            refused = self._classify(container, _type(container))[0] is None
        if refused or liar is not None:
            self._judge.refuse(liar or found[0], "be looked up in a container of the tests'", "handle_library")

    def _own(self, function) -> bool:
        """Whether calling `function` runs the candidate's code or the tests' (a function, a method, a class
        whose `__init__`/`__new__` or an object whose `__call__` is theirs), not a library's."""
        t = _type(function)
        if t is types.MethodType:
            function = function.__func__
            t = _type(function)
        if t is types.FunctionType:
            return self._untrusted_file(function.__code__.co_filename)
        if t in _CALLABLES:
            return False
        names = ("__init__", "__new__") if _isinstance(function, type) else ("__call__",)
        owner = function if _isinstance(function, type) else t
        for cls in _mro(owner):
            for name in names:
                entry = _class_dict(cls).get(name)
                if _type(entry) is types.FunctionType and self._untrusted_file(entry.__code__.co_filename):
                    return True
        return False

    def _untrusted_file(self, filename: str) -> bool:
        known = self._files.get(filename)
        if known is None:
            known = self._files[filename] = bool(self._untrusted(filename))
        return known

    def _operands(self, function, args: tuple, kwargs: dict) -> list:
        """The values the callee may compare: its arguments (but an assertion's message, and options given by
        keyword as plain values: `check_dtype=False`), and the object a built-in or library method is bound to
        (`expected.count(x)`), never a module or the running TestCase (`self.assertEqual`)."""
        operands = list(args)
        drop = self._message_index(function)
        if 0 <= drop < len(operands):
            del operands[drop]
        operands += [v for k, v in kwargs.items() if k not in _MESSAGES and _type(v) not in _PLAIN]
        owner = getattr(function, "__self__", None) if _type(function) in _BOUND else None
        if owner is not None and _type(owner) is not types.ModuleType and not _isinstance(owner, type):
            unittest = sys.modules.get("unittest")
            if unittest is None or not _isinstance(owner, unittest.TestCase):
                operands.append(owner)
        return operands

    def _message_index(self, function) -> int:
        func = function.__func__ if _type(function) is types.MethodType else function
        while _type(getattr(func, "__wrapped__", None)) is types.FunctionType:
            func = func.__wrapped__  # the harness's wrapped assertions: unittest's own signature
        code = getattr(func, "__code__", None) if _type(func) is types.FunctionType else None
        if code is None:
            return -1
        known = self._messages.get(_id(code))
        if known is None or known[0] is not code:
            names = code.co_varnames[: code.co_argcount]
            index = next((i for i, n in enumerate(names) if n in _MESSAGES), -1)
            known = self._messages[_id(code)] = (code, index)
        return known[1] - (1 if known[1] > 0 and _type(function) is types.MethodType else 0)

    def _sides(self, operands: list) -> tuple:
        """((name, class) of the first object of the candidate's found, the name of a class of the candidate's
        that answers for an object's type, whether a value not the candidate's is there too)."""
        candidate = liar = None
        tests, seen, stack, checked = False, {}, list(operands), {}
        while stack:
            item = stack.pop()
            t = _type(item)
            if t in _PLAIN:
                tests = True
                continue
            if _id(item) in seen or t in _CALLABLES:
                continue
            seen[_id(item)] = item  # kept alive: a part made for the walk keeps its id
            if t in _BUILT_IN_CONTAINERS:
                items = list(item.keys()) + list(item.values()) if t is dict else item
                kinds = _set(_map(_type, items))
                tests = tests or bool(kinds & _PLAIN)
                stack += [] if kinds <= _PLAIN else [v for v in items if _type(v) not in _PLAIN]
                continue
            if t not in checked:
                checked[t] = self._classify(item, t)
            found, lies = checked[t]
            liar = liar or lies
            if found is not None:
                candidate = candidate or (found, t)
            elif not _isinstance(item, type):
                tests = True
            stack += _parts(item)
        return candidate, liar, tests

    def _classify(self, item, t: type) -> tuple:
        """(the candidate's class answering LIBRARY_METHODS for `item`, the candidate's class lying about its type).
        Kept for a type whose classes are all built into the interpreter or an extension (`list`, `ndarray`):
        nobody can change them; a class made by `class` can change at any time."""
        known = self._static.get(t)
        if known is not None:
            return known
        if _isinstance(item, type):  # a class: what its metaclass answers (`isinstance(x, Cls)`)
            found = self._answering(t, _META_METHODS)
            answer = (found, found)
        else:
            answer = (self._answering(t, LIBRARY_METHODS), self._lies(t))
        if not _any(_flags(c) & _HEAPTYPE for c in _mro(t)):
            self._static[t] = answer
        return answer

    def _answering(self, t: type, names: tuple) -> str | None:
        return self._judge._answering_class(t, names, self._untrusted_file, is_tests_code, self._memo)

    def _lies(self, t: type) -> str | None:
        if t in self._static:
            return self._static[t][1]
        found = self._answering(t, ("__getattribute__",))
        return found or self._claims_class(t)

    def _claims_class(self, t: type) -> str | None:
        """The name of `t` where a class of it puts its own `__class__` (`__class__ = int`, or a property): what
        `isinstance` believes of an object whose type is not the class asked. Only the interpreter's descriptor
        on `object` and installed libraries' code (unittest.mock's specs) may say it; no honest class of the
        candidate's needs to."""
        for cls in _mro(t)[:-1]:
            entry = _class_dict(cls).get("__class__", _MISSING)
            if entry is _MISSING:
                continue
            fget = getattr(entry, "fget", None)
            code = getattr(fget if fget is not None else entry, "__code__", None)
            if code is None or self._untrusted_file(code.co_filename):
                return getattr(t, "__qualname__", "?")
        return None


def _members_of_builtin(values: tuple) -> list:
    """The elements of a built-in container (`all([x, y])`); others are iterated by the callee itself."""
    return [v for value in values if _type(value) in _BUILT_IN_CONTAINERS for v in value]


_mro = type.__dict__["__mro__"].__get__  # read past a metaclass that could answer `cls.__mro__` itself
_class_dict = type.__dict__["__dict__"].__get__
_flags = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time (by `class`), whose attributes can be set
_MISSING = object()


def _parts(item) -> list:
    """The elements a comparison of `item` would compare in turn (none for a scalar)."""
    if _isinstance(item, (list, tuple, set, frozenset)):
        return _not_plain(item)
    if _isinstance(item, dict):
        return _not_plain(item.keys()) + _not_plain(item.values())
    module = getattr(_type(item), "__module__", "") or ""
    if _type(item).__name__ == "deque" and module == "collections":
        return _not_plain(list(item))
    if module.startswith("numpy") and getattr(getattr(item, "dtype", None), "kind", None) == "O":
        return _not_plain(list(item.flat))
    if module.startswith("pandas"):
        return _pandas_parts(item)
    return []


def next_of(t: type):
    """`t`'s `__next__` where `t` is an iterator (walked by `in`, one element at a time), else None."""
    return None if t in _BUILT_IN_CONTAINERS else getattr(t, "__next__", None)


def _members(container) -> list:
    try:
        return list(container)
    except Exception:  # noqa: BLE001 - not iterable: nothing in it is the candidate's object
        return []


def _not_plain(items) -> list:
    """The elements that are not plain scalars; a list of numbers or strings is passed over at C speed."""
    if _set(_map(_type, items)) <= _PLAIN:
        return []
    return [v for v in items if _type(v) not in _PLAIN]


def _pandas_parts(item) -> list:
    """The objects in a pandas Series, Index or DataFrame of object columns (numbers compare in numpy's code)."""
    try:
        if hasattr(item, "columns") and hasattr(item, "dtypes"):  # by position: one lookup, any column names
            objects = [i for i, dtype in enumerate(item.dtypes.to_numpy()) if _holds_objects(dtype)]
            return [item.iloc[:, i].to_numpy() for i in objects] + [item.index]
        if _holds_objects(getattr(item, "dtype", None)):
            return [item.to_numpy()]
    except Exception:  # noqa: BLE001 - a frame that cannot be read is compared by pandas as it is
        return []
    return []


def _holds_objects(dtype) -> bool:
    """Whether a pandas column of `dtype` may hold any Python object: numpy's object dtype, a categorical of
    objects; not pandas' string dtypes (kind "O" too, but only strings: their copy as objects costs the most)."""
    return getattr(dtype, "kind", None) == "O" and _type(dtype).__name__ not in ("StringDtype", "ArrowDtype")


# ---------------------------------------------------------------------------------------------- the rewrite


class _Rewrite(ast.NodeTransformer):
    """Comparisons and operators of the tests' code as calls of the placeholders (copied locations, so a failure
    names the test's own line)."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        names = [_type(op).__name__ for op in node.ops]
        if all(n in ("Is", "IsNot") for n in names) or any(_root_name(c) in _PYTEST_HELPERS for c in node.comparators):
            return node  # identity, or pytest's explanation of a failure asking its own `name in locals()`
        if len(names) == 1:
            return _call(COMPARE, node, [ast.Constant(names[0]), node.left, node.comparators[0]])
        # a chain `a < b <= c`: each operand once, and the rest only while the chain holds
        parts = [node.left, *node.comparators]
        lambdas = [ast.Lambda(_NO_ARGS, p) for p in parts[1:]]
        return _call(
            COMPARE + ":chain", node, [ast.Tuple([ast.Constant(n) for n in names], ast.Load()), parts[0]] + lambdas
        )

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        name = ARITHMETIC_OPS.get(_type(node.op).__name__)
        return node if name is None else _call(ARITHMETIC, node, [ast.Constant(name), node.left, node.right])

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        name = _type(node.op).__name__
        if name == "Not":
            node.operand = _call(TRUTH, node.operand, [node.operand])
            return node
        return node if name not in UNARY_OPS else _call(UNARY, node, [ast.Constant(name), node.operand])

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        self.generic_visit(node)
        node.test = _call(TRUTH, node.test, [node.test])
        return node

    def _tested(self, node):  # if / while / a conditional expression: the truth of its test
        self.generic_visit(node)
        node.test = _call(TRUTH, node.test, [node.test])
        return node

    visit_If = visit_While = visit_IfExp = _tested

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)  # every value but the last is tested here; the last where the result is
        node.values = [_call(TRUTH, v, [v]) for v in node.values[:-1]] + node.values[-1:]
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        self.generic_visit(node)
        node.ifs = [_call(TRUTH, c, [c]) for c in node.ifs]
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if _isinstance(func, ast.Name) and func.id in ("abs", "round"):
            call = _call(BUILTIN, node, [func, *node.args])
            call.keywords = node.keywords
            return call
        if _isinstance(func, ast.Name) and func.id in _FRAME_READERS or _root_name(func) in _PYTEST_HELPERS:
            return node  # a built-in that reads its caller's frame, or pytest's own helpers in a rewritten assert
        call = _call(CALL, node, [func, *node.args])
        call.keywords = node.keywords
        return call

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        pure = _pure(node.value)  # read before the rewrite: a store's container read twice must be a name
        self.generic_visit(node)
        if _isinstance(node.slice, (ast.Constant, ast.Slice)):
            return node  # a key that is plain by its syntax
        if _isinstance(node.ctx, ast.Load):
            return _call(ITEM, node, [node.value, _sliced(node.slice)])
        if pure:  # `expected[x] = 1`, `del d[x]`: the key judged as a lookup's (Judge.keyed)
            node.slice = _call(KEYED, node, [copy.deepcopy(node.value), _sliced(node.slice)])
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """`a.b` read by the tests: the library's own value where the candidate rebound it (libraries.Genuine).
        A private name (`self.__x`) is left as written: the compiler mangles it."""
        self.generic_visit(node)
        name = node.attr
        if not _isinstance(node.ctx, ast.Load) or (name[:2] == "__" and name[-2:] != "__"):
            return node
        if _root_name(node) in _PYTEST_HELPERS:
            return node
        return _call(ATTRIBUTE, node, [node.value, ast.Constant(name)])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | list:
        """`from m import b`: `b` read again from `m` as an attribute of the tests' code is (Genuine.imported)."""
        if node.level or not node.module or any(a.name == "*" for a in node.names):
            return node
        rebound = [
            ast.Assign(
                [ast.Name(a.asname or a.name, ast.Store())],
                _call(
                    IMPORTED,
                    node,
                    [ast.Name(a.asname or a.name, ast.Load()), ast.Constant(node.module), ast.Constant(a.name)],
                ),
            )
            for a in node.names
        ]
        return [node, *(ast.fix_missing_locations(ast.copy_location(r, node)) for r in rebound)]

    def visit_Set(self, node: ast.Set) -> ast.AST:
        self.generic_visit(node)
        if all(_isinstance(e, ast.Constant) for e in node.elts):
            return node
        return _call(SET_DISPLAY, node, [ast.Tuple(node.elts, ast.Load())])

    def visit_Dict(self, node: ast.Dict) -> ast.AST:
        self.generic_visit(node)
        if any(k is None for k in node.keys) or all(_isinstance(k, ast.Constant) for k in node.keys):
            return node  # `{**d}` is left as written; constant keys are plain
        pairs = [ast.Tuple([k, v], ast.Load()) for k, v in zip(node.keys, node.values)]
        return _call(DICT_DISPLAY, node, [ast.Tuple(pairs, ast.Load())])

    def visit_With(self, node: ast.With) -> ast.AST:
        self.generic_visit(node)  # each manager entered and exited by the judge (Contexts)
        for item in node.items:
            item.context_expr = _call(WITH, item.context_expr, [item.context_expr])
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST | list:
        """`owner.name = value` in the tests' code (`sys.stdout = io.StringIO()`): the tests' own value, which
        their later reads keep (libraries.Genuine.wrote); the owner read again only where it is a name's chain."""
        kept = [t for t in node.targets if _isinstance(t, ast.Attribute) and _pure(t.value)]
        kept = [(copy.deepcopy(t.value), t.attr) for t in kept]
        self.generic_visit(node)
        if not kept:
            return node
        wrote = [ast.Expr(_call(WROTE, node, [self.visit(owner), ast.Constant(name)])) for owner, name in kept]
        return [node, *(ast.fix_missing_locations(ast.copy_location(w, node)) for w in wrote)]

    def visit_AugAssign(self, node: ast.AugAssign) -> list:
        """`target op= value` as `target = inplace(op, target, value)`, the target's object and index read once
        (into names no source can spell, deleted after), in Python's order: object, index, value."""
        self.generic_visit(node)
        before, target = [], node.target
        if not _isinstance(target, ast.Name):
            held = self._hold(target.value, before, node)
            if _isinstance(target, ast.Attribute):
                target = ast.Attribute(held, target.attr, ast.Store())
            else:
                index = target.slice
                if not (_isinstance(index, ast.Call) and getattr(index.func, "value", None) == KEYED):
                    index = _call(KEYED, node, [ast.Name(held.id, ast.Load()), _sliced(index)])  # Judge.keyed
                target = ast.Subscript(held, self._hold(index, before, node), ast.Store())
        load = ast.copy_location(_type(target)(**{**_fields(target), "ctx": ast.Load()}), node)
        value = _call(INPLACE, node, [ast.Constant(ARITHMETIC_OPS[_type(node.op).__name__]), load, node.value])
        statements = [*before, ast.copy_location(ast.Assign([target], value), node)]
        if before:
            statements.append(
                ast.copy_location(ast.Delete([ast.Name(t.targets[0].id, ast.Del()) for t in before]), node)
            )
        return [ast.fix_missing_locations(s) for s in statements]

    def _hold(self, expr: ast.expr, before: list, where: ast.AST) -> ast.Name:
        self.held = getattr(self, "held", 0) + 1
        name = f"@judged_{self.held}"
        before.append(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], expr), where))
        return ast.Name(name, ast.Load())


# Built-ins that read their caller's frame: called as written (the judge's frame would be theirs)
_FRAME_READERS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec", "breakpoint"})
# The names pytest's assertion rewriter binds its own helpers to (its `@py_assertN` temporaries are the test's values)
_PYTEST_HELPERS = frozenset({"@py_builtins", "@pytest_ar"})


def _pure(expr: ast.expr) -> bool:
    """A name or a chain of attributes of one (`d`, `self.counts`): read twice, it reads the same."""
    while _isinstance(expr, ast.Attribute):
        expr = expr.value
    return _isinstance(expr, ast.Name)


def _root_name(func: ast.expr) -> str:
    while _isinstance(func, (ast.Attribute, ast.Call, ast.Subscript)):
        func = func.value if not _isinstance(func, ast.Call) else func.func
    return func.id if _isinstance(func, ast.Name) else ""


def _sliced(index: ast.expr) -> ast.expr:
    """A subscript's index as a value: `a[1:2]` is `a[slice(1, 2)]` (the built-in bound as a constant)."""
    if _isinstance(index, ast.Slice):
        parts = [p if p is not None else ast.Constant(None) for p in (index.lower, index.upper, index.step)]
        return ast.copy_location(ast.Call(ast.Constant(SLICE), parts, []), index)
    if _isinstance(index, ast.Tuple):
        return ast.Tuple([_sliced(e) for e in index.elts], ast.Load())
    return index


def _fields(node: ast.AST) -> dict:
    return {name: getattr(node, name) for name in node._fields}


_NO_ARGS = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _call(placeholder: str, where: ast.AST, args: list) -> ast.Call:
    return ast.copy_location(ast.Call(ast.copy_location(ast.Constant(placeholder), where), args, []), where)


def judged(tree: ast.AST) -> ast.AST:
    """`tree` (the tests' code) with its comparisons and operators calling the judge (compile, then `bind`)."""
    tree = _Rewrite().visit(tree)
    return ast.fix_missing_locations(tree)


def compile_judged(tree: ast.AST, path: str) -> _CodeType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # "'str' object is not callable": the placeholders
        return compile(judged(tree), path, "exec", dont_inherit=True)


def bind(code: _CodeType, judge: Judge | None) -> _CodeType:
    """`code` and the code nested in it with the placeholders replaced by `judge`'s calls, each marked as the
    tests' (`TESTS_MARK`). `judge` None: marked only (out of process, where nothing is judged)."""
    calls = {}
    if judge is not None:
        calls = {COMPARE: judge.compare, COMPARE + ":chain": _chain(judge), ARITHMETIC: judge.arithmetic}
        calls.update({UNARY: judge.unary, BUILTIN: judge.builtin, TRUTH: judge.truth})
        calls.update({CALL: judge.call, INPLACE: judge.inplace, SLICE: slice, ITEM: judge.item})
        calls.update({SET_DISPLAY: judge.set_display, DICT_DISPLAY: judge.dict_display, WITH: judge.contexts.enter})
        library = judge.library
        calls[KEYED] = judge.keyed
        calls[ATTRIBUTE] = getattr if library is None else library.attribute
        calls[IMPORTED] = _as_imported if library is None else library.imported
        calls[WROTE] = _nothing if library is None else library.wrote

    def swap(c: _CodeType) -> _CodeType:
        consts = tuple(
            swap(k) if _type(k) is _CodeType else calls[k] if _type(k) is str and k in calls else k for k in c.co_consts
        )
        return c.replace(co_consts=(*consts, TESTS_MARK))  # a constant no instruction loads: the tests' mark

    return swap(code)


def _as_imported(value, module: str, name: str):
    return value


def _nothing(*args) -> None:
    return None


def _chain(judge: Judge):
    def chain(names: tuple, first, *rest):
        left, result = first, True
        for name, later in zip(names, rest):
            right = later()
            result = judge.compare(name, left, right)
            if not result:
                return result
            left = right
        return result

    return chain


def pytest_rewrite(judge: Judge | None, rewrite_module) -> None:
    """In pytest's assertion rewriting (`_pytest.assertion.rewrite`), the tests' module judged too: after pytest
    rewrote its asserts (their explanations keep reading the values), and the placeholders bound in the code it
    compiles. The compiled code then holds functions, which no .pyc can store: the caller sets
    `sys.dont_write_bytecode` (a candidate that unsets it makes the import fail, never pass)."""
    original_rewrite, original_compile = rewrite_module.rewrite_asserts, rewrite_module._rewrite_test
    if getattr(original_compile, "__wrapped__", None) is not None:
        return

    def rewrite_asserts(mod, *args, **kwargs):
        original_rewrite(mod, *args, **kwargs)
        if judge is not None:
            judged(mod)

    def rewrite_test(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            stat, co = original_compile(*args, **kwargs)
        return stat, bind(co, judge)

    rewrite_test.__wrapped__ = original_compile
    rewrite_module.rewrite_asserts, rewrite_module._rewrite_test = rewrite_asserts, rewrite_test
    sys.dont_write_bytecode = True
