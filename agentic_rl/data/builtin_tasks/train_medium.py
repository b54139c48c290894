"""Train split, medium problems: a few lines each, most of them built on a standard-library API."""
from __future__ import annotations

from ._schema import problem

SPLIT = "train"


def _medium(name, question, solution, wrong, test, api=()):
    return problem(name, SPLIT, "medium", question, solution, wrong, test, api)


PROBLEMS = [
    _medium(
        "top_k_frequent",
        """Write a Python function `top_k_frequent(nums: list[int], k: int) -> list[int]` that returns
        the `k` most frequent values, most frequent first; values with equal counts keep the order
        of their first appearance. Example: `top_k_frequent([1, 1, 1, 2, 2, 3], 2)` returns `[1, 2]`.""",
        r'''
        from collections import Counter


        def top_k_frequent(nums, k):
            return [value for value, _ in Counter(nums).most_common(k)]
        ''',
        r'''
        def top_k_frequent(nums, k):
            return sorted(set(nums), key=nums.count, reverse=True)[:k]
        ''',
        r'''
        from solution import top_k_frequent


        def test_basic():
            assert top_k_frequent([1, 1, 1, 2, 2, 3], 2) == [1, 2]


        def test_ties_keep_first_appearance():
            assert top_k_frequent([3, 3, 1, 1, 2], 2) == [3, 1]


        def test_single():
            assert top_k_frequent([5], 1) == [5]


        def test_all_values():
            assert top_k_frequent([4, 4, 6, 6, 6, 7], 3) == [6, 4, 7]


        def test_zero():
            assert top_k_frequent([1, 2, 3], 0) == []
        ''',
        api=["collections.Counter.most_common"],
    ),
    _medium(
        "group_anagrams",
        """Write a Python function `group_anagrams(words: list[str]) -> list[list[str]]` that groups
        words that are anagrams of each other. Groups appear in the order their first word appears;
        words inside a group keep input order. Example:
        `group_anagrams(["eat", "tea", "tan", "ate", "nat", "bat"])` returns
        `[["eat", "tea", "ate"], ["tan", "nat"], ["bat"]]`.""",
        r'''
        from collections import defaultdict


        def group_anagrams(words):
            groups = defaultdict(list)
            for word in words:
                groups["".join(sorted(word))].append(word)
            return list(groups.values())
        ''',
        r'''
        from collections import defaultdict


        def group_anagrams(words):
            groups = defaultdict(list)
            for word in words:
                groups[frozenset(word)].append(word)
            return list(groups.values())
        ''',
        r'''
        from solution import group_anagrams


        def test_example():
            words = ["eat", "tea", "tan", "ate", "nat", "bat"]
            assert group_anagrams(words) == [["eat", "tea", "ate"], ["tan", "nat"], ["bat"]]


        def test_empty():
            assert group_anagrams([]) == []


        def test_letter_counts_matter():
            assert group_anagrams(["aab", "abb", "bba"]) == [["aab"], ["abb", "bba"]]


        def test_no_anagrams():
            assert group_anagrams(["x", "y"]) == [["x"], ["y"]]
        ''',
        api=["collections.defaultdict"],
    ),
    _medium(
        "sliding_window_max",
        """Write a Python function `sliding_window_max(nums: list[int], k: int) -> list[int]` that
        returns the maximum of every contiguous window of length `k` (1 <= k <= len(nums)), from left
        to right. Example: `sliding_window_max([1, 3, -1, -3, 5, 3, 6, 7], 3)` returns
        `[3, 3, 5, 5, 6, 7]`.""",
        r'''
        from collections import deque


        def sliding_window_max(nums, k):
            window = deque()  # indices, their values decreasing
            result = []
            for i, value in enumerate(nums):
                while window and nums[window[-1]] <= value:
                    window.pop()
                window.append(i)
                if window[0] <= i - k:
                    window.popleft()
                if i >= k - 1:
                    result.append(nums[window[0]])
            return result
        ''',
        r'''
        def sliding_window_max(nums, k):
            return [max(nums[i:i + k]) for i in range(len(nums) - k)]
        ''',
        r'''
        from solution import sliding_window_max


        def test_example():
            assert sliding_window_max([1, 3, -1, -3, 5, 3, 6, 7], 3) == [3, 3, 5, 5, 6, 7]


        def test_single_element():
            assert sliding_window_max([4], 1) == [4]


        def test_whole_list():
            assert sliding_window_max([2, 1], 2) == [2]


        def test_window_of_one():
            assert sliding_window_max([1, 2, 3, 4], 1) == [1, 2, 3, 4]
        ''',
        api=["collections.deque"],
    ),
    _medium(
        "k_smallest",
        """Write a Python function `k_smallest(nums: list[int], k: int) -> list[int]` that returns the
        `k` smallest numbers in ascending order (duplicates count separately; if `k` exceeds the
        length, return all sorted). Example: `k_smallest([5, 1, 4, 1, 3], 3)` returns `[1, 1, 3]`.""",
        r'''
        import heapq


        def k_smallest(nums, k):
            return heapq.nsmallest(k, nums)
        ''',
        r'''
        def k_smallest(nums, k):
            return sorted(set(nums))[:k]
        ''',
        r'''
        from solution import k_smallest


        def test_duplicates_count():
            assert k_smallest([5, 1, 4, 1, 3], 3) == [1, 1, 3]


        def test_zero():
            assert k_smallest([7, 2, 9], 0) == []


        def test_k_too_large():
            assert k_smallest([3, 2, 1], 5) == [1, 2, 3]


        def test_negative():
            assert k_smallest([10, -1, 4], 2) == [-1, 4]
        ''',
        api=["heapq.nsmallest"],
    ),
    _medium(
        "running_totals",
        """Write a Python function `running_totals(nums: list[int]) -> list[int]` that returns the
        running sums: element `i` of the result is the sum of `nums[0]` through `nums[i]`. Example:
        `running_totals([1, 2, 3, 4])` returns `[1, 3, 6, 10]`.""",
        r'''
        from itertools import accumulate


        def running_totals(nums):
            return list(accumulate(nums))
        ''',
        r'''
        def running_totals(nums):
            return [sum(nums[:i]) for i in range(len(nums))]
        ''',
        r'''
        from solution import running_totals


        def test_basic():
            assert running_totals([1, 2, 3, 4]) == [1, 3, 6, 10]


        def test_empty():
            assert running_totals([]) == []


        def test_signs():
            assert running_totals([5, -5, 5]) == [5, 0, 5]
        ''',
        api=["itertools.accumulate"],
    ),
    _medium(
        "pairs_summing_to",
        """Write a Python function `pairs_summing_to(nums: list[int], target: int) -> list[tuple[int, int]]`
        that returns every index pair `(i, j)` with `i < j` and `nums[i] + nums[j] == target`, in
        increasing order of `i`, then `j`. Example: `pairs_summing_to([1, 2, 3, 4], 5)` returns
        `[(0, 3), (1, 2)]`.""",
        r'''
        from itertools import combinations


        def pairs_summing_to(nums, target):
            return [(i, j) for i, j in combinations(range(len(nums)), 2) if nums[i] + nums[j] == target]
        ''',
        r'''
        def pairs_summing_to(nums, target):
            n = len(nums)
            return [(i, j) for i in range(n) for j in range(i, n) if nums[i] + nums[j] == target]
        ''',
        r'''
        from solution import pairs_summing_to


        def test_example():
            assert pairs_summing_to([1, 2, 3, 4], 5) == [(0, 3), (1, 2)]


        def test_no_self_pairs():
            assert pairs_summing_to([1, 2, 3, 4], 4) == [(0, 2)]


        def test_repeated_values():
            assert pairs_summing_to([1, 1, 1], 2) == [(0, 1), (0, 2), (1, 2)]


        def test_empty():
            assert pairs_summing_to([], 5) == []
        ''',
        api=["itertools.combinations"],
    ),
    _medium(
        "extract_emails",
        """Write a Python function `extract_emails(text: str) -> list[str]` that returns the email
        addresses in `text`, in order. An address is one or more letters, digits, `.`, `_`, `+` or
        `-`, then `@`, then two or more labels of letters, digits or `-` joined by dots. Example:
        `extract_emails("Mail ann@example.com today.")` returns `["ann@example.com"]`.""",
        r'''
        import re


        def extract_emails(text):
            return re.findall(r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", text)
        ''',
        r'''
        import re


        def extract_emails(text):
            return re.findall(r"\S+@\S+", text)
        ''',
        r'''
        from solution import extract_emails


        def test_two_addresses():
            text = "Contact ann@example.com or bob.smith@mail.co.uk today"
            assert extract_emails(text) == ["ann@example.com", "bob.smith@mail.co.uk"]


        def test_none():
            assert extract_emails("no emails here") == []


        def test_comma_separated():
            assert extract_emails("x@y.org,z@w.net") == ["x@y.org", "z@w.net"]


        def test_trailing_period():
            assert extract_emails("Mail me at a.b@site.io.") == ["a.b@site.io"]
        ''',
        api=["re.findall"],
    ),
    _medium(
        "run_length_encode",
        """Write a Python function `run_length_encode(s: str) -> str` that replaces each run of equal
        consecutive characters by the character followed by the run length. Example:
        `run_length_encode("aaabbc")` returns `"a3b2c1"`, and `run_length_encode("aabaa")` returns
        `"a2b1a2"`.""",
        r'''
        from itertools import groupby


        def run_length_encode(s):
            return "".join(f"{ch}{len(list(run))}" for ch, run in groupby(s))
        ''',
        r'''
        from collections import Counter


        def run_length_encode(s):
            return "".join(f"{ch}{n}" for ch, n in Counter(s).items())
        ''',
        r'''
        from solution import run_length_encode


        def test_example():
            assert run_length_encode("aaabbc") == "a3b2c1"


        def test_empty():
            assert run_length_encode("") == ""


        def test_repeated_runs():
            assert run_length_encode("aabaa") == "a2b1a2"


        def test_single():
            assert run_length_encode("z") == "z1"
        ''',
        api=["itertools.groupby"],
    ),
    _medium(
        "insert_position",
        """Write a Python function `insert_position(sorted_nums: list[int], x: int) -> int` that
        returns the leftmost index at which `x` could be inserted into the ascending list while
        keeping it sorted. Example: `insert_position([1, 3, 3, 5], 3)` returns `1`.""",
        r'''
        import bisect


        def insert_position(sorted_nums, x):
            return bisect.bisect_left(sorted_nums, x)
        ''',
        r'''
        import bisect


        def insert_position(sorted_nums, x):
            return bisect.bisect_right(sorted_nums, x)
        ''',
        r'''
        from solution import insert_position


        def test_between():
            assert insert_position([1, 3, 5], 4) == 2


        def test_leftmost_among_equal():
            assert insert_position([1, 3, 3, 5], 3) == 1


        def test_empty():
            assert insert_position([], 7) == 0


        def test_ends():
            assert insert_position([2, 4], 1) == 0
            assert insert_position([2, 4], 9) == 2
        ''',
        api=["bisect.bisect_left"],
    ),
    _medium(
        "days_between",
        """Write a Python function `days_between(d1: str, d2: str) -> int` that takes two dates as
        "YYYY-MM-DD" strings and returns the absolute number of days between them. Example:
        `days_between("2024-01-01", "2024-01-31")` returns `30`.""",
        r'''
        from datetime import date


        def days_between(d1, d2):
            return abs((date.fromisoformat(d1) - date.fromisoformat(d2)).days)
        ''',
        r'''
        def days_between(d1, d2):
            return abs(int(d1[-2:]) - int(d2[-2:]))
        ''',
        r'''
        from solution import days_between


        def test_same_month():
            assert days_between("2024-01-01", "2024-01-31") == 30


        def test_leap_february_reversed():
            assert days_between("2024-03-01", "2024-02-01") == 29


        def test_across_years():
            assert days_between("2023-12-31", "2024-01-01") == 1


        def test_same_day():
            assert days_between("2022-05-05", "2022-05-05") == 0
        ''',
        api=["datetime.date.fromisoformat"],
    ),
    _medium(
        "fib_memo",
        """Write a Python function `fib_memo(n: int) -> int` returning the n-th Fibonacci number with
        `fib_memo(0) == 0` and `fib_memo(1) == 1`. It must be fast for `n` up to 90 (cache results).
        Example: `fib_memo(10)` returns `55`.""",
        r'''
        from functools import lru_cache


        @lru_cache(maxsize=None)
        def fib_memo(n):
            if n < 2:
                return n
            return fib_memo(n - 1) + fib_memo(n - 2)
        ''',
        r'''
        from functools import lru_cache


        @lru_cache(maxsize=None)
        def fib_memo(n):
            if n < 2:
                return 1
            return fib_memo(n - 1) + fib_memo(n - 2)
        ''',
        r'''
        from solution import fib_memo

        import threading


        def call_with_deadline(fn, arg, seconds=3.0):
            # an uncached recursion would run for hours: fail fast instead of waiting for the grader
            result = []
            worker = threading.Thread(target=lambda: result.append(fn(arg)), daemon=True)
            worker.start()
            worker.join(seconds)
            return result[0] if result else "too slow"


        def test_base_cases():
            assert fib_memo(0) == 0
            assert fib_memo(1) == 1


        def test_ten():
            assert fib_memo(10) == 55


        def test_large_is_fast():
            assert call_with_deadline(fib_memo, 90) == 2880067194370816120
        ''',
        api=["functools.lru_cache"],
    ),
    _medium(
        "parse_json_keys",
        """Write a Python function `parse_json_keys(text: str) -> list[str]` that parses `text` as a
        JSON object and returns its top-level keys sorted alphabetically. Example:
        `parse_json_keys('{"b": 1, "a": 2}')` returns `["a", "b"]`.""",
        r'''
        import json


        def parse_json_keys(text):
            return sorted(json.loads(text))
        ''',
        r'''
        import json


        def parse_json_keys(text):
            return list(json.loads(text).keys())
        ''',
        r'''
        from solution import parse_json_keys


        def test_sorted():
            assert parse_json_keys('{"b": 1, "a": 2}') == ["a", "b"]


        def test_empty_object():
            assert parse_json_keys("{}") == []


        def test_nested_keys_ignored():
            assert parse_json_keys('{"z": {"y": 1}, "m": [1, 2]}') == ["m", "z"]
        ''',
        api=["json.loads"],
    ),
    _medium(
        "all_permutations",
        """Write a Python function `all_permutations(s: str) -> list[str]` that returns every distinct
        rearrangement of all characters of `s`, sorted alphabetically. Example:
        `all_permutations("aab")` returns `["aab", "aba", "baa"]`.""",
        r'''
        from itertools import permutations


        def all_permutations(s):
            return sorted({"".join(p) for p in permutations(s)})
        ''',
        r'''
        from itertools import permutations


        def all_permutations(s):
            return sorted("".join(p) for p in permutations(s))
        ''',
        r'''
        from solution import all_permutations


        def test_distinct_letters():
            assert all_permutations("abc") == ["abc", "acb", "bac", "bca", "cab", "cba"]


        def test_repeated_letter():
            assert all_permutations("aab") == ["aab", "aba", "baa"]


        def test_single():
            assert all_permutations("a") == ["a"]


        def test_empty():
            assert all_permutations("") == [""]
        ''',
        api=["itertools.permutations"],
    ),
    _medium(
        "to_point",
        """Write a Python function `to_point(pair: tuple)` that builds, from the 2-tuple `pair`, a named
        tuple whose type is named `Point` and whose fields are `x` and `y`. Example:
        `to_point((1, 2)).x` is `1` and `to_point((1, 2)).y` is `2`.""",
        r'''
        from collections import namedtuple

        Point = namedtuple("Point", ["x", "y"])


        def to_point(pair):
            return Point(*pair)
        ''',
        r'''
        from collections import namedtuple

        Point = namedtuple("Point", ["y", "x"])


        def to_point(pair):
            return Point(*pair)
        ''',
        r'''
        from solution import to_point


        def test_fields():
            p = to_point((3, 4))
            assert p.x == 3
            assert p.y == 4


        def test_is_a_tuple():
            assert to_point((3, 4)) == (3, 4)


        def test_named_point():
            p = to_point((0, -1))
            assert type(p).__name__ == "Point"
            assert p._fields == ("x", "y")
        ''',
        api=["collections.namedtuple"],
    ),
    _medium(
        "binary_strings",
        """Write a Python function `binary_strings(n: int) -> list[str]` that returns all strings of
        length `n` made of the characters "0" and "1", in lexicographic order (`[""]` when `n` is 0).
        Example: `binary_strings(2)` returns `["00", "01", "10", "11"]`.""",
        r'''
        from itertools import product


        def binary_strings(n):
            return ["".join(bits) for bits in product("01", repeat=n)]
        ''',
        r'''
        def binary_strings(n):
            return [bin(i)[2:] for i in range(2 ** n)]
        ''',
        r'''
        from solution import binary_strings


        def test_two():
            assert binary_strings(2) == ["00", "01", "10", "11"]


        def test_zero():
            assert binary_strings(0) == [""]


        def test_one():
            assert binary_strings(1) == ["0", "1"]


        def test_five():
            result = binary_strings(5)
            assert len(result) == 32
            assert result[5] == "00101"
        ''',
        api=["itertools.product"],
    ),
    _medium(
        "recent_unique",
        """Write a Python function `recent_unique(items: list, capacity: int) -> list` simulating an
        LRU cache: each item becomes the most recent; when more than `capacity` distinct items are
        held, drop the least recent. Return the held items, least recent first. Example:
        `recent_unique(["a", "b", "a", "c"], 2)` returns `["a", "c"]`.""",
        r'''
        from collections import OrderedDict


        def recent_unique(items, capacity):
            cache = OrderedDict()
            for item in items:
                cache[item] = None
                cache.move_to_end(item)
                if len(cache) > capacity:
                    cache.popitem(last=False)
            return list(cache)
        ''',
        r'''
        def recent_unique(items, capacity):
            cache = {}
            for item in items:
                cache[item] = None
                if len(cache) > capacity:
                    del cache[next(iter(cache))]
            return list(cache)
        ''',
        r'''
        from solution import recent_unique


        def test_example():
            assert recent_unique(["a", "b", "a", "c"], 2) == ["a", "c"]


        def test_under_capacity():
            assert recent_unique([1, 2, 3], 5) == [1, 2, 3]


        def test_empty():
            assert recent_unique([], 3) == []


        def test_reuse_refreshes():
            assert recent_unique([1, 2, 3, 1, 4], 3) == [3, 1, 4]


        def test_capacity_one():
            assert recent_unique([1, 1, 1], 1) == [1]
        ''',
        api=["collections.OrderedDict.move_to_end", "collections.OrderedDict.popitem"],
    ),
    _medium(
        "add_days",
        """Write a Python function `add_days(day: str, n: int) -> str` that takes a "YYYY-MM-DD" date
        and returns the date `n` days later (earlier if `n` is negative) in the same format. Example:
        `add_days("2024-02-28", 1)` returns `"2024-02-29"`.""",
        r'''
        from datetime import date, timedelta


        def add_days(day, n):
            return (date.fromisoformat(day) + timedelta(days=n)).isoformat()
        ''',
        r'''
        from datetime import date


        def add_days(day, n):
            d = date.fromisoformat(day)
            return d.replace(day=d.day + n).isoformat()
        ''',
        r'''
        from solution import add_days


        def test_leap_day():
            assert add_days("2024-02-28", 1) == "2024-02-29"


        def test_new_year():
            assert add_days("2024-12-31", 1) == "2025-01-01"


        def test_backwards():
            assert add_days("2024-03-01", -1) == "2024-02-29"


        def test_zero():
            assert add_days("2023-06-15", 0) == "2023-06-15"
        ''',
        api=["datetime.timedelta", "datetime.date.fromisoformat"],
    ),
    # ---- medium, plain Python ----
    _medium(
        "fizzbuzz",
        """Write a Python function `fizzbuzz(n: int) -> list[str]` that returns, for each number from
        1 to `n`, "FizzBuzz" if it is divisible by 15, "Fizz" if by 3, "Buzz" if by 5, otherwise the
        number as a string. Example: `fizzbuzz(5)` returns `["1", "2", "Fizz", "4", "Buzz"]`.""",
        r'''
        def fizzbuzz(n):
            out = []
            for i in range(1, n + 1):
                if i % 15 == 0:
                    out.append("FizzBuzz")
                elif i % 3 == 0:
                    out.append("Fizz")
                elif i % 5 == 0:
                    out.append("Buzz")
                else:
                    out.append(str(i))
            return out
        ''',
        r'''
        def fizzbuzz(n):
            out = []
            for i in range(1, n + 1):
                if i % 3 == 0:
                    out.append("Fizz")
                elif i % 5 == 0:
                    out.append("Buzz")
                elif i % 15 == 0:
                    out.append("FizzBuzz")
                else:
                    out.append(str(i))
            return out
        ''',
        r'''
        from solution import fizzbuzz


        def test_five():
            assert fizzbuzz(5) == ["1", "2", "Fizz", "4", "Buzz"]


        def test_fifteen():
            assert fizzbuzz(15)[-1] == "FizzBuzz"


        def test_zero():
            assert fizzbuzz(0) == []


        def test_length():
            assert len(fizzbuzz(30)) == 30
        ''',
    ),
    _medium(
        "is_prime",
        """Write a Python function `is_prime(n: int) -> bool` that returns `True` if `n` is a prime
        number and `False` otherwise (numbers below 2 are not prime). Example: `is_prime(17)` returns
        `True`, `is_prime(9)` returns `False`.""",
        r'''
        def is_prime(n):
            if n < 2:
                return False
            i = 2
            while i * i <= n:
                if n % i == 0:
                    return False
                i += 1
            return True
        ''',
        r'''
        def is_prime(n):
            if n < 2:
                return False
            for i in range(2, int(n ** 0.5)):
                if n % i == 0:
                    return False
            return True
        ''',
        r'''
        from solution import is_prime


        def test_small_primes():
            assert is_prime(2) is True
            assert is_prime(17) is True


        def test_below_two():
            assert is_prime(1) is False
            assert is_prime(0) is False


        def test_squares_of_primes():
            assert is_prime(9) is False
            assert is_prime(25) is False


        def test_larger_prime():
            assert is_prime(97) is True
        ''',
    ),
    _medium(
        "second_largest",
        """Write a Python function `second_largest(nums: list[int])` that returns the second largest
        distinct value in the list, or `None` if there are fewer than two distinct values. Example:
        `second_largest([3, 1, 4, 4])` returns `3`.""",
        r'''
        def second_largest(nums):
            distinct = sorted(set(nums))
            return distinct[-2] if len(distinct) >= 2 else None
        ''',
        r'''
        def second_largest(nums):
            return sorted(nums)[-2] if len(nums) >= 2 else None
        ''',
        r'''
        from solution import second_largest


        def test_duplicates_of_max():
            assert second_largest([3, 1, 4, 4]) == 3


        def test_all_equal():
            assert second_largest([5, 5]) is None


        def test_too_short():
            assert second_largest([1]) is None
            assert second_largest([]) is None


        def test_negatives():
            assert second_largest([-2, -1]) == -2
        ''',
    ),
    _medium(
        "merge_sorted",
        """Write a Python function `merge_sorted(a: list[int], b: list[int]) -> list[int]` that merges
        two ascending lists into one ascending list, keeping duplicates. Example:
        `merge_sorted([1, 3, 5], [2, 4])` returns `[1, 2, 3, 4, 5]`.""",
        r'''
        def merge_sorted(a, b):
            out = []
            i = j = 0
            while i < len(a) and j < len(b):
                if a[i] <= b[j]:
                    out.append(a[i])
                    i += 1
                else:
                    out.append(b[j])
                    j += 1
            return out + a[i:] + b[j:]
        ''',
        r'''
        def merge_sorted(a, b):
            return sorted(set(a + b))
        ''',
        r'''
        from solution import merge_sorted


        def test_interleaved():
            assert merge_sorted([1, 3, 5], [2, 4]) == [1, 2, 3, 4, 5]


        def test_one_empty():
            assert merge_sorted([], [1]) == [1]


        def test_keeps_duplicates():
            assert merge_sorted([1, 1], [1]) == [1, 1, 1]


        def test_both_empty():
            assert merge_sorted([], []) == []
        ''',
    ),
    _medium(
        "remove_duplicates",
        """Write a Python function `remove_duplicates(items: list) -> list` that returns the items
        with later repeats removed, keeping the order of first occurrences. Example:
        `remove_duplicates([3, 1, 3, 2, 1])` returns `[3, 1, 2]`.""",
        r'''
        def remove_duplicates(items):
            seen = set()
            out = []
            for item in items:
                if item not in seen:
                    seen.add(item)
                    out.append(item)
            return out
        ''',
        r'''
        def remove_duplicates(items):
            return list(set(items))
        ''',
        r'''
        from solution import remove_duplicates


        def test_keeps_first_order():
            assert remove_duplicates([3, 1, 3, 2, 1]) == [3, 1, 2]


        def test_empty():
            assert remove_duplicates([]) == []


        def test_strings():
            assert remove_duplicates(["b", "a", "b"]) == ["b", "a"]


        def test_all_same():
            assert remove_duplicates([1, 1, 1]) == [1]
        ''',
    ),
    _medium(
        "balanced_brackets",
        """Write a Python function `balanced_brackets(s: str) -> bool` that returns `True` if the
        brackets `()`, `[]` and `{}` in `s` are correctly matched and nested; other characters are
        ignored. Example: `balanced_brackets("([]{})")` returns `True`, `balanced_brackets("([)]")`
        returns `False`.""",
        r'''
        def balanced_brackets(s):
            pairs = {")": "(", "]": "[", "}": "{"}
            stack = []
            for ch in s:
                if ch in "([{":
                    stack.append(ch)
                elif ch in pairs:
                    if not stack or stack.pop() != pairs[ch]:
                        return False
            return not stack
        ''',
        r'''
        def balanced_brackets(s):
            return all(s.count(o) == s.count(c) for o, c in ("()", "[]", "{}"))
        ''',
        r'''
        from solution import balanced_brackets


        def test_nested():
            assert balanced_brackets("([]{})") is True


        def test_crossed():
            assert balanced_brackets("([)]") is False


        def test_empty():
            assert balanced_brackets("") is True


        def test_unclosed():
            assert balanced_brackets("((") is False


        def test_other_characters():
            assert balanced_brackets("a(b)c") is True


        def test_wrong_order():
            assert balanced_brackets(")(") is False
        ''',
    ),
    _medium(
        "caesar_shift",
        """Write a Python function `caesar_shift(s: str, k: int) -> str` that shifts every letter of
        `s` by `k` places in the alphabet, wrapping around and keeping its case; other characters
        stay. `k` may be negative or larger than 26. Example: `caesar_shift("xyz", 3)` returns
        `"abc"`.""",
        r'''
        def caesar_shift(s, k):
            out = []
            for ch in s:
                if ch.islower():
                    out.append(chr((ord(ch) - ord("a") + k) % 26 + ord("a")))
                elif ch.isupper():
                    out.append(chr((ord(ch) - ord("A") + k) % 26 + ord("A")))
                else:
                    out.append(ch)
            return "".join(out)
        ''',
        r'''
        def caesar_shift(s, k):
            return "".join(chr(ord(ch) + k) if ch.isalpha() else ch for ch in s)
        ''',
        r'''
        from solution import caesar_shift


        def test_simple():
            assert caesar_shift("abc", 1) == "bcd"


        def test_wraps():
            assert caesar_shift("xyz", 3) == "abc"


        def test_case_and_punctuation():
            assert caesar_shift("Hello, World!", 5) == "Mjqqt, Btwqi!"


        def test_negative():
            assert caesar_shift("abc", -1) == "zab"


        def test_large_shift():
            assert caesar_shift("abc", 27) == "bcd"
        ''',
    ),
    _medium(
        "chunk_list",
        """Write a Python function `chunk_list(items: list, size: int) -> list[list]` that splits the
        list into consecutive chunks of length `size` (the last chunk may be shorter). Example:
        `chunk_list([1, 2, 3, 4, 5], 2)` returns `[[1, 2], [3, 4], [5]]`.""",
        r'''
        def chunk_list(items, size):
            return [items[i:i + size] for i in range(0, len(items), size)]
        ''',
        r'''
        def chunk_list(items, size):
            return [items[i:i + size] for i in range(0, len(items) - size + 1, size)]
        ''',
        r'''
        from solution import chunk_list


        def test_uneven():
            assert chunk_list([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


        def test_empty():
            assert chunk_list([], 3) == []


        def test_exact():
            assert chunk_list([1, 2, 3], 3) == [[1, 2, 3]]


        def test_size_larger_than_list():
            assert chunk_list([1, 2], 5) == [[1, 2]]
        ''',
    ),
]
