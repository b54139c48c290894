"""Issue #47: the candidate cannot read what it is graded by. Out of process, the tests and their expected
values are neither in the candidate's memory nor on its filesystem, and its /proc shows nothing of the
tests' process. Each candidate here is an attacker: it looks for the test's expected value (a random
token that appears in no source but the test's) and returns what it finds."""

from __future__ import annotations

import secrets

import pytest

from .conftest import make_sandbox, needs_root

pytestmark = needs_root

# Where the candidate looks: every file of its filesystem view it can read (bounded), everything /proc
# shows of other processes (command lines, environments, their root and cwd, their open files), and its
# own memory (a copy of the process it was forked from). The prefix is split so that this source never
# holds the searched string itself.
SEARCH = r"""
import os, re, ctypes
PATTERN = re.compile(rb"SECRET_" + rb"TOKEN_[0-9a-f]{32}")

def _in_file(path):
    try:
        if os.path.isfile(path) and os.path.getsize(path) < (1 << 20):
            with open(path, "rb") as f:
                m = PATTERN.search(f.read())
                return m.group(0).decode() if m else None
    except OSError:
        return None

def _walk(top, skip=("/proc", "/sys", "/dev"), limit=20000):
    seen = 0
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
        for name in files:
            seen += 1
            if seen > limit:
                return None
            found = _in_file(os.path.join(root, name))
            if found:
                return found

def in_files():
    for top in ("/tmp", os.getcwd(), "..", "/var/tmp", "/dev/shm", "/"):
        found = _walk(top)
        if found:
            return found

def other_processes():
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]

def in_proc():
    for pid in other_processes():
        for what in ("cmdline", "environ"):
            found = _in_file(f"/proc/{pid}/{what}")
            if found:
                return found
        for where in ("root/tmp", "cwd"):
            try:
                found = _walk(f"/proc/{pid}/{where}", limit=2000)
            except OSError:
                found = None
            if found:
                return found
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                found = _in_file(f"/proc/{pid}/fd/{fd}")
                if found:
                    return found
        except OSError:
            pass

def in_memory():
    for line in open("/proc/self/maps"):
        fields = line.split()
        if not fields[1].startswith("r") or fields[-1] in ("[vvar]", "[vsyscall]", "[vdso]"):
            continue
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        try:
            m = PATTERN.search(ctypes.string_at(lo, hi - lo))
        except Exception:
            continue
        if m:
            return m.group(0).decode()

def answer():
    return in_files() or in_proc() or in_memory()
"""


@pytest.fixture(scope="module")
def sandbox():
    with make_sandbox(workers=1) as sb:
        yield sb


def _secret() -> str:
    return "SECRET_" + "TOKEN_" + secrets.token_hex(16)


@pytest.mark.parametrize("where", ["in_files", "in_proc", "in_memory", "answer"])
def test_a_candidate_that_searches_for_the_expected_value_finds_nothing_pytest(sandbox, where):
    secret = _secret()
    test = f"from solution import *\n\ndef test_answer():\n    assert {where}() == {secret!r}\n"
    r = sandbox.run_tests(SEARCH, test, harness="pytest", timeout_s=30.0)
    assert r.trust == "out_of_process", r
    assert not r.passed and r.n_failed == 1, r


def test_a_candidate_that_searches_for_the_expected_value_finds_nothing_unittest(sandbox):
    secret = _secret()
    test = (
        "import unittest\n\nclass TestCases(unittest.TestCase):\n"
        f"    def test_answer(self):\n        self.assertEqual(answer(), {secret!r})\n"
    )
    r = sandbox.run_tests(SEARCH, test, harness="unittest", timeout_s=30.0)
    assert r.trust == "out_of_process", r
    assert not r.passed and r.n_failed == 1, r


def test_a_lookup_of_the_expected_values_in_the_test_file_fails(sandbox):
    """The issue's KodCode "solution": no code, a lookup of `add(a, b) == N` in the tests' file where it
    lay in the candidate's view (passed 13 of the first 60 KodCode sample rows)."""
    lookup = (
        "import glob, os, re\n"
        "def add(a, b):\n"
        "    paths = glob.glob('/tmp/**/test_*.py', recursive=True) + glob.glob('../**/test_*.py', recursive=True)\n"
        "    for path in paths:\n"
        "        try:\n            text = open(path).read()\n        except OSError:\n            continue\n"
        "        m = re.search(r'add\\(%d, %d\\) == (-?\\d+)' % (a, b), text)\n"
        "        if m:\n            return int(m.group(1))\n"
    )
    test = "from solution import add\n\ndef test_add():\n    assert add(2, 3) == 5\n    assert add(-4, 9) == 5\n"
    r = sandbox.run_tests(lookup, test, harness="pytest", timeout_s=30.0)
    assert r.trust == "out_of_process", r
    assert not r.passed, r
    honest = sandbox.run_tests("def add(a, b):\n    return a + b\n", test, harness="pytest", timeout_s=30.0)
    assert honest.passed, honest


def test_the_candidates_proc_shows_nothing_of_the_tests_process(sandbox):
    """Its /proc lists only its own processes: not the tests' process, nor the call's init."""
    code = SEARCH + "\ndef others():\n    return other_processes()\n"
    test = "from solution import others\n\ndef test_others():\n    assert others() == []\n"
    r = sandbox.run_tests(code, test, harness="pytest", timeout_s=30.0)
    assert r.trust == "out_of_process", r
    assert r.passed, r


def test_honest_gradings_still_share_the_working_directory(sandbox):
    """The tests' process and the candidate's still see the same working directory (BigCodeBench's tests
    write the files the candidate reads, and read what it writes)."""
    code = "def read(p):\n    return open(p).read()\ndef write(p, s):\n    open(p, 'w').write(s)\n"
    test = (
        "import os, tempfile\nfrom solution import read, write\n\ndef test_files():\n"
        "    open('given.txt', 'w').write('from the tests')\n"
        "    assert read('given.txt') == 'from the tests'\n"
        "    write('made.txt', 'by the candidate')\n"
        "    assert open('made.txt').read() == 'by the candidate'\n"
        "    d = tempfile.mkdtemp()\n"
        "    write(os.path.join(d, 'x'), 'y')\n"
        "    assert open(os.path.join(d, 'x')).read() == 'y'\n"
    )
    r = sandbox.run_tests(code, test, harness="pytest", timeout_s=30.0)
    assert r.passed and r.trust == "out_of_process", r
