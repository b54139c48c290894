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

The calls are bound into the compiled code as constants (`bind`), not looked up by name: the candidate
shares the tests' module globals (BigCodeBench) and could rebind any name there.
"""

from __future__ import annotations

import ast
import operator
import sys
import types
import warnings

# Placeholders the rewritten tree calls; `bind` swaps them for the functions in the compiled code's constants.
COMPARE, ARITHMETIC, UNARY = "\0sandbox:compare", "\0sandbox:arithmetic", "\0sandbox:unary"
BUILTIN, TRUTH = "\0sandbox:builtin", "\0sandbox:truth"

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


class Judge:
    """The three calls the rewritten tests make, with what they need: `untrusted(filename)` (code that is not the
    interpreter's or an installed library's) and `report(note)` (a tamper event of kind handle_operator).
    Set once, in the zygote, before any candidate exists (harness.py)."""

    def __init__(self, tamper, untrusted, report) -> None:
        self._families = tamper.JUDGING_OPERATORS
        self._answering_class = tamper.answering_class
        self._untrusted, self._report = untrusted, report

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
        return op(left, right)

    def arithmetic(self, name: str, left, right):
        if _type(left) in _PLAIN and _type(right) in _PLAIN:
            return _ARITH_FUNCS[name](left, right)
        ops = _ARITH_METHODS[name]
        sides = (self.answering(left, ops), self.answering(right, ops))
        if (sides[0] is None) != (sides[1] is None):
            self.refuse(sides[0] or sides[1], f"compute ({name}) with a value of the tests'")
        return _ARITH_FUNCS[name](left, right)

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

    def truth(self, value):
        """`assert x`, `if x`, `not x`, `x and y` in the tests: the candidate's class does not say whether its object
        is true (a `__bool__` or `__len__` of its own would answer True to every check); one without either is true
        by Python's rule, as out of process. Returns `value`, whose truth Python then takes."""
        if _type(value) not in _PLAIN and _type(value) not in _BUILT_IN_CONTAINERS:
            found = self._answering_class(_type(value), ("__bool__", "__len__"), self._untrusted, is_tests_code)
            if found is not None:
                self.refuse(found, "say whether it is true")
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

    def refuse(self, cls: str, what: str) -> None:
        note = f"the tests' own comparison would be decided by the candidate's class {cls} (asked to {what})"
        self._report(note)
        raise AssertionError(
            f"an object of the candidate's class {cls} was asked to {what}: the tests compare the candidate's "
            "values as data (built-in, numpy or pandas values), not by the candidate's operators"
        )


_BUILTIN_METHODS = {_id(abs): "__abs__", _id(round): "__round__"}
_BUILT_IN_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
_PLAIN = frozenset({int, float, complex, str, bytes, bool, type(None), range, slice, type(Ellipsis)})
_SYMBOLS = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "In": "in", "NotIn": "not in"}


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
        if hasattr(item, "columns") and hasattr(item, "dtypes"):
            return [item[c].to_numpy() for c in item.columns if item[c].dtype.kind == "O"] + [item.index]
        if getattr(getattr(item, "dtype", None), "kind", None) == "O":
            return [item.to_numpy()]
    except Exception:  # noqa: BLE001 - a frame that cannot be read is compared by pandas as it is
        return []
    return []


# ---------------------------------------------------------------------------------------------- the rewrite


class _Rewrite(ast.NodeTransformer):
    """Comparisons and operators of the tests' code as calls of the placeholders (copied locations, so a failure
    names the test's own line)."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        names = [_type(op).__name__ for op in node.ops]
        if all(n in ("Is", "IsNot") for n in names):
            return node
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
        if _isinstance(node.func, ast.Name) and node.func.id in ("abs", "round"):
            call = _call(BUILTIN, node, [node.func, *node.args])
            call.keywords = node.keywords
            return call
        return node


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

    def swap(c: _CodeType) -> _CodeType:
        consts = tuple(
            swap(k) if _type(k) is _CodeType else calls[k] if _type(k) is str and k in calls else k for k in c.co_consts
        )
        return c.replace(co_consts=(*consts, TESTS_MARK))  # a constant no instruction loads: the tests' mark

    return swap(code)


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
