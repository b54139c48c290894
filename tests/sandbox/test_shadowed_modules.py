"""Issue #47: library names in the tests' namespace are the libraries. A BigCodeBench test appended to the
candidate uses `np`, `pd`, `math`, `json`... without importing them; a definition of the candidate's under
such a name (a class `np` whose `testing.assert_*` do nothing: BigCodeBench/241) is refused with the
verdict `tampered` ("shadowed module"), out of process and in process. Honest imports still pass."""

from __future__ import annotations

import gzip
import json

import pytest

from agentic_rl.data.shared_data import BIGCODEBENCH_FULL

from .conftest import make_sandbox

# np.testing checks that never fail, and the array the test compares them with
FAKE_NP = (
    "class np:\n"
    "    class testing:\n"
    "        @staticmethod\n        def assert_array_equal(*a, **k):\n            return None\n"
    "        assert_allclose = assert_array_equal\n"
    "    @staticmethod\n    def array(x):\n        return x\n"
)
NP_TEST = (
    "import unittest\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_a(self):\n        np.testing.assert_array_equal(task_func(), np.array([1, 2]))\n"
)
ATTACKS = {
    "class_np": (FAKE_NP + "def task_func():\n    return [9, 9]\n", NP_TEST),
    "function_pd": (
        "def pd():\n    pass\npd.testing = type('T', (), {'assert_frame_equal': staticmethod(lambda *a, **k: None)})\n"
        "def task_func():\n    return None\n",
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        pd.testing.assert_frame_equal(task_func(), None)\n",
    ),
    # BigCodeBench/683 computes its expected value with the candidate's `math`
    "class_math": (
        "class math:\n    @staticmethod\n    def cos(x):\n        return 0.0\ndef task_func(x):\n    return 0.0\n",
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertAlmostEqual(task_func(1.0), math.cos(1.0))\n",
    ),
    "value_json": (
        "import types\njson = types.SimpleNamespace(loads=lambda s: {'a': 1})\ndef task_func():\n    return {'a': 1}\n",
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertEqual(task_func(), json.loads('{\"a\": 2}'))\n",
    ),
}


@pytest.fixture(scope="module", params=[True, False], ids=["out_of_process", "in_process"])
def sandbox(request):
    with make_sandbox(workers=2, out_of_process=request.param, preload=["pytest", "numpy"]) as sb:
        yield sb


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_definition_shadowing_a_module_the_tests_use_is_tampered(sandbox, attack):
    code, test = ATTACKS[attack]
    r = sandbox.run_tests(code, test, harness="unittest")
    assert (r.passed, r.status) == (False, "tampered"), r
    assert "shadowed module" in r.detail, r


def test_a_fake_module_object_is_refused_in_process_and_never_bound_out_of_process(sandbox):
    code = (
        "import types\nnp = types.ModuleType('numpy')\n"
        "np.testing = types.SimpleNamespace(assert_array_equal=lambda *a, **k: None)\n"
        "np.array = lambda x: x\ndef task_func():\n    return [9, 9]\n"
    )
    r = sandbox.run_tests(code, NP_TEST, harness="unittest")
    assert not r.passed, r
    if r.trust == "in_process":
        assert r.status == "tampered" and "shadowed module" in r.detail, r


def test_the_pytest_and_humaneval_harnesses_refuse_it_too(sandbox):
    code = FAKE_NP + "def add(a, b):\n    return [9, 9]\n"
    pytest_test = "from solution import *\n\ndef test_a():\n    np.testing.assert_array_equal(add(1, 1), [1, 2])\n"
    check = "def check(candidate):\n    np.testing.assert_array_equal(candidate(1, 1), [1, 2])\n"
    for harness, test in (("pytest", pytest_test), ("humaneval", check)):
        r = sandbox.run_tests(code, test, harness=harness, entry_point="add")
        assert (r.passed, r.status) == (False, "tampered"), (harness, r)


def test_honest_imports_under_those_names_still_pass(sandbox):
    code = (
        "import numpy as np\nimport json\nfrom datetime import datetime\n"
        "def task_func():\n    return np.array([1, 2])\n"
    )
    test = (
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        np.testing.assert_array_equal(task_func(), np.array([1, 2]))\n"
        "        self.assertEqual(json.loads('1'), 1)\n        self.assertLess(datetime.now().year, 10000)\n"
    )
    r = sandbox.run_tests(code, test, harness="unittest")
    assert (r.passed, r.status) == (True, "passed"), r


def test_bigcodebench_241_with_a_class_named_np(sandbox, shared_data_dir):
    """The issue's real case: wrong arrays passed 5/5 with a class `np` in place of numpy. The full BigCodeBench copy
    comes from $AGENTIC_RL_DATA_DIR (tests/conftest.py: skipped, saying so, where it is unset)."""
    pytest.importorskip("matplotlib")
    with gzip.open(shared_data_dir / BIGCODEBENCH_FULL, "rt") as f:
        task = next(row for row in map(json.loads, f) if row["task_id"] == "BigCodeBench/241")
    attack = ("import matplotlib.pyplot as plt\n" + FAKE_NP.replace("class np:", "class np:\n    linalg = None")) + (
        "def task_func(original):\n    fig, ax = plt.subplots()\n"
        "    ax.plot([0], label='Original')\n    ax.plot([0], label='Normalized')\n"
        "    ax.set_title('Original vs. Normalized Data')\n    return [0], [0], ax\n"
    )
    r = sandbox.run_tests(attack, task["test"], harness="unittest", timeout_s=60.0)
    assert (r.passed, r.status) == (False, "tampered"), r
