"""Built-in CodeGym environments: array workflows (scan, two pointers, prefix sums, sorting steps).

Each class is a `ToolEnv` (gym_base.py); `ORACLES` maps it to a scripted tool-only solution and `CONFIGS` to a
seeded generator of its task configurations. Written for this project, modelled on problem types of the
KodCode-V1 sample and the built-in tasks (no text copied).
"""

import json

# sent to the sandbox as gym_base's source followed by this file without this line (builtin_records)
from agentic_rl.envs.builtin.gym_base import ToolEnv


def _q(call, name, **params):
    return json.loads(call(name, **params))


class MaxSubarraySumEnv(ToolEnv):
    """Find the largest sum of a non-empty contiguous run of the array (Kadane's scan)."""

    def load(self, o):
        self.nums = list(o["nums"])

    def Observe(self):
        """Return the number of elements of the hidden array."""
        return len(self.nums)

    def GetItem(self, index):
        """Return the element at position index (0-based)."""
        return self.nums[int(index)]

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def Max(self, a, b):
        """Return the larger of a and b."""
        return max(a, b)

    def get_ref_answer(self):
        best = cur = self.nums[0]
        for x in self.nums[1:]:
            cur = max(x, cur + x)
            best = max(best, cur)
        return best


def oracle_max_subarray(call):
    n = _q(call, "Observe")
    best = cur = _q(call, "GetItem", index=0)
    for i in range(1, n):
        x = _q(call, "GetItem", index=i)
        cur = _q(call, "Max", a=x, b=_q(call, "Add", a=cur, b=x))
        best = _q(call, "Max", a=best, b=cur)
    return best


class TwoSumIndicesEnv(ToolEnv):
    """Find indices [i, j] (i < j) of the two numbers that add up to the target; exactly one pair does."""

    def load(self, o):
        self.nums, self.target, self.seen = list(o["nums"]), o["target"], {}

    def Observe(self):
        """Return {"length": n, "target": t}."""
        return {"length": len(self.nums), "target": self.target}

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def Remember(self, value, index):
        """Store that value was seen at index."""
        self.seen[str(value)] = index
        return "ok"

    def Lookup(self, value):
        """Return the index where value was seen, or -1."""
        return self.seen.get(str(value), -1)

    def Subtract(self, a, b):
        """Return a - b."""
        return a - b

    def get_ref_answer(self):
        pos = {}
        for j, x in enumerate(self.nums):
            if self.target - x in pos:
                return [pos[self.target - x], j]
            pos.setdefault(x, j)
        return []


def oracle_two_sum(call):
    info = _q(call, "Observe")
    for j in range(info["length"]):
        x = _q(call, "GetItem", index=j)
        i = _q(call, "Lookup", value=_q(call, "Subtract", a=info["target"], b=x))
        if i >= 0:
            return [i, j]
        if _q(call, "Lookup", value=x) < 0:
            call("Remember", value=x, index=j)
    return []


class MoveZerosEnv(ToolEnv):
    """Move every zero of the array to its end, keeping the order of the other elements; answer the array."""

    def load(self, o):
        self.nums, self.out = list(o["nums"]), []

    def Observe(self):
        """Return the length of the array and the output built so far."""
        return {"length": len(self.nums), "output": self.out}

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def IsZero(self, value):
        """Return true if value is 0."""
        return value == 0

    def Append(self, value):
        """Append value to the output; return its new length."""
        self.out.append(value)
        return len(self.out)

    def PadZeros(self, total):
        """Append zeros until the output has total elements; return the output."""
        self.out += [0] * (int(total) - len(self.out))
        return self.out

    def get_ref_answer(self):
        rest = [x for x in self.nums if x != 0]
        return rest + [0] * (len(self.nums) - len(rest))


def oracle_move_zeros(call):
    n = _q(call, "Observe")["length"]
    for i in range(n):
        x = _q(call, "GetItem", index=i)
        if not _q(call, "IsZero", value=x):
            call("Append", value=x)
    return _q(call, "PadZeros", total=n)


class PrefixSumQueriesEnv(ToolEnv):
    """Answer each range-sum query [l, r] (inclusive) of the array with prefix sums; answer the list of sums."""

    def load(self, o):
        self.nums, self.queries, self.prefix = list(o["nums"]), [list(q) for q in o["queries"]], [0]

    def Observe(self):
        """Return {"length": n, "queries": [[l, r], ...]}."""
        return {"length": len(self.nums), "queries": self.queries}

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def ExtendPrefix(self, value):
        """Append prefix[-1] + value to the prefix sums; return the new last prefix sum."""
        self.prefix.append(self.prefix[-1] + value)
        return self.prefix[-1]

    def RangeSum(self, left, right):
        """Return prefix[right + 1] - prefix[left] (needs the prefix sums built that far)."""
        return self.prefix[int(right) + 1] - self.prefix[int(left)]

    def get_ref_answer(self):
        return [sum(self.nums[a : b + 1]) for a, b in self.queries]


def oracle_prefix_sums(call):
    info = _q(call, "Observe")
    for i in range(info["length"]):
        call("ExtendPrefix", value=_q(call, "GetItem", index=i))
    return [_q(call, "RangeSum", left=a, right=b) for a, b in info["queries"]]


class RotateArrayEnv(ToolEnv):
    """Rotate the array right by k steps; answer the rotated array."""

    def load(self, o):
        self.nums, self.k, self.out = list(o["nums"]), o["k"], []

    def Observe(self):
        """Return {"length": n, "k": k}."""
        return {"length": len(self.nums), "k": self.k}

    def Mod(self, a, b):
        """Return a mod b."""
        return a % b

    def SourceIndex(self, target, shift, length):
        """Return the index whose element lands at target after a right rotation by shift."""
        return (int(target) - int(shift)) % int(length)

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def Append(self, value):
        """Append value to the output; return the output."""
        self.out.append(value)
        return self.out

    def get_ref_answer(self):
        k = self.k % len(self.nums)
        return self.nums[-k:] + self.nums[:-k] if k else list(self.nums)


def oracle_rotate(call):
    info = _q(call, "Observe")
    shift = _q(call, "Mod", a=info["k"], b=info["length"])
    out = []
    for t in range(info["length"]):
        out = _q(
            call,
            "Append",
            value=_q(call, "GetItem", index=_q(call, "SourceIndex", target=t, shift=shift, length=info["length"])),
        )
    return out


class MergeSortedEnv(ToolEnv):
    """Merge the two sorted lists a and b into one sorted list; answer it."""

    def load(self, o):
        self.a, self.b, self.out = list(o["a"]), list(o["b"]), []

    def Observe(self):
        """Return the lengths {"a": len(a), "b": len(b)}."""
        return {"a": len(self.a), "b": len(self.b)}

    def Peek(self, which, index):
        """Return element index of list which ("a" or "b")."""
        return (self.a if which == "a" else self.b)[int(index)]

    def LessOrEqual(self, x, y):
        """Return true if x <= y."""
        return x <= y

    def Append(self, value):
        """Append value to the merged output; return its length."""
        self.out.append(value)
        return len(self.out)

    def Output(self):
        """Return the merged output so far."""
        return self.out

    def get_ref_answer(self):
        return sorted(self.a + self.b)


def oracle_merge(call):
    n = _q(call, "Observe")
    i = j = 0
    while i < n["a"] or j < n["b"]:
        if j >= n["b"] or (
            i < n["a"]
            and _q(call, "LessOrEqual", x=_q(call, "Peek", which="a", index=i), y=_q(call, "Peek", which="b", index=j))
        ):
            call("Append", value=_q(call, "Peek", which="a", index=i))
            i += 1
        else:
            call("Append", value=_q(call, "Peek", which="b", index=j))
            j += 1
    return _q(call, "Output")


class LongestIncreasingRunEnv(ToolEnv):
    """Find the length of the longest strictly increasing contiguous run of the array."""

    def load(self, o):
        self.nums = list(o["nums"])

    def Observe(self):
        """Return the number of elements."""
        return len(self.nums)

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def Greater(self, a, b):
        """Return true if a > b."""
        return a > b

    def Max(self, a, b):
        """Return the larger of a and b."""
        return max(a, b)

    def get_ref_answer(self):
        best = cur = 1
        for x, y in zip(self.nums, self.nums[1:]):
            cur = cur + 1 if y > x else 1
            best = max(best, cur)
        return best


def oracle_increasing_run(call):
    n = _q(call, "Observe")
    best = cur = 1
    prev = _q(call, "GetItem", index=0)
    for i in range(1, n):
        x = _q(call, "GetItem", index=i)
        cur = cur + 1 if _q(call, "Greater", a=x, b=prev) else 1
        best = _q(call, "Max", a=best, b=cur)
        prev = x
    return best


class ProductExceptSelfEnv(ToolEnv):
    """For each position, the product of all other elements (no division); answer the list."""

    def load(self, o):
        self.nums = list(o["nums"])

    def Observe(self):
        """Return the number of elements."""
        return len(self.nums)

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def Multiply(self, a, b):
        """Return a * b."""
        return a * b

    def ProductRange(self, start, stop):
        """Return the product of the elements at positions start .. stop-1 (1 if empty)."""
        p = 1
        for x in self.nums[int(start) : int(stop)]:
            p *= x
        return p

    def get_ref_answer(self):
        out = []
        for i in range(len(self.nums)):
            p = 1
            for j, x in enumerate(self.nums):
                if j != i:
                    p *= x
            out.append(p)
        return out


def oracle_product_except_self(call):
    n = _q(call, "Observe")
    return [
        _q(
            call,
            "Multiply",
            a=_q(call, "ProductRange", start=0, stop=i),
            b=_q(call, "ProductRange", start=i + 1, stop=n),
        )
        for i in range(n)
    ]


class MajorityElementEnv(ToolEnv):
    """Find the element that occurs more than n/2 times (Boyer-Moore vote)."""

    def load(self, o):
        self.nums, self.candidate, self.count = list(o["nums"]), None, 0

    def Observe(self):
        """Return {"length": n, "candidate": c, "count": k} of the vote so far."""
        return {"length": len(self.nums), "candidate": self.candidate, "count": self.count}

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def Vote(self, value):
        """Feed value to the vote: adopt it when the count is 0, then count +1 if it equals the candidate else -1.
        Return the new count."""
        if self.count == 0:
            self.candidate = value
        self.count += 1 if value == self.candidate else -1
        return self.count

    def Candidate(self):
        """Return the current candidate."""
        return self.candidate

    def get_ref_answer(self):
        return max(set(self.nums), key=self.nums.count)


def oracle_majority(call):
    n = _q(call, "Observe")["length"]
    for i in range(n):
        call("Vote", value=_q(call, "GetItem", index=i))
    return _q(call, "Candidate")


class SecondLargestEnv(ToolEnv):
    """Find the second largest distinct value of the array."""

    def load(self, o):
        self.nums, self.top = list(o["nums"]), []

    def Observe(self):
        """Return the number of elements and the current top-two list."""
        return {"length": len(self.nums), "top": self.top}

    def GetItem(self, index):
        """Return the element at position index."""
        return self.nums[int(index)]

    def Offer(self, value):
        """Offer value to the top-two list of distinct values (kept in decreasing order); return the list."""
        if value not in self.top:
            self.top = sorted(self.top + [value], reverse=True)[:2]
        return self.top

    def Second(self):
        """Return the second entry of the top-two list."""
        return self.top[1]

    def get_ref_answer(self):
        return sorted(set(self.nums))[-2]


def oracle_second_largest(call):
    n = _q(call, "Observe")["length"]
    for i in range(n):
        call("Offer", value=_q(call, "GetItem", index=i))
    return _q(call, "Second")


def _ints(rng, lo, hi, n_lo, n_hi):
    return [rng.randint(lo, hi) for _ in range(rng.randint(n_lo, n_hi))]


def _two_sum(rng):
    nums = rng.sample(range(-20, 40), rng.randint(5, 10))
    i, j = sorted(rng.sample(range(len(nums)), 2))
    target = nums[i] + nums[j]
    # keep exactly one pair: drop configurations with another pair
    pairs = [(a, b) for a in range(len(nums)) for b in range(a + 1, len(nums)) if nums[a] + nums[b] == target]
    return {"nums": nums, "target": target} if len(pairs) == 1 else _two_sum(rng)


def _majority(rng):
    n = rng.randint(5, 11)
    m = rng.randint(0, 5)
    nums = [m] * (n // 2 + 1) + [rng.randint(0, 5) for _ in range(n - n // 2 - 1)]
    rng.shuffle(nums)
    return {"nums": nums}


def _second(rng):
    nums = _ints(rng, -10, 30, 5, 12)
    return {"nums": nums} if len(set(nums)) >= 2 else _second(rng)


def _merge(rng):
    return {"a": sorted(_ints(rng, 0, 30, 2, 6)), "b": sorted(_ints(rng, 0, 30, 2, 6))}


def _queries(rng):
    nums = _ints(rng, -9, 20, 5, 10)
    qs = [sorted([rng.randrange(len(nums)), rng.randrange(len(nums))]) for _ in range(rng.randint(2, 4))]
    return {"nums": nums, "queries": qs}


ORACLES = {
    MaxSubarraySumEnv: oracle_max_subarray,
    TwoSumIndicesEnv: oracle_two_sum,
    MoveZerosEnv: oracle_move_zeros,
    PrefixSumQueriesEnv: oracle_prefix_sums,
    RotateArrayEnv: oracle_rotate,
    MergeSortedEnv: oracle_merge,
    LongestIncreasingRunEnv: oracle_increasing_run,
    ProductExceptSelfEnv: oracle_product_except_self,
    MajorityElementEnv: oracle_majority,
    SecondLargestEnv: oracle_second_largest,
}
CONFIGS = {
    MaxSubarraySumEnv: lambda rng: {"nums": _ints(rng, -10, 10, 5, 12)},
    TwoSumIndicesEnv: _two_sum,
    MoveZerosEnv: lambda rng: {"nums": [rng.choice([0, 0, rng.randint(1, 9)]) for _ in range(rng.randint(5, 12))]},
    PrefixSumQueriesEnv: _queries,
    RotateArrayEnv: lambda rng: {"nums": _ints(rng, 0, 50, 4, 9), "k": rng.randint(0, 20)},
    MergeSortedEnv: _merge,
    LongestIncreasingRunEnv: lambda rng: {"nums": _ints(rng, 0, 12, 6, 14)},
    ProductExceptSelfEnv: lambda rng: {"nums": _ints(rng, -3, 5, 4, 7)},
    MajorityElementEnv: _majority,
    SecondLargestEnv: _second,
}
