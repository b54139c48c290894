"""Eval split: held-out problems, easy and medium, about half built on a standard-library API."""
from __future__ import annotations

from ._schema import problem

SPLIT = "eval"


def _p(name, difficulty, question, solution, wrong, test, api=()):
    return problem(name, SPLIT, difficulty, question, solution, wrong, test, api)


PROBLEMS = [
    # ---- easy, plain Python ----
    _p(
        "cube",
        "easy",
        """Write a Python function `cube(n: int) -> int` that returns `n` raised to the third power.
        Example: `cube(2)` returns `8`.""",
        r'''
        def cube(n):
            return n ** 3
        ''',
        r'''
        def cube(n):
            return n * 3
        ''',
        r'''
        from solution import cube


        def test_positive():
            assert cube(2) == 8


        def test_negative():
            assert cube(-3) == -27


        def test_zero_and_one():
            assert cube(0) == 0
            assert cube(1) == 1
        ''',
    ),
    _p(
        "count_uppercase",
        "easy",
        """Write a Python function `count_uppercase(s: str) -> int` that returns how many upper-case
        letters are in `s`. Example: `count_uppercase("Hello World")` returns `2`.""",
        r'''
        def count_uppercase(s):
            return sum(1 for ch in s if ch.isupper())
        ''',
        r'''
        def count_uppercase(s):
            return sum(1 for ch in s if not ch.islower())
        ''',
        r'''
        from solution import count_uppercase


        def test_two_words():
            assert count_uppercase("Hello World") == 2


        def test_empty():
            assert count_uppercase("") == 0


        def test_block():
            assert count_uppercase("ABC def") == 3


        def test_digits():
            assert count_uppercase("123") == 0
        ''',
    ),
    _p(
        "is_odd",
        "easy",
        """Write a Python function `is_odd(n: int) -> bool` that returns `True` if the integer `n`
        (possibly negative) is odd. Example: `is_odd(3)` returns `True`, `is_odd(4)` returns
        `False`.""",
        r'''
        def is_odd(n):
            return n % 2 != 0
        ''',
        r'''
        def is_odd(n):
            return n > 0 and n % 2 == 1
        ''',
        r'''
        from solution import is_odd


        def test_odd():
            assert is_odd(3) is True


        def test_even():
            assert is_odd(4) is False


        def test_negative_odd():
            assert is_odd(-3) is True


        def test_zero():
            assert is_odd(0) is False
        ''',
    ),
    _p(
        "sum_of_squares",
        "easy",
        """Write a Python function `sum_of_squares(nums: list[int]) -> int` that returns the sum of
        the squares of the numbers. Example: `sum_of_squares([1, 2, 3])` returns `14`.""",
        r'''
        def sum_of_squares(nums):
            return sum(n * n for n in nums)
        ''',
        r'''
        def sum_of_squares(nums):
            return sum(nums) ** 2
        ''',
        r'''
        from solution import sum_of_squares


        def test_basic():
            assert sum_of_squares([1, 2, 3]) == 14


        def test_empty():
            assert sum_of_squares([]) == 0


        def test_negative():
            assert sum_of_squares([-2]) == 4


        def test_mixed():
            assert sum_of_squares([-1, 1]) == 2
        ''',
    ),
    _p(
        "count_words",
        "easy",
        """Write a Python function `count_words(s: str) -> int` that returns the number of words in
        `s`, where words are separated by any amount of whitespace. Example:
        `count_words("hello   world")` returns `2`.""",
        r'''
        def count_words(s):
            return len(s.split())
        ''',
        r'''
        def count_words(s):
            return s.count(" ") + 1
        ''',
        r'''
        from solution import count_words


        def test_two():
            assert count_words("hello world") == 2


        def test_empty():
            assert count_words("") == 0


        def test_extra_spaces():
            assert count_words("  many   spaces here ") == 3


        def test_one():
            assert count_words("one") == 1
        ''',
    ),
    _p(
        "max_in_list",
        "easy",
        """Write a Python function `max_in_list(nums: list[int]) -> int` that returns the largest
        number in a non-empty list. Example: `max_in_list([1, 7, 3])` returns `7`.""",
        r'''
        def max_in_list(nums):
            return max(nums)
        ''',
        r'''
        def max_in_list(nums):
            best = 0
            for n in nums:
                if n > best:
                    best = n
            return best
        ''',
        r'''
        from solution import max_in_list


        def test_basic():
            assert max_in_list([1, 7, 3]) == 7


        def test_all_negative():
            assert max_in_list([-5, -2, -9]) == -2


        def test_single():
            assert max_in_list([4]) == 4
        ''',
    ),
    _p(
        "contains_digit",
        "easy",
        """Write a Python function `contains_digit(s: str) -> bool` that returns `True` if at least
        one character of `s` is a digit 0-9. Example: `contains_digit("abc1")` returns `True`.""",
        r'''
        def contains_digit(s):
            return any(ch in "0123456789" for ch in s)
        ''',
        r'''
        def contains_digit(s):
            return s.isdigit()
        ''',
        r'''
        from solution import contains_digit


        def test_mixed():
            assert contains_digit("abc1") is True


        def test_letters_only():
            assert contains_digit("abc") is False


        def test_empty():
            assert contains_digit("") is False


        def test_all_digits():
            assert contains_digit("42") is True
        ''',
    ),
    # ---- easy, a standard-library function does the work ----
    _p(
        "gcd_list",
        "easy",
        """Write a Python function `gcd_list(nums: list[int]) -> int` that returns the greatest common
        divisor of all the positive integers in a non-empty list. Example: `gcd_list([12, 18, 24])`
        returns `6`.""",
        r'''
        import math
        from functools import reduce


        def gcd_list(nums):
            return reduce(math.gcd, nums)
        ''',
        r'''
        import math


        def gcd_list(nums):
            return math.gcd(nums[0], nums[-1])
        ''',
        r'''
        from solution import gcd_list


        def test_three():
            assert gcd_list([12, 18, 24]) == 6


        def test_single():
            assert gcd_list([7]) == 7


        def test_coprime():
            assert gcd_list([5, 10, 3]) == 1


        def test_middle_matters():
            assert gcd_list([100, 75, 50]) == 25
        ''',
        api=["functools.reduce", "math.gcd"],
    ),
    _p(
        "count_letters",
        "easy",
        """Write a Python function `count_letters(s: str) -> dict[str, int]` that counts the letters
        of `s`, ignoring case and skipping anything that is not a letter; keys are lower-case.
        Example: `count_letters("Aab!")` returns `{"a": 2, "b": 1}`.""",
        r'''
        from collections import Counter


        def count_letters(s):
            return dict(Counter(ch for ch in s.lower() if ch.isalpha()))
        ''',
        r'''
        from collections import Counter


        def count_letters(s):
            return dict(Counter(ch for ch in s if ch.isalpha()))
        ''',
        r'''
        from solution import count_letters


        def test_mixed_case():
            assert count_letters("Aab") == {"a": 2, "b": 1}


        def test_empty():
            assert count_letters("") == {}


        def test_skips_non_letters():
            assert count_letters("a-b a!") == {"a": 2, "b": 1}


        def test_upper_only():
            assert count_letters("ABC") == {"a": 1, "b": 1, "c": 1}
        ''',
        api=["collections.Counter"],
    ),
    _p(
        "digits_only",
        "easy",
        """Write a Python function `digits_only(s: str) -> str` that returns the digits of `s`, in
        order, with every other character removed. Example: `digits_only("a1b2c3")` returns
        `"123"`.""",
        r'''
        import re


        def digits_only(s):
            return re.sub(r"\D", "", s)
        ''',
        r'''
        import re


        def digits_only(s):
            return re.sub(r"\d", "", s)
        ''',
        r'''
        from solution import digits_only


        def test_mixed():
            assert digits_only("a1b2c3") == "123"


        def test_no_digits():
            assert digits_only("none") == ""


        def test_date():
            assert digits_only("2024-01-05") == "20240105"
        ''',
        api=["re.sub"],
    ),
    _p(
        "is_perfect_square",
        "easy",
        """Write a Python function `is_perfect_square(n: int) -> bool` that returns `True` if the
        non-negative integer `n` is the square of an integer. It must be exact for very large `n`.
        Example: `is_perfect_square(16)` returns `True`, `is_perfect_square(15)` returns `False`.""",
        r'''
        import math


        def is_perfect_square(n):
            r = math.isqrt(n)
            return r * r == n
        ''',
        r'''
        def is_perfect_square(n):
            return round(n ** 0.5) ** 2 == n
        ''',
        r'''
        from solution import is_perfect_square


        def test_square():
            assert is_perfect_square(16) is True


        def test_not_square():
            assert is_perfect_square(15) is False


        def test_zero_and_one():
            assert is_perfect_square(0) is True
            assert is_perfect_square(1) is True


        def test_huge_square():
            assert is_perfect_square((10 ** 17 + 1) ** 2) is True
            assert is_perfect_square((10 ** 17 + 1) ** 2 + 1) is False
        ''',
        api=["math.isqrt"],
    ),
    _p(
        "capitalize_words",
        "easy",
        """Write a Python function `capitalize_words(s: str) -> str` that splits `s` on whitespace,
        makes each word's first character upper case and the rest lower case, and joins the words
        with single spaces. Example: `capitalize_words("  mIXed   CASE ")` returns `"Mixed Case"`.""",
        r'''
        import string


        def capitalize_words(s):
            return string.capwords(s)
        ''',
        r'''
        def capitalize_words(s):
            return s.title()
        ''',
        r'''
        from solution import capitalize_words


        def test_simple():
            assert capitalize_words("hello world") == "Hello World"


        def test_spacing_and_case():
            assert capitalize_words("  mIXed   CASE ") == "Mixed Case"


        def test_apostrophe():
            assert capitalize_words("don't stop") == "Don't Stop"


        def test_empty():
            assert capitalize_words("") == ""
        ''',
        api=["string.capwords"],
    ),
    # ---- medium, a standard-library API does the work ----
    _p(
        "first_unique_char",
        "medium",
        """Write a Python function `first_unique_char(s: str) -> int` that returns the index of the
        first character occurring exactly once in `s`, or -1 if there is none. Example:
        `first_unique_char("loveleetcode")` returns `2`.""",
        r'''
        from collections import Counter


        def first_unique_char(s):
            counts = Counter(s)
            for i, ch in enumerate(s):
                if counts[ch] == 1:
                    return i
            return -1
        ''',
        r'''
        def first_unique_char(s):
            for i, ch in enumerate(s):
                if ch not in s[i + 1:]:
                    return i
            return -1
        ''',
        r'''
        from solution import first_unique_char


        def test_first():
            assert first_unique_char("leetcode") == 0


        def test_middle():
            assert first_unique_char("loveleetcode") == 2


        def test_none():
            assert first_unique_char("aabb") == -1
            assert first_unique_char("") == -1


        def test_last():
            assert first_unique_char("aab") == 2
        ''',
        api=["collections.Counter"],
    ),
    _p(
        "merge_k_sorted",
        "medium",
        """Write a Python function `merge_k_sorted(lists: list[list[int]]) -> list[int]` that merges
        any number of ascending lists into one ascending list, keeping duplicates. Example:
        `merge_k_sorted([[1, 4], [2, 3], [0]])` returns `[0, 1, 2, 3, 4]`.""",
        r'''
        import heapq


        def merge_k_sorted(lists):
            return list(heapq.merge(*lists))
        ''',
        r'''
        def merge_k_sorted(lists):
            return [x for lst in lists for x in lst]
        ''',
        r'''
        from solution import merge_k_sorted


        def test_three_lists():
            assert merge_k_sorted([[1, 4], [2, 3], [0]]) == [0, 1, 2, 3, 4]


        def test_no_lists():
            assert merge_k_sorted([]) == []


        def test_empty_inner():
            assert merge_k_sorted([[], [1]]) == [1]


        def test_duplicates():
            assert merge_k_sorted([[1, 1], [1]]) == [1, 1, 1]
        ''',
        api=["heapq.merge"],
    ),
    _p(
        "count_in_range",
        "medium",
        """Write a Python function `count_in_range(sorted_nums: list[int], lo: int, hi: int) -> int`
        that returns how many values `v` of the ascending list satisfy `lo <= v <= hi`, using binary
        search. Example: `count_in_range([1, 2, 2, 3, 5], 2, 3)` returns `3`.""",
        r'''
        import bisect


        def count_in_range(sorted_nums, lo, hi):
            return max(0, bisect.bisect_right(sorted_nums, hi) - bisect.bisect_left(sorted_nums, lo))
        ''',
        r'''
        import bisect


        def count_in_range(sorted_nums, lo, hi):
            return max(0, bisect.bisect_left(sorted_nums, hi) - bisect.bisect_left(sorted_nums, lo))
        ''',
        r'''
        from solution import count_in_range


        def test_inclusive_bounds():
            assert count_in_range([1, 2, 2, 3, 5], 2, 3) == 3


        def test_empty():
            assert count_in_range([], 0, 10) == 0


        def test_gap():
            assert count_in_range([1, 5, 9], 6, 8) == 0


        def test_all_equal():
            assert count_in_range([4, 4, 4], 4, 4) == 3
        ''',
        api=["bisect.bisect_left", "bisect.bisect_right"],
    ),
    _p(
        "weekday_name",
        "medium",
        """Write a Python function `weekday_name(day: str) -> str` that takes a "YYYY-MM-DD" date and
        returns its English weekday name, such as "Monday". Example: `weekday_name("2024-01-01")`
        returns `"Monday"`.""",
        r'''
        from datetime import date

        NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


        def weekday_name(day):
            return NAMES[date.fromisoformat(day).weekday()]
        ''',
        r'''
        from datetime import date

        NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


        def weekday_name(day):
            return NAMES[date.fromisoformat(day).isoweekday() % 7]
        ''',
        r'''
        from solution import weekday_name


        def test_new_year_2024():
            assert weekday_name("2024-01-01") == "Monday"


        def test_leap_day_2000():
            assert weekday_name("2000-02-29") == "Tuesday"


        def test_end_of_1999():
            assert weekday_name("1999-12-31") == "Friday"


        def test_sunday():
            assert weekday_name("2023-10-01") == "Sunday"
        ''',
        api=["datetime.date.fromisoformat", "datetime.date.weekday"],
    ),
    _p(
        "subsets_of_size",
        "medium",
        """Write a Python function `subsets_of_size(items: list, k: int) -> list[tuple]` that returns
        every choice of `k` items as a tuple, keeping the items' original order, in lexicographic
        order of positions. Example: `subsets_of_size([1, 2, 3], 2)` returns
        `[(1, 2), (1, 3), (2, 3)]`.""",
        r'''
        from itertools import combinations


        def subsets_of_size(items, k):
            return list(combinations(items, k))
        ''',
        r'''
        from itertools import permutations


        def subsets_of_size(items, k):
            return list(permutations(items, k))
        ''',
        r'''
        from solution import subsets_of_size


        def test_pairs():
            assert subsets_of_size([1, 2, 3], 2) == [(1, 2), (1, 3), (2, 3)]


        def test_empty_choice():
            assert subsets_of_size([1, 2], 0) == [()]


        def test_too_many():
            assert subsets_of_size([1], 2) == []


        def test_all():
            assert subsets_of_size(["a", "b", "c"], 3) == [("a", "b", "c")]
        ''',
        api=["itertools.combinations"],
    ),
    _p(
        "grid_coordinates",
        "medium",
        """Write a Python function `grid_coordinates(rows: int, cols: int) -> list[tuple[int, int]]`
        that returns every `(row, col)` pair of a grid in row-major order. Example:
        `grid_coordinates(2, 2)` returns `[(0, 0), (0, 1), (1, 0), (1, 1)]`.""",
        r'''
        from itertools import product


        def grid_coordinates(rows, cols):
            return list(product(range(rows), range(cols)))
        ''',
        r'''
        def grid_coordinates(rows, cols):
            return [(r, c) for c in range(cols) for r in range(rows)]
        ''',
        r'''
        from solution import grid_coordinates


        def test_two_by_three():
            expected = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
            assert grid_coordinates(2, 3) == expected


        def test_no_rows():
            assert grid_coordinates(0, 5) == []


        def test_one_cell():
            assert grid_coordinates(1, 1) == [(0, 0)]


        def test_size():
            assert len(grid_coordinates(4, 5)) == 20
        ''',
        api=["itertools.product"],
    ),
    _p(
        "climb_stairs",
        "medium",
        """Write a Python function `climb_stairs(n: int) -> int` that returns the number of distinct
        ways to climb `n` steps taking 1 or 2 steps at a time (`climb_stairs(0) == 1`). It must be
        fast for `n` up to 80 (cache results). Example: `climb_stairs(5)` returns `8`.""",
        r'''
        from functools import lru_cache


        @lru_cache(maxsize=None)
        def climb_stairs(n):
            if n <= 1:
                return 1
            return climb_stairs(n - 1) + climb_stairs(n - 2)
        ''',
        r'''
        from functools import lru_cache


        @lru_cache(maxsize=None)
        def climb_stairs(n):
            if n <= 1:
                return n
            return climb_stairs(n - 1) + climb_stairs(n - 2)
        ''',
        r'''
        from solution import climb_stairs

        import threading


        def call_with_deadline(fn, arg, seconds=3.0):
            # an uncached recursion would run for hours: fail fast instead of waiting for the grader
            result = []
            worker = threading.Thread(target=lambda: result.append(fn(arg)), daemon=True)
            worker.start()
            worker.join(seconds)
            return result[0] if result else "too slow"


        def test_base_cases():
            assert climb_stairs(0) == 1
            assert climb_stairs(1) == 1


        def test_small():
            assert climb_stairs(2) == 2
            assert climb_stairs(5) == 8


        def test_large_is_fast():
            assert call_with_deadline(climb_stairs, 80) == 37889062373143906
        ''',
        api=["functools.lru_cache"],
    ),
    _p(
        "to_sorted_json",
        "medium",
        """Write a Python function `to_sorted_json(obj: dict) -> str` that serialises `obj` to JSON
        with keys sorted at every level and no spaces after `,` or `:`. Example:
        `to_sorted_json({"b": 1, "a": [1, 2]})` returns `'{"a":[1,2],"b":1}'`.""",
        r'''
        import json


        def to_sorted_json(obj):
            return json.dumps(obj, sort_keys=True, separators=(",", ":"))
        ''',
        r'''
        import json


        def to_sorted_json(obj):
            return json.dumps(obj, sort_keys=True)
        ''',
        r'''
        from solution import to_sorted_json


        def test_example():
            assert to_sorted_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'


        def test_empty():
            assert to_sorted_json({}) == "{}"


        def test_nested_literals():
            assert to_sorted_json({"x": {"d": None, "c": True}}) == '{"x":{"c":true,"d":null}}'
        ''',
        api=["json.dumps"],
    ),
    _p(
        "last_n_lines",
        "medium",
        """Write a Python function `last_n_lines(text: str, n: int) -> list[str]` that splits `text`
        on "\\n" and returns its last `n` lines (all of them if there are fewer; none if `n` is 0).
        Example: `last_n_lines("a\\nb\\nc", 2)` returns `["b", "c"]`.""",
        r'''
        from collections import deque


        def last_n_lines(text, n):
            return list(deque(text.split("\n"), maxlen=n))
        ''',
        r'''
        def last_n_lines(text, n):
            return text.split("\n")[-n:]
        ''',
        r'''
        from solution import last_n_lines


        def test_last_two():
            assert last_n_lines("a\nb\nc", 2) == ["b", "c"]


        def test_fewer_lines():
            assert last_n_lines("a\nb", 5) == ["a", "b"]


        def test_zero():
            assert last_n_lines("a\nb\nc", 0) == []


        def test_single_line():
            assert last_n_lines("solo", 1) == ["solo"]
        ''',
        api=["collections.deque"],
    ),
    _p(
        "find_hashtags",
        "medium",
        """Write a Python function `find_hashtags(text: str) -> list[str]` that returns, in order, the
        hashtags in `text` without the `#`: a hashtag is `#` followed by one or more letters, digits
        or underscores. Example: `find_hashtags("I love #python and #code_golf!")` returns
        `["python", "code_golf"]`.""",
        r'''
        import re


        def find_hashtags(text):
            return re.findall(r"#(\w+)", text)
        ''',
        r'''
        def find_hashtags(text):
            return [word[1:] for word in text.split() if word.startswith("#")]
        ''',
        r'''
        from solution import find_hashtags


        def test_example():
            assert find_hashtags("I love #python and #code_golf!") == ["python", "code_golf"]


        def test_none():
            assert find_hashtags("no tags") == []


        def test_adjacent():
            assert find_hashtags("#a#b") == ["a", "b"]
        ''',
        api=["re.findall"],
    ),
    # ---- medium, plain Python ----
    _p(
        "rotate_list",
        "medium",
        """Write a Python function `rotate_list(items: list, k: int) -> list` that returns the list
        rotated to the right by `k` places (`k` may exceed the length). Example:
        `rotate_list([1, 2, 3, 4, 5], 2)` returns `[4, 5, 1, 2, 3]`.""",
        r'''
        def rotate_list(items, k):
            if not items:
                return []
            k %= len(items)
            return items[-k:] + items[:-k] if k else list(items)
        ''',
        r'''
        def rotate_list(items, k):
            if not items:
                return []
            k %= len(items)
            return items[k:] + items[:k]
        ''',
        r'''
        from solution import rotate_list


        def test_example():
            assert rotate_list([1, 2, 3, 4, 5], 2) == [4, 5, 1, 2, 3]


        def test_empty():
            assert rotate_list([], 3) == []


        def test_full_turn():
            assert rotate_list([1, 2, 3], 3) == [1, 2, 3]


        def test_more_than_length():
            assert rotate_list([1, 2, 3], 4) == [3, 1, 2]
        ''',
    ),
    _p(
        "longest_word",
        "medium",
        """Write a Python function `longest_word(s: str) -> str` that returns the longest
        whitespace-separated word of `s`; on a tie return the earliest one, and return `""` if there
        are no words. Example: `longest_word("the quick brown fox")` returns `"quick"`.""",
        r'''
        def longest_word(s):
            best = ""
            for word in s.split():
                if len(word) > len(best):
                    best = word
            return best
        ''',
        r'''
        def longest_word(s):
            words = sorted(s.split(), key=len)
            return words[-1] if words else ""
        ''',
        r'''
        from solution import longest_word


        def test_tie_goes_to_first():
            assert longest_word("the quick brown fox") == "quick"


        def test_empty():
            assert longest_word("") == ""


        def test_last_is_longest():
            assert longest_word("a bb ccc") == "ccc"
        ''',
    ),
    _p(
        "matrix_transpose",
        "medium",
        """Write a Python function `matrix_transpose(m: list[list[int]]) -> list[list[int]]` that
        returns the transpose of a rectangular matrix given as a list of rows (`[]` for `[]`).
        Example: `matrix_transpose([[1, 2, 3], [4, 5, 6]])` returns `[[1, 4], [2, 5], [3, 6]]`.""",
        r'''
        def matrix_transpose(m):
            return [list(column) for column in zip(*m)]
        ''',
        r'''
        def matrix_transpose(m):
            return [[m[i][j] for i in range(len(m))] for j in range(len(m))]
        ''',
        r'''
        from solution import matrix_transpose


        def test_rectangular():
            assert matrix_transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]


        def test_empty():
            assert matrix_transpose([]) == []


        def test_one_cell():
            assert matrix_transpose([[1]]) == [[1]]


        def test_square():
            assert matrix_transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]
        ''',
    ),
    _p(
        "roman_to_int",
        "medium",
        """Write a Python function `roman_to_int(s: str) -> int` that converts a valid Roman numeral
        (I, V, X, L, C, D, M, with subtractive pairs such as IV and CM) to an integer. Example:
        `roman_to_int("MCMXCIV")` returns `1994`.""",
        r'''
        VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


        def roman_to_int(s):
            total = 0
            for i, ch in enumerate(s):
                value = VALUES[ch]
                if i + 1 < len(s) and VALUES[s[i + 1]] > value:
                    total -= value
                else:
                    total += value
            return total
        ''',
        r'''
        VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


        def roman_to_int(s):
            return sum(VALUES[ch] for ch in s)
        ''',
        r'''
        from solution import roman_to_int


        def test_additive():
            assert roman_to_int("III") == 3
            assert roman_to_int("LVIII") == 58


        def test_subtractive():
            assert roman_to_int("IV") == 4


        def test_mixed():
            assert roman_to_int("MCMXCIV") == 1994
        ''',
    ),
    _p(
        "is_anagram",
        "medium",
        """Write a Python function `is_anagram(a: str, b: str) -> bool` that returns `True` if `b` is
        a rearrangement of exactly the same characters as `a` (same counts, case-sensitive).
        Example: `is_anagram("listen", "silent")` returns `True`.""",
        r'''
        def is_anagram(a, b):
            return sorted(a) == sorted(b)
        ''',
        r'''
        def is_anagram(a, b):
            return set(a) == set(b)
        ''',
        r'''
        from solution import is_anagram


        def test_anagram():
            assert is_anagram("listen", "silent") is True


        def test_counts_matter():
            assert is_anagram("aab", "abb") is False


        def test_empty():
            assert is_anagram("", "") is True


        def test_different_lengths():
            assert is_anagram("abc", "abcd") is False
        ''',
    ),
    _p(
        "missing_number",
        "medium",
        """Write a Python function `missing_number(nums: list[int]) -> int`: `nums` holds `n` distinct
        numbers taken from 0 to `n` inclusive, so exactly one is missing; return it. Example:
        `missing_number([3, 0, 1])` returns `2`.""",
        r'''
        def missing_number(nums):
            n = len(nums)
            return n * (n + 1) // 2 - sum(nums)
        ''',
        r'''
        def missing_number(nums):
            n = len(nums)
            return n * (n - 1) // 2 - sum(nums)
        ''',
        r'''
        from solution import missing_number


        def test_example():
            assert missing_number([3, 0, 1]) == 2


        def test_missing_last():
            assert missing_number([0]) == 1


        def test_missing_zero():
            assert missing_number([1]) == 0


        def test_longer():
            assert missing_number([9, 6, 4, 2, 3, 5, 7, 0, 1]) == 8
        ''',
    ),
]
