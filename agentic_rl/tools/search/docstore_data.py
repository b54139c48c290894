"""The hand-curated API notes behind the `docstore` search backend.

Each entry is (fully qualified name, signature, doc). Docs are one to three short lines with a
tiny example. This is the small fixed store kept as the baseline for the search ablation; the
`pydoc` backend is the one that knows whatever is installed.
"""

from __future__ import annotations

ENTRIES: tuple[tuple[str, str, str], ...] = (
    # ------------------------------------------------------------------ collections
    (
        "collections.Counter",
        "(iterable=None, /, **kwds)",
        "Dict subclass that counts hashable items; missing keys count as 0.\n"
        "Counter('abca') -> Counter({'a': 2, 'b': 1, 'c': 1})",
    ),
    (
        "collections.Counter.most_common",
        "(self, n=None)",
        "List of (element, count) pairs, highest counts first; all of them when n is None.\n"
        "Counter('abca').most_common(1) -> [('a', 2)]",
    ),
    (
        "collections.Counter.update",
        "(self, iterable=None, /, **kwds)",
        "Add counts from an iterable or mapping (it adds, unlike dict.update which replaces).\n"
        "c.update(['a', 'a']) increases c['a'] by 2",
    ),
    (
        "collections.Counter.elements",
        "(self)",
        "Iterator over elements, each repeated as many times as its count.\n"
        "sorted(Counter(a=2, b=1).elements()) -> ['a', 'a', 'b']",
    ),
    (
        "collections.Counter.subtract",
        "(self, iterable=None, /, **kwds)",
        "Subtract counts in place; counts may become zero or negative.\nc.subtract('ab')",
    ),
    (
        "collections.defaultdict",
        "(default_factory=None, /, ...)",
        "Dict that calls default_factory() to create the value of a missing key.\n"
        "d = defaultdict(list); d['k'].append(1) -> {'k': [1]}",
    ),
    (
        "collections.OrderedDict",
        "(other=(), /, **kwds)",
        "Dict that remembers insertion order and can reorder: move_to_end(key), popitem(last=True).\n"
        "od.move_to_end('a') moves key 'a' to the end",
    ),
    (
        "collections.deque",
        "(iterable=(), maxlen=None)",
        "Double-ended queue with O(1) append/pop at both ends; maxlen keeps only the newest items.\n"
        "q = deque([1, 2]); q.appendleft(0); q.pop() -> 2",
    ),
    (
        "collections.deque.appendleft",
        "(self, x, /)",
        "Add x to the left end of the deque.\ndeque([1]).appendleft(0) -> deque([0, 1])",
    ),
    (
        "collections.deque.popleft",
        "(self, /)",
        "Remove and return the leftmost item (IndexError when empty); use it for BFS queues.\n"
        "deque([1, 2]).popleft() -> 1",
    ),
    (
        "collections.deque.rotate",
        "(self, n=1, /)",
        "Rotate n steps to the right (negative n rotates left).\nd = deque([1, 2, 3]); d.rotate(1) -> deque([3, 1, 2])",
    ),
    (
        "collections.namedtuple",
        "(typename, field_names, *, rename=False, defaults=None, module=None)",
        "Create a tuple subclass with named fields.\nPoint = namedtuple('Point', 'x y'); Point(1, 2).x -> 1",
    ),
    (
        "collections.ChainMap",
        "(*maps)",
        "A view over several dicts; lookups search them in order, writes go to the first.\n"
        "ChainMap({'a': 1}, {'a': 2, 'b': 3})['a'] -> 1",
    ),
    # ------------------------------------------------------------------ itertools
    (
        "itertools.permutations",
        "(iterable, r=None)",
        "Successive r-length orderings of the elements (all lengths = len(iterable) when r is None).\n"
        "list(permutations('ab')) -> [('a', 'b'), ('b', 'a')]",
    ),
    (
        "itertools.combinations",
        "(iterable, r)",
        "r-length subsequences in input order, without repeats.\n"
        "list(combinations([1, 2, 3], 2)) -> [(1, 2), (1, 3), (2, 3)]",
    ),
    (
        "itertools.combinations_with_replacement",
        "(iterable, r)",
        "Like combinations but elements may repeat.\n"
        "list(combinations_with_replacement('ab', 2)) -> [('a','a'), ('a','b'), ('b','b')]",
    ),
    (
        "itertools.product",
        "(*iterables, repeat=1)",
        "Cartesian product, like nested for-loops.\nlist(product([0, 1], repeat=2)) -> [(0,0), (0,1), (1,0), (1,1)]",
    ),
    (
        "itertools.chain",
        "(*iterables)",
        "Iterate over several iterables one after another; chain.from_iterable flattens one level.\n"
        "list(chain([1], [2, 3])) -> [1, 2, 3]",
    ),
    (
        "itertools.groupby",
        "(iterable, key=None)",
        "Group consecutive items with equal key(item); sort by the same key first to group all.\n"
        "[(k, len(list(g))) for k, g in groupby('aabc')] -> [('a', 2), ('b', 1), ('c', 1)]",
    ),
    (
        "itertools.accumulate",
        "(iterable, func=operator.add, *, initial=None)",
        "Running totals (or running results of func).\nlist(accumulate([1, 2, 3])) -> [1, 3, 6]",
    ),
    (
        "itertools.islice",
        "(iterable, start, stop[, step])",
        "Slice any iterator lazily.\nlist(islice(count(), 2, 5)) -> [2, 3, 4]",
    ),
    (
        "itertools.zip_longest",
        "(*iterables, fillvalue=None)",
        "Zip iterables of unequal length, padding the shorter ones with fillvalue.\n"
        "list(zip_longest('ab', 'x', fillvalue='-')) -> [('a','x'), ('b','-')]",
    ),
    ("itertools.count", "(start=0, step=1)", "Infinite counter start, start+step, ...\nnext(count(5)) -> 5"),
    ("itertools.cycle", "(iterable)", "Repeat the elements of an iterable forever.\nislice(cycle('ab'), 3) -> a, b, a"),
    (
        "itertools.pairwise",
        "(iterable)",
        "Overlapping pairs of consecutive elements (Python 3.10+).\nlist(pairwise([1, 2, 3])) -> [(1, 2), (2, 3)]",
    ),
    # ------------------------------------------------------------------ functools
    (
        "functools.lru_cache",
        "(maxsize=128, typed=False)",
        "Decorator that memoizes a function's results (least-recently-used cache).\n"
        "@lru_cache(maxsize=None)\ndef fib(n): ...",
    ),
    (
        "functools.cache",
        "(user_function, /)",
        "Unbounded memoizing decorator, same as lru_cache(maxsize=None).\n@cache\ndef f(x): ...",
    ),
    (
        "functools.reduce",
        "(function, iterable[, initial])",
        "Fold an iterable into one value by applying a two-argument function left to right.\n"
        "reduce(lambda a, b: a * b, [1, 2, 3, 4]) -> 24",
    ),
    (
        "functools.partial",
        "(func, /, *args, **keywords)",
        "New callable with some arguments of func fixed.\nbase2 = partial(int, base=2); base2('101') -> 5",
    ),
    (
        "functools.cmp_to_key",
        "(mycmp)",
        "Turn an old-style comparison function into a key= function for sorted().\n"
        "sorted(xs, key=cmp_to_key(lambda a, b: a - b))",
    ),
    (
        "functools.wraps",
        "(wrapped, assigned=..., updated=...)",
        "Decorator for wrapper functions that copies the wrapped function's name and docstring.\n"
        "@wraps(func)\ndef wrapper(*a, **kw): ...",
    ),
    (
        "functools.total_ordering",
        "(cls)",
        "Class decorator that fills in the missing comparison methods from __eq__ and one of __lt__/__gt__/...",
    ),
    # ------------------------------------------------------------------ re
    (
        "re.compile",
        "(pattern, flags=0)",
        "Compile a regular expression into a Pattern object for repeated use.\n"
        "pat = re.compile(r'\\d+'); pat.findall('a1b22') -> ['1', '22']",
    ),
    (
        "re.search",
        "(pattern, string, flags=0)",
        "First match of the regex anywhere in the string, or None.\nre.search(r'\\d+', 'ab12').group() -> '12'",
    ),
    (
        "re.match",
        "(pattern, string, flags=0)",
        "Match the regex only at the start of the string, or None.\nre.match(r'ab', 'abc') is not None -> True",
    ),
    (
        "re.fullmatch",
        "(pattern, string, flags=0)",
        "Match only if the whole string matches the regex.\nre.fullmatch(r'\\d+', '123') -> <Match '123'>",
    ),
    (
        "re.findall",
        "(pattern, string, flags=0)",
        "List of all non-overlapping matches (the groups if the pattern has groups).\n"
        "re.findall(r'\\w+', 'hi there') -> ['hi', 'there']",
    ),
    (
        "re.finditer",
        "(pattern, string, flags=0)",
        "Iterator of Match objects for all matches, with positions.\n"
        "[m.span() for m in re.finditer('a', 'aba')] -> [(0, 1), (2, 3)]",
    ),
    (
        "re.sub",
        "(pattern, repl, string, count=0, flags=0)",
        "Replace matches of the regex with repl (a string with \\1 backrefs or a function).\n"
        "re.sub(r'\\s+', ' ', 'a   b') -> 'a b'",
    ),
    (
        "re.split",
        "(pattern, string, maxsplit=0, flags=0)",
        "Split a string by occurrences of a regex.\nre.split(r'[,;]', 'a,b;c') -> ['a', 'b', 'c']",
    ),
    ("re.escape", "(pattern)", "Escape all regex metacharacters in a string.\nre.escape('a.b') -> 'a\\\\.b'"),
    (
        "re.Match.group",
        "(self, *groups)",
        "Text of one or more groups of a match; group() or group(0) is the whole match.\n"
        "re.match(r'(\\w)(\\d)', 'a1').group(2) -> '1'",
    ),
    (
        "re.IGNORECASE",
        "",
        "Flag for case-insensitive matching (also re.I).\nre.findall('a', 'Aa', re.IGNORECASE) -> ['A', 'a']",
    ),
    # ------------------------------------------------------------------ json
    (
        "json.dumps",
        "(obj, *, indent=None, sort_keys=False, default=None, ...)",
        "Serialize an object to a JSON string.\njson.dumps({'a': 1}, indent=2)",
    ),
    (
        "json.loads",
        "(s, *, object_hook=None, ...)",
        "Parse a JSON string (or bytes) into Python objects.\njson.loads('{\"a\": [1, 2]}') -> {'a': [1, 2]}",
    ),
    (
        "json.dump",
        "(obj, fp, *, indent=None, ...)",
        "Write an object as JSON to an open text file.\nwith open('out.json', 'w') as f: json.dump(data, f)",
    ),
    (
        "json.load",
        "(fp, *, object_hook=None, ...)",
        "Read and parse JSON from an open file.\nwith open('in.json') as f: data = json.load(f)",
    ),
    # ------------------------------------------------------------------ math
    (
        "math.gcd",
        "(*integers)",
        "Greatest common divisor; math.lcm gives the least common multiple.\nmath.gcd(12, 18) -> 6",
    ),
    ("math.isqrt", "(n, /)", "Integer square root (floor of the exact root).\nmath.isqrt(10) -> 3"),
    ("math.sqrt", "(x, /)", "Square root as a float.\nmath.sqrt(2) -> 1.4142135623730951"),
    (
        "math.log",
        "(x[, base])",
        "Logarithm, natural by default; math.log2 and math.log10 are exact variants.\nmath.log(8, 2) -> 3.0",
    ),
    ("math.ceil", "(x, /)", "Smallest integer >= x.\nmath.ceil(2.1) -> 3"),
    ("math.floor", "(x, /)", "Largest integer <= x.\nmath.floor(2.9) -> 2"),
    ("math.factorial", "(n, /)", "n! for a non-negative integer.\nmath.factorial(5) -> 120"),
    (
        "math.comb",
        "(n, k, /)",
        "Number of ways to choose k items from n (binomial coefficient); math.perm counts orderings.\n"
        "math.comb(5, 2) -> 10",
    ),
    (
        "math.isclose",
        "(a, b, *, rel_tol=1e-09, abs_tol=0.0)",
        "Whether two floats are approximately equal.\nmath.isclose(0.1 + 0.2, 0.3) -> True",
    ),
    (
        "math.inf",
        "",
        "Positive infinity as a float; use -math.inf as the start value of a max search.\nbest = -math.inf",
    ),
    ("math.pi", "", "The constant pi = 3.141592653589793."),
    # ------------------------------------------------------------------ string
    ("string.ascii_lowercase", "", "The 26 lowercase letters 'abcdefghijklmnopqrstuvwxyz'."),
    ("string.ascii_uppercase", "", "The 26 uppercase letters 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'."),
    ("string.ascii_letters", "", "ascii_lowercase + ascii_uppercase: all 52 ASCII letters."),
    ("string.digits", "", "The digit characters '0123456789'."),
    (
        "string.punctuation",
        "",
        "ASCII punctuation characters such as !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~.\n"
        "''.join(c for c in s if c not in string.punctuation) strips punctuation",
    ),
    (
        "string.Template",
        "(template)",
        "$-based string substitution.\nTemplate('$who ran').substitute(who='Ann') -> 'Ann ran'",
    ),
    # ------------------------------------------------------------------ heapq
    ("heapq.heappush", "(heap, item, /)", "Push an item onto a list kept as a min-heap.\nh = []; heapq.heappush(h, 3)"),
    ("heapq.heappop", "(heap, /)", "Pop and return the smallest item of the heap.\nheapq.heappop([1, 5, 3]) -> 1"),
    (
        "heapq.heapify",
        "(x, /)",
        "Turn a list into a min-heap in place, in linear time.\nxs = [3, 1, 2]; heapq.heapify(xs); xs[0] -> 1",
    ),
    (
        "heapq.heappushpop",
        "(heap, item, /)",
        "Push item then pop the smallest, faster than the two calls.\nheapq.heappushpop([2, 5], 1) -> 1",
    ),
    (
        "heapq.nlargest",
        "(n, iterable, key=None)",
        "The n largest elements, largest first.\nheapq.nlargest(2, [5, 1, 9, 3]) -> [9, 5]",
    ),
    (
        "heapq.nsmallest",
        "(n, iterable, key=None)",
        "The n smallest elements, smallest first.\nheapq.nsmallest(2, [5, 1, 9, 3]) -> [1, 3]",
    ),
    (
        "heapq.merge",
        "(*iterables, key=None, reverse=False)",
        "Merge already-sorted iterables into one sorted iterator.\nlist(heapq.merge([1, 4], [2, 3])) -> [1, 2, 3, 4]",
    ),
    # ------------------------------------------------------------------ bisect
    (
        "bisect.bisect_left",
        "(a, x, lo=0, hi=len(a), *, key=None)",
        "Index where x would be inserted in sorted list a, before any equal items (binary search).\n"
        "bisect_left([1, 2, 2, 3], 2) -> 1",
    ),
    (
        "bisect.bisect_right",
        "(a, x, lo=0, hi=len(a), *, key=None)",
        "Insertion index after any items equal to x (bisect.bisect is the same function).\n"
        "bisect_right([1, 2, 2, 3], 2) -> 3",
    ),
    (
        "bisect.insort",
        "(a, x, lo=0, hi=len(a), *, key=None)",
        "Insert x into sorted list a keeping it sorted (insort_left/insort_right choose the side).\n"
        "a = [1, 3]; insort(a, 2) -> a == [1, 2, 3]",
    ),
    # ------------------------------------------------------------------ datetime
    (
        "datetime.datetime",
        "(year, month, day, hour=0, minute=0, second=0, microsecond=0, tzinfo=None)",
        "A date with a time of day; subtracting two gives a timedelta.\n"
        "datetime(2024, 1, 31, 12).isoformat() -> '2024-01-31T12:00:00'",
    ),
    (
        "datetime.datetime.strptime",
        "(date_string, format)",
        "Parse a string into a datetime with a format such as '%Y-%m-%d %H:%M:%S'.\n"
        "datetime.strptime('2024-03-01', '%Y-%m-%d')",
    ),
    (
        "datetime.datetime.strftime",
        "(self, format)",
        "Format a datetime as a string.\ndatetime(2024, 3, 1).strftime('%d/%m/%Y') -> '01/03/2024'",
    ),
    (
        "datetime.datetime.now",
        "(tz=None)",
        "The current local date and time (pass a tzinfo for an aware datetime).\ndatetime.now().year",
    ),
    (
        "datetime.datetime.fromtimestamp",
        "(timestamp, tz=None)",
        "Datetime from a POSIX timestamp (seconds since the epoch).\n"
        "datetime.fromtimestamp(0, tz=timezone.utc) -> 1970-01-01 00:00:00+00:00",
    ),
    (
        "datetime.datetime.isoformat",
        "(self, sep='T', timespec='auto')",
        "ISO 8601 string; datetime.fromisoformat parses it back.\n"
        "datetime(2024, 1, 2).isoformat() -> '2024-01-02T00:00:00'",
    ),
    (
        "datetime.date",
        "(year, month, day)",
        "A calendar date; date.today(), d.weekday() (Monday=0), d.isoformat().\ndate(2024, 2, 29).weekday() -> 3",
    ),
    (
        "datetime.timedelta",
        "(days=0, seconds=0, microseconds=0, milliseconds=0, minutes=0, hours=0, weeks=0)",
        "A duration; add it to dates, .days and .total_seconds() read it.\n"
        "(datetime(2024, 1, 2) - datetime(2024, 1, 1)).days -> 1",
    ),
    (
        "datetime.timezone",
        "(offset, name=None)",
        "Fixed-offset tzinfo; timezone.utc is UTC.\ndatetime.now(timezone.utc)",
    ),
    # ------------------------------------------------------------------ typing
    (
        "typing.List",
        "",
        "Generic list type for annotations (plain list[int] works on Python 3.9+).\n"
        "def f(xs: List[int]) -> List[str]: ...",
    ),
    ("typing.Dict", "", "Generic dict type for annotations.\ncounts: Dict[str, int] = {}"),
    ("typing.Tuple", "", "Fixed-size tuple type: Tuple[int, str]; variable length: Tuple[int, ...]."),
    ("typing.Optional", "", "Optional[X] means X or None.\ndef find(k: str) -> Optional[int]: ..."),
    ("typing.Union", "", "Union[X, Y] means either type (X | Y on Python 3.10+)."),
    ("typing.Callable", "", "Callable[[int, str], bool] is a function taking (int, str) and returning bool."),
    ("typing.Any", "", "A type compatible with every type; disables checking."),
    # ------------------------------------------------------------------ pathlib
    (
        "pathlib.Path",
        "(*pathsegments)",
        "Filesystem path object; join with /, e.g. Path('data') / 'x.csv'.\nPath('a/b.txt').suffix -> '.txt'",
    ),
    (
        "pathlib.Path.read_text",
        "(self, encoding=None, errors=None)",
        "Read the whole file as a string (write_text writes one).\nPath('notes.txt').read_text()",
    ),
    (
        "pathlib.Path.glob",
        "(self, pattern)",
        "Yield paths matching a glob pattern under this directory; '**' recurses (rglob too).\n"
        "list(Path('.').glob('*.py'))",
    ),
    (
        "pathlib.Path.mkdir",
        "(self, mode=0o777, parents=False, exist_ok=False)",
        "Create the directory; parents=True makes missing parents, exist_ok=True ignores existing.\n"
        "Path('out/logs').mkdir(parents=True, exist_ok=True)",
    ),
    (
        "pathlib.Path.exists",
        "(self)",
        "Whether the path exists; is_file() and is_dir() test the kind.\nPath('x').exists() -> False",
    ),
    (
        "pathlib.Path.iterdir",
        "(self)",
        "Iterate over the entries of a directory.\n[p.name for p in Path('.').iterdir()]",
    ),
    (
        "pathlib.PurePath.stem",
        "",
        "File name without its last suffix; .name is the full file name, .suffix the extension.\n"
        "Path('a/report.csv').stem -> 'report'",
    ),
    # ------------------------------------------------------------------ os / random (common in tasks)
    (
        "os.path.join",
        "(a, *p)",
        "Join path components with the OS separator.\nos.path.join('dir', 'file.txt') -> 'dir/file.txt'",
    ),
    ("os.path.exists", "(path)", "Whether a file or directory exists.\nos.path.exists('/tmp') -> True"),
    (
        "os.makedirs",
        "(name, mode=0o777, exist_ok=False)",
        "Create a directory and any missing parents.\nos.makedirs('out/a/b', exist_ok=True)",
    ),
    ("os.listdir", "(path='.')", "Names of the entries in a directory (not sorted).\nsorted(os.listdir('.'))"),
    ("random.randint", "(a, b)", "Random integer N with a <= N <= b (both ends included).\nrandom.randint(1, 6)"),
    (
        "random.choice",
        "(seq)",
        "One random element of a non-empty sequence; random.choices(seq, k=n) samples with replacement.\n"
        "random.choice(['a', 'b'])",
    ),
    (
        "random.sample",
        "(population, k, *, counts=None)",
        "k unique elements chosen without replacement.\nrandom.sample(range(10), 3)",
    ),
    ("random.shuffle", "(x)", "Shuffle a list in place.\nrandom.shuffle(cards)"),
    ("random.seed", "(a=None, version=2)", "Seed the random generator for reproducible results.\nrandom.seed(42)"),
    # ------------------------------------------------------------------ numpy
    (
        "numpy.array",
        "(object, dtype=None, *, copy=True, ndmin=0)",
        "Create an ndarray from a list or nested lists.\nnp.array([[1, 2], [3, 4]]).shape -> (2, 2)",
    ),
    (
        "numpy.zeros",
        "(shape, dtype=float)",
        "Array of zeros; np.ones and np.full(shape, value) are similar.\nnp.zeros((2, 3))",
    ),
    (
        "numpy.arange",
        "([start,] stop[, step], dtype=None)",
        "Evenly spaced values in [start, stop) with a step.\nnp.arange(0, 10, 3) -> array([0, 3, 6, 9])",
    ),
    (
        "numpy.linspace",
        "(start, stop, num=50, endpoint=True)",
        "num evenly spaced numbers over [start, stop].\nnp.linspace(0, 1, 5) -> array([0., 0.25, 0.5, 0.75, 1.])",
    ),
    (
        "numpy.argsort",
        "(a, axis=-1, kind=None)",
        "Indices that would sort an array.\nnp.argsort([3, 1, 2]) -> array([1, 2, 0])",
    ),
    ("numpy.sort", "(a, axis=-1, kind=None)", "Sorted copy of an array.\nnp.sort([3, 1, 2]) -> array([1, 2, 3])"),
    (
        "numpy.unique",
        "(ar, return_index=False, return_inverse=False, return_counts=False, axis=None)",
        "Sorted unique values; return_counts=True also returns how often each occurs.\n"
        "np.unique([1, 1, 2], return_counts=True) -> (array([1, 2]), array([2, 1]))",
    ),
    (
        "numpy.where",
        "(condition, [x, y])",
        "Elementwise choice between x and y; with only the condition, the indices where it holds.\n"
        "np.where(a > 0, a, 0) clips negatives to 0",
    ),
    ("numpy.dot", "(a, b)", "Dot / matrix product (a @ b for 2-D arrays).\nnp.dot([1, 2], [3, 4]) -> 11"),
    (
        "numpy.sum",
        "(a, axis=None, dtype=None, keepdims=False)",
        "Sum of elements, over all or along an axis (axis=0 down columns, axis=1 across rows).\n"
        "np.sum([[1, 2], [3, 4]], axis=0) -> array([4, 6])",
    ),
    (
        "numpy.mean",
        "(a, axis=None, dtype=None)",
        "Arithmetic mean; np.nanmean ignores NaN values.\nnp.mean([1, 2, 3, 4]) -> 2.5",
    ),
    (
        "numpy.std",
        "(a, axis=None, ddof=0)",
        "Standard deviation (ddof=1 for the sample estimate).\nnp.std([1, 2, 3, 4]) -> 1.118...",
    ),
    (
        "numpy.reshape",
        "(a, newshape)",
        "Give an array a new shape; one dimension may be -1 to infer it.\nnp.arange(6).reshape(2, -1).shape -> (2, 3)",
    ),
    (
        "numpy.concatenate",
        "((a1, a2, ...), axis=0)",
        "Join arrays along an existing axis; np.stack adds a new axis, np.hstack/np.vstack are shortcuts.\n"
        "np.concatenate([[1], [2, 3]]) -> array([1, 2, 3])",
    ),
    ("numpy.cumsum", "(a, axis=None)", "Cumulative sum of the elements.\nnp.cumsum([1, 2, 3]) -> array([1, 3, 6])"),
    ("numpy.random.seed", "(seed=None)", "Seed numpy's legacy global random generator.\nnp.random.seed(0)"),
    (
        "numpy.random.choice",
        "(a, size=None, replace=True, p=None)",
        "Random sample from a 1-D array or range(a), optionally weighted by p.\nnp.random.choice(['x', 'y'], size=3)",
    ),
    (
        "numpy.random.normal",
        "(loc=0.0, scale=1.0, size=None)",
        "Samples from a normal (Gaussian) distribution.\nnp.random.normal(0, 1, size=100)",
    ),
    (
        "numpy.random.randint",
        "(low, high=None, size=None, dtype=int)",
        "Random integers in [low, high).\nnp.random.randint(0, 10, size=5)",
    ),
    (
        "numpy.random.default_rng",
        "(seed=None)",
        "New-style random Generator; rng.integers, rng.normal, rng.choice.\n"
        "rng = np.random.default_rng(42); rng.random(3)",
    ),
    # ------------------------------------------------------------------ pandas
    (
        "pandas.DataFrame",
        "(data=None, index=None, columns=None, dtype=None, copy=None)",
        "2-D labelled table built from a dict of columns, a list of rows or an array.\n"
        "pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})",
    ),
    (
        "pandas.Series",
        "(data=None, index=None, dtype=None, name=None)",
        "1-D labelled array.\npd.Series([1, 2], index=['a', 'b'])",
    ),
    (
        "pandas.read_csv",
        "(filepath_or_buffer, sep=',', header='infer', usecols=None, ...)",
        "Read a CSV file into a DataFrame.\ndf = pd.read_csv('data.csv')",
    ),
    (
        "pandas.DataFrame.to_csv",
        "(self, path_or_buf=None, sep=',', index=True, ...)",
        "Write the DataFrame as CSV; index=False drops the index column.\ndf.to_csv('out.csv', index=False)",
    ),
    (
        "pandas.DataFrame.groupby",
        "(self, by=None, axis=0, level=None, as_index=True, sort=True, ...)",
        "Group rows by column values, then aggregate: .mean(), .sum(), .agg({...}).\n"
        "df.groupby('city')['sales'].mean()",
    ),
    (
        "pandas.merge",
        "(left, right, how='inner', on=None, left_on=None, right_on=None, ...)",
        "SQL-style join of two DataFrames; how is 'left', 'right', 'outer' or 'inner'.\n"
        "pd.merge(a, b, on='id', how='left')",
    ),
    (
        "pandas.concat",
        "(objs, axis=0, join='outer', ignore_index=False, ...)",
        "Stack DataFrames/Series along rows (axis=0) or columns (axis=1).\npd.concat([df1, df2], ignore_index=True)",
    ),
    (
        "pandas.Series.value_counts",
        "(self, normalize=False, sort=True, ascending=False, dropna=True)",
        "Counts of each unique value, most frequent first.\ns.value_counts().head(3)",
    ),
    (
        "pandas.DataFrame.apply",
        "(self, func, axis=0, raw=False, result_type=None, args=(), **kwargs)",
        "Apply a function to each column (axis=0) or each row (axis=1).\ndf.apply(lambda r: r['a'] + r['b'], axis=1)",
    ),
    (
        "pandas.DataFrame.sort_values",
        "(self, by, axis=0, ascending=True, ...)",
        "Sort rows by one or more columns.\ndf.sort_values('score', ascending=False)",
    ),
    (
        "pandas.DataFrame.dropna",
        "(self, axis=0, how='any', subset=None, ...)",
        "Drop rows (or columns) that contain missing values.\ndf.dropna(subset=['price'])",
    ),
    (
        "pandas.DataFrame.fillna",
        "(self, value=None, method=None, axis=None, ...)",
        "Replace missing values with a value or per-column dict.\ndf.fillna(0)",
    ),
    (
        "pandas.to_datetime",
        "(arg, errors='raise', format=None, ...)",
        "Convert strings/numbers to datetimes.\npd.to_datetime(df['date'], format='%Y-%m-%d')",
    ),
    (
        "pandas.date_range",
        "(start=None, end=None, periods=None, freq=None, ...)",
        "Fixed-frequency DatetimeIndex.\npd.date_range('2024-01-01', periods=7, freq='D')",
    ),
    (
        "pandas.DataFrame.pivot_table",
        "(self, values=None, index=None, columns=None, aggfunc='mean', ...)",
        "Spreadsheet-style pivot table with aggregation.\n"
        "df.pivot_table(index='region', columns='year', values='sales', aggfunc='sum')",
    ),
    ("pandas.DataFrame.iloc", "", "Select by integer position: df.iloc[0], df.iloc[:, 1:3]."),
    ("pandas.DataFrame.loc", "", "Select by label or boolean mask: df.loc[df['a'] > 0, ['a', 'b']]."),
)
