"""Built-in CodeGym environments: hashing and counting workflows (tallies, frequency ranking, set logic).

Each class is a `ToolEnv` (gym_base.py); `ORACLES` maps it to a scripted tool-only solution and `CONFIGS` to a
seeded generator of its task configurations. Written for this project, modelled on problem types of the
KodCode-V1 sample and the built-in tasks (no text copied).
"""

import json

# sent to the sandbox as gym_base's source followed by this file without this line (builtin_records)
from agentic_rl.envs.builtin.gym_base import ToolEnv


def _q(call, name, **params):
    return json.loads(call(name, **params))


class TallyEnv(ToolEnv):
    """Shared tools of the counting environments: a hidden list of items and a tally table."""

    def load(self, o):
        self.items, self.tally = list(o["items"]), {}

    def Observe(self):
        """Return the number of items."""
        return len(self.items)

    def ItemAt(self, index):
        """Return the item at position index (0-based), as JSON."""
        return json.dumps(self.items[int(index)])

    def Count(self, item):
        """Add one to the tally of item; return its tally."""
        key = json.dumps(item)
        self.tally[key] = self.tally.get(key, 0) + 1
        return self.tally[key]

    def TallyOf(self, item):
        """Return the tally of item (0 if never counted)."""
        return self.tally.get(json.dumps(item), 0)


def _count_all(call):
    n = _q(call, "Observe")
    items = [_q(call, "ItemAt", index=i) for i in range(n)]
    for item in items:
        call("Count", item=item)
    return items


class MostFrequentEnv(TallyEnv):
    """Find the most frequent item; on a tie, the one that appears first."""

    def get_ref_answer(self):
        return max(self.items, key=lambda x: (self.items.count(x), -self.items.index(x)))


def oracle_most_frequent(call):
    items = _count_all(call)
    best, best_n = None, 0
    for item in items:
        n = _q(call, "TallyOf", item=item)
        if n > best_n:
            best, best_n = item, n
    return best


class DuplicatesEnv(TallyEnv):
    """List the items that occur more than once, in the order of their first appearance."""

    def get_ref_answer(self):
        out = []
        for x in self.items:
            if self.items.count(x) > 1 and x not in out:
                out.append(x)
        return out


def oracle_duplicates(call):
    items = _count_all(call)
    out = []
    for item in items:
        if _q(call, "TallyOf", item=item) > 1 and item not in out:
            out.append(item)
    return out


class DistinctCountEnv(TallyEnv):
    """Count the distinct items."""

    def Distinct(self):
        """Return the number of distinct items tallied so far."""
        return len(self.tally)

    def get_ref_answer(self):
        return len({json.dumps(x) for x in self.items})


def oracle_distinct(call):
    _count_all(call)
    return _q(call, "Distinct")


class TopKFrequentEnv(TallyEnv):
    """List the k most frequent items, most frequent first; ties by the smaller item first."""

    def load(self, o):
        super().load(o)
        self.k = o["k"]

    def Observe(self):
        """Return {"length": n, "k": k}."""
        return {"length": len(self.items), "k": self.k}

    def Ranked(self):
        """Return the tallied items ordered by tally (descending), then by item (ascending)."""
        pairs = sorted(((json.loads(key), n) for key, n in self.tally.items()), key=lambda p: (-p[1], p[0]))
        return [item for item, _ in pairs]

    def Take(self, items, k):
        """Return the first k of items."""
        return list(items)[: int(k)]

    def get_ref_answer(self):
        distinct = sorted(set(self.items), key=lambda x: (-self.items.count(x), x))
        return distinct[: self.k]


def oracle_top_k(call):
    info = _q(call, "Observe")
    for i in range(info["length"]):
        call("Count", item=_q(call, "ItemAt", index=i))
    return _q(call, "Take", items=_q(call, "Ranked"), k=info["k"])


class IntersectionEnv(ToolEnv):
    """List the values present in both lists, each once, in ascending order."""

    def load(self, o):
        self.a, self.b, self.seen = list(o["a"]), list(o["b"]), []

    def Observe(self):
        """Return the lengths {"a": len(a), "b": len(b)}."""
        return {"a": len(self.a), "b": len(self.b)}

    def Get(self, which, index):
        """Return element index of list which ("a" or "b")."""
        return (self.a if which == "a" else self.b)[int(index)]

    def Mark(self, value):
        """Remember value as seen in list a."""
        if value not in self.seen:
            self.seen.append(value)
        return len(self.seen)

    def Seen(self, value):
        """Return true if value was marked."""
        return value in self.seen

    def Sort(self, values):
        """Return values sorted ascending."""
        return sorted(values)

    def get_ref_answer(self):
        return sorted(set(self.a) & set(self.b))


def oracle_intersection(call):
    n = _q(call, "Observe")
    for i in range(n["a"]):
        call("Mark", value=_q(call, "Get", which="a", index=i))
    both = []
    for i in range(n["b"]):
        v = _q(call, "Get", which="b", index=i)
        if _q(call, "Seen", value=v) and v not in both:
            both.append(v)
    return _q(call, "Sort", values=both)


class CharFrequencyEnv(ToolEnv):
    """Map each letter of the word to its number of occurrences; answer the mapping as a JSON object."""

    def load(self, o):
        self.word, self.freq = o["word"], {}

    def Observe(self):
        """Return the length of the word."""
        return len(self.word)

    def CharAt(self, index):
        """Return the letter at position index."""
        return self.word[int(index)]

    def Increment(self, char):
        """Add one to the count of char; return it."""
        self.freq[char] = self.freq.get(char, 0) + 1
        return self.freq[char]

    def Frequencies(self):
        """Return the counts so far as an object."""
        return self.freq

    def get_ref_answer(self):
        return {c: self.word.count(c) for c in self.word}


def oracle_char_frequency(call):
    n = _q(call, "Observe")
    for i in range(n):
        call("Increment", char=call("CharAt", index=i))
    return _q(call, "Frequencies")


class GroupByLengthEnv(ToolEnv):
    """Group the words by length: answer an object from length (as a string) to the words of that length, in
    their original order."""

    def load(self, o):
        self.words, self.groups = list(o["words"]), {}

    def Observe(self):
        """Return the number of words."""
        return len(self.words)

    def WordAt(self, index):
        """Return word number index."""
        return self.words[int(index)]

    def Length(self, word):
        """Return the length of word."""
        return len(word)

    def AddToGroup(self, key, word):
        """Append word to the group named key; return that group's size."""
        self.groups.setdefault(str(key), []).append(word)
        return len(self.groups[str(key)])

    def Groups(self):
        """Return all groups."""
        return self.groups

    def get_ref_answer(self):
        out = {}
        for w in self.words:
            out.setdefault(str(len(w)), []).append(w)
        return out


def oracle_group_by_length(call):
    n = _q(call, "Observe")
    for i in range(n):
        w = call("WordAt", index=i)
        call("AddToGroup", key=str(_q(call, "Length", word=w)), word=w)
    return _q(call, "Groups")


class PairCountEnv(TallyEnv):
    """Count the pairs of positions i < j whose items are equal."""

    def Pairs(self, n):
        """Return n * (n - 1) / 2, the pairs among n equal items."""
        return int(n) * (int(n) - 1) // 2

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def get_ref_answer(self):
        return sum(
            self.items[i] == self.items[j] for i in range(len(self.items)) for j in range(i + 1, len(self.items))
        )


def oracle_pair_count(call):
    items = _count_all(call)
    total = 0
    for item in sorted(set(items)):
        total = _q(call, "Add", a=total, b=_q(call, "Pairs", n=_q(call, "TallyOf", item=item)))
    return total


class MissingNumberEnv(ToolEnv):
    """The list holds the numbers 0..n except one; find the missing one."""

    def load(self, o):
        self.nums, self.present = list(o["nums"]), []

    def Observe(self):
        """Return the length of the list."""
        return len(self.nums)

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def Mark(self, value):
        """Mark value as present; return how many are marked."""
        self.present.append(value)
        return len(self.present)

    def IsMarked(self, value):
        """Return true if value was marked."""
        return value in self.present

    def get_ref_answer(self):
        return (set(range(len(self.nums) + 1)) - set(self.nums)).pop()


def oracle_missing(call):
    n = _q(call, "Observe")
    for i in range(n):
        call("Mark", value=_q(call, "GetItem", index=i))
    for v in range(n + 1):
        if not _q(call, "IsMarked", value=v):
            return v
    return -1


class IsomorphicStringsEnv(ToolEnv):
    """Decide whether the letters of word a can be replaced one-to-one to give word b (true/false)."""

    def load(self, o):
        self.a, self.b, self.forward, self.backward = o["a"], o["b"], {}, {}

    def Observe(self):
        """Return the lengths {"a": len(a), "b": len(b)}."""
        return {"a": len(self.a), "b": len(self.b)}

    def CharOf(self, word, index):
        """Return the letter at index of word ("a" or "b")."""
        return (self.a if word == "a" else self.b)[int(index)]

    def Link(self, x, y):
        """Record that x maps to y; return false if x or y is already linked to another letter."""
        if self.forward.get(x, y) != y or self.backward.get(y, x) != x:
            return False
        self.forward[x], self.backward[y] = y, x
        return True

    def LinkCount(self):
        """Return the number of linked letters."""
        return len(self.forward)

    def get_ref_answer(self):
        if len(self.a) != len(self.b):
            return False
        return len(set(zip(self.a, self.b))) == len(set(self.a)) == len(set(self.b))


def oracle_isomorphic(call):
    n = _q(call, "Observe")
    if n["a"] != n["b"]:
        return False
    for i in range(n["a"]):
        if not _q(call, "Link", x=call("CharOf", word="a", index=i), y=call("CharOf", word="b", index=i)):
            return False
    return True


def _items(rng, lo, hi, pool):
    return [rng.choice(pool) for _ in range(rng.randint(lo, hi))]


def _with_duplicate(rng):
    items = _items(rng, 5, 10, list(range(8)))
    return {"items": items} if len(set(items)) < len(items) else _with_duplicate(rng)


def _missing(rng):
    n = rng.randint(5, 10)
    nums = list(range(n + 1))
    nums.remove(rng.randint(0, n))
    rng.shuffle(nums)
    return {"nums": nums}


def _isomorphic(rng):
    a = "".join(rng.choice("abcd") for _ in range(rng.randint(5, 8)))
    mapping = dict(zip("abcd", rng.sample("wxyz", 4)))
    b = [mapping[c] for c in a]
    if rng.random() < 0.5:
        b[rng.randrange(len(b))] = rng.choice("wxyz")
    return {"a": a, "b": "".join(b)}


ORACLES = {
    MostFrequentEnv: oracle_most_frequent,
    DuplicatesEnv: oracle_duplicates,
    DistinctCountEnv: oracle_distinct,
    TopKFrequentEnv: oracle_top_k,
    IntersectionEnv: oracle_intersection,
    CharFrequencyEnv: oracle_char_frequency,
    GroupByLengthEnv: oracle_group_by_length,
    PairCountEnv: oracle_pair_count,
    MissingNumberEnv: oracle_missing,
    IsomorphicStringsEnv: oracle_isomorphic,
}
CONFIGS = {
    MostFrequentEnv: lambda rng: {"items": _items(rng, 5, 10, ["red", "blue", "green", "gold"])},
    DuplicatesEnv: _with_duplicate,
    DistinctCountEnv: lambda rng: {"items": _items(rng, 5, 10, list(range(6)))},
    TopKFrequentEnv: lambda rng: {"items": _items(rng, 6, 12, list(range(5))), "k": rng.randint(1, 3)},
    IntersectionEnv: lambda rng: {"a": _items(rng, 3, 7, list(range(10))), "b": _items(rng, 3, 7, list(range(10)))},
    CharFrequencyEnv: lambda rng: {"word": "".join(_items(rng, 5, 10, list("abcde")))},
    GroupByLengthEnv: lambda rng: {
        "words": _items(rng, 4, 7, ["a", "to", "cat", "tree", "ox", "sun", "moon", "plant"])
    },
    PairCountEnv: lambda rng: {"items": _items(rng, 5, 9, list(range(4)))},
    MissingNumberEnv: _missing,
    IsomorphicStringsEnv: _isomorphic,
}
