"""Built-in CodeGym environments: dynamic-programming workflows (tables filled cell by cell from their rules).

Each class is a `ToolEnv` (gym_base.py); `ORACLES` maps it to a scripted tool-only solution and `CONFIGS` to a
seeded generator of its task configurations. Written for this project, modelled on problem types of the
KodCode-V1 sample and the built-in tasks (no text copied).
"""

import json

# sent to the sandbox as gym_base's source followed by this file without this line (builtin_records)
from agentic_rl.envs.builtin.gym_base import ToolEnv


def _q(call, name, **params):
    return json.loads(call(name, **params))


class TableEnv(ToolEnv):
    """Shared tools of the DP environments: a table of cells keyed "i" or "i,j"."""

    def load(self, o):
        self.options, self.table = dict(o), {}

    def Observe(self):
        """Return the task's input."""
        return self.options

    def SetCell(self, key, value):
        """Store value in the table cell key (e.g. "3" or "2,4")."""
        self.table[str(key)] = value
        return "ok"

    def GetCell(self, key):
        """Return the value of table cell key (null if unset)."""
        return self.table.get(str(key))


class ClimbStairsEnv(TableEnv):
    """Count the ways to climb n stairs taking 1 or 2 steps at a time."""

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def get_ref_answer(self):
        a, b = 1, 1
        for _ in range(self.options["n"]):
            a, b = b, a + b
        return a


def oracle_stairs(call):
    n = _q(call, "Observe")["n"]
    call("SetCell", key="0", value=1)
    call("SetCell", key="1", value=1)
    for i in range(2, n + 1):
        call(
            "SetCell",
            key=str(i),
            value=_q(call, "Add", a=_q(call, "GetCell", key=str(i - 1)), b=_q(call, "GetCell", key=str(i - 2))),
        )
    return _q(call, "GetCell", key=str(n))


class HouseRobberEnv(TableEnv):
    """Choose houses with no two adjacent to maximise the total of their values; answer the total."""

    def Value(self, index):
        """Return the value of house index."""
        return self.options["values"][int(index)]

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def Max(self, a, b):
        """Return the larger of a and b."""
        return max(a, b)

    def get_ref_answer(self):
        take, skip = 0, 0
        for v in self.options["values"]:
            take, skip = skip + v, max(take, skip)
        return max(take, skip)


def oracle_robber(call):
    n = len(_q(call, "Observe")["values"])
    prev, cur = 0, 0
    for i in range(n):
        prev, cur = cur, _q(call, "Max", a=cur, b=_q(call, "Add", a=prev, b=_q(call, "Value", index=i)))
    return cur


class CoinChangeEnv(TableEnv):
    """Find the fewest coins summing to amount (coins reusable); -1 if impossible."""

    def Min(self, a, b):
        """Return the smaller of a and b (null counts as infinite)."""
        vals = [v for v in (a, b) if v is not None]
        return min(vals) if vals else None

    def Add(self, a, b):
        """Return a + b (null if either is null)."""
        return None if a is None or b is None else a + b

    def get_ref_answer(self):
        amount, coins = self.options["amount"], self.options["coins"]
        best = [0] + [None] * amount
        for x in range(1, amount + 1):
            opts = [best[x - c] + 1 for c in coins if c <= x and best[x - c] is not None]
            best[x] = min(opts) if opts else None
        return -1 if best[amount] is None else best[amount]


def oracle_coins(call):
    info = _q(call, "Observe")
    call("SetCell", key="0", value=0)
    for x in range(1, info["amount"] + 1):
        best = None
        for c in info["coins"]:
            if c <= x:
                best = _q(call, "Min", a=best, b=_q(call, "Add", a=_q(call, "GetCell", key=str(x - c)), b=1))
        call("SetCell", key=str(x), value=best)
    last = _q(call, "GetCell", key=str(info["amount"]))
    return -1 if last is None else last


class LongestCommonSubsequenceEnv(TableEnv):
    """Find the length of the longest common subsequence of strings a and b."""

    def CharOf(self, word, index):
        """Return the character at index of word ("a" or "b")."""
        return self.options[word][int(index)]

    def Max(self, a, b):
        """Return the larger of a and b."""
        return max(a, b)

    def get_ref_answer(self):
        a, b = self.options["a"], self.options["b"]
        t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(len(a)):
            for j in range(len(b)):
                t[i + 1][j + 1] = t[i][j] + 1 if a[i] == b[j] else max(t[i][j + 1], t[i + 1][j])
        return t[-1][-1]


def oracle_lcs(call):
    info = _q(call, "Observe")
    a, b = len(info["a"]), len(info["b"])

    def cell(i, j):
        return 0 if i == 0 or j == 0 else _q(call, "GetCell", key=f"{i},{j}")

    for i in range(1, a + 1):
        ca = call("CharOf", word="a", index=i - 1)
        for j in range(1, b + 1):
            if ca == call("CharOf", word="b", index=j - 1):
                value = cell(i - 1, j - 1) + 1
            else:
                value = _q(call, "Max", a=cell(i - 1, j), b=cell(i, j - 1))
            call("SetCell", key=f"{i},{j}", value=value)
    return cell(a, b)


class GridPathsEnv(TableEnv):
    """Count the paths from the top-left to the bottom-right cell of the grid moving only right or down,
    avoiding blocked cells (1 = blocked)."""

    def Blocked(self, row, col):
        """Return true if the cell at row, col is blocked."""
        return self.options["grid"][int(row)][int(col)] == 1

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def get_ref_answer(self):
        g = self.options["grid"]
        t = [[0] * len(g[0]) for _ in g]
        for r in range(len(g)):
            for c in range(len(g[0])):
                if g[r][c]:
                    continue
                t[r][c] = 1 if r == c == 0 else (t[r - 1][c] if r else 0) + (t[r][c - 1] if c else 0)
        return t[-1][-1]


def oracle_grid_paths(call):
    g = _q(call, "Observe")["grid"]
    rows, cols = len(g), len(g[0])
    for r in range(rows):
        for c in range(cols):
            if _q(call, "Blocked", row=r, col=c):
                value = 0
            elif r == c == 0:
                value = 1
            else:
                up = _q(call, "GetCell", key=f"{r - 1},{c}") if r else 0
                left = _q(call, "GetCell", key=f"{r},{c - 1}") if c else 0
                value = _q(call, "Add", a=up, b=left)
            call("SetCell", key=f"{r},{c}", value=value)
    return _q(call, "GetCell", key=f"{rows - 1},{cols - 1}")


class KnapsackEnv(TableEnv):
    """0/1 knapsack: choose items (each once) with total weight at most capacity to maximise their total value."""

    def Item(self, index):
        """Return item index as {"weight": w, "value": v}."""
        return {"weight": self.options["weights"][int(index)], "value": self.options["values"][int(index)]}

    def Max(self, a, b):
        """Return the larger of a and b."""
        return max(a, b)

    def get_ref_answer(self):
        cap = self.options["capacity"]
        best = [0] * (cap + 1)
        for w, v in zip(self.options["weights"], self.options["values"]):
            for c in range(cap, w - 1, -1):
                best[c] = max(best[c], best[c - w] + v)
        return best[cap]


def oracle_knapsack(call):
    info = _q(call, "Observe")
    cap = info["capacity"]
    best = [0] * (cap + 1)
    for i in range(len(info["weights"])):
        item = _q(call, "Item", index=i)
        for c in range(cap, item["weight"] - 1, -1):
            best[c] = _q(call, "Max", a=best[c], b=best[c - item["weight"]] + item["value"])
    return best[cap]


class EditDistanceEnv(TableEnv):
    """Find the fewest single-character insertions, deletions or substitutions turning a into b."""

    def CharOf(self, word, index):
        """Return the character at index of word ("a" or "b")."""
        return self.options[word][int(index)]

    def Min3(self, a, b, c):
        """Return the smallest of a, b and c."""
        return min(a, b, c)

    def get_ref_answer(self):
        a, b = self.options["a"], self.options["b"]
        prev = list(range(len(b) + 1))
        for i in range(1, len(a) + 1):
            cur = [i] + [0] * len(b)
            for j in range(1, len(b) + 1):
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            prev = cur
        return prev[-1]


def oracle_edit_distance(call):
    info = _q(call, "Observe")
    a, b = len(info["a"]), len(info["b"])
    prev = list(range(b + 1))
    for i in range(1, a + 1):
        ca = call("CharOf", word="a", index=i - 1)
        cur = [i] + [0] * b
        for j in range(1, b + 1):
            same = ca == call("CharOf", word="b", index=j - 1)
            cur[j] = _q(call, "Min3", a=prev[j] + 1, b=cur[j - 1] + 1, c=prev[j - 1] + (0 if same else 1))
        prev = cur
    return prev[-1]


class LongestIncreasingSubsequenceEnv(TableEnv):
    """Find the length of the longest strictly increasing subsequence (not necessarily contiguous)."""

    def Value(self, index):
        """Return element index."""
        return self.options["nums"][int(index)]

    def Less(self, a, b):
        """Return true if a < b."""
        return a < b

    def Max(self, a, b):
        """Return the larger of a and b."""
        return max(a, b)

    def get_ref_answer(self):
        nums = self.options["nums"]
        best = [1] * len(nums)
        for i in range(len(nums)):
            for j in range(i):
                if nums[j] < nums[i]:
                    best[i] = max(best[i], best[j] + 1)
        return max(best)


def oracle_lis(call):
    n = len(_q(call, "Observe")["nums"])
    vals = [_q(call, "Value", index=i) for i in range(n)]
    best = [1] * n
    for i in range(n):
        for j in range(i):
            if _q(call, "Less", a=vals[j], b=vals[i]):
                best[i] = _q(call, "Max", a=best[i], b=best[j] + 1)
    return max(best)


class WordBreakEnv(TableEnv):
    """Decide whether the text can be split into a sequence of dictionary words (true/false)."""

    def InDictionary(self, word):
        """Return true if word is in the dictionary."""
        return word in self.options["words"]

    def Slice(self, start, stop):
        """Return the text from start to stop-1."""
        return self.options["text"][int(start) : int(stop)]

    def get_ref_answer(self):
        text, words = self.options["text"], set(self.options["words"])
        ok = [True] + [False] * len(text)
        for i in range(1, len(text) + 1):
            ok[i] = any(ok[j] and text[j:i] in words for j in range(i))
        return ok[-1]


def oracle_word_break(call):
    n = len(_q(call, "Observe")["text"])
    ok = [True] + [False] * n
    for i in range(1, n + 1):
        for j in range(max(0, i - 5), i):
            if ok[j] and _q(call, "InDictionary", word=call("Slice", start=j, stop=i)):
                ok[i] = True
                break
    call("SetCell", key=str(n), value=ok[n])
    return _q(call, "GetCell", key=str(n))


class MinPathSumEnv(TableEnv):
    """Find the smallest sum of a path from the top-left to the bottom-right of the grid moving right or down."""

    def Cell(self, row, col):
        """Return the grid value at row, col."""
        return self.options["grid"][int(row)][int(col)]

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def Min(self, a, b):
        """Return the smaller of a and b."""
        return min(a, b)

    def get_ref_answer(self):
        g = self.options["grid"]
        t = [[0] * len(g[0]) for _ in g]
        for r in range(len(g)):
            for c in range(len(g[0])):
                opts = ([t[r - 1][c]] if r else []) + ([t[r][c - 1]] if c else [])
                t[r][c] = g[r][c] + (min(opts) if opts else 0)
        return t[-1][-1]


def oracle_min_path(call):
    g = _q(call, "Observe")["grid"]
    rows, cols = len(g), len(g[0])
    t = {}
    for r in range(rows):
        for c in range(cols):
            v = _q(call, "Cell", row=r, col=c)
            if r and c:
                v = _q(call, "Add", a=v, b=_q(call, "Min", a=t[(r - 1, c)], b=t[(r, c - 1)]))
            elif r or c:
                v = _q(call, "Add", a=v, b=t[(r - 1, c)] if r else t[(r, c - 1)])
            t[(r, c)] = v
    return t[(rows - 1, cols - 1)]


def _text(rng, lo, hi, alphabet):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def _word_break(rng):
    words = rng.sample(["ab", "ba", "abc", "cab", "b", "ca", "bca", "aa"], 4)
    text = "".join(rng.choice(words) for _ in range(rng.randint(3, 5)))
    if rng.random() < 0.4:
        text += "c"
    return {"text": text, "words": words}


def _grid(rng, cell):
    cols = rng.randint(3, 4)
    return {"grid": [[cell(r, c) for c in range(cols)] for r in range(3)]}


def _knapsack(rng):
    n = rng.randint(3, 5)
    return {
        "weights": [rng.randint(1, 5) for _ in range(n)],
        "values": [rng.randint(1, 9) for _ in range(n)],
        "capacity": rng.randint(4, 8),
    }


ORACLES = {
    ClimbStairsEnv: oracle_stairs,
    HouseRobberEnv: oracle_robber,
    CoinChangeEnv: oracle_coins,
    LongestCommonSubsequenceEnv: oracle_lcs,
    GridPathsEnv: oracle_grid_paths,
    KnapsackEnv: oracle_knapsack,
    EditDistanceEnv: oracle_edit_distance,
    LongestIncreasingSubsequenceEnv: oracle_lis,
    WordBreakEnv: oracle_word_break,
    MinPathSumEnv: oracle_min_path,
}
CONFIGS = {
    ClimbStairsEnv: lambda rng: {"n": rng.randint(4, 12)},
    HouseRobberEnv: lambda rng: {"values": [rng.randint(1, 20) for _ in range(rng.randint(4, 9))]},
    CoinChangeEnv: lambda rng: {
        "coins": sorted(rng.sample([1, 2, 3, 5, 7], rng.randint(2, 3))),
        "amount": rng.randint(4, 10),
    },
    LongestCommonSubsequenceEnv: lambda rng: {"a": _text(rng, 3, 5, "abc"), "b": _text(rng, 3, 5, "abc")},
    GridPathsEnv: lambda rng: _grid(rng, lambda r, c: 0 if r == c == 0 else int(rng.random() < 0.15)),
    KnapsackEnv: _knapsack,
    EditDistanceEnv: lambda rng: {"a": _text(rng, 3, 5, "abcd"), "b": _text(rng, 3, 5, "abcd")},
    LongestIncreasingSubsequenceEnv: lambda rng: {"nums": [rng.randint(0, 20) for _ in range(rng.randint(4, 7))]},
    WordBreakEnv: _word_break,
    MinPathSumEnv: lambda rng: _grid(rng, lambda r, c: rng.randint(1, 9)),
}
