"""Text processing shared by the search backends: tokenising API names and queries.

Everything here is deterministic and dependency-free, so the index and the queries are always
processed the same way.
"""
from __future__ import annotations

import re
from typing import Iterable

# Import conventions a model (and BigCodeBench code) uses; the value replaces the first component
# of a dotted name ("pd.DataFrame.groupby" -> "pandas.DataFrame.groupby").
DOTTED_ALIASES: dict[str, str] = {
    "pd": "pandas",
    "np": "numpy",
    "plt": "matplotlib.pyplot",
    "sns": "seaborn",
    "mpl": "matplotlib",
    "sm": "statsmodels.api",
    "tf": "tensorflow",
    "df": "pandas.DataFrame",
    "ax": "matplotlib.axes.Axes",
    "fig": "matplotlib.figure.Figure",
}
# The same conventions as plain words in a query ("np argsort", "regex find all").
WORD_ALIASES: dict[str, tuple[str, ...]] = {
    "pd": ("pandas",),
    "np": ("numpy",),
    "plt": ("matplotlib", "pyplot"),
    "sns": ("seaborn",),
    "mpl": ("matplotlib",),
    "sklearn": ("sklearn",),
    "df": ("dataframe",),
    "regex": ("re", "regex", "regular", "expression"),
    "regexp": ("re", "regular", "expression"),
    "dict": ("dict", "dictionary"),
    "dictionary": ("dict", "dictionary"),
}

STOPWORDS = frozenset("""
a an the of to in on for and or is are be been being with by from as at it its this that these
those into how do does i me my we you your what which who whom when where why can could should
would will shall may might must please using use python want need get given some any all each
every not no than then there their them they also such via per
""".split()) - {"all", "get"}  # "all"/"get" name real APIs (re.findall parts, requests.get)

_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_DOTTED_RE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_PARAM_RE = re.compile(r"[(,]\s*\*{0,2}([A-Za-z_]\w*)")
_IGNORED_PARAMS = frozenset({"self", "cls", "args", "kwargs", "kwds", "kw"})


def stem(word: str) -> str:
    """A light suffix stripper: plurals, -ed, -ing, final -e (matches -> match, sorted -> sort)."""
    w = word
    if len(w) <= 3 or "_" in w or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif w.endswith("ing") and len(w) - 3 >= 4:
        w = w[:-3]
        if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]
    elif w.endswith("ed") and len(w) - 2 >= 4:
        w = w[:-2]
        if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


def split_identifier(word: str) -> list[str]:
    """'most_common' -> [most_common, most, common]; 'DataFrame' -> [dataframe, data, frame]."""
    out = [word.lower()]
    for part in word.split("_"):
        if not part:
            continue
        pieces = _CAMEL_RE.findall(part)
        if len(pieces) > 1:
            out.append(part.lower())
        out.extend(p.lower() for p in pieces)
    seen: dict[str, None] = {}
    for tok in out:
        seen.setdefault(tok, None)
    return list(seen)


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def prose_tokens(text: str) -> list[str]:
    """Tokens of free text (docstrings, queries): identifiers split, stopwords dropped, stemmed."""
    out: list[str] = []
    for word in words(text):
        for tok in split_identifier(word):
            if len(tok) < 2 or tok in STOPWORDS:
                continue
            out.append(stem(tok))
    return out


def compound_split(word: str, vocabulary: set[str] | frozenset[str]) -> list[str]:
    """Split a run-together lowercase name into two known words: heappush -> heap, push.

    Tries every split point and keeps the one whose shorter half is longest; both halves must be
    words of the vocabulary (the raw lowercase words of all docstrings) and at least 2 letters.
    """
    if len(word) < 5 or not word.isalpha():
        return []
    best: list[str] = []
    best_key = 0
    for i in range(2, len(word) - 1):
        left, right = word[:i], word[i:]
        if left in vocabulary and right in vocabulary:
            key = min(len(left), len(right))
            if key > best_key:
                best, best_key = [left, right], key
    return best


def param_names(signature: str) -> list[str]:
    return [p for p in _PARAM_RE.findall(signature or "") if p not in _IGNORED_PARAMS]


def name_tokens(name: str, vocabulary: set[str] | frozenset[str] = frozenset(),
                last_weight: int = 3) -> list[str]:
    """Tokens of a fully qualified name; its last component counts `last_weight` times."""
    parts = name.split(".")
    out: list[str] = []
    for part in parts[:-1]:
        out.extend(stem(t) for t in split_identifier(part) if len(t) >= 2)
    last = parts[-1]
    toks = [t for t in split_identifier(last) if len(t) >= 2 or t == last.lower()]
    for t in list(toks):
        toks.extend(compound_split(t, vocabulary))
    toks = list(dict.fromkeys(stem(t) for t in toks if t not in STOPWORDS or t == last.lower()))
    out.extend(toks * last_weight)
    return out


def dotted_names(text: str) -> list[str]:
    """Dotted identifiers in a query, aliases expanded: 'pd.DataFrame.groupby' -> 'pandas.DataFrame.groupby'."""
    out = []
    for m in _DOTTED_RE.findall(text):
        out.append(expand_alias(m))
    return list(dict.fromkeys(out))


def expand_alias(dotted: str) -> str:
    head, _, rest = dotted.partition(".")
    if head in DOTTED_ALIASES:
        return DOTTED_ALIASES[head] + ("." + rest if rest else "")
    return dotted


def query_tokens(query: str) -> list[str]:
    """BM25 tokens of a query, word aliases expanded, duplicates removed (order kept)."""
    out: list[str] = []
    for word in words(query):
        low = word.lower()
        expanded: Iterable[str] = WORD_ALIASES.get(low, (word,))
        for w in expanded:
            out.extend(prose_tokens(w) if w not in ("re",) else ["re"])
    return list(dict.fromkeys(out))


def looks_like_identifier(word: str) -> bool:
    """True for words that are probably code names (most_common, DataFrame, log10), not prose."""
    return ("_" in word or any(c.isdigit() for c in word)
            or (any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)))
