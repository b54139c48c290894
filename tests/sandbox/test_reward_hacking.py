"""Real attacks on the grader, one or more per class of issue #9; each must end as a failed (or
`tampered`) verdict, never a pass, and leave a healthy pool: honest solutions are still graded right."""

from __future__ import annotations

import pytest

from .conftest import make_sandbox, needs_root, stray_processes

GOOD = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
TESTS = {
    "unittest": (
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_small(self):\n        self.assertEqual(add(1, 2), 3)\n"
        "    def test_negative(self):\n        self.assertEqual(add(-1, 1), 0)\n"
    ),
    "pytest": "from solution import *\n\ndef test_small():\n    assert add(1, 2) == 3\n\n"
    "def test_negative():\n    assert add(-1, 1) == 0\n",
    "humaneval": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n",
}
HARNESSES = sorted(TESTS)
FAILED = ("failed", "error", "timeout", "tampered")


@pytest.fixture(scope="module")
def sandbox():
    """Every grading in process: the harness that out-of-process grading falls back to keeps its defences."""
    with make_sandbox(workers=2, out_of_process=False) as sb:
        yield sb


@pytest.fixture(scope="module")
def isolated():
    """The default: out of the candidate's process wherever the test allows it."""
    with make_sandbox(workers=2) as sb:
        yield sb


def grade(sb, code: str, harness: str, **kw):
    return sb.run_tests(code, TESTS[harness], harness=harness, entry_point="add", **kw)


def assert_healthy(sb) -> None:
    """The pool still grades an honest right and an honest wrong solution correctly, and nothing is left over."""
    for harness in HARNESSES:
        right, wrong = grade(sb, GOOD, harness), grade(sb, WRONG, harness)
        assert (right.passed, right.status) == (True, "passed"), right
        assert (wrong.passed, wrong.status) == (False, "failed"), wrong
    assert stray_processes(sb) == []


def test_honest_solutions_are_graded_right(sandbox):
    assert_healthy(sandbox)


# ------------------------------------------------------------------ class 1: forged verdicts

# From frame `f` up the stack to the harness's reporter; send a forged "done" with its nonce, and leave.
WALK_UP_AND_FORGE = (
    "    while f is not None:\n"
    "        r = f.f_locals.get('reporter')\n"
    "        if r is not None:\n"
    "            r.send(event='done', n_tests=2, n_passed=2, failures=[], error=None)\n"
    "            os._exit(0)\n"
    "        f = f.f_back\n"
    "    return a - b\n"
)
# A class factory (wrapping `_bc`, the real __build_class__) that makes every test method do nothing.
QUIET_CLASSES = (
    "def _quiet(func, name, *bases, **kw):\n"
    "    cls = _bc(func, name, *bases, **kw)\n"
    "    for k in list(vars(cls)):\n"
    "        if k.startswith('test'):\n"
    "            setattr(cls, k, lambda self: None)\n"
    "    return cls\n"
)
# Each attack makes a WRONG add pass if it works; it must end `tampered` (or plain failed where noted).
FORGERIES = {
    # rewrite what the reporter serializes: json's encoder is module state the candidate can reach
    "json_encoder": (
        "import json, json.encoder\n"
        "_orig = json.encoder.JSONEncoder.encode\n"
        "def _enc(self, o):\n"
        "    if isinstance(o, dict) and 'n_tests' in o:\n"
        "        o = dict(o, n_passed=o['n_tests'], failures=[])\n"
        "    return _orig(self, o)\n"
        "json.encoder.JSONEncoder.encode = _enc\n"
        "json._default_encoder = json.JSONEncoder()\n" + WRONG,
        # the report no longer goes through json; the candidate's code installed in a library class is reported
        # (shadowed_module: libraries.Genuine.rebound_internals)
        ("tampered",),
    ),
    # walk the stack to the reporter (nonce + pipe) and write a forged "done", then leave
    "stack_walk_to_reporter": (
        "import sys, os\ndef add(a, b):\n    f = sys._getframe()\n" + WALK_UP_AND_FORGE,
        ("tampered",),
    ),
    "traceback_frame_walk": (
        "import os\n"
        "def add(a, b):\n"
        "    try:\n        raise ValueError\n    except ValueError as e:\n        f = e.__traceback__.tb_frame\n"
        + WALK_UP_AND_FORGE,
        ("tampered",),
    ),
    "inspect_stack": (
        "import inspect, os\n"
        "def add(a, b):\n"
        "    for info in inspect.stack():\n"
        "        r = info.frame.f_locals.get('reporter')\n"
        "        if r is not None:\n"
        "            r.send(event='done', n_tests=2, n_passed=2, failures=[], error=None)\n"
        "            os._exit(0)\n"
        "    return a - b\n",
        ("tampered",),
    ),
    # find the reporter through the object graph
    "gc_walk": (
        "import gc, os\n"
        "def add(a, b):\n"
        "    for o in gc.get_objects():\n"
        "        if type(o).__name__ == 'Reporter':\n"
        "            o.send(event='done', n_tests=2, n_passed=2, failures=[], error=None)\n"
        "            os._exit(0)\n"
        "    return a - b\n",
        ("tampered",),
    ),
    # a returned object whose __eq__ always says yes
    "always_equal": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n"
        "    __hash__ = object.__hash__\n"
        "def add(a, b):\n    return Yes()\n",
        ("tampered",),
    ),
    "always_equal_int_subclass": (
        "class Yes(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
        "def add(a, b):\n    return Yes(a - b)\n",
        ("tampered",),
    ),
    "always_equal_hidden_origin": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "exec('def add(a, b):\\n    return Yes()\\n', globals())\nadd.__module__ = 'elsewhere'\n",
        ("tampered",),
    ),
    # swap test methods after they are defined, through a profile/trace hook
    "profile_hook": (
        "import sys\n"
        "def _prof(frame, event, arg):\n"
        "    if event == 'call' and frame.f_code.co_name.startswith('test'):\n"
        "        frame.f_globals['add'] = lambda a, b: {(1, 2): 3, (-1, 1): 0}.get((a, b))\n"
        "sys.setprofile(_prof)\n" + WRONG,
        ("tampered",),
    ),
    # bend class creation so the test class's methods (defined after the candidate) do nothing
    "build_class_hook": (
        "import builtins\n"
        "_bc = builtins.__build_class__\n" + QUIET_CLASSES + "builtins.__build_class__ = _quiet\n" + WRONG,
        ("tampered",),
    ),
    "own_builtins": (
        "import builtins\n"
        "_b = dict(vars(builtins))\n"
        "_bc = _b['__build_class__']\n" + QUIET_CLASSES + "_b['__build_class__'] = _quiet\n"
        "globals()['__builtins__'] = _b\n" + WRONG,
        ("tampered",),
    ),
    # every test becomes an "expected failure" (a class attribute *added* to TestCase)
    "expected_failure_flag": (
        "import unittest\nunittest.TestCase.__unittest_expecting_failure__ = True\n" + WRONG,
        ("tampered",),
    ),
    # swap a name inside the framework's module for the run, and put it back at the end of the test
    "swap_and_restore_assertion": (
        "import unittest, atexit\n"
        "_orig = unittest.TestCase.assertEqual\n"
        "class _Restore:\n"
        "    def __del__(self):\n"
        "        unittest.TestCase.assertEqual = _orig\n"
        "def add(a, b):\n"
        "    unittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "    _keep = _Restore()\n"
        "    return a - b\n",
        ("tampered",),
    ),
    # a signal handler receives the interrupted frame: from there, up the stack to the reporter
    "signal_handler_frame": (
        "import os, signal\n"
        "def _grab(signum, frame):\n"
        "    while frame is not None:\n"
        "        r = frame.f_locals.get('reporter')\n"
        "        if r is not None:\n"
        "            r.send(event='done', n_tests=2, n_passed=2, failures=[], error=None)\n"
        "            os._exit(0)\n"
        "        frame = frame.f_back\n"
        "def add(a, b):\n"
        "    signal.signal(signal.SIGUSR1, _grab)\n    os.kill(os.getpid(), signal.SIGUSR1)\n"
        "    return a - b\n",
        ("failed",),  # the handler gets no frame: nothing to detect, the verdict is honest
    ),
    "signal_reimported": (
        "import sys\ndel sys.modules['_signal']\nimport _signal\n" + WRONG,
        ("tampered",),
    ),
    # read the process's own memory for the nonce
    "proc_self_mem": (
        "def add(a, b):\n    with open('/proc/self/mem', 'rb') as f:\n        f.read(1)\n    return a - b\n",
        ("tampered",),
    ),
    "ctypes_memory": (
        "import ctypes\ndef add(a, b):\n    ctypes.string_at(id(add), 64)\n    return a - b\n",
        ("tampered",),
    ),
    # code made to look like a library's (a sys.path entry that climbs out of site-packages), so that
    # the frame check takes it for library code
    "library_lookalike": (
        "import os, sys, sysconfig\n"
        "open('walker.py', 'w').write('import sys, os\\ndef walk():\\n    f = sys._getframe()\\n"
        '    while f is not None:\\n        r = f.f_locals.get("reporter")\\n        if r is not None:\\n'
        '            r.send(event="done", n_tests=2, n_passed=2, failures=[], error=None)\\n'
        "            os._exit(0)\\n        f = f.f_back\\n')\n"
        "sys.path.insert(0, sysconfig.get_paths()['purelib'] + '/..' * 12 + os.getcwd())\n"
        "import walker\n"
        "def add(a, b):\n    walker.walk()\n    return a - b\n",
        ("tampered",),
    ),
    # an import hook that serves a fake module in place of what the tests import next
    "import_hook": (
        "import sys, types\n"
        "class _Fake:\n"
        "    def find_spec(self, name, path=None, target=None):\n        return None\n"
        "sys.meta_path.insert(0, _Fake())\n" + WRONG,
        ("tampered",),
    ),
}


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("attack", sorted(FORGERIES))
def test_forged_verdicts_fail(sandbox, attack, harness):
    code, expected = FORGERIES[attack]
    r = grade(sandbox, code, harness, timeout_s=5.0)
    assert not r.passed and r.status in FAILED, r
    if harness == "unittest" or attack in (
        "stack_walk_to_reporter",
        "gc_walk",
        "proc_self_mem",
        "ctypes_memory",
        "traceback_frame_walk",
        "inspect_stack",
        "always_equal",
        "profile_hook",
        "always_equal_int_subclass",
        "json_encoder",
        "import_hook",
        "always_equal_hidden_origin",
        "library_lookalike",
        "signal_handler_frame",
        "signal_reimported",
    ):
        assert r.status in expected, r  # the unittest harness has every check; the others most
    if r.status == "tampered":
        assert r.detail.startswith("tampered:") and r.n_failed >= 0


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("attack", sorted(FORGERIES))
def test_forged_verdicts_fail_out_of_process(isolated, attack, harness):
    """The same attacks, out of process: they run where no test, framework or report channel is."""
    r = grade(isolated, FORGERIES[attack][0], harness, timeout_s=5.0)
    assert not r.passed and r.status in FAILED and r.trust == "out_of_process", r


def test_pytest_framework_internals_swap_is_tampered(sandbox):
    code = "import _pytest.runner\n_pytest.runner.check_interactive_exception = lambda *a: False\n" + WRONG
    r = grade(sandbox, code, "pytest")
    assert r.status == "tampered" and "_pytest.runner.check_interactive_exception" in r.detail, r


def test_legitimate_frame_and_mock_use_is_not_tampering(sandbox):
    """Library code keeps its frames: logging, namedtuple, tracebacks, mock.patch all still work."""
    code = (
        "import logging, collections, traceback\nfrom unittest import mock\n"
        "P = collections.namedtuple('P', 'x y')\n"
        "def add(a, b):\n"
        "    logging.getLogger('x').warning('adding %s', a)\n"
        "    try:\n        1 / 0\n    except ZeroDivisionError:\n        traceback.format_exc()\n"
        "    with mock.patch('collections.OrderedDict'):\n        pass\n"
        "    return P(a, b).x + P(a, b).y\n"
    )
    for harness in HARNESSES:
        r = grade(sandbox, code, harness)
        assert (r.passed, r.status) == (True, "passed"), r


def test_attacks_leave_the_pool_healthy(sandbox):
    assert_healthy(sandbox)


# ------------------------------------------------------------------ class 3: crashing or misleading the caller


def test_junk_on_the_result_pipe_is_a_failed_candidate(sandbox):
    code = (
        "import os\n"
        "os.write(3, b'[' * 200000 + b'\\n' + b'{\"nonce\": 1, \"event\": [[[[[]]]]]}\\n'"
        " + bytes(range(256)) + b'\\n')\n" + GOOD
    )
    for harness in HARNESSES:
        r = grade(sandbox, code, harness)
        assert r.status != "sandbox_error", r
        assert r.passed == (r.status == "passed")  # the honest report still wins; the junk is ignored
    r = grade(sandbox, "import os\nos.write(3, b'{' * 100000)\nos._exit(0)\n" + GOOD, "unittest")
    assert (r.passed, r.status) == (False, "error"), r


def test_lone_surrogate_in_failure_detail_is_valid_utf8(sandbox):
    code = "def add(a, b):\n    raise AssertionError('bad \\ud800 value \\udfff')\n"
    for harness in HARNESSES:
        r = grade(sandbox, code, harness)
        assert r.status == "failed", r
        r.detail.encode("utf-8")  # would raise on a lone surrogate
        assert "\ufffd" in r.detail or harness == "pytest"  # pytest reprs the message escaped
    ex = sandbox.execute("import sys\nsys.stdout.write('x\\ud800y')\n")
    ex.stdout.encode("utf-8")


def test_report_fields_are_checked_by_the_client():
    from agentic_rl.sandbox.results import test_report

    hostile = [
        None,
        [],
        "junk",
        {"report": "junk"},
        {"report": {"event": "done", "n_tests": "2", "n_passed": 2}},
        {"report": {"event": "done", "n_tests": 2, "n_passed": 5, "failures": [1, {"a": 1}], "error": ["x"]}},
        {"report": {"event": "done", "n_tests": 1, "n_passed": 1, "tampered": "yes"}, "stdout": "\ud800"},
    ]
    for raw in hostile:
        r = test_report(raw, 100)
        r.detail.encode("utf-8")
        r.stdout.encode("utf-8")
        assert r.n_failed >= 0 and len(r.detail) <= 100
    r = test_report({"report": {"event": "done", "n_tests": 2, "n_passed": 5}}, 100)
    assert (r.status, r.n_tests, r.n_failed) == ("passed", 2, 0)  # n_passed is capped at n_tests
    r = test_report({"report": {"event": "done", "n_tests": 2, "n_passed": 2, "tampered": ["x"]}}, 100)
    assert (r.passed, r.status) == (False, "tampered")


def test_after_class3_attacks_the_pool_is_healthy(sandbox):
    assert_healthy(sandbox)


# ------------------------------------------------------------------ class 2: state that outlives a call

SYSV_SHM = (
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.shmget.restype = ctypes.c_int\nIPC_CREAT = 0o1000\n"
)


@needs_root
def test_sysv_ipc_does_not_outlive_the_call(sandbox):
    first = sandbox.execute(SYSV_SHM + "print(libc.shmget(0x5A5A17, 4096, IPC_CREAT | 0o666))\n")
    assert first.ok and int(first.stdout) >= 0, first  # it could create one...
    later = sandbox.execute(SYSV_SHM + "print(libc.shmget(0x5A5A17, 0, 0))\n")
    assert later.ok and int(later.stdout) == -1, later  # ...and the next call cannot find it


@needs_root
def test_world_writable_dirs_are_private_and_capped(sandbox):
    dirs = sandbox.server_info["world_writable"]
    assert "/var/tmp" in dirs and "/tmp" in dirs
    writable = [d for d in dirs if d not in ("/tmp", "/var/tmp", "/dev/shm")]
    checked = ["/var/tmp", *writable]
    code = (
        f"import os\nfor d in {checked!r}:\n    open(os.path.join(d, 'left_by_an_earlier_call'), 'w').write('x')\n"
        "try:\n    open('/var/tmp/big', 'wb').write(b'x' * (300 << 20))\n    print('wrote 300 MB')\n"
        "except OSError as e:\n    print('capped', e.errno)\n"
    )
    r = sandbox.execute(code)
    assert r.ok and r.stdout.startswith("capped"), r  # the call's tmpfs (256 MB) is its disk quota
    later = sandbox.execute(
        f"import os\nprint([d for d in {checked!r} if os.path.exists(os.path.join(d, 'left_by_an_earlier_call'))])\n"
    )
    assert later.stdout == "[]\n", later
    import os

    assert not any(os.path.exists(os.path.join(d, "left_by_an_earlier_call")) for d in ["/var/tmp", *writable])


@needs_root
def test_keyring_does_not_outlive_the_call():
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("syscall numbers below are x86_64's")
    keyctl = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
        "keep = libc.syscall(250, 22, ctypes.c_long(-1), ctypes.c_long(-2))\n"
    )  # the persistent keyring
    add = keyctl + "print(libc.syscall(248, b'user', b'sandbox-marker', b'secret', 6, ctypes.c_long(keep)))\n"
    search = keyctl + "print(libc.syscall(250, 10, ctypes.c_long(keep), b'user', b'sandbox-marker', 0))\n"
    with make_sandbox(workers=1) as one:  # one worker: both calls run as the same uid
        first = one.execute(add)
        assert first.ok and int(first.stdout) > 0, first
        assert int(one.execute(search).stdout) == -1  # the worker uid's persistent keyring was emptied


def test_runner_memory_holds_no_earlier_request(sandbox):
    """Another task's hidden tests cannot be read back from the memory a runner was forked from."""
    import hashlib
    import secrets

    token = secrets.token_hex(16)
    hidden = f"HIDDEN_TEST_TOKEN_{token}"
    digest = hashlib.sha256(token.encode()).hexdigest()
    test = TESTS["unittest"] + f"\n# {hidden}\n"
    for _ in range(2):
        assert sandbox.run_tests(GOOD, test, harness="unittest").passed
    # Scan every readable mapping of our own process for the prefix, and check what follows by its hash:
    # the token itself never appears in this program.
    scan = (
        "import ctypes, hashlib, re\nprefix = b'HIDDEN_TEST_' + b'TOKEN_'\nfound = 0\n"
        "for line in open('/proc/self/maps'):\n"
        "    fields = line.split()\n"
        "    if not fields[1].startswith('rw') or fields[-1] in ('[vvar]', '[vsyscall]'):\n        continue\n"
        "    lo, hi = (int(x, 16) for x in fields[0].split('-'))\n"
        "    chunk = ctypes.string_at(lo, hi - lo)\n"
        "    for m in re.finditer(re.escape(prefix) + rb'([0-9a-f]{32})', chunk):\n"
        f"        found += hashlib.sha256(m.group(1)).hexdigest() == {digest!r}\n"
        "print(found)\n"
    )
    for _ in range(2):  # both workers
        r = sandbox.execute(scan, timeout_s=30.0)
        assert r.ok and r.stdout == "0\n", r


# ------------------------------------------------------------------ class 4: splitting amplification

SIX_TESTS = "import unittest\n\nclass TestCases(unittest.TestCase):\n" + "".join(
    f"    def test_{i}(self):\n        self.assertEqual(add({i}, 1), {i + 1})\n" for i in range(6)
)


@pytest.fixture(scope="module")
def splitting():
    with make_sandbox(workers=4, split_after_s=0.5) as sb:
        yield sb


def test_sleeping_at_import_is_not_split(splitting):
    import time

    start = time.monotonic()
    r = splitting.run_tests("import time\ntime.sleep(1000)\n" + GOOD, SIX_TESTS, harness="unittest", timeout_s=3.0)
    assert (r.passed, r.status, r.parts) == (False, "timeout", 1), r
    assert time.monotonic() - start < 3.0 + 4.0 and r.duration_s < 3.5


def test_hanging_in_every_test_costs_one_limit_not_one_per_part(splitting):
    import time

    code = "import time\ndef add(a, b):\n    time.sleep(1000)\n"
    start = time.monotonic()
    r = splitting.run_tests(code, SIX_TESTS, harness="unittest", timeout_s=3.0)
    wall = time.monotonic() - start
    assert (r.passed, r.status) == (False, "timeout"), r
    assert r.duration_s < 3.0 + 1.5, r  # all parts together: about one limit (6 parts x 3 s before)
    assert wall < 3.0 + 4.0
    assert stray_processes(splitting) == []
    right = splitting.run_tests(GOOD, SIX_TESTS, harness="unittest")
    assert right.passed  # and the pool is healthy


# ------------------------------------------------------------------ class 5: memory across processes


def test_memory_limit_binds_the_call_processes_together(sandbox):
    """memory_mb is 1024 here; four processes of 400 MB each stay under it one by one, not together."""
    code = (
        "import os, time\n"
        "def add(a, b):\n"
        "    for _ in range(3):\n"
        "        if os.fork() == 0:\n"
        "            blob = b'x' * (400 << 20)\n            time.sleep(30)\n            os._exit(0)\n"
        "    blob = b'x' * (400 << 20)\n    time.sleep(30)\n    return a + b\n"
    )
    r = grade(sandbox, code, "unittest", timeout_s=20.0)
    assert (r.passed, r.status) == (False, "memory"), r
    assert r.duration_s < 15.0
    assert_healthy(sandbox)


# ------------------------------------------------------------------ counted: training metric and evaluation summary


def test_tampered_submissions_are_counted_in_training_and_evaluation_metrics():
    from agentic_rl.evaluation.records import metrics_from_records, record_from_trajectory
    from agentic_rl.tracking.metrics import episode_metrics
    from agentic_rl.types import Observation, ToolCall, Trajectory, Turn

    def episode(*statuses: str) -> Trajectory:
        turns = [
            Turn(
                generated_ids=[1],
                text="",
                call=ToolCall("submit", "x", 0, 1),
                observation=Observation(
                    tool="submit",
                    text="<test_result>FAIL</test_result>",
                    ok=s in ("passed", "failed"),
                    status=s,
                    passed=s == "passed",
                ),
                graded=True,  # a grading tool's turn (#48: verdicts are counted by this flag, not the tool's name)
            )
            for s in statuses
        ]
        return Trajectory(task_id="t", token_ids=[1], loss_mask=[0], prompt_len=1, turns=turns)

    trajs = [episode("tampered", "failed"), episode("failed"), episode("tampered")]
    assert episode_metrics(trajs)["tools/submit/tampered_rate"] == pytest.approx(2 / 4)
    records = [record_from_trajectory(t, "multi") for t in trajs]
    assert [r["tampered_submissions"] for r in records] == [1, 0, 1]
    assert metrics_from_records(records)["tools/submit/tampered_rate"] == pytest.approx(2 / 4)
    assert "tools/submit/tampered_rate" not in episode_metrics([episode()])  # no submission: absent, not 0
