"""Issue #47, in process: the two holes left open by the judged comparisons (test_in_process_verdicts.py), each
closed as a class.

**Augmented assignments.** `x -= 3` in the tests' code asked the candidate's `__isub__` (or `__sub__`,
`__rsub__`): a difference of 0 whatever the value. Now the tests' `x op= y` is judged as `x op y` is
(judging.py: the target is read once, judged, and stored back): refused (`tampered`, `handle_operator`) where a
class of the candidate's would answer on one side only.

**Comparisons made for the tests by library code.** The tests hand the candidate's object to code that is neither
the candidate's nor the tests' (`numpy.testing`, `pandas.testing`, `max`, `sorted`, `set`, `dict.get`,
`list.count`, unittest's `assertCountEqual`, `isinstance`, `bool`), and that code asks the object's special methods
with the tests' values as the other side. Now every call in the tests' code goes through the judge
(`Judge.call`): a call to code that is neither the candidate's nor the tests' is refused (`tampered`,
`handle_library`) where its operands hold both an object whose class of the candidate's defines such a special
method and a value that is not the candidate's; where its operand's class lies about its type (`__class__`);
and where it asks the truth (`bool`, `all`, `any`) of an object whose class of the candidate's answers it.

Each attack forges a pass at bfdc201 (run there by hand: a worktree of that commit, the same file: 36 of 36); the honest
programs of the same shapes pass before and after.
"""

from __future__ import annotations

import pytest

from .test_in_process_verdicts import _test_source

# A value of the candidate's that answers every question the way the test hopes, except the plausible-value
# probes' (tamper.py): it tells them from the test by the stack's text, which it may read (test_in_process_verdicts).
ALWAYS = (
    "import traceback\n"
    "def _asked():\n"
    "    return not any('tamper' in f.filename for f in traceback.extract_stack())\n"
    "class Always:\n"
    "    def __eq__(self, o):\n        return _asked()\n"
    "    def __ne__(self, o):\n        return not _asked()\n"
    "    def __lt__(self, o):\n        return _asked()\n"
    "    def __gt__(self, o):\n        return _asked()\n"
    "    def __sub__(self, o):\n        return 0 if _asked() else 1\n"
    "    __rsub__ = __sub__\n"
    "    def __isub__(self, o):\n        return 0 if _asked() else 1\n"
    "    def __hash__(self):\n        return hash(3)\n"
)
RETURNS_ALWAYS = ALWAYS + "def add(a, b):\n    return Always()\n"

# (program, body of a test of `add`): every body passes for an `add` that adds, and must fail for these programs.
AUGMENTED = {
    "in_place_method": (RETURNS_ALWAYS, "d = add(1, 2)\nd -= 3\nassert abs(d) < 1e-9"),
    "fallback_to_binary": (
        "class Z:\n    def __sub__(self, o):\n        return 0\ndef add(a, b):\n    return Z()\n",
        "d = add(1, 2)\nd -= 3\nassert d == 0",
    ),
    "reflected": (
        "class Z:\n    def __rsub__(self, o):\n        return 0.0\ndef add(a, b):\n    return Z()\n",
        "x = 3.0\nx -= add(1, 2)\nassert abs(x) < 1e-9",
    ),
    "item_target": (RETURNS_ALWAYS, "box = [add(1, 2)]\nbox[0] -= 3\nassert box[0] == 0"),
    "attribute_target": (
        RETURNS_ALWAYS,
        "import types\nns = types.SimpleNamespace(v=add(1, 2))\nns.v -= 3\nassert ns.v == 0",
    ),
}
LIBRARY = {
    "numpy_assert_array_less": (RETURNS_ALWAYS, "import numpy as np\nnp.testing.assert_array_less(add(1, 2), 4)"),
    "numpy_assert_array_equal": (
        RETURNS_ALWAYS,
        "import numpy as np\nnp.testing.assert_array_equal(add(1, 2), np.array([3]))",
    ),
    "numpy_assert_almost_equal": (RETURNS_ALWAYS, "import numpy as np\nnp.testing.assert_almost_equal(add(1, 2), 3.0)"),
    "pandas_assert_series_equal": (
        ALWAYS + "def add(a, b):\n    return [Always(), Always()]\n",
        "import pandas as pd\n"
        "pd.testing.assert_series_equal(pd.Series(add(1, 2)), pd.Series([3, 3]), check_dtype=False)",
    ),
    "max": (RETURNS_ALWAYS, "assert max(add(1, 2), 3) == 3"),
    "min": (RETURNS_ALWAYS, "assert min(add(1, 2), 3) == 3"),
    "sorted": (RETURNS_ALWAYS, "assert sorted([4, add(1, 2)])[-1] == 4 and sorted([add(1, 2), 2])[0] == 2"),
    "set": (RETURNS_ALWAYS, "assert len(set([add(1, 2), 3])) == 1"),
    "dict_get": (RETURNS_ALWAYS, "assert {3: 'three'}.get(add(1, 2)) == 'three'"),
    "list_count": (RETURNS_ALWAYS, "assert [3].count(add(1, 2)) == 1 and [5, 3].index(add(1, 2)) >= 0"),
    "subscript": (RETURNS_ALWAYS, "assert {3: 'three'}[add(1, 2)] == 'three'"),
    "set_display": (RETURNS_ALWAYS, "assert len({add(1, 2), 3}) == 1"),
    "dict_display": (RETURNS_ALWAYS, "assert len({add(1, 2): 'a', 3: 'b'}) == 1"),
    "isinstance_lie": (
        "class Liar:\n    __class__ = int\ndef add(a, b):\n    return Liar()\n",
        "assert isinstance(add(1, 2), int)",
    ),
    "truth_by_call": (
        "class Says:\n    def __init__(self, a):\n        self.a = a\n"
        "    def __bool__(self):\n        return self.a == 1\n"
        "def add(a, b):\n    return Says(a)\n",
        "assert bool(add(1, 2)) and not any([add(2, 2)])",
    ),
}
# unittest's assertions: one whose iteration yields the candidate's objects (judged by the harness's wrapper, as
# assertEqual is: handle_operator), one that asks the type
UNITTEST_LIBRARY = {
    "assert_count_equal": (
        ALWAYS + "class Bag:\n    def __iter__(self):\n        return iter([Always(), Always()])\n"
        "def add(a, b):\n    return Bag()\n",
        "self.assertCountEqual(add(1, 2), [3, 3])",
    ),
    "assert_count_equal_generator": (
        ALWAYS + "def add(a, b):\n    yield Always()\n    yield Always()\n",
        "self.assertCountEqual(add(1, 2), [3, 3])",
    ),
    "assert_is_instance": (
        "class Liar:\n    @property\n    def __class__(self):\n        return int\ndef add(a, b):\n    return Liar()\n",
        "self.assertIsInstance(add(1, 2), int)",
    ),
}


def _source(harness: str, body: str) -> str:
    indent = "\n        " if harness == "unittest" else "\n    "
    return _test_source(harness, body.replace("\n", indent))


def _forged(sb, code: str, harness: str, body: str):
    return sb.run_tests(code, _source(harness, body), harness=harness, entry_point="add", timeout_s=60.0)


# each attack -> (program, test body, the kind of its refusal): an operator's rule, or the library calls' rule
REFUSED = {name: (*attack, "handle_operator") for name, attack in AUGMENTED.items()}
REFUSED.update({name: (*attack, "handle_library") for name, attack in LIBRARY.items()})


@pytest.mark.parametrize("harness", ["unittest", "pytest"])
@pytest.mark.parametrize("attack", sorted(REFUSED))
def test_the_candidates_object_does_not_judge_for_the_tests(in_process, attack, harness):
    code, body, kind = REFUSED[attack]
    r = _forged(in_process, code, harness, body)
    assert (r.passed, r.status, r.trust) == (False, "tampered", "in_process"), r
    assert kind in r.tamper_kinds, r


@pytest.mark.parametrize("attack", sorted(UNITTEST_LIBRARY))
def test_unittests_other_assertions_do_not_ask_the_candidates_object(in_process, attack):
    code, body = UNITTEST_LIBRARY[attack]
    r = _forged(in_process, code, "unittest", body)
    kind = "handle_operator" if attack.startswith("assert_count_equal") else "handle_library"
    assert (r.passed, r.status) == (False, "tampered") and kind in r.tamper_kinds, r


def test_humaneval_checks_are_judged_too(in_process):
    code, body = LIBRARY["max"]
    test = _test_source("humaneval", body.replace("add(", "candidate("))
    r = in_process.run_tests(code, test, harness="humaneval", entry_point="add")
    assert (r.passed, r.status) == (False, "tampered") and "handle_library" in r.tamper_kinds, r
    code, body = AUGMENTED["in_place_method"]
    test = _test_source("humaneval", body.replace("add(", "candidate(").replace("\n", "\n    "))
    r = in_process.run_tests(code, test, harness="humaneval", entry_point="add")
    assert (r.passed, r.status) == (False, "tampered") and "handle_operator" in r.tamper_kinds, r


# ------------------------------------------------------------------------------------------ honest programs

# A KodCode-style class task: the tests call its methods, ask its length, iterate it, print it.
LRU = (
    "from collections import OrderedDict\n"
    "class LRUCache:\n"
    "    def __init__(self, capacity):\n        self.capacity, self.data = capacity, OrderedDict()\n"
    "    def get(self, key):\n"
    "        if key not in self.data:\n            return -1\n"
    "        self.data.move_to_end(key)\n        return self.data[key]\n"
    "    def put(self, key, value):\n"
    "        self.data[key] = value\n        self.data.move_to_end(key)\n"
    "        if len(self.data) > self.capacity:\n            self.data.popitem(last=False)\n"
    "    def __len__(self):\n        return len(self.data)\n"
    "    def __iter__(self):\n        return iter(list(self.data))\n"
    "    def __contains__(self, key):\n        return key in self.data\n"
    "    def __repr__(self):\n        return f'LRUCache({list(self.data)})'\n"
)
LRU_BODY = (
    "cache = LRUCache(2)\ncache.put(1, 1)\ncache.put(2, 2)\nassert cache.get(1) == 1\ncache.put(3, 3)\n"
    "assert cache.get(2) == -1 and len(cache) == 2 and sorted(cache) == [1, 3] and list(cache) == [1, 3]\n"
    "assert isinstance(cache, LRUCache) and hasattr(cache, 'put') and 'LRUCache' in repr(cache)\n"
    "assert getattr(cache, 'capacity') == 2 and [k for k in cache] == [1, 3] and max(cache) == 3\n"
    "print(cache, len(cache), 'entries')\nn = 0\nn += len(cache)\nassert n == 2"
)
# The candidate's classes compared with each other through library code, as the official harness does.
VALUES = (
    "import dataclasses\nimport numpy as np\nimport pandas as pd\n"
    "@dataclasses.dataclass(frozen=True)\nclass Point:\n    x: int\n    y: int\n"
    "class Vec:\n"
    "    def __init__(self, x):\n        self.x = x\n"
    "    def __add__(self, o):\n        return Vec(self.x + o.x)\n"
    "    def __eq__(self, o):\n        return isinstance(o, Vec) and self.x == o.x\n"
    "    def __lt__(self, o):\n        return self.x < o.x\n"
    "    __hash__ = None\n"
    "def add(a, b):\n    return np.arange(a, a + b)\n"
    "def frame(n):\n    return pd.DataFrame({'a': range(n), 'b': ['x'] * n})\n"
)
VALUES_BODY = (
    "import numpy as np\nimport pandas as pd\n"
    "np.testing.assert_array_equal(add(1, 2), np.array([1, 2]))\n"
    "np.testing.assert_allclose(add(1, 2) / 2, [0.5, 1.0])\n"
    "pd.testing.assert_frame_equal(frame(2), pd.DataFrame({'a': [0, 1], 'b': ['x', 'x']}))\n"
    "assert len(set([Point(1, 2), Point(1, 2)])) == 1 and max([Vec(1), Vec(3)]) == Vec(3)\n"
    "assert sorted([Vec(2), Vec(1)]) == [Vec(1), Vec(2)] and [Vec(1), Vec(1)].count(Vec(1)) == 2\n"
    "v = Vec(1)\nv += Vec(2)\nassert v == Vec(3)\n"
    "total = 0.0\nfor x in add(1, 3):\n    total += float(x)\nassert abs(total - 6.0) < 1e-9\n"
    "assert all([Point(0, 0)]) and bool(add(1, 1)[0]) and isinstance(Point(1, 1), Point)\n"
    "assert {Point(1, 2): 'a'}[Point(1, 2)] == 'a' and len({Point(0, 0), Point(0, 0)}) == 1"
)


@pytest.mark.parametrize("harness", ["unittest", "pytest"])
@pytest.mark.parametrize("program", ["lru", "values"])
def test_honest_programs_of_the_same_shapes_still_pass(in_process, program, harness):
    code, body = {"lru": (LRU, LRU_BODY), "values": (VALUES, VALUES_BODY)}[program]
    r = in_process.run_tests(code, _source(harness, body), harness=harness, entry_point="add", timeout_s=60.0)
    assert (r.passed, r.status) == (True, "passed"), r


def test_unittests_own_assertions_on_the_candidates_classes_still_pass(in_process):
    body = (
        "self.assertCountEqual([Vec(1), Vec(2)], [Vec(2), Vec(1)])\n"
        "self.assertIsInstance(Point(1, 2), Point)\nself.assertEqual(Point(1, 2), Point(1, 2), 'same point')\n"
        "self.assertIsNotNone(Vec(1), 'made')\nself.assertRaises(AttributeError, Vec(1).__add__, 3)"
    )
    r = in_process.run_tests(VALUES, _source("unittest", body), harness="unittest", entry_point="add", timeout_s=60.0)
    assert (r.passed, r.status) == (True, "passed"), r


def test_pytests_explanation_of_a_failure_is_unchanged(in_process):
    test = "from solution import *\n\ndef test_a():\n    assert len(add(1, 2)) == 3\n"
    r = in_process.run_tests(VALUES, test, harness="pytest", timeout_s=60.0)
    assert (r.passed, r.status) == (False, "failed"), r
    assert "where array([1, 2]) = add(1, 2)" in r.detail or "where array([1, 2]) = add(1, 2)" in r.stdout, r
