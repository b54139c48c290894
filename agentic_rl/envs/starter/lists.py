"""Starter CodeGym environments: one list of numbers, answered by a short chain of list tools.

Each class is a `ToolEnv` (envs/builtin/gym_base.py) whose `solve(options)` is its reference answer; `ORACLES` maps
it to a scripted tool-only solution and `CONFIGS` to a seeded generator of its configurations. Every tool does the
arithmetic, so an agent only has to pick the tools the task names and copy values from one result into the next
call: the steps a 135M model can be shown and learn. Written for this project (no text copied).
"""

import json

# sent to the sandbox as gym_base's source followed by this file without this line (starter_records)
from agentic_rl.envs.builtin.gym_base import ToolEnv


def _q(call, name, **params):
    return json.loads(call(name, **params))


class ListEnv(ToolEnv):
    """Shared tools of the list environments: the list itself and whole-list operations."""

    def load(self, o):
        self.values = [int(v) for v in o["values"]]

    def get_ref_answer(self):
        return self.solve({"values": self.values})

    def Observe(self):
        """Observe(): return {"values": the list of numbers of this task}."""
        return {"values": self.values}

    def Max(self, values):
        """Max(values): return the largest number of the list values."""
        return max(values)

    def Min(self, values):
        """Min(values): return the smallest number of the list values."""
        return min(values)

    def Sum(self, values):
        """Sum(values): return the sum of the list values."""
        return sum(values)

    def Sort(self, values):
        """Sort(values): return the list values sorted from smallest to largest."""
        return sorted(values)

    def Item(self, values, index):
        """Item(values, index): return the element of the list values at position index (0 is the first)."""
        return values[int(index)]

    def Subtract(self, a, b):
        """Subtract(a, b): return a - b."""
        return a - b


class LargestEnv(ListEnv):
    """Find the largest number in the list that Observe shows, then call Done with it as the answer."""

    @staticmethod
    def solve(o):
        return max(o["values"])


def oracle_largest(call):
    values = _q(call, "Observe")["values"]
    return _q(call, "Max", values=values)


class SpreadEnv(ListEnv):
    """Find the spread of the list that Observe shows: its largest number minus its smallest number. Call Done with
    the spread as the answer."""

    @staticmethod
    def solve(o):
        return max(o["values"]) - min(o["values"])


def oracle_spread(call):
    values = _q(call, "Observe")["values"]
    high = _q(call, "Max", values=values)
    low = _q(call, "Min", values=values)
    return _q(call, "Subtract", a=high, b=low)


class TotalEnv(ListEnv):
    """Find the sum of the numbers in the list that Observe shows, then call Done with it as the answer."""

    @staticmethod
    def solve(o):
        return sum(o["values"])


def oracle_total(call):
    values = _q(call, "Observe")["values"]
    return _q(call, "Sum", values=values)


class SecondSmallestEnv(ListEnv):
    """Find the second smallest number of the list that Observe shows (the element at position 1 once the list is
    sorted), then call Done with it as the answer."""

    @staticmethod
    def solve(o):
        return sorted(o["values"])[1]


def oracle_second_smallest(call):
    values = _q(call, "Observe")["values"]
    ordered = _q(call, "Sort", values=values)
    return _q(call, "Item", values=ordered, index=1)


class SmallestEnv(ListEnv):
    """Find the smallest number in the list that Observe shows, then call Done with it as the answer."""

    @staticmethod
    def solve(o):
        return min(o["values"])


def oracle_smallest(call):
    values = _q(call, "Observe")["values"]
    return _q(call, "Min", values=values)


def _values(rng):
    """4 to 6 numbers from 1 to 99, so that the answers spread over many values (no constant fits)."""
    return {"values": [rng.randint(1, 99) for _ in range(rng.randint(4, 6))]}


# the last class is held out (never trained on): its task is new, its tools are the ones training used
ORACLES = {
    LargestEnv: oracle_largest,
    SpreadEnv: oracle_spread,
    TotalEnv: oracle_total,
    SecondSmallestEnv: oracle_second_smallest,
    SmallestEnv: oracle_smallest,
}
CONFIGS = dict.fromkeys(ORACLES, _values)
