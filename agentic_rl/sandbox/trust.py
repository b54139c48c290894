"""Where a grading runs: out of the candidate's process (the default), or in it where the tests need that.

Out of process (isolated.py), the tests run in a trusted process and call the candidate through a
channel that carries data (remote.py). That is the default: a test goes in process only where its own
code (its syntax tree: comments and strings do not count) shows one of the needs below, each something
the channel cannot give. The list is closed: a construct not on it runs out of process.

* `capture`: it reads what the candidate's process printed, logged or warned (pytest's `capsys`, `capfd`,
  `caplog`, `recwarn`; `redirect_stdout`; `sys.stdout` swapped or patched; `assertLogs`;
  `warnings.catch_warnings`, `assertWarns`).
* `shared_random`: it seeds a global random generator the candidate draws from (`np.random.seed`,
  `random.seed`, `manual_seed`): one generator in one process, as the official harness runs them.
* `runs_data`: it turns what the candidate wrote into code in the tests' process (unpickling, unsafe
  YAML, `eval`/`exec`, importing by name): out of process that code would run beside the report channel.
* `introspection`: it walks the candidate's objects or process (`__class__`, `__dict__`, `gc`,
  `inspect`, `sys.modules`), or checks a class it made (`issubclass`, `isinstance(x, type)`), which a
  handle does not show.
* `pyplot_state`: it reads pyplot's global state (`plt.gcf()`, `plt.get_fignums()`): the candidate's
  figures live in the candidate's process.
* `pytest_monkeypatch`: pytest's `monkeypatch` (its setattr is not forwarded).
* `hand_made_patch`: an assignment to an attribute of an imported module at the test file's top level
  (before the forwarding of hand-made patches is in place; patching.py), or anywhere in a pytest file.

What crosses the boundary instead of pulling the test in process: `unittest.mock.patch` /
`patch.object` / `patch.multiple` on any module or class (the candidate's, or a library it uses),
`patch.dict` on `os.environ` or a module's dict named by a string, and hand-made patches (an attribute
of a module assigned inside a test) are applied in the candidate's process too, the mock staying in the
tests' process (patching.py); mocks handed to the candidate are handles.

The choice is made here, from the test source alone, before anything runs: the candidate cannot choose
it (a fallback decided after a run could be provoked by the candidate, by returning such an object).
"""

from __future__ import annotations

import ast

from agentic_rl.sandbox.patching import assigned_attributes, dotted, parse

OUT_OF_PROCESS, IN_PROCESS = "out_of_process", "in_process"

# The needs, each as rules on the dotted names of the test's code (after resolving its imports: `from
# random import seed` makes `seed` mean random.seed). A rule's kind says how it matches:
#   module   the name is the module or a name in it (`pickle`, `pickle.load`), or an import of it
#   last     the last part of an attribute chain or imported name (`df.__class__`, `pd.read_pickle`)
#   builtin  a bare, unimported name (`eval`, `compile`: not `re.compile`)
#   dotted   the name is it or ends with it (`sys.stdout`, `matplotlib.pyplot.gcf`)
#   called   a call of a dotted name whose last part is it (`np.random.seed(0)`; not `self.seed`)
#   fixture  an argument's name (pytest fixtures);  keyword  a keyword argument's name
_RULES = {
    "capture": {
        "fixture": ("capsys", "capfd", "capsysbinary", "capfdbinary", "caplog", "recwarn"),
        "last": ("redirect_stdout", "redirect_stderr", "assertLogs", "assertNoLogs", "catch_warnings")
        + ("assertWarns", "assertWarnsRegex"),
        "dotted": ("sys.stdout", "sys.stderr", "sys.stdin", "sys.__stdout__", "sys.__stderr__", "pytest.warns"),
    },
    "shared_random": {"called": ("seed", "setstate", "set_state", "set_seed", "manual_seed", "manual_seed_all")},
    "runs_data": {
        "module": ("pickle", "cPickle", "_pickle", "cloudpickle", "dill", "joblib", "shelve", "marshal")
        + ("jsonpickle", "runpy", "importlib"),
        "last": ("read_pickle", "Unpickler", "unsafe_load", "unsafe_load_all", "full_load", "full_load_all")
        + ("UnsafeLoader", "FullLoader", "load_model", "import_module", "spec_from_file_location")
        + ("SourceFileLoader", "exec_module", "load_module", "run_path", "run_module"),
        "dotted": ("yaml.load", "yaml.load_all", "torch.load"),
        "builtin": ("eval", "exec", "compile", "__import__"),
        "keyword": ("allow_pickle",),
    },
    "introspection": {
        "module": ("gc", "inspect", "ctypes"),
        "last": ("__class__", "__module__", "__dict__", "__globals__", "__code__", "__closure__", "__getattribute__"),
        "dotted": ("sys.modules", "sys._getframe"),
        "builtin": ("globals", "vars", "locals", "issubclass"),
        "class_check": ("isinstance(..., type)",),  # a class the candidate made, which crosses as a handle
    },
    "pyplot_state": {
        "dotted": ("pyplot.gcf", "pyplot.gca", "pyplot.get_fignums", "pyplot.fignum_exists", "pyplot.get_figlabels")
    },
    "pytest_monkeypatch": {"fixture": ("monkeypatch",)},
}
# A `patch` of the output streams (a literal target string) is capture too.
_PATCHED_STREAMS = ("sys.stdout", "sys.stderr", "sys.stdin")
# Conventional aliases the tests use without importing (BigCodeBench's `plt`, `np`): what they mean.
_ALIASES = {"plt": "matplotlib.pyplot", "np": "numpy", "pd": "pandas", "mpl": "matplotlib"}


def plan(test: str, harness: str) -> tuple[str, str | None]:
    """(trust, why): OUT_OF_PROCESS, or IN_PROCESS with the need found and the construct that shows it
    (`"capture: capsys"`)."""
    if harness == "humaneval":  # check(candidate) only calls the candidate
        return OUT_OF_PROCESS, None
    # one parse at a time (patching.PARSE_LOCK); tests that do not parse are an empty module, out of process: nothing
    # runs, and the harness reports the error either way
    found = _first_need(parse(test), harness)
    return (IN_PROCESS, found) if found else (OUT_OF_PROCESS, None)


def _first_need(tree: ast.AST, harness: str) -> str | None:
    """The first need of the tests, in the order of the syntax tree's walk: "need: construct"."""
    imported = _import_aliases(tree)
    for node in ast.walk(tree):
        for kind, name in _facts(node, imported):
            for need, rules in _RULES.items():
                if _matches(kind, name, rules):
                    return f"{need}: {name}"
        target = _patch_target(node)
        if target is not None and any(target == s or target.startswith(s + ".") for s in _PATCHED_STREAMS):
            return f"capture: patch({target!r})"
    # a hand-made patch made as the test file loads (unittest), or anywhere in a pytest file (its hand-made
    # patches are not forwarded: pytest imports the test module itself)
    scope = tree if harness == "pytest" else ast.Module([n for n in tree.body if not isinstance(n, _DEFS)], [])
    for base, name in sorted(assigned_attributes(scope)):
        if base.split(".")[0] in imported:
            return f"hand_made_patch: {base}.{name}"
    return None


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _matches(kind: str, name: str, rules: dict) -> bool:
    if kind == "chain":  # a dotted name the code reads: every rule on names applies
        last = name.rsplit(".", 1)[-1]
        return (
            any(name == m or name.startswith(m + ".") for m in rules.get("module", ()))
            or last in rules.get("last", ())
            or any(name == d or name.endswith("." + d) for d in rules.get("dotted", ()))
        )
    if kind == "called":
        return name.rsplit(".", 1)[-1] in rules.get("called", ())
    return name in rules.get(kind, ())


def _import_aliases(tree: ast.AST) -> dict[str, str]:
    """What each name the test imports means, as a dotted path (`from random import seed as s`: s ->
    random.seed), with the conventional aliases the tests use unimported."""
    out = dict(_ALIASES)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _facts(node: ast.AST, imported: dict[str, str]) -> list[tuple[str, str]]:
    """(kind, name) pairs `node` shows: a dotted name the code reads ("chain", resolved through the
    imports), a bare builtin's name, a call's last part, an argument's or keyword's name, an import."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        chain = dotted(node)
        if chain is None:
            return [("chain", node.attr)]  # `f().__class__`: the attribute alone
        facts = [("chain", _resolved(chain, imported))]
        return facts + ([("builtin", chain)] if "." not in chain and chain not in imported else [])
    if isinstance(node, ast.Call) and dotted(node.func) == "isinstance" and len(node.args) == 2:
        return [("class_check", "isinstance(..., type)")] if dotted(node.args[1]) == "type" else []
    if isinstance(node, ast.Call):
        chain = dotted(node.func)
        if chain is None or "." not in (resolved := _resolved(chain, imported)) or chain.startswith("self."):
            return []
        return [("called", resolved)]
    if isinstance(node, ast.arg):
        return [("fixture", node.arg)]
    if isinstance(node, ast.keyword) and node.arg:
        return [("keyword", node.arg)]
    if isinstance(node, ast.Import):
        return [("chain", a.name) for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [("chain", node.module)] + [("chain", f"{node.module}.{a.name}") for a in node.names]
    return []


def _resolved(chain: str, imported: dict[str, str]) -> str:
    head, _, rest = chain.partition(".")
    return imported.get(head, head) + ("." + rest if rest else "")


def _patch_target(node: ast.AST) -> str | None:
    """The target string of a `patch('a.b')` / `mock.patch('a.b')` call, where it is a literal."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    first = node.args[0]
    if name in ("patch", "dict") and isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None
