"""Text processing shared by the search backends: tokenising API names and queries.

Everything here is deterministic and dependency-free, so the index and the queries are always
processed the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
    "regex": ("re", "regular", "expression"),
    "regexp": ("re", "regular", "expression"),
    "dict": ("dict", "dictionary"),
    "dictionary": ("dict", "dictionary"),
    "dictionaries": ("dict", "dictionary"),
    # everyday words for what the docs call otherwise
    "average": ("average", "mean"),
    "avg": ("mean",),
    "chart": ("chart", "plot"),
    "graph": ("graph", "plot"),
    "folder": ("folder", "directory"),
    "dir": ("dir", "directory"),
    "delete": ("delete", "remove"),
    "remove": ("remove", "delete"),
}
# Query expansion: how people phrase a need (left) -> the words API names and docstrings use for it
# (right). General programming vocabulary, not tied to any query set; the synonyms' BM25 score
# counts at `Ranking.expansion_weight` of the query's own words.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "serialize": ("dump", "dumps", "encode"),
    "serialise": ("dump", "dumps", "encode"),
    "deserialize": ("load", "loads", "decode"),
    "deserialise": ("load", "loads", "decode"),
    "parse": ("load", "loads", "read", "decode"),
    "replace": ("sub", "substitute"),
    "substitute": ("replace", "sub"),
    "frequency": ("count", "counts"),
    "frequencies": ("count", "counts"),
    "occurrence": ("count",),
    "occurrences": ("count",),
    "tally": ("count",),
    "missing": ("na", "nan", "null", "default"),
    "null": ("na", "none"),
    "nan": ("na",),
    "erase": ("remove", "delete", "drop"),
    "discard": ("remove", "drop"),
    "drop": ("remove",),
    "combine": ("concat", "join", "merge"),
    "concatenate": ("concat", "join"),
    "merge": ("join", "concat"),
    "join": ("concat", "merge"),
    "glue": ("concat", "join"),
    "add": ("append", "insert"),
    "append": ("add", "insert"),
    "push": ("append", "add"),
    "length": ("len", "size"),
    "size": ("len", "length"),
    "largest": ("max", "maximum"),
    "biggest": ("max", "largest"),
    "highest": ("max", "largest"),
    "maximum": ("max",),
    "smallest": ("min", "minimum"),
    "lowest": ("min", "smallest"),
    "minimum": ("min",),
    "order": ("sort",),
    "ordered": ("sort",),
    "arrange": ("sort",),
    "now": ("current", "today"),
    "current": ("now",),
    "today": ("now", "current"),
    "distinct": ("unique",),
    "unique": ("distinct",),
    "different": ("unique", "diff"),
    "draw": ("plot",),
    "visualize": ("plot",),
    "visualise": ("plot",),
    "text": ("str", "string"),
    "string": ("str", "text"),
    "integer": ("int",),
    "int": ("integer",),
    "numeric": ("number", "num"),
    "number": ("num", "numeric"),
    "float": ("real",),
    "fetch": ("get", "request"),
    "download": ("get", "request", "urlopen", "retrieve"),
    "webpage": ("url", "html"),
    "website": ("url", "html"),
    "web": ("url", "http"),
    "encrypt": ("cipher", "encrypt"),
    "decrypt": ("cipher", "decrypt"),
    "checksum": ("hash", "digest"),
    "compress": ("zip", "gzip", "compress"),
    "archive": ("zip", "tar"),
    "environment": ("environ", "env"),
    "temporary": ("temp", "tmp"),
    "temp": ("temporary",),
    "table": ("dataframe", "frame"),
    "spreadsheet": ("excel", "xlsx"),
    "timezone": ("tz", "zone"),
    "date": ("datetime",),
    "datetime": ("date",),
    "timestamp": ("datetime", "time"),
    "iterate": ("iter", "loop"),
    "loop": ("iter",),
    "reverse": ("reversed", "flip"),
    "flatten": ("chain", "ravel"),
    "find": ("search", "locate", "index"),
    "locate": ("find", "index"),
    "lookup": ("find", "get"),
    "search": ("find",),
    "read": ("load", "open"),
    "load": ("read", "open"),
    "open": ("read", "load"),
    "write": ("dump", "save", "to"),
    "save": ("dump", "write", "to"),
    "store": ("save", "dump"),
    "run": ("call", "exec", "execute"),
    "execute": ("run", "call"),
    "launch": ("start", "run"),
    "pause": ("sleep", "wait"),
    "wait": ("sleep",),
    "quit": ("exit",),
    "terminate": ("exit", "kill"),
    "display": ("show", "print"),
    "show": ("display", "print"),
    "folder": ("directory", "dir"),
    "directory": ("dir", "folder"),
    "files": ("file", "path"),
    "regular": ("re", "regex"),
    "expression": ("re", "regex"),
    "pattern": ("re", "regex"),
    "words": ("word", "token", "tokenize"),
    "tokens": ("token", "word"),
    "tokenize": ("token", "split"),
    "statistics": ("stats",),
    "stat": ("stats",),
    "probability": ("distribution", "pdf"),
    "correlation": ("corr", "correlate"),
    "regression": ("fit", "linear"),
    "classifier": ("classification", "classify"),
    "duplicate": ("duplicated", "unique"),
    "duplicates": ("duplicated", "unique"),
    "copy": ("clone",),
    "clone": ("copy",),
    "mapping": ("dict", "map"),
    "dictionary": ("dict", "mapping"),
    "list": ("sequence", "array"),
    "array": ("ndarray",),
    "matrix": ("array", "ndarray", "linalg"),
    "vector": ("array",),
    "image": ("img", "picture"),
    "picture": ("image",),
    "photo": ("image",),
    "email": ("mail", "smtp"),
    "mail": ("email", "smtp"),
    "password": ("hash", "secret"),
    "random": ("rand", "random"),
    "shuffle": ("permutation",),
    "sample": ("choice", "sample"),
    "split": ("divide",),
    "divide": ("split",),
    "cut": ("split", "bin"),
    "bucket": ("bin", "cut"),
    "round": ("floor", "ceil"),
    "convert": ("transform", "cast"),
    "cast": ("astype", "convert"),
    "type": ("dtype",),
    "check": ("validate", "test"),
    "validate": ("check",),
    "compare": ("diff", "equal"),
    "difference": ("diff",),
    "similarity": ("ratio", "match"),
    "elapsed": ("time", "duration"),
    "duration": ("timedelta",),
    "interval": ("range", "timedelta"),
    "process": ("subprocess", "proc"),
    "command": ("shell", "subprocess", "cmd"),
    "parallel": ("pool", "concurrent", "thread"),
    "thread": ("threading",),
    "queue": ("fifo",),
    "log": ("logging", "logger"),
    "logging": ("log",),
    "exception": ("error",),
    "error": ("exception",),
}

# Words that name a package: a query mentioning one prefers that package's entries. Package
# names are added from the index itself; these are the other ways a query names them.
MENTION_ALIASES: dict[str, str] = {
    "pd": "pandas",
    "dataframe": "pandas",
    "dataframes": "pandas",
    "np": "numpy",
    "plt": "matplotlib",
    "pyplot": "matplotlib",
    "mpl": "matplotlib",
    "sns": "seaborn",
    "scikit": "sklearn",
    "regex": "re",
    "regexp": "re",
    "beautifulsoup": "bs4",
    "soup": "bs4",
    "opencv": "cv2",
    "pillow": "PIL",
    "smtp": "smtplib",
    "sqlite": "sqlite3",
}
# Package names that are also ordinary words ("random forest", "time series", "string"):
# mentioning them says nothing about the package.
NOT_MENTIONS = frozenset(
    """
time random string array copy types select queue wave code email html http abc enum inspect
platform locale calendar operator builtins logging warnings secrets token signal site struct
parser test statistics io sys math uuid gzip shutil glob
""".split()
)

STOPWORDS = frozenset(
    """
a an the of to in on for and or is are be been being with by from as at it its this that these
those into how do does i me my we you your what which who whom when where why can could should
would will shall may might must please using use python want need get given some any all each
every not no than then there their them they also such via per
""".split()
) - {"all", "get"}  # "all"/"get" name real APIs (re.findall parts, requests.get)

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
    if w.endswith(("tion", "sion")) and len(w) - 3 >= 4:  # insertion -> insert
        return w[:-3]
    if w.endswith("er") and len(w) - 2 >= 4:  # reader -> read, writer -> writ (as write)
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 4:
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


# Single letters that carry meaning in API names (set_xlabel, ylim, zscore, nlargest).
LETTERS = frozenset("xyzn")


def keep_token(tok: str) -> bool:
    return (len(tok) >= 2 or tok in LETTERS) and tok not in STOPWORDS


def prose_tokens(text: str) -> list[str]:
    """Tokens of free text (docstrings, queries): identifiers split, stopwords dropped, stemmed."""
    out: list[str] = []
    for word in words(text):
        for tok in split_identifier(word):
            if keep_token(tok):
                out.append(stem(tok))
    return out


def compound_split(word: str, vocabulary: set[str] | frozenset[str], max_parts: int = 3) -> list[str]:
    """Split a run-together lowercase name into known words: heappush -> heap, push;
    issubdtype -> is, sub, dtype; xlabel -> x, label.

    Pieces must be words of `vocabulary` (the lowercase words of all docstrings) of at least two
    letters, except a leading x/y/z/n. Fewest pieces win; of those, the split with the longest piece
    (the least even: over heap, push, heapp, ush, heappush gives heapp, ush), then the one whose last
    piece is longest (what precedes it chosen by the same rule). This is the rule the index was built
    and tuned with: preferring the most even split would give other pieces to 45 of the 12,163 name and
    parameter words of the default index (binbytes: bin, bytes where this rule gives bi, nbytes), a retuning.
    """
    if len(word) < 4 or not word.isalpha():
        return []
    n = len(word)
    # best[i] = (pieces, -longest piece, the pieces) for word[:i]; a later split replaces it only if smaller
    best: list[tuple[int, int, list[str]] | None] = [None] * (n + 1)
    best[0] = (0, 0, [])
    for i in range(n):
        entry = best[i]
        if entry is None or entry[0] >= max_parts:
            continue
        for j in range(i + 1, n + 1):
            piece = word[i:j]
            if not (piece in vocabulary and len(piece) >= 2 or (i == 0 and j == 1 and piece in LETTERS)):
                continue
            if i == 0 and j == n:
                continue  # the whole word is not a split
            count, neg_short, pieces = entry
            cand = (count + 1, min(neg_short, -len(piece)) if pieces else -len(piece), pieces + [piece])
            cur = best[j]
            if cur is None or (cand[0], cand[1]) < (cur[0], cur[1]):
                best[j] = cand
    whole = best[n]
    return whole[2] if whole is not None else []


def param_names(signature: str) -> list[str]:
    return [p for p in _PARAM_RE.findall(signature or "") if p not in _IGNORED_PARAMS]


def name_tokens(name: str, vocabulary: set[str] | frozenset[str] = frozenset(), last_weight: int = 3) -> list[str]:
    """Tokens of a fully qualified name; its last component counts `last_weight` times."""
    parts = name.split(".")
    out: list[str] = []
    for part in parts[:-1]:
        out.extend(stem(t) for t in split_identifier(part) if len(t) >= 2)
    last = parts[-1]
    toks = [t for t in split_identifier(last) if len(t) >= 2 or t == last.lower()]
    for t in list(toks):
        toks.extend(compound_split(t, vocabulary))
    toks = list(dict.fromkeys(stem(t) for t in toks if keep_token(t) or t == last.lower()))
    out.extend(toks * last_weight)
    return out


def param_tokens(signature: str, vocabulary: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Parameter names, split (fill_value, fillvalue -> fill, value)."""
    out: list[str] = []
    for p in param_names(signature):
        for t in split_identifier(p):
            out.extend(stem(x) for x in [t, *compound_split(t, vocabulary)] if keep_token(x))
    return out


def dotted_names(text: str) -> list[str]:
    """Dotted identifiers in a query, aliases expanded: 'pd.DataFrame.groupby' -> 'pandas.DataFrame.groupby'."""
    out = []
    for m in _DOTTED_RE.findall(text):
        out.append(expand_alias(m))
    return list(dict.fromkeys(out))


def spaced_names(text: str) -> list[str]:
    """Adjacent words read as a dotted name, aliases expanded: 'json loads' -> 'json.loads',
    'np argsort' -> 'numpy.argsort' (people often type the dot as a space)."""
    ws = words(text)
    return list(dict.fromkeys(expand_alias(f"{a}.{b}") for a, b in zip(ws, ws[1:])))


def expand_alias(dotted: str) -> str:
    head, _, rest = dotted.partition(".")
    if head in DOTTED_ALIASES:
        return DOTTED_ALIASES[head] + ("." + rest if rest else "")
    return dotted


def query_tokens(query: str) -> list[str]:
    """BM25 tokens of a query, word aliases expanded, duplicates removed (order kept)."""
    out: list[str] = []
    for word in words(query):
        expanded: Iterable[str] = WORD_ALIASES.get(word.lower(), (word,))
        for w in expanded:
            out.extend(prose_tokens(w))
    return list(dict.fromkeys(out))


def expansion_tokens(query: str) -> list[str]:
    """BM25 tokens of the synonyms of the query's words (see SYNONYMS), stemmed, unique."""
    out: list[str] = []
    for word in words(query):
        for synonym in SYNONYMS.get(word.lower(), ()):
            out.extend(prose_tokens(synonym))
    return list(dict.fromkeys(out))


def name_key(name: str) -> str:
    """How a last name component is looked up: case and underscores ignored (find_all = findAll)."""
    return name.lower().replace("_", "")


def joined_words(query: str, max_n: int = 3) -> list[str]:
    """Adjacent query words run together, as name keys: 'most common' -> 'mostcommon',
    'train test split' -> 'traintestsplit' (single words are not included)."""
    ws = [w.lower() for w in words(query)]
    out = []
    for n in range(2, max_n + 1):
        for i in range(len(ws) - n + 1):
            out.append(name_key("".join(ws[i : i + n])))
    return list(dict.fromkeys(out))


def mentioned_packages(query: str, packages: set[str] | frozenset[str]) -> set[str]:
    """Top-level packages a query names: 'pandas ...', 'sns ...', 'beautifulsoup ...'."""
    found = set()
    for word in words(query):
        low = word.lower()
        pkg = MENTION_ALIASES.get(low, low)
        if pkg in packages and low not in NOT_MENTIONS:
            found.add(pkg)
    for dotted in dotted_names(query):
        head = dotted.split(".")[0]
        if head in packages:
            found.add(head)
    return found


def looks_like_identifier(word: str) -> bool:
    """True for words that are probably code names (most_common, DataFrame, log10), not prose."""
    return (
        "_" in word
        or any(c.isdigit() for c in word)
        or (any(c.isupper() for c in word[1:]) and any(c.islower() for c in word))
    )
