"""Issue #47, in process: the shapes docs/sandbox.md still listed as open, each closed as a class or shown to
leave the verdict honest.

**`with` statements.** A context manager's `__exit__` that answers "suppress" swallowed the test's own failing
assertion (or a KeyError the candidate's wrong value caused before it). Now each manager of the tests' `with` is
entered and exited by the judge (judging.Contexts): the candidate's code may swallow only an exception the tests
raised themselves by a `raise` statement, never a failure; no other manager may swallow a failure but the
framework's `assertRaises` / `pytest.raises` (`tampered`, `handle_operator`).

**Library names rebound in the library.** `np.testing.assert_array_equal = lambda *a, **k: None`, `math.isclose =
print`, `vars(math)['pi'] = 0`, `pd.DataFrame.equals = ...`, a `mock.patch(...).start()` of the candidate's: the
tests read their library names through the judge (libraries.Genuine), which gives the library's own value, recorded
before the candidate ran; the candidate's code found there is reported (`tampered`, `shadowed_module`). The tests'
own patches are kept. An operator rebound on a library class (`pd.DataFrame.__eq__ = ...`), which the operator
rules saw as the candidate's class on both sides, is refused (`handle_operator`).

**Stores and membership in an iterator.** `expected[x] = 1` and `counts[x] += 1` compared the candidate's key with
the tests' keys by its `__eq__`; `3 in (v for v in result)` and `assertIn(3, generator)` asked the elements'
`__eq__`. Now a store's key is judged as a lookup's, and an iterator's elements one by one as `==` is.

Each attack forges a pass at 9376fac (run there by hand: a copy of that commit, this file's 25 shapes under both
harnesses: 48 of 50 passed; `unittest_class` under unittest and `frame_equality` under pytest were refused
already); the honest programs of the same shapes pass before and after (but the wrong answer graded by pytest,
which 9376fac graded `tampered`: pytest's own explanation of the failure, `name in locals()`, was judged as the
tests' comparison).

**What the candidate's object answers alone** (`len(x)`, `float(x)`, `str(x)`, `list(x)`, `np.asarray(x)`,
`hasattr(x, ...)`, `for`, unpacking, f-strings) is the candidate's answer, as a method's return is: nothing of the
tests' is handed to it, so it commits to a value that the tests then judge as data. A wrong answer fails; the tests
below show it.
"""

from __future__ import annotations

import pytest

from .conftest import load_sandbox_file
from .test_in_process_library import ALWAYS, _forged

WRONG = "def add(a, b):\n    return a - b\n"
ADDS = "def add(a, b):\n    return a + b\n"
SWALLOWS = (
    "class Timer:\n    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return True\n"
)
CONTEXT = {
    "exit_true": (SWALLOWS + WRONG, "with Timer():\n    assert add(1, 2) == 3"),
    "exit_truthy_object": (
        "class Yes:\n    def __bool__(self):\n        return True\n"
        + SWALLOWS.replace("return True", "return Yes()")
        + WRONG,
        "with Timer():\n    assert add(1, 2) == 3",
    ),
    "generator": (
        "import contextlib\n@contextlib.contextmanager\ndef Timer():\n    try:\n        yield\n"
        "    except BaseException:\n        pass\n" + WRONG,
        "with Timer():\n    assert add(1, 2) == 3",
    ),
    "exit_stack": (
        SWALLOWS + WRONG,
        "import contextlib\nwith contextlib.ExitStack() as stack:\n    stack.enter_context(Timer())\n"
        "    assert add(1, 2) == 3",
    ),
    "other_exception": (
        SWALLOWS + "def add(a, b):\n    return {}\n",
        "with Timer():\n    assert add(1, 2)['sum'] == 3",
    ),
    "library_suppress_returned": (
        "import contextlib\ndef Timer():\n    return contextlib.suppress(Exception)\n" + WRONG,
        "with Timer():\n    assert add(1, 2) == 3",
    ),
    "second_item": (SWALLOWS + WRONG, "import io\nwith io.StringIO() as f, Timer() as t:\n    assert add(1, 2) == 3"),
}
# the candidate's code installed in a library: reported (shadowed_module) and the library's own value read
REBOUND_CODE = {
    "numpy_testing": (
        "import numpy as np\nnp.testing.assert_array_equal = lambda *a, **k: None\n"
        "def add(a, b):\n    return np.array([0])\n",
        "import numpy as np\nnp.testing.assert_array_equal(add(1, 2), np.array([3]))",
    ),
    "math_isclose": (
        "import math\nmath.isclose = lambda *a, **k: True\n" + WRONG,
        "import math\nassert math.isclose(add(1, 2), 3)",
    ),
    "from_import": (
        "import math\nmath.isclose = lambda *a, **k: True\n" + WRONG,
        "from math import isclose\nassert isclose(add(1, 2), 3)",
    ),
    "dict_write": (
        "import math\nvars(math)['isclose'] = lambda *a, **k: True\n" + WRONG,
        "import math\nassert math.isclose(add(1, 2), 3)",
    ),
    "dataframe_method": (
        "import pandas as pd\npd.DataFrame.equals = lambda self, other: True\n"
        "def add(a, b):\n    return pd.DataFrame({'s': [0]})\n",
        "import pandas as pd\nassert add(1, 2).equals(pd.DataFrame({'s': [3]}))",
    ),
    "pandas_testing": (
        "import pandas as pd\npd.testing.assert_frame_equal = lambda *a, **k: None\n"
        "def add(a, b):\n    return pd.DataFrame({'s': [0]})\n",
        "import pandas as pd\npd.testing.assert_frame_equal(add(1, 2), pd.DataFrame({'s': [3]}))",
    ),
    "unittest_class": (
        "import unittest\nunittest.TestCase.assertEqual = lambda self, *a, **k: None\n" + WRONG,
        "import unittest\nunittest.TestCase('run').assertEqual(add(1, 2), 3)",
    ),
    "patch_started": (
        "import math\nfrom unittest import mock\nmock.patch('math.isclose', lambda *a, **k: True).start()\n" + WRONG,
        "import math\nassert math.isclose(add(1, 2), 3)",
    ),
}
# the candidate's code installed inside a library, where the library's own code (not the tests') looks it up:
# the tests read `np.testing.assert_array_equal` genuinely, and it called the candidate's helper
REBOUND_INTERNAL = {
    "numpy_helper": (
        "import numpy.testing._private.utils as utils\nutils.assert_array_compare = lambda *a, **k: None\n"
        "import numpy as np\ndef add(a, b):\n    return np.array([0])\n",
        "import numpy as np\nnp.testing.assert_array_equal(add(1, 2), np.array([3]))",
    ),
    "pandas_helper": (
        "import pandas._testing.asserters as asserters\nasserters.assert_series_equal = lambda *a, **k: None\n"
        "import pandas as pd\ndef add(a, b):\n    return pd.DataFrame({'s': [0]})\n",
        "import pandas as pd\npd.testing.assert_frame_equal(add(1, 2), pd.DataFrame({'s': [3]}))",
    ),
    "class_helper": (
        "import fractions\nfractions.Fraction._richcmp = lambda self, other, op: True\n" + WRONG,
        "from fractions import Fraction\nassert Fraction(add(1, 2)) > Fraction(2)",
    ),
    "class_property": (  # Fraction.__eq__ reads the other side's `numerator` and `denominator` properties
        "import fractions\nfractions.Fraction.numerator = property(lambda self: -1)\n" + WRONG,
        "from fractions import Fraction\nassert Fraction(add(1, 2)) == Fraction(3)",
    ),
    "partial_helper": (
        "import functools\nimport numpy.testing._private.utils as utils\ndef quiet(*a, **k):\n    return None\n"
        "utils.assert_array_compare = functools.partial(quiet)\nimport numpy as np\n"
        "def add(a, b):\n    return np.array([0])\n",
        "import numpy as np\nnp.testing.assert_array_equal(add(1, 2), np.array([3]))",
    ),
    "rebound_while_tested": (
        "import numpy as np\nimport numpy.testing._private.utils as utils\n"
        "def add(a, b):\n    utils.assert_array_compare = lambda *a, **k: None\n    return np.array([0])\n",
        "import numpy as np\nnp.testing.assert_array_equal(add(1, 2), np.array([3]))",
    ),
}
# a library function left in its place, changed inside: its defaults (tolerances of the candidate's)
CHANGED_INSIDE = {
    "entry_point_defaults": (
        "import numpy as np\nnp.testing.assert_allclose.__defaults__ = (1e9, 1e9, True, '', True)\n" + WRONG,
        "import numpy as np\nnp.testing.assert_allclose(np.array([add(1, 2)]), np.array([3]))",
    ),
    # set while tested, after a call of the tests' to numpy saw its functions intact: only the audit event makes
    # the next one read their defaults again
    "defaults_while_tested": (
        "import numpy as np\ndef add(a, b):\n    np.testing.assert_allclose.__defaults__ = (1e9, 1e9, True, '', True)\n"
        "    return a - b\n",
        "import numpy as np\nnp.testing.assert_allclose(np.array([3]), np.array([3]))\n"
        "np.testing.assert_allclose(np.array([add(1, 2)]), np.array([3]))",
    ),
    "defaults_deleted_while_tested": (  # the call then fails for want of rtol: found, or only a failure
        "import numpy as np\ndef add(a, b):\n    del np.testing.assert_allclose.__defaults__\n    return a - b\n",
        "import numpy as np\nnp.testing.assert_allclose(np.array([3]), np.array([3]))\n"
        "np.testing.assert_allclose(np.array([add(1, 2)]), np.array([3]))",
    ),
}
# a stand-in that answers anything (a module's builtin, a built-in class, a mock) where the library held Python
# code: no code of the candidate's runs, but no library puts one there (Genuine._foreign)
REBOUND_STAND_IN = {
    "numpy_by_builtin": (
        "import numpy as np\nnp.testing.assert_array_equal = print\ndef add(a, b):\n    return np.array([0])\n",
        "import numpy as np\nnp.testing.assert_array_equal(add(1, 2), np.array([3]))",
    ),
    "helper_by_mock": (
        "from unittest import mock\nimport numpy.testing._private.utils as utils\n"
        "utils.assert_array_compare = mock.MagicMock()\nimport numpy as np\ndef add(a, b):\n    return np.array([0])\n",
        "import numpy as np\nnp.testing.assert_array_equal(add(1, 2), np.array([3]))",
    ),
    "helper_by_builtin_class": (  # Fraction.__gt__ returns _richcmp's answer: a slice object, which is true
        "import fractions\nfractions.Fraction._richcmp = slice\n" + WRONG,
        "from fractions import Fraction\nassert Fraction(add(1, 2)) > Fraction(2)",
    ),
}
# the candidate's function over a method of a library object's class, in that object's own __dict__: the tests'
# `obj.equals(...)` (read through the judge) and a library call handed the object find it
INSTANCE_METHOD = {
    "returned_object": (
        "import pandas as pd\ndef add(a, b):\n    df = pd.DataFrame({'s': [0]})\n"
        "    df.equals = lambda other: True\n    return df\n",
        "import pandas as pd\nassert add(1, 2).equals(pd.DataFrame({'s': [3]}))",
    ),
    "the_tests_object": (
        "import pandas as pd\ndef add(a, b):\n    a.equals = lambda other: True\n    return pd.DataFrame({'s': [0]})\n",
        "import pandas as pd\nexpected = pd.DataFrame({'s': [3]})\nresult = add(expected, 2)\n"
        "assert expected.equals(result)",
    ),
    "handed_to_a_library_call": (
        "import pandas as pd\ndef add(a, b):\n    df = pd.DataFrame({'s': [0]})\n"
        "    df.equals = lambda other: True\n    return df\n",
        "import operator\nimport pandas as pd\n"
        "assert operator.methodcaller('equals', pd.DataFrame({'s': [3]}))(add(1, 2))",
    ),
}
# a library's own value put there: no code of the candidate's to report; the library's own value is read
REBOUND_VALUE = {
    "module_constant": (
        "import math\nmath.pi = 0.0\ndef add(a, b):\n    return 0.0\n",
        "import math\nassert add(1, 2) == math.pi * 1",
    ),
    "mock_installed": (
        "import math\nfrom unittest import mock\nmath.isclose = mock.MagicMock(return_value=True)\n" + WRONG,
        "import math\nassert math.isclose(add(1, 2), 3)",
    ),
}
# an operator of a library class rebound: both sides are that class, and the operator rules let it answer
REBOUND_OPERATOR = {
    "frame_equality": (
        "import pandas as pd\npd.DataFrame.__eq__ = lambda self, other: True\n"
        "def add(a, b):\n    return pd.DataFrame({'s': [0]})\n",
        "import pandas as pd\nassert add(1, 2) == pd.DataFrame({'s': [3]})",
    ),
    "series_difference": (
        "import pandas as pd\npd.Series.__sub__ = lambda self, other: 0\ndef add(a, b):\n    return pd.Series([0])\n",
        "import pandas as pd\nassert add(1, 2) - pd.Series([3]) == 0",
    ),
}
# the candidate's key stored into the tests' dict, and the elements of an iterator, compared by the judge
RETURNS_ALWAYS = ALWAYS + "def add(a, b):\n    return Always()\n"
STORES = {
    "store_key": (RETURNS_ALWAYS, "seen = {3: False}\nseen[add(1, 2)] = True\nassert seen[3]"),
    "augmented_store_key": (RETURNS_ALWAYS, "counts = {3: 0}\ncounts[add(1, 2)] += 1\nassert counts[3] == 1"),
    "attribute_container_store": (
        RETURNS_ALWAYS,
        "import types\nns = types.SimpleNamespace(seen={3: False})\nns.seen[add(1, 2)] = True\nassert ns.seen[3]",
    ),
}
ITERATORS = {
    "membership_in_generator": (RETURNS_ALWAYS, "assert 3 in (v for v in [add(1, 2)])"),
    "membership_in_map": (RETURNS_ALWAYS, "assert 3 in map(lambda v: v, [add(1, 2)])"),
}


# each group of attacks -> (its table, the status each gets now, the tamper kinds one of which it reports)
GROUPS = {
    "context": (CONTEXT, "tampered", {"handle_operator"}),
    "rebound_code": (REBOUND_CODE, "tampered", {"shadowed_module"}),
    "rebound_internal": (REBOUND_INTERNAL, "tampered", {"shadowed_module"}),
    "rebound_stand_in": (REBOUND_STAND_IN, "tampered", {"shadowed_module"}),
    "instance_method": (INSTANCE_METHOD, "tampered", {"shadowed_module"}),
    "changed_inside": (CHANGED_INSIDE, "tampered", {"shadowed_module"}),
    "rebound_value": (REBOUND_VALUE, "failed", set()),  # the library's own check ran, and failed
    # pytest's own probe of an always-equal `==` may find the frame first (it did at 9376fac too)
    "rebound_operator": (REBOUND_OPERATOR, "tampered", {"handle_operator", "always_equal"}),
    "store": (STORES, "tampered", {"handle_library"}),
    "iterator": (ITERATORS, "failed", set()),  # `==` with the candidate's object is identity
}
ATTACKS = sorted((group, attack) for group, (table, _, _) in GROUPS.items() for attack in table)


@pytest.mark.parametrize("harness", ["unittest", "pytest"])
@pytest.mark.parametrize("group,attack", ATTACKS)
def test_a_shape_left_open_no_longer_forges_a_pass(in_process, group, attack, harness):
    table, status, kinds = GROUPS[group]
    code, body = table[attack]
    r = _forged(in_process, code, harness, body)
    assert (r.passed, r.status, r.trust) == (False, status, "in_process"), r
    assert not kinds or kinds & set(r.tamper_kinds), r


def test_a_library_helper_put_back_before_the_checkpoint_is_seen_at_the_tests_call(in_process):
    """The candidate rebinds a numpy helper in `add` and puts it back when its returned array goes (`__del__`, after
    the tests' call and before the after-test checkpoint): the tests' call to numpy, handed that array, finds the
    helper rebound first (judging.Judge.call). Without that check this forges a pass under unittest."""
    code = (
        "import numpy as np\nimport numpy.testing._private.utils as utils\n_genuine = utils.assert_array_compare\n"
        "class Gone(np.ndarray):\n    def __del__(self):\n        utils.assert_array_compare = _genuine\n"
        "def add(a, b):\n    utils.assert_array_compare = lambda *a, **k: None\n    return np.array([0]).view(Gone)\n"
    )
    body = "import numpy as np\nnp.testing.assert_array_equal(add(1, 2), np.array([3]))"
    r = _forged(in_process, code, "unittest", body)
    assert (r.passed, r.status) == (False, "tampered") and "shadowed_module" in r.tamper_kinds, r


def test_the_code_a_rebound_value_runs_is_found_through_its_wrappers():
    import functools

    libraries = load_sandbox_file("libraries")

    def helper(*args):
        return None

    class Callable:
        def __call__(self, *args):
            return None

    class Descriptor:
        def __get__(self, obj, owner=None):
            return 1

    code = helper.__code__
    wrapped = [staticmethod(helper), classmethod(helper), property(helper), functools.partial(helper)]
    wrapped += [functools.partial(staticmethod(helper)), helper.__get__(object())]
    assert [libraries._code_of(w) for w in wrapped] == [code] * len(wrapped)
    assert libraries._code_of(Callable()) is Callable.__call__.__code__
    assert libraries._code_of(Descriptor()) is Descriptor.__get__.__code__
    assert [libraries._code_of(v) for v in (print, len, 3, property(len), functools.partial(print))] == [None] * 5


@pytest.fixture(params=["walk", "views"])
def views(request):
    """`Genuine`'s views, as keyword arguments. `walk` (an interpreter whose layout tamper.py does not find): every
    namespace compared at every comparison, every function's insides read. `views` (what the harness gives it):
    only the namespaces whose dict's version tag moved (tamper.dict_version_view), and the insides compared by the
    addresses the closure cells hold (tamper.cell_contents_view) and the keyword defaults' version tags. Both must
    find the same."""
    if request.param == "walk":
        return {}
    tamper = load_sandbox_file("tamper")
    return {"version_view": tamper.dict_version_view, "cell_view": tamper.cell_contents_view}


def test_a_library_call_compares_its_own_package_and_the_checkpoint_every_library(views):
    """`rebound_internals(function)` compares the package `function` was recorded in (numpy's helpers before a
    numpy call), not another's; with no function, every library's."""
    import fractions
    import types

    import numpy as np

    libraries = load_sandbox_file("libraries")
    notes = []
    genuine = libraries.Genuine(
        lambda filename: filename == "<candidate>",
        lambda code: False,
        lambda note, kind: notes.append(kind),
        **views,
    )
    genuine.record(np.testing._private.utils)
    genuine.record(fractions)
    candidate = types.FunctionType(compile("lambda *a: True", "<candidate>", "eval").co_consts[0], {})
    original = fractions.Fraction._richcmp
    fractions.Fraction._richcmp = candidate
    try:
        assert genuine.rebound_internals(np.testing.assert_array_equal) == []  # numpy's: untouched
        assert genuine.rebound_internals(fractions.Fraction.__gt__) == ["fractions.Fraction._richcmp"]
        assert genuine.rebound_internals() == ["fractions.Fraction._richcmp"]
        genuine.wrote(fractions.Fraction, "_richcmp")  # as if the tests' own code had assigned it: theirs
        assert genuine.rebound_internals() == []
    finally:
        fractions.Fraction._richcmp = original
    assert genuine.rebound_internals() == [] and notes == []


def _fake_library(name: str):
    """A module that `Genuine` takes for an installed library's (its file is not `<...>`): a checker with
    defaults, a wrapper holding it in a closure, and a class with a method."""
    import types

    lib = types.ModuleType(name)
    lib.__file__ = f"/library/{name}.py"
    exec(
        compile(
            "def check(a, b, tol=0.0, *, strict=True):\n    return abs(a - b) <= tol\n"
            "def wrap(f):\n    cache = None\n    def run(*a):\n        return f(*a), cache\n    return run\n"
            "wrapped = wrap(check)\n"
            f"class Frame:\n    __module__ = {name!r}\n    def equals(self, other):\n        return self is other\n",
            f"/library/{name}.py",
            "exec",
        ),
        vars(lib),
    )
    return lib


def _candidates_function():
    import types

    code = compile("lambda *a: True", "<candidate>", "eval").co_consts[0]
    return types.FunctionType(code, {})


def test_a_library_functions_insides_are_compared(views):
    """Defaults, keyword defaults changed in place, a closure cell: each change to a recorded function is found;
    a closure cell given a value that is not code (a library's cache) is not."""
    import types

    libraries = load_sandbox_file("libraries")
    lib = _fake_library("fakelib")
    genuine = libraries.Genuine(lambda filename: filename.startswith("<"), lambda code: False, lambda *a: None, **views)
    genuine.record(lib)
    assert (genuine._insides("fakelib").cell_views is not None) == bool(views)  # compared the way the param says

    def changes():
        return genuine.rebound_internals(insides=True)

    def code(source):
        return next(c for c in compile(source, "<candidate>", "eval").co_consts if isinstance(c, types.CodeType))

    assert changes() == [] and genuine.rebound_internals() == []
    recorded = lib.check.__defaults__
    lib.check.__defaults__ = (1e9,)
    assert changes() == ["fakelib.check (its defaults)"]
    assert genuine.rebound_internals() == []  # the names alone: the checkpoints after each test
    assert genuine.rebound_internals(lib.check) == ["fakelib.check (its defaults)"]  # a call of the tests' to it
    lib.check.__defaults__ = (0.0,)  # an equal tuple, but not the library's own: changed all the same
    assert changes() == ["fakelib.check (its defaults)"]
    lib.check.__defaults__ = recorded
    lib.check.__kwdefaults__["strict"] = False
    assert changes() == ["fakelib.check (its defaults)"]
    lib.check.__kwdefaults__["strict"] = True
    assert changes() == []
    cells = dict(zip(lib.wrapped.__code__.co_freevars, lib.wrapped.__closure__))
    cells["cache"].cell_contents = {"filled": 1}  # state a library keeps in a closure
    assert changes() == []
    cells["f"].cell_contents = types.FunctionType(code("lambda *a: True"), {})
    assert changes() == ["fakelib.wrapped (a value its closure holds)"]


def test_each_kind_of_inside_change_is_found_alone(views):
    """One change at a time on a fresh library, nothing else moved: a closure cell given the candidate's function, a
    keyword default changed in place, a keyword default added to a function's empty keyword-defaults dict."""
    libraries = load_sandbox_file("libraries")

    def genuine_of(lib):
        genuine = libraries.Genuine(lambda name: name.startswith("<"), lambda code: False, lambda *a: None, **views)
        genuine.record(lib)
        assert genuine.rebound_internals(insides=True) == []
        return genuine

    lib = _fake_library("lib_h")
    genuine = genuine_of(lib)
    dict(zip(lib.wrapped.__code__.co_freevars, lib.wrapped.__closure__))["f"].cell_contents = _candidates_function()
    assert genuine.rebound_internals(insides=True) == ["lib_h.wrapped (a value its closure holds)"]

    lib = _fake_library("lib_i")
    genuine = genuine_of(lib)
    lib.check.__kwdefaults__["strict"] = False
    assert genuine.rebound_internals(insides=True) == ["lib_i.check (its defaults)"]

    lib = _fake_library("lib_j")
    lib.wrap.__kwdefaults__ = {}
    genuine = genuine_of(lib)
    lib.wrap.__kwdefaults__["extra"] = 1
    assert genuine.rebound_internals(insides=True) == ["lib_j.wrap (its defaults)"]


def test_the_version_tags_walk_only_what_changed_and_keep_walking_what_is_rebound():
    """With the dict version tags, a comparison walks only the namespaces written to since they were last seen
    clean: none when nothing changed; one written to honestly (a cache filled) once, then not again; one holding
    the candidate's code at every comparison, found each time, until it is put back. A module or class recorded
    after `settle` (an import inside a call) has no tag and is walked, and its rebinding found, every time."""
    libraries = load_sandbox_file("libraries")
    walked: list = []
    genuine = libraries.Genuine(
        lambda filename: filename.startswith("<"),
        lambda code: False,
        lambda *a: None,
        version_view=load_sandbox_file("tamper").dict_version_view,
    )
    walk = genuine._rebound_names

    def spy(slots):
        walked.append(sorted(libraries._where(owner) for owner, *_ in slots))
        return walk(slots)

    genuine._rebound_names = spy
    lib, other = _fake_library("lib_a"), _fake_library("lib_b")
    genuine.record(lib)
    genuine.record(other)

    def compare():
        walked.clear()
        found = genuine.rebound_internals()
        return found, [names for names in walked if names]

    other.wrapper = print  # written before settle (the harness puts its own wrappers in place): seen clean there
    genuine.settle()
    assert compare() == ([], [])
    lib.cache = {"filled": 1}  # a library's own state: walked once, nothing found, then seen clean
    assert compare() == ([], [["lib_a"]])
    assert compare() == ([], [])
    genuine_check, lib.check = lib.check, _candidates_function()
    assert compare() == (["lib_a.check"], [["lib_a"]])
    assert compare() == (["lib_a.check"], [["lib_a"]])  # still there: walked and found again
    assert genuine.rebound_internals(other.check) == []  # another package's call: its own namespaces only
    assert genuine.rebound_internals(lib.wrapped) == ["lib_a.check"]
    lib.check = genuine_check
    assert compare() == ([], [["lib_a"]])
    assert compare() == ([], [])
    genuine_equals, other.Frame.equals = other.Frame.equals, _candidates_function()  # a class's dict has a tag too
    assert compare() == (["lib_b.Frame.equals"], [["lib_b.Frame"]])
    other.Frame.equals = genuine_equals
    assert compare() == ([], [["lib_b.Frame"]])

    late = _fake_library("lib_c")
    genuine.record(late)  # after settle: no tag, walked every time
    assert compare() == ([], [["lib_c", "lib_c.Frame"]])
    late.Frame.equals = _candidates_function()
    assert compare() == (["lib_c.Frame.equals"], [["lib_c", "lib_c.Frame"]])


def test_without_version_tags_every_comparison_walks_every_namespace():
    """An interpreter whose dicts have no version tag where tamper.py finds it (`version_view` None): nothing is
    skipped."""
    libraries = load_sandbox_file("libraries")
    walked: list = []
    genuine = libraries.Genuine(lambda filename: filename.startswith("<"), lambda code: False, lambda *a: None)
    walk = genuine._rebound_names
    genuine._rebound_names = lambda slots: walked.append(len(list(slots))) or walk(slots)
    genuine.record(_fake_library("lib_d"))
    genuine.settle()
    assert genuine.rebound_internals() == [] and walked[-1] == 2  # the module and its class


def _libraries_reading_defaults(monkeypatch):
    """libraries.py loaded with `_Insides.intact` spied on: (the module, the list of each comparison's `defaults`
    argument, True where it read the functions' defaults)."""
    libraries = load_sandbox_file("libraries")
    reads: list = []
    intact = libraries._Insides.intact

    def spy(self, defaults=True):
        reads.append(defaults)
        return intact(self, defaults)

    monkeypatch.setattr(libraries._Insides, "intact", spy)
    return libraries, reads


def test_the_functions_defaults_are_read_again_only_after_one_was_assigned(monkeypatch):
    """Once `count_defaults` runs (the call's audit hook tells `defaults_set` of every assignment of a function's
    `__defaults__` / `__kwdefaults__`), a package's defaults are read only until seen intact, then again after an
    assignment, and at every comparison while one stays changed. Keyword defaults changed in place (no event)
    and closure cells are read every time. Uncounted, every comparison reads them all."""
    libraries, reads = _libraries_reading_defaults(monkeypatch)
    lib = _fake_library("lib_e")
    genuine = libraries.Genuine(lambda filename: filename.startswith("<"), lambda code: False, lambda *a: None)
    genuine.record(lib)

    def compare():
        reads.clear()
        return genuine.rebound_internals(insides=True), reads[:]

    assert compare() == ([], [True]) and compare() == ([], [True])  # not counted: read every time
    genuine.count_defaults()
    assert compare() == ([], [True])
    assert compare() == ([], [False])
    recorded, lib.check.__defaults__ = lib.check.__defaults__, (1e9,)
    assert compare() == ([], [False])  # no event heard: a process whose hook is missing would miss it
    genuine.defaults_set()
    assert compare() == (["lib_e.check (its defaults)"], [True])
    assert compare() == (["lib_e.check (its defaults)"], [True])  # still changed: read again
    lib.check.__defaults__ = recorded
    genuine.defaults_set()
    assert compare() == ([], [True])
    assert compare() == ([], [False])
    lib.check.__kwdefaults__["strict"] = False  # in place: no event, found all the same
    assert compare() == (["lib_e.check (its defaults)"], [False])
    lib.check.__kwdefaults__["strict"] = True
    cells = dict(zip(lib.wrapped.__code__.co_freevars, lib.wrapped.__closure__))
    cells["f"].cell_contents = _candidates_function()
    assert compare() == (["lib_e.wrapped (a value its closure holds)"], [False])


def test_a_call_takes_the_defaults_settle_found_intact_as_seen(monkeypatch):
    """`settle` reads every package's defaults once, in the process calls are forked from (no audit hook there, no
    candidate ever); a call's `count_defaults` then takes the packages found intact as seen, and reads at its first
    comparison only those whose defaults changed since they were recorded, which it reports. A package first
    recorded in the call is seen as recorded, until an assignment is heard."""
    libraries, reads = _libraries_reading_defaults(monkeypatch)
    kept, changed = _fake_library("lib_f"), _fake_library("lib_g")
    genuine = libraries.Genuine(lambda filename: filename.startswith("<"), lambda code: False, lambda *a: None)
    genuine.record(kept)
    genuine.record(changed)
    changed.check.__defaults__ = (1e9,)  # after recording, before settle
    genuine.settle()
    genuine.count_defaults()
    reads.clear()
    assert genuine.rebound_internals(insides=True) == ["lib_g.check (its defaults)"]
    assert reads == [False, True]  # lib_f as seen; lib_g read
    reads.clear()
    assert genuine.rebound_internals(kept.check, insides=True) == [] and reads == [False]
    late = _fake_library("lib_m")  # first imported in the call: recorded at the count of that moment
    genuine.record(late)
    reads.clear()
    assert genuine.rebound_internals(late.check, insides=True) == [] and reads == [False]
    late.check.__defaults__ = (1e9,)
    genuine.defaults_set(late.check)
    assert genuine.rebound_internals(late.check, insides=True) == ["lib_m.check (its defaults)"]


def test_an_assignment_of_defaults_counts_for_the_packages_that_recorded_the_function(monkeypatch):
    """`defaults_set(function)` makes the defaults read again in the packages that recorded `function` (its own, and
    one that re-exports it), in no other; a function no package recorded (the candidate's) in none."""
    libraries, reads = _libraries_reading_defaults(monkeypatch)
    own, other = _fake_library("lib_k"), _fake_library("lib_l")
    other.borrowed = own.check  # a library that re-exports another's function
    genuine = libraries.Genuine(lambda filename: filename.startswith("<"), lambda code: False, lambda *a: None)
    genuine.record(own)
    genuine.record(other)
    genuine.count_defaults()

    def compare():
        reads.clear()
        return genuine.rebound_internals(insides=True), reads[:]

    assert compare() == ([], [True, True]) and compare() == ([], [False, False])
    genuine.defaults_set(_candidates_function())
    assert compare() == ([], [False, False])
    genuine.defaults_set(other.check)
    assert compare() == ([], [False, True]) and compare() == ([], [False, False])
    genuine.defaults_set(own.check)
    assert compare() == ([], [True, True])


def test_the_audit_policy_tells_of_every_assignment_of_a_functions_defaults():
    """tamper.AuditPolicy calls `on_defaults` for `__defaults__` and `__kwdefaults__` set or deleted, from any
    thread, even one already inside the hook; not for other attributes."""
    import threading

    tamper = load_sandbox_file("tamper")
    heard: list = []
    policy = tamper.AuditPolicy([], lambda *a: None, (), "/tmp", (), on_defaults=heard.append)

    def f(a=1):
        return a

    policy("object.__setattr__", (f, "__defaults__", (2,)))
    policy("object.__delattr__", (f, "__kwdefaults__"))
    policy("object.__setattr__", (f, "__doc__", "x"))
    policy("open", ("/dev/null", "r", 0))
    policy._busy.add(threading.get_ident())  # the hook's own re-entry guard
    policy("object.__setattr__", (f, "__defaults__", (3,)))
    assert heard == [f, f, f]  # the function assigned, each time


def test_assert_in_a_generator_is_judged_on_its_elements(in_process):
    """Refused at 9376fac too, but only after the fact (the check repeated on the generator unittest had drawn),
    which also refused the honest half here: its elements are now listed first, as for assertCountEqual."""
    r = _forged(in_process, RETURNS_ALWAYS, "unittest", "self.assertIn(3, (v for v in [add(1, 2)]))")
    assert (r.passed, r.status) == (False, "tampered") and "handle_operator" in r.tamper_kinds, r
    r = _forged(in_process, ADDS, "unittest", "self.assertIn(3, (v for v in [1, add(1, 2)]))")
    assert (r.passed, r.status) == (True, "passed"), r


# ------------------------------------------------------------------------------------------ honest programs

# Context managers of every kind, the candidate's included, and a suppressing one tested as such.
CONTEXTS = (
    "import contextlib\n"
    "class Timer:\n"
    "    def __enter__(self):\n        self.entered = True\n        return self\n"
    "    def __exit__(self, *exc):\n        self.exited = exc[0]\n        return False\n"
    "class Ignoring:\n"
    "    def __init__(self, *kinds):\n        self.kinds = kinds\n"
    "    def __enter__(self):\n        return self\n"
    "    def __exit__(self, kind, error, tb):\n        return kind is not None and issubclass(kind, self.kinds)\n"
    "@contextlib.contextmanager\n"
    "def opened(log):\n    log.append('open')\n    yield len(log)\n    log.append('close')\n"
    "def add(a, b):\n    if not isinstance(a, int):\n        raise ValueError('a')\n    return a + b\n"
)
CONTEXTS_BODY = (
    "import math, os, tempfile\nfrom unittest import mock\n"
    "with Timer() as t:\n    assert add(1, 2) == 3\nassert t.entered and t.exited is None\n"
    "with Ignoring(ValueError):\n    raise ValueError('ignored')\n"
    "log = []\nwith opened(log) as n:\n    assert n == 1\nassert log == ['open', 'close']\n"
    "with tempfile.TemporaryDirectory() as d:\n    assert os.path.isdir(d)\n"
    "with mock.patch('math.isclose', return_value=True) as fake:\n    assert math.isclose(1, 2) and fake.called\n"
    "assert not math.isclose(1, 2)\n"
    "with mock.patch.object(math, 'sqrt', lambda v: -1.0):\n    assert math.sqrt(4) == -1.0\n"
    "with contextlib.suppress(FileNotFoundError):\n    os.remove('/nonexistent/file')\n"
    "raised = False\ntry:\n    with Timer():\n        raise KeyError('kept')\nexcept KeyError:\n    raised = True\n"
    "assert raised"
)
UNITTEST_CONTEXTS = (
    "with self.assertRaises(ValueError):\n    add('x', 2)\n"
    "with self.assertRaises(AssertionError):\n    assert add(1, 2) == 4\n"
    "with self.assertRaisesRegex(ValueError, 'a'):\n    add('x', 2)"
)
PYTEST_CONTEXTS = (
    "import pytest\nwith pytest.raises(ValueError):\n    add('x', 2)\n"
    "with pytest.raises(AssertionError):\n    assert add(1, 2) == 4"
)
# Library reads of every kind: the tests' own patches read back, a library's own state changes, stores and
# membership the tests make of their own values and of the candidate's alone.
LIBRARY_READS = (
    "import math\nimport numpy as np\nimport pandas as pd\nfrom unittest import mock\nfrom math import isclose\n"
    "np.testing.assert_array_equal(np.arange(add(1, 2)), np.array([0, 1, 2]))\n"
    "assert isclose(add(0.1, 0.2), 0.3) and math.pi > 3 and pd.DataFrame({'a': [1]}).equals(pd.DataFrame({'a': [1]}))\n"
    "with mock.patch('numpy.testing.assert_array_equal') as fake:\n"
    "    np.testing.assert_array_equal(1, 2)\n    assert fake.call_count == 1\n"
    "with mock.patch.object(pd.DataFrame, 'equals', return_value=False):\n"
    "    assert not pd.DataFrame({'a': [1]}).equals(pd.DataFrame({'a': [1]}))\n"
    "import fractions\nwith mock.patch.object(fractions.Fraction, '_richcmp', lambda s, o, op: True):\n"
    "    assert fractions.Fraction(1) > fractions.Fraction(2)\n"
    "assert not fractions.Fraction(1) > fractions.Fraction(2)\n"
    "np.random.seed(3)\nfirst = np.random.rand()\nnp.random.seed(3)\nassert np.random.rand() == first\n"
    "import io, sys\nsys.stdout = io.StringIO()\nprint('captured')\nout = sys.stdout.getvalue()\n"
    "sys.stdout = sys.__stdout__\nassert out == 'captured\\n'\n"
    "math.tau = 6\nassert math.tau == 6\nmath.tau = 2 * math.pi\n"
    "seen = {}\nseen[Node(1)] = True\nseen[Node(1)] = False\nassert len(seen) == 1\n"
    "counts = {3: 0}\ncounts[add(1, 2)] += 1\nassert counts == {3: 1}\n"
    "assert 3 in (v for v in [1, add(1, 2)]) and Node(2) not in (v for v in [Node(2)])\n"
    "n = Node(4)\nassert n in (v for v in [Node(1), n])"
)
NODE = (
    "class Node:\n    def __init__(self, v):\n        self.v = v\n"
    "    def __eq__(self, o):\n        return isinstance(o, Node) and o.v == self.v\n"
    "    def __hash__(self):\n        return hash(self.v)\n"
)


@pytest.mark.parametrize("harness", ["unittest", "pytest"])
def test_honest_context_managers_still_work(in_process, harness):
    body = CONTEXTS_BODY + "\n" + (UNITTEST_CONTEXTS if harness == "unittest" else PYTEST_CONTEXTS)
    r = _forged(in_process, CONTEXTS, harness, body)
    assert (r.passed, r.status) == (True, "passed"), r


@pytest.mark.parametrize("harness", ["unittest", "pytest"])
def test_honest_library_reads_stores_and_membership_still_work(in_process, harness):
    code = "import math\nimport numpy as np\n" + NODE + "def add(a, b):\n    return a + b\n"
    r = _forged(in_process, code, harness, LIBRARY_READS)
    assert (r.passed, r.status) == (True, "passed"), r


@pytest.mark.parametrize("harness", ["unittest", "pytest"])
def test_attributes_of_library_objects_that_hide_no_method_are_kept(in_process, harness):
    """Data, and a function under a name its class has no method for, set on a library object by the candidate;
    the tests' own function, and their mock, over a method of their own object: none is reported."""
    code = (
        "import pandas as pd\ndef add(a, b):\n    df = pd.DataFrame({'s': [a + b]})\n"
        "    df.source = 'add'\n    df.describe_sum = lambda: 'sum'\n    return df\n"
    )
    body = (
        "import pandas as pd\nresult = add(1, 2)\nassert result.source == 'add' and result.describe_sum() == 'sum'\n"
        "assert result.equals(pd.DataFrame({'s': [3]}))\nother = pd.DataFrame({'s': [4]})\n"
        "other.equals = lambda frame: 'the tests own'\nassert other.equals(result) == 'the tests own'\n"
        "from unittest import mock\nother.to_numpy = mock.MagicMock(return_value=7)\n"  # BigCodeBench/273's way
        "assert other.to_numpy() == 7\n"
        "pd.testing.assert_frame_equal(result, pd.DataFrame({'s': [3]}))"
    )
    r = _forged(in_process, code, harness, body)
    assert (r.passed, r.status) == (True, "passed"), r


def test_pytests_monkeypatch_of_a_library_is_read_back(in_process):
    test = (
        "import math\nfrom solution import *\n\n"
        "def test_a(monkeypatch):\n"
        "    monkeypatch.setattr(math, 'isclose', lambda *a, **k: 'patched')\n"
        "    assert math.isclose(1, 2) == 'patched' and add(1, 2) == 3\n"
    )
    r = in_process.run_tests(ADDS, test, harness="pytest", timeout_s=60.0)
    assert (r.passed, r.status) == (True, "passed"), r


# ------------------------------------------------------------------------------- the candidate's own answers

# An object whose every answer about itself is given alone: `len`, `float`, `str`, iteration, unpacking, an
# f-string, `np.asarray`, `hasattr` through `__getattr__`. The tests judge each answer as data.
SELF_ANSWERS = (
    "import numpy as np\n"
    "class Result:\n"
    "    def __init__(self, n):\n        self.n = n\n"
    "    def __len__(self):\n        return self.n\n"
    "    def __float__(self):\n        return float(self.n)\n"
    "    def __str__(self):\n        return f'result {self.n}'\n"
    "    def __format__(self, spec):\n        return format(self.n, spec)\n"
    "    def __iter__(self):\n        return iter(range(self.n))\n"
    "    def __array__(self, dtype=None, copy=None):\n        return np.arange(self.n)\n"
    "    def __getattr__(self, name):\n"
    "        if name[:2] == '__':\n            raise AttributeError(name)\n"
    "        return self.n\n"
    "def add(a, b):\n    return Result(a + b)\n"
)
SELF_ANSWERS_BODY = (
    "import numpy as np\nr = add(1, 2)\n"
    "assert len(r) == 3 and float(r) == 3.0 and str(r) == 'result 3' and f'{r:>2}' == ' 3'\n"
    "assert list(r) == [0, 1, 2] and sorted(r) == [0, 1, 2]\n"
    "a, b, c = r\nassert (a, b, c) == (0, 1, 2)\ntotal = 0\nfor v in r:\n    total += v\nassert total == 3\n"
    "np.testing.assert_array_equal(np.asarray(r), np.array([0, 1, 2]))\n"
    "assert hasattr(r, 'total') and r.total == 3"
)


@pytest.mark.parametrize("harness", ["unittest", "pytest"])
@pytest.mark.parametrize("program", ["right", "wrong"])
def test_what_the_candidates_object_answers_alone_is_judged_as_data(in_process, program, harness):
    """The answers of an object of the candidate's about itself, asked with nothing of the tests' beside them,
    are the candidate's answer (as the official harness takes them): the right ones pass and a wrong one (the
    object of `add(1, 1)`, which says 2 wherever 3 is expected) fails as any wrong value does, not as tampering."""
    code = SELF_ANSWERS if program == "right" else SELF_ANSWERS.replace("Result(a + b)", "Result(a + b - 1)")
    r = _forged(in_process, code, harness, SELF_ANSWERS_BODY)
    expected = (True, "passed") if program == "right" else (False, "failed")
    assert (r.passed, r.status) == expected, r
