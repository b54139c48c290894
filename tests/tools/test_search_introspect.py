"""`introspect.py` run in this process: what a walk of a module records, what `build` and `probe` report, and how
usage is counted.

The backend runs the file's source in the sandbox interpreter (`interpreter.run_introspect`), where neither
coverage nor a mutation's import hook reaches; its functions are plain standard-library code, so these tests import
the module and call them directly. The walked package is a toy one, written as source and run as a module, so that
every object in it names that module as its own, as a real package's do.
"""

from __future__ import annotations

import json
import sys
import sysconfig
import time
import types
from pathlib import Path

import pytest

from agentic_rl.tools.search import introspect as I

TOY_SOURCE = '''
"""A toy package.

It has a second paragraph."""

import json

__all__ = ["shout", "Box", "LIMIT"]

LIMIT = 3


def shout(text, times: int = 2) -> str:
    """Shout the text.

    It repeats it.
    Twice by default.

    Parameters
    ----------
    text : the text
    """
    return text * times


def helper():
    """Not listed in __all__ but defined here."""


def hexlify(data):
    """hexlify(data) -> bytes

    Hexadecimal digits of data. Every byte gives two."""


class Box:
    """A box.

    It holds things."""

    SIDES = 6

    def open(self, force=False):
        """Open the box."""

    @property
    def size(self):
        """How big it is."""
        return 1

    class Lid:
        """The lid."""

        def lift(self):
            """Lift it."""

    def _hidden(self):
        """Private: not indexed."""
'''


def toy_module(name: str = "toypkg") -> types.ModuleType:
    mod = types.ModuleType(name)
    exec(compile(TOY_SOURCE, f"<{name}>", "exec"), mod.__dict__)
    return mod


def entry(name, kind, signature="", doc="", extra="", module="toypkg"):
    return {"name": name, "module": module, "kind": kind, "signature": signature, "doc": doc, "extra": extra}


def walked(cfg: dict | None = None, name: str = "toypkg") -> I.Walker:
    walker = I.Walker(cfg or {})
    walker.budget = walker.max_entries
    walker.walk_module(toy_module(name), name, name, 0)
    return walker


# ----------------------------------------------------------------------------- docstrings and signatures
def test_first_paragraph_and_the_description_up_to_the_first_section():
    doc = "Summary  line\nwrapped.\n\nMore text\nhere.\n\n  \nAnd more.\n\nParameters\n----------\nx : int\n"
    assert I.first_paragraphs(doc) == ("Summary line wrapped.", "More text here. And more.")
    assert I.first_paragraphs("One line.") == ("One line.", "")
    assert I.first_paragraphs("") == ("", "")
    assert I.first_paragraphs(None) == ("", "")
    assert I.first_paragraphs("Returns\n-------\nint") == ("", "")  # only sections: no prose
    assert I.first_paragraphs("Do it.\n>>> do_it()\n") == ("Do it.", "")  # an example ends the prose too


def test_a_signature_is_one_line_without_its_result_or_addresses():
    assert I.clean_signature("(a, b) --> int") == "(a, b)"
    assert I.clean_signature("(a, b) -> int") == "(a, b)"
    assert I.clean_signature("(x=<object object at 0x7f3aBc12>,\n   y=1)") == "(x=<object object>, y=1)"
    assert I.clean_signature("(a,  b)") == "(a, b)"


def test_clip_keeps_text_up_to_its_bound_and_marks_a_cut():
    assert I.clip("abcdef", 6) == "abcdef"
    assert I.clip("abcdefg", 6) == "abc..."
    assert I.clip("ab   defg", 6) == "ab..."  # the cut's trailing spaces go


def test_signatures_lose_their_annotations_and_unreadable_ones_are_empty():
    def f(a: int, *, b: str = "x") -> int:
        return a

    assert I.safe_signature(f) == "(a, *, b='x')"
    assert I.safe_signature(3) == ""  # not callable

    class NoDoc:
        @property
        def __doc__(self):  # the docstring itself raises
            raise RuntimeError("no")

    assert I.safe_doc(NoDoc()) == ""
    assert I.safe_doc(f) == ""  # no docstring
    assert I.safe_doc(types.SimpleNamespace) != ""


# ----------------------------------------------------------------------------- walking a module
def test_a_walk_records_each_public_name_once_with_its_kind_signature_and_prose():
    assert walked().entries == [
        entry("toypkg", "module", doc="A toy package.", extra="It has a second paragraph."),
        entry("toypkg.Box", "class", "()", "A box.", "It holds things."),
        entry("toypkg.Box.Lid", "class", "", "The lid."),
        entry("toypkg.Box.Lid.lift", "method", "(self)", "Lift it."),
        entry("toypkg.Box.SIDES", "attribute", "", "Constant SIDES = 6"),
        entry("toypkg.Box.open", "method", "(self, force=False)", "Open the box."),
        entry("toypkg.Box.size", "property", "", "How big it is."),
        entry("toypkg.LIMIT", "data", "", "Constant LIMIT = 3"),
        entry("toypkg.helper", "function", "()", "Not listed in __all__ but defined here."),
        # a C-style first line is the signature; the prose is the sentence after it
        entry("toypkg.hexlify", "function", "(data)", "Hexadecimal digits of data.", "Every byte gives two."),
        entry("toypkg.shout", "function", "(text, times=2)", "Shout the text.", "It repeats it. Twice by default."),
    ]


def walker_in_module(budget: int) -> I.Walker:
    """A walker inside module "m" with room for `budget` entries (what `walk_module` sets before adding)."""
    walker = I.Walker({})
    walker.budget = budget
    walker.module = "m"
    return walker


def test_a_c_style_first_line_gives_the_signature_only_when_none_is_known():
    walker = walker_in_module(5)
    walker.add("m.f", "function", None, signature="(x, y)", doc="f(a) -> int\n\nDoes it")
    walker.add("m.g", "function", None, signature="", doc="g(a)\n\nDoes it. And more.")
    walker.add("m.h", "function", None, signature="", doc="other(a)\n\nNot h's line.")
    assert [(e["signature"], e["doc"], e["extra"]) for e in walker.entries] == [
        ("(x, y)", "Does it.", ""),
        ("(a)", "Does it.", "And more."),
        ("", "other(a)", "Not h's line."),  # a line that names another function is prose
    ]


def test_data_without_a_docstring_is_described_by_its_type():
    walker = I.Walker({})
    walker.budget = 2
    walker.module = "m"
    walker.add("m.x", "data", object(), doc="")
    walker.add("m.y", "attribute", object(), doc="")
    assert [e["doc"] for e in walker.entries] == ["object instance.", ""]


def test_caps_on_entries_members_and_text():
    walker = walked({"max_entries_per_module": 4})
    assert [e["name"] for e in walker.entries] == ["toypkg", "toypkg.Box", "toypkg.Box.Lid", "toypkg.Box.Lid.lift"]
    assert walker.budget == 0
    # each class has its own count of members: Lid's method is not one of Box's two
    walker = walked({"max_members_per_class": 2})
    names = [e["name"] for e in walker.entries]
    assert [n for n in names if n.startswith("toypkg.Box.")] == [
        "toypkg.Box.Lid",
        "toypkg.Box.Lid.lift",
        "toypkg.Box.SIDES",
    ]
    walker = walked({"max_doc_chars": 10, "max_extra_chars": 12})
    shout = next(e for e in walker.entries if e["name"] == "toypkg.shout")
    assert (shout["doc"], shout["extra"]) == ("Shout t...", "It repeat...")


def test_the_caps_default_to_what_the_module_docstring_says():
    walker = I.Walker({})
    assert (walker.max_depth, walker.max_entries, walker.max_members, walker.max_doc, walker.max_extra) == (
        0,
        6000,
        500,
        400,
        300,
    )
    assert walker.budget == 0  # `build` gives each listed module its budget


def test_a_name_is_recorded_once():
    walker = I.Walker({})
    walker.budget = 5
    walker.module = "m"
    assert walker.add("m.f", "function", None, signature="", doc="First.")
    assert not walker.add("m.f", "function", None, signature="", doc="Second.")
    assert [e["doc"] for e in walker.entries] == ["First."]
    assert walker.budget == 4


def test_submodules_are_followed_to_max_depth_unless_excluded_or_private(monkeypatch):
    root = toy_module("toyroot")
    sub = toy_module("toyroot.sub")
    private = toy_module("toyroot._private")
    skipped = toy_module("toyroot.tests")
    deeper = toy_module("toyroot.sub.deeper")
    root.sub, root._private, root.tests = sub, private, skipped
    sub.deeper = deeper

    def modules_walked(cfg):
        walker = I.Walker(cfg)
        walker.budget = walker.max_entries
        walker.walk_module(root, "toyroot", "toyroot", 0)
        return [e["name"] for e in walker.entries if e["kind"] == "module"]

    assert modules_walked({}) == ["toyroot"]
    assert modules_walked({"max_depth": 1}) == ["toyroot", "toyroot.sub"]
    assert modules_walked({"max_depth": 2}) == ["toyroot", "toyroot.sub", "toyroot.sub.deeper"]
    assert modules_walked({"max_depth": 2, "exclude": ["toyroot.sub"]}) == ["toyroot"]


def test_a_module_walked_twice_is_recorded_once():
    walker = walked()
    n = len(walker.entries)
    walker.budget = 100
    walker.walk_module(toy_module(), "toypkg", "toypkg", 0)
    assert len(walker.entries) == n


# ----------------------------------------------------------------------------- build and probe
@pytest.fixture
def importable(monkeypatch, tmp_path):
    """The toy package importable as `toypkg`, and three more modules: one that needs a missing package, one whose
    import raises, one whose import takes a second."""
    monkeypatch.setitem(sys.modules, "toypkg", toy_module())
    (tmp_path / "needs_missing_toy.py").write_text("import missing_dependency_of_toy\n")
    (tmp_path / "raises_toy.py").write_text("raise RuntimeError('broken at import')\n")
    (tmp_path / "slow_toy.py").write_text("import time\ntime.sleep(1.0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in ("needs_missing_toy", "raises_toy", "slow_toy"):
        sys.modules.pop(name, None)


def test_build_reports_each_module_and_keeps_what_it_indexed(importable):
    cfg = {
        "modules": ["toypkg", "absent_toy_package", "absent_toy_package.sub", "needs_missing_toy", "raises_toy"],
        "usage": False,
        "max_entries_per_module": 3,
    }
    start = time.perf_counter()
    result = I.build(cfg)
    took = time.perf_counter() - start
    assert [e["name"] for e in result["entries"]] == ["toypkg", "toypkg.Box", "toypkg.Box.Lid"]
    statuses = {name: {k: v for k, v in st.items() if k != "seconds"} for name, st in result["modules"].items()}
    assert statuses == {
        "toypkg": {"status": "ok", "entries": 3},
        "absent_toy_package": {"status": "absent", "error": "No module named 'absent_toy_package'", "entries": 0},
        "absent_toy_package.sub": {"status": "absent", "error": "No module named 'absent_toy_package'", "entries": 0},
        "needs_missing_toy": {
            "status": "error",
            "error": "ModuleNotFoundError: No module named 'missing_dependency_of_toy'",
            "entries": 0,
        },
        "raises_toy": {"status": "error", "error": "RuntimeError: broken at import", "entries": 0},
    }
    assert all(0 <= st["seconds"] <= took for st in result["modules"].values())
    assert result["usage"] == {}
    assert result["version"] == sys.version and result["executable"] == sys.executable


def test_build_gives_up_on_a_slow_module_and_goes_on(importable):
    result = I.build({"modules": ["slow_toy", "toypkg"], "usage": False, "module_timeout_s": 0.2})
    assert result["modules"]["slow_toy"]["status"] == "timeout"
    assert result["modules"]["slow_toy"]["error"] == "gave up after 0s (kept what was indexed)"
    assert result["modules"]["toypkg"]["status"] == "ok"
    assert result["modules"]["toypkg"]["entries"] == 11


def test_probe_names_each_root_once_with_where_it_is(importable):
    result = I.probe({"modules": ["json", "json.decoder", "absent_toy_package", "raises_toy"]})
    assert list(result["modules"]) == ["json", "absent_toy_package", "raises_toy"]
    assert result["modules"]["absent_toy_package"] is None
    json_info = result["modules"]["json"]
    assert json_info["origin"].endswith("__init__.py")
    st = Path(json_info["origin"]).stat()
    assert json_info["stat"] == [st.st_mtime_ns, st.st_size]
    assert json_info["version"] is None  # the standard library is no distribution
    assert result["modules"]["raises_toy"]["origin"].endswith("raises_toy.py")  # found, not imported
    assert result["executable"] == sys.executable and result["implementation"] == sys.implementation.name


def test_probe_of_a_namespace_package_names_its_folder(tmp_path, monkeypatch):
    (tmp_path / "nspkg_toy").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    info = I.probe({"modules": ["nspkg_toy"]})["modules"]["nspkg_toy"]
    assert info["origin"] == str(tmp_path / "nspkg_toy")
    st = (tmp_path / "nspkg_toy").stat()
    assert info["stat"] == [st.st_mtime_ns, st.st_size]


def test_a_distribution_reports_its_version():
    assert I.dist_version("pytest") == pytest.__version__
    assert I.dist_version("absent_toy_package") is None
    assert I.module_root_spec("absent_toy_package.sub") is None
    assert I.module_root_spec("json.decoder").name == "json"


# ----------------------------------------------------------------------------- usage counts
def test_usage_counts_last_names_and_parent_pairs_with_aliases(tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / ".hidden").mkdir()
    (src / "site-packages").mkdir()
    text = "import toypkg as tp\ntp.shout('x')\ntoypkg.shout\nshout\nBox.open()\nplt.plot()\n"
    (src / "a.py").write_text(text)
    (src / "b.txt").write_text("shout shout")  # not Python
    for skipped in ("pkg/__pycache__/c.py", ".hidden/d.py", "site-packages/e.py"):
        (src / skipped).write_text("shout\n")
    monkeypatch.setattr(I, "usage_source_dirs", lambda modules: [str(src)])
    entries = [{"name": "toypkg.shout"}, {"name": "toypkg.Box.open"}, {"name": "matplotlib.pyplot.plot"}]
    cfg = {"modules": ["toypkg"], "usage_aliases": {"tp": "toypkg", "plt": "matplotlib.pyplot"}}
    assert I.usage_counts(cfg, entries) == {
        "last": {"toypkg": 2, "shout": 3, "Box": 1, "open": 1, "plot": 1},
        "pair": {"toypkg.shout": 2, "Box.open": 1, "pyplot.plot": 1},
        "bytes": len(text),
    }


def test_usage_reading_stops_at_the_byte_cap_per_folder(tmp_path, monkeypatch):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    (one / "a.py").write_text("shout\n")
    (one / "b.py").write_text("shout shout\n")
    (two / "c.py").write_text("shout\n")
    monkeypatch.setattr(I, "usage_source_dirs", lambda modules: [str(one), str(two)])
    cfg = {"modules": ["toypkg"], "usage_max_bytes": 6}
    # a.py reaches the cap of folder one, so b.py is not read; folder two has its own cap
    assert I.usage_counts(cfg, [{"name": "shout"}]) == {"last": {"shout": 2}, "pair": {}, "bytes": 12}


def test_build_counts_usage_unless_told_not_to(importable, monkeypatch, tmp_path):
    (tmp_path / "use.py").write_text("toypkg.shout()\n")
    monkeypatch.setattr(I, "usage_source_dirs", lambda modules: [str(tmp_path)])
    result = I.build({"modules": ["toypkg"]})
    assert result["usage"]["pair"] == {"toypkg.shout": 1}


def test_usage_is_read_from_the_standard_library_and_each_third_party_package_once():
    stdlib = sysconfig.get_paths()["stdlib"]
    numpy = pytest.importorskip("numpy")
    numpy_dir = str(Path(numpy.__file__).parent)
    assert I.usage_source_dirs(["json", "numpy", "numpy.linalg", "absent_toy_package"]) == [stdlib, numpy_dir]


# ----------------------------------------------------------------------------- what a module's names count as
def module_from(name: str, source: str, **names) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(names)
    exec(compile(source, f"<{name}>", "exec"), mod.__dict__)
    return mod


OTHER_SOURCE = '''
def helper():
    """Help from a sibling module."""
'''
C_SOURCE = '''
def fast(x):
    """The C accelerator's version."""
'''
SUB_SOURCE = '''
import enum
import json


class Color(enum.Enum):
    """Colours."""

    RED = 1


RED = Color.RED


class Registry:
    """Where things are registered."""


registry = Registry()


class _Dist:
    """A distribution."""

    def __call__(self, x):
        return x

    def pdf(self, x):
        """Density at x."""


norm = _Dist()


class Base:
    """A base."""

    def shared(self):
        """Shared by its children."""


class Child(Base):
    """A child."""

    Decoder = json.JSONDecoder  # another package's class

    def own(self):
        """Its own."""


class GrandChild(Child):
    """Inherits shared from a base that is not its own."""


class Mapping(dict):
    """A dict of its own."""

    def extra(self):
        """Not dict's."""


def shout(text):
    """Shout."""


also_shout = shout
ZAlias = Child
append_to = [].append
dumps = json.dumps
'''


def toy_package() -> dict[str, types.ModuleType]:
    other = module_from("toyb.other", OTHER_SOURCE)
    c_impl = module_from("_toyb.sub", C_SOURCE)
    sub = module_from("toyb.sub", SUB_SOURCE, helper=other.helper, fast=c_impl.fast)
    return {"toyb.sub": sub, "toyb.other": other}


def walk(mod: types.ModuleType, name: str, cfg: dict | None = None) -> list[tuple[str, str, str]]:
    walker = I.Walker(cfg or {})
    walker.budget = walker.max_entries
    walker.walk_module(mod, name, name.split(".")[0], 0)
    return [(e["name"].removeprefix(name + "."), e["kind"], e["doc"]) for e in walker.entries]


def test_a_module_without_all_keeps_what_it_defines_and_skips_what_it_imports():
    sub = toy_package()["toyb.sub"]
    assert walk(sub, "toyb.sub") == [
        ("toyb.sub", "module", ""),
        ("Base", "class", "A base."),
        ("Base.shared", "method", "Shared by its children."),
        ("Child", "class", "A child."),
        ("Child.own", "method", "Its own."),
        # from its direct base with one public subclass
        ("Child.shared", "method", "Shared by its children."),
        ("Color", "class", "Colours."),
        ("Color.RED", "attribute", "Constant RED = <Color.RED: 1>"),
        ("GrandChild", "class", "Inherits shared from a base that is not its own."),
        ("GrandChild.own", "method", "Its own."),  # from its direct base; not Base's shared
        ("Mapping", "class", "A dict of its own."),
        ("Mapping.extra", "method", "Not dict's."),  # not dict's methods
        ("RED", "data", "Constant RED = <Color.RED: 1>"),
        ("Registry", "class", "Where things are registered."),
        ("also_shout", "function", "Shout."),  # a function's alias is kept
        ("append_to", "function", "Append object to the end of the list."),  # a C function naming no module
        ("fast", "function", "The C accelerator's version."),  # from _toyb.sub: this module's own
        # a callable instance of a private class, and its methods under its name
        ("norm", "function", "A distribution."),
        ("norm.pdf", "method", "Density at x."),
        ("registry", "data", "Where things are registered."),  # an instance of the package's class
        ("shout", "function", "Shout."),
        # not: the class alias ZAlias, helper (a sibling module's), dumps (json's), the modules enum and json
    ]


def test_a_packages_top_level_also_keeps_what_it_imports_from_the_package():
    sub = toy_package()["toyb.sub"]
    names = [n for n, _, _ in walk(sub, "toyb")]  # walked as a top level: anything from the package counts
    assert "helper" in names and "dumps" not in names
    facade = module_from("toyb.facade", "", helper=sub.helper, shout=sub.shout)  # defines nothing itself
    assert [n for n, _, _ in walk(facade, "toyb.facade")] == ["toyb.facade", "helper", "shout"]
    api = module_from("toyb.api", "def own():\n    pass\n", helper=sub.helper)
    assert [n for n, _, _ in walk(api, "toyb.api")] == ["toyb.api", "helper", "own"]


def test_a_bad_all_is_ignored_and_private_names_in_it_are_not_declared():
    mod = module_from("toyc", "__all__ = ['f', 3]\n\ndef f():\n    pass\n", g=len)
    assert [n for n, _, _ in walk(mod, "toyc")] == ["toyc", "f"]  # builtins' len is not toyc's
    mod = module_from("toyc", "__all__ = ('_f', 'f')\n\ndef _f():\n    pass\n\ndef f():\n    pass\n")
    assert [n for n, _, _ in walk(mod, "toyc")] == ["toyc", "f"]
    # declared: kept wherever it comes from, also where the module defines its own (so it is no facade)
    mod = module_from("toyc.sub", "__all__ = ['g']\n\ndef own():\n    pass\n", g=len)
    assert [n for n, _, _ in walk(mod, "toyc.sub")] == ["toyc.sub", "g", "own"]


def test_builtins_keep_what_code_calls_as_a_builtin_but_not_sites_helpers():
    import builtins

    names = {n for n, _, _ in walk(builtins, "builtins", {"max_members_per_class": 0})}
    assert {"open", "len", "print", "dict"} <= names
    assert not names & {"exit", "quit", "help", "copyright"}


def shape_module(n_subclasses: int) -> types.ModuleType:
    source = 'class Shape:\n    def area(self):\n        """Its area."""\n'
    for i in range(n_subclasses):
        source += f"\n\nclass Shape{i}(Shape):\n    pass\n"
    return module_from("toyd", source)


def test_a_method_is_shown_under_subclasses_only_while_its_class_has_at_most_three():
    three = [n for n, _, _ in walk(shape_module(3), "toyd")]
    assert [n for n in three if n.endswith(".area")] == ["Shape.area", "Shape0.area", "Shape1.area", "Shape2.area"]
    four = [n for n, _, _ in walk(shape_module(4), "toyd")]
    assert [n for n in four if n.endswith(".area")] == ["Shape.area"]


def test_each_kind_of_member_counts_toward_the_cap():
    source = (
        "class Props:\n"
        + "".join(f"    @property\n    def p{i}(self):\n        return {i}\n" for i in range(3))
        + "class Meths:\n"
        + "".join(f"    def m{i}(self):\n        pass\n" for i in range(3))
        + "class Consts:\n"
        + "".join(f"    C{i} = {i}\n" for i in range(3))
        + "class Nested:\n"
        + "".join(f"    class N{i}:\n        pass\n" for i in range(3))
    )
    names = [n for n, _, _ in walk(module_from("toye", source), "toye", {"max_members_per_class": 2})]
    assert names == [
        "toye",
        "Consts",
        "Consts.C0",
        "Consts.C1",
        "Meths",
        "Meths.m0",
        "Meths.m1",
        "Nested",
        "Nested.N0",
        "Nested.N1",
        "Props",
        "Props.p0",
        "Props.p1",
    ]


def test_the_walk_stops_at_the_entry_budget_inside_a_class():
    walker = I.Walker({})
    walker.budget = 3
    walker.walk_module(toy_module(), "toypkg", "toypkg", 0)
    assert [e["name"] for e in walker.entries] == ["toypkg", "toypkg.Box", "toypkg.Box.Lid"]
    walker.budget = 0
    walker.walk_module(toy_module("toyother"), "toyother", "toyother", 0)  # no budget: not even visited
    assert "toyother" not in walker.visited_modules
    walker.budget = 1
    walker.walk_module(toy_module("toylast"), "toylast", "toylast", 0)  # room for the module's own entry
    assert [e["name"] for e in walker.entries[3:]] == ["toylast"]
    walker.budget = 2
    walker.walk_module(toy_module("toytwo"), "toytwo", "toytwo", 0)  # and one more
    assert [e["name"] for e in walker.entries[4:]] == ["toytwo", "toytwo.Box"]


def test_a_signature_line_only_counts_when_it_names_the_entry():
    walker = walker_in_module(3)
    walker.add("m.load", "function", None, signature="", doc="m.load(path)\n\nRead it. Then more")
    walker.add("m.dump", "function", None, signature="", doc="dump(x) --> None\n\nWrite it")
    assert [(e["signature"], e["doc"], e["extra"]) for e in walker.entries] == [
        ("(path)", "Read it.", "Then more"),
        ("(x)", "Write it.", ""),
    ]
    walker.budget = 2
    walker.add("m.f", "function", None, signature="", doc="f(a, key=(1, 2))\n\nDo it.")  # parentheses inside
    walker.add("m.g", "function", None, signature="", doc="g(a) -> int")  # no prose after the line
    assert [(e["signature"], e["doc"]) for e in walker.entries[2:]] == [("(a, key=(1, 2))", "Do it."), ("(a)", "")]


def test_attributes_a_class_declares_in_slots_are_properties():
    mod = module_from("toyf", 'class Point:\n    """A point."""\n\n    __slots__ = ("x", "y")\n')
    assert walk(mod, "toyf") == [
        ("toyf", "module", ""),
        ("Point", "class", "A point."),
        ("Point.x", "property", ""),
        ("Point.y", "property", ""),
    ]


def test_probe_of_a_built_in_module_has_no_file_to_stat():
    assert I.probe({"modules": ["sys"]})["modules"]["sys"] == {"origin": "built-in", "stat": None, "version": None}


def test_build_follows_a_listed_modules_submodules_to_max_depth(monkeypatch):
    root, sub = toy_module("toyroot"), toy_module("toyroot.sub")
    root.sub = sub
    monkeypatch.setitem(sys.modules, "toyroot", root)
    names = [e["name"] for e in I.build({"modules": ["toyroot"], "max_depth": 1, "usage": False})["entries"]]
    assert "toyroot.sub" in names and "toyroot.sub.Box" in names


def test_main_answers_the_mode_it_is_asked_for(tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"modules": ["json"]}))
    I.main(["probe", str(cfg), str(tmp_path / "probe.json")])
    assert set(json.loads((tmp_path / "probe.json").read_text())["modules"]) == {"json"}
    assert "entries" not in json.loads((tmp_path / "probe.json").read_text())


def test_run_as_a_script_it_reads_mode_and_paths_after_the_program_name(tmp_path, monkeypatch):
    """The backend runs this module as `python -c SOURCE mode cfg out`: argv[0] is "-c", the rest are its
    arguments. Run it the same way in this process (runpy goes through the import system, as the backend's
    interpreter does)."""
    import runpy
    import warnings

    cfg, out = tmp_path / "cfg.json", tmp_path / "out.json"
    cfg.write_text(json.dumps({"modules": ["json"]}))
    monkeypatch.setattr(sys, "argv", ["-c", "probe", str(cfg), str(out)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the module is already imported: runpy says so
        runpy.run_module(I.__name__, run_name="__main__")
    assert set(json.loads(out.read_text())["modules"]) == {"json"}
