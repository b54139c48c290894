"""Train split, easy problems: one-liners a very small model can sometimes solve."""
from __future__ import annotations

from ._schema import problem

SPLIT = "train"


def _easy(name, question, solution, wrong, test, api=()):
    return problem(name, SPLIT, "easy", question, solution, wrong, test, api)


PROBLEMS = [
    _easy(
        "add_numbers",
        """Write a Python function `add_numbers(a: int, b: int) -> int` that returns the sum of
        `a` and `b`. Example: `add_numbers(2, 3)` returns `5`.""",
        r'''
        def add_numbers(a, b):
            return a + b
        ''',
        r'''
        def add_numbers(a, b):
            return a - b
        ''',
        r'''
        from solution import add_numbers


        def test_positive():
            assert add_numbers(2, 3) == 5


        def test_negative():
            assert add_numbers(-4, 1) == -3


        def test_zero():
            assert add_numbers(0, 0) == 0
        ''',
    ),
    _easy(
        "sum_list",
        """Write a Python function `sum_list(nums: list[int]) -> int` that returns the sum of all
        numbers in the list (0 for an empty list). Example: `sum_list([1, 2, 3])` returns `6`.""",
        r'''
        def sum_list(nums):
            return sum(nums)
        ''',
        r'''
        def sum_list(nums):
            return sum(nums[1:])
        ''',
        r'''
        from solution import sum_list


        def test_basic():
            assert sum_list([1, 2, 3]) == 6


        def test_empty():
            assert sum_list([]) == 0


        def test_mixed_signs():
            assert sum_list([-1, 5, -4]) == 0


        def test_single():
            assert sum_list([10]) == 10
        ''',
    ),
    _easy(
        "reverse_string",
        """Write a Python function `reverse_string(s: str) -> str` that returns `s` reversed.
        Example: `reverse_string("hello")` returns `"olleh"`.""",
        r'''
        def reverse_string(s):
            return s[::-1]
        ''',
        r'''
        def reverse_string(s):
            return s[-1:0:-1]
        ''',
        r'''
        from solution import reverse_string


        def test_word():
            assert reverse_string("hello") == "olleh"


        def test_empty():
            assert reverse_string("") == ""


        def test_single_char():
            assert reverse_string("a") == "a"


        def test_with_space():
            assert reverse_string("ab cd") == "dc ba"
        ''',
    ),
    _easy(
        "count_vowels",
        """Write a Python function `count_vowels(s: str) -> int` that returns how many vowels
        (a, e, i, o, u, upper or lower case) are in `s`. Example: `count_vowels("Hello")` returns `2`.""",
        r'''
        def count_vowels(s):
            return sum(1 for ch in s.lower() if ch in "aeiou")
        ''',
        r'''
        def count_vowels(s):
            return sum(1 for ch in s if ch in "aeiou")
        ''',
        r'''
        from solution import count_vowels


        def test_lowercase():
            assert count_vowels("hello") == 2


        def test_uppercase():
            assert count_vowels("AEIOU") == 5


        def test_no_vowels():
            assert count_vowels("xyz") == 0


        def test_sentence():
            assert count_vowels("Programming Is Fun") == 5
        ''',
    ),
    _easy(
        "max_of_two",
        """Write a Python function `max_of_two(a: int, b: int) -> int` that returns the larger of
        the two numbers. Example: `max_of_two(3, 7)` returns `7`.""",
        r'''
        def max_of_two(a, b):
            return a if a >= b else b
        ''',
        r'''
        def max_of_two(a, b):
            return a if a < b else b
        ''',
        r'''
        from solution import max_of_two


        def test_second_larger():
            assert max_of_two(3, 7) == 7


        def test_first_larger():
            assert max_of_two(10, 2) == 10


        def test_negatives():
            assert max_of_two(-1, -5) == -1


        def test_equal():
            assert max_of_two(4, 4) == 4
        ''',
    ),
    _easy(
        "is_even",
        """Write a Python function `is_even(n: int) -> bool` that returns `True` if `n` is even and
        `False` otherwise. Example: `is_even(4)` returns `True`, `is_even(7)` returns `False`.""",
        r'''
        def is_even(n):
            return n % 2 == 0
        ''',
        r'''
        def is_even(n):
            return n % 2 == 1
        ''',
        r'''
        from solution import is_even


        def test_even():
            assert is_even(4) is True


        def test_odd():
            assert is_even(7) is False


        def test_zero():
            assert is_even(0) is True


        def test_negative_even():
            assert is_even(-2) is True
        ''',
    ),
    _easy(
        "square",
        """Write a Python function `square(n: int) -> int` that returns `n` multiplied by itself.
        Example: `square(3)` returns `9`.""",
        r'''
        def square(n):
            return n * n
        ''',
        r'''
        def square(n):
            return n * 2
        ''',
        r'''
        from solution import square


        def test_positive():
            assert square(3) == 9


        def test_negative():
            assert square(-4) == 16


        def test_zero():
            assert square(0) == 0
        ''',
    ),
    _easy(
        "join_words",
        """Write a Python function `join_words(words: list[str]) -> str` that joins the words into
        one string with a single space between them. Example: `join_words(["hello", "world"])`
        returns `"hello world"`.""",
        r'''
        def join_words(words):
            return " ".join(words)
        ''',
        r'''
        def join_words(words):
            return "".join(words)
        ''',
        r'''
        from solution import join_words


        def test_two_words():
            assert join_words(["hello", "world"]) == "hello world"


        def test_empty():
            assert join_words([]) == ""


        def test_one_word():
            assert join_words(["one"]) == "one"


        def test_three_words():
            assert join_words(["a", "b", "c"]) == "a b c"
        ''',
    ),
    _easy(
        "first_element",
        """Write a Python function `first_element(items: list)` that returns the first item of the
        list, or `None` if the list is empty. Example: `first_element([5, 6, 7])` returns `5`.""",
        r'''
        def first_element(items):
            return items[0] if items else None
        ''',
        r'''
        def first_element(items):
            return items[0] if len(items) > 1 else None
        ''',
        r'''
        from solution import first_element


        def test_several():
            assert first_element([5, 6, 7]) == 5


        def test_empty():
            assert first_element([]) is None


        def test_single():
            assert first_element(["x"]) == "x"
        ''',
    ),
    _easy(
        "last_element",
        """Write a Python function `last_element(items: list)` that returns the last item of the
        list, or `None` if the list is empty. Example: `last_element([1, 2, 3])` returns `3`.""",
        r'''
        def last_element(items):
            return items[-1] if items else None
        ''',
        r'''
        def last_element(items):
            return items[len(items) - 2] if items else None
        ''',
        r'''
        from solution import last_element


        def test_several():
            assert last_element([1, 2, 3]) == 3


        def test_empty():
            assert last_element([]) is None


        def test_single():
            assert last_element(["only"]) == "only"
        ''',
    ),
    _easy(
        "celsius_to_fahrenheit",
        """Write a Python function `celsius_to_fahrenheit(c: float) -> float` that converts a
        temperature from Celsius to Fahrenheit (F = C * 9 / 5 + 32). Example:
        `celsius_to_fahrenheit(100)` returns `212.0`.""",
        r'''
        def celsius_to_fahrenheit(c):
            return c * 9 / 5 + 32
        ''',
        r'''
        def celsius_to_fahrenheit(c):
            return c * 5 / 9 + 32
        ''',
        r'''
        from solution import celsius_to_fahrenheit


        def test_freezing():
            assert abs(celsius_to_fahrenheit(0) - 32) < 1e-9


        def test_boiling():
            assert abs(celsius_to_fahrenheit(100) - 212) < 1e-9


        def test_minus_forty():
            assert abs(celsius_to_fahrenheit(-40) - (-40)) < 1e-9


        def test_body_temperature():
            assert abs(celsius_to_fahrenheit(37) - 98.6) < 1e-9
        ''',
    ),
    _easy(
        "is_palindrome",
        """Write a Python function `is_palindrome(s: str) -> bool` that returns `True` if `s` reads
        the same forwards and backwards, comparing characters exactly (case matters). Example:
        `is_palindrome("racecar")` returns `True`, `is_palindrome("Abba")` returns `False`.""",
        r'''
        def is_palindrome(s):
            return s == s[::-1]
        ''',
        r'''
        def is_palindrome(s):
            return s.lower() == s.lower()[::-1]
        ''',
        r'''
        from solution import is_palindrome


        def test_palindrome():
            assert is_palindrome("racecar") is True


        def test_not_palindrome():
            assert is_palindrome("hello") is False


        def test_empty():
            assert is_palindrome("") is True


        def test_case_matters():
            assert is_palindrome("Abba") is False
            assert is_palindrome("abba") is True
        ''',
    ),
    _easy(
        "count_positives",
        """Write a Python function `count_positives(nums: list[int]) -> int` that returns how many
        numbers in the list are strictly greater than zero. Example: `count_positives([1, -2, 3, 0])`
        returns `2`.""",
        r'''
        def count_positives(nums):
            return sum(1 for n in nums if n > 0)
        ''',
        r'''
        def count_positives(nums):
            return sum(1 for n in nums if n >= 0)
        ''',
        r'''
        from solution import count_positives


        def test_mixed():
            assert count_positives([1, -2, 3, 0]) == 2


        def test_empty():
            assert count_positives([]) == 0


        def test_all_negative():
            assert count_positives([-1, -2]) == 0


        def test_zeros_not_counted():
            assert count_positives([0, 0, 5]) == 1
        ''',
    ),
    _easy(
        "average",
        """Write a Python function `average(nums: list[float]) -> float` that returns the arithmetic
        mean of the numbers, or `0.0` for an empty list. Example: `average([1, 2, 3, 4])` returns
        `2.5`.""",
        r'''
        def average(nums):
            if not nums:
                return 0.0
            return sum(nums) / len(nums)
        ''',
        r'''
        def average(nums):
            if not nums:
                return 0.0
            return sum(nums) // len(nums)
        ''',
        r'''
        from solution import average


        def test_fractional_mean():
            assert average([1, 2, 3, 4]) == 2.5


        def test_empty():
            assert average([]) == 0.0


        def test_single():
            assert average([5]) == 5.0


        def test_cancelling():
            assert average([-2, 2]) == 0.0
        ''',
    ),
    _easy(
        "to_upper",
        """Write a Python function `to_upper(s: str) -> str` that returns `s` with every letter
        converted to upper case. Example: `to_upper("Hi there")` returns `"HI THERE"`.""",
        r'''
        def to_upper(s):
            return s.upper()
        ''',
        r'''
        def to_upper(s):
            return s.capitalize()
        ''',
        r'''
        from solution import to_upper


        def test_word():
            assert to_upper("hello") == "HELLO"


        def test_mixed_case():
            assert to_upper("Hi There") == "HI THERE"


        def test_empty():
            assert to_upper("") == ""


        def test_digits_unchanged():
            assert to_upper("abc123") == "ABC123"
        ''',
    ),
    _easy(
        "min_of_list",
        """Write a Python function `min_of_list(nums: list[int]) -> int` that returns the smallest
        number in a non-empty list. Example: `min_of_list([3, 1, 2])` returns `1`.""",
        r'''
        def min_of_list(nums):
            return min(nums)
        ''',
        r'''
        def min_of_list(nums):
            smallest = 0
            for n in nums:
                if n < smallest:
                    smallest = n
            return smallest
        ''',
        r'''
        from solution import min_of_list


        def test_basic():
            assert min_of_list([3, 1, 2]) == 1


        def test_negative():
            assert min_of_list([-5, 0, 5]) == -5


        def test_single():
            assert min_of_list([7]) == 7


        def test_duplicates():
            assert min_of_list([4, 4, 9]) == 4
        ''',
    ),
    _easy(
        "double_all",
        """Write a Python function `double_all(nums: list[int]) -> list[int]` that returns a new
        list with every number multiplied by 2. Example: `double_all([1, 2, 3])` returns
        `[2, 4, 6]`.""",
        r'''
        def double_all(nums):
            return [n * 2 for n in nums]
        ''',
        r'''
        def double_all(nums):
            return [n ** 2 for n in nums]
        ''',
        r'''
        from solution import double_all


        def test_basic():
            assert double_all([1, 2, 3]) == [2, 4, 6]


        def test_empty():
            assert double_all([]) == []


        def test_negative_and_zero():
            assert double_all([-1, 0]) == [-2, 0]
        ''',
    ),
    _easy(
        "filter_evens",
        """Write a Python function `filter_evens(nums: list[int]) -> list[int]` that returns the even
        numbers of the list, in their original order. Example: `filter_evens([1, 2, 3, 4])` returns
        `[2, 4]`.""",
        r'''
        def filter_evens(nums):
            return [n for n in nums if n % 2 == 0]
        ''',
        r'''
        def filter_evens(nums):
            return [n for n in nums if n % 2]
        ''',
        r'''
        from solution import filter_evens


        def test_mixed():
            assert filter_evens([1, 2, 3, 4]) == [2, 4]


        def test_empty():
            assert filter_evens([]) == []


        def test_keeps_order():
            assert filter_evens([8, 3, 6, 0]) == [8, 6, 0]


        def test_no_evens():
            assert filter_evens([1, 3, 5]) == []
        ''',
    ),
    _easy(
        "abs_difference",
        """Write a Python function `abs_difference(a: int, b: int) -> int` that returns the absolute
        value of the difference between `a` and `b`. Example: `abs_difference(3, 5)` returns `2`.""",
        r'''
        def abs_difference(a, b):
            return abs(a - b)
        ''',
        r'''
        def abs_difference(a, b):
            return a - b
        ''',
        r'''
        from solution import abs_difference


        def test_first_bigger():
            assert abs_difference(5, 3) == 2


        def test_second_bigger():
            assert abs_difference(3, 5) == 2


        def test_across_zero():
            assert abs_difference(-2, 2) == 4


        def test_equal():
            assert abs_difference(7, 7) == 0
        ''',
    ),
    _easy(
        "repeat_string",
        """Write a Python function `repeat_string(s: str, n: int) -> str` that returns `s` repeated
        `n` times with nothing in between (`n >= 0`). Example: `repeat_string("ab", 3)` returns
        `"ababab"`.""",
        r'''
        def repeat_string(s, n):
            return s * n
        ''',
        r'''
        def repeat_string(s, n):
            return " ".join([s] * n)
        ''',
        r'''
        from solution import repeat_string


        def test_three_times():
            assert repeat_string("ab", 3) == "ababab"


        def test_zero_times():
            assert repeat_string("x", 0) == ""


        def test_once():
            assert repeat_string("hi", 1) == "hi"
        ''',
    ),
    _easy(
        "count_char",
        """Write a Python function `count_char(s: str, ch: str) -> int` that returns how many times
        the single character `ch` occurs in `s` (case-sensitive). Example: `count_char("banana", "a")`
        returns `3`.""",
        r'''
        def count_char(s, ch):
            return s.count(ch)
        ''',
        r'''
        def count_char(s, ch):
            return s.lower().count(ch.lower())
        ''',
        r'''
        from solution import count_char


        def test_basic():
            assert count_char("banana", "a") == 3


        def test_case_sensitive():
            assert count_char("Banana", "b") == 0


        def test_empty():
            assert count_char("", "x") == 0


        def test_many():
            assert count_char("mississippi", "s") == 4
        ''',
    ),
    _easy(
        "remove_spaces",
        """Write a Python function `remove_spaces(s: str) -> str` that returns `s` with every space
        character removed. Example: `remove_spaces("a b c")` returns `"abc"`.""",
        r'''
        def remove_spaces(s):
            return s.replace(" ", "")
        ''',
        r'''
        def remove_spaces(s):
            return s.strip()
        ''',
        r'''
        from solution import remove_spaces


        def test_inner_spaces():
            assert remove_spaces("a b c") == "abc"


        def test_outer_spaces():
            assert remove_spaces("  hi  ") == "hi"


        def test_no_spaces():
            assert remove_spaces("none") == "none"


        def test_empty():
            assert remove_spaces("") == ""
        ''',
    ),
    # ---- easy, but a standard-library function does the work ----
    _easy(
        "gcd_of",
        """Write a Python function `gcd_of(a: int, b: int) -> int` that returns the greatest common
        divisor of two non-negative integers. Example: `gcd_of(12, 18)` returns `6`.""",
        r'''
        import math


        def gcd_of(a, b):
            return math.gcd(a, b)
        ''',
        r'''
        def gcd_of(a, b):
            return min(a, b)
        ''',
        r'''
        from solution import gcd_of


        def test_common_factor():
            assert gcd_of(12, 18) == 6


        def test_coprime():
            assert gcd_of(7, 5) == 1


        def test_zero():
            assert gcd_of(0, 9) == 9


        def test_order_irrelevant():
            assert gcd_of(21, 14) == 7
        ''',
        api=["math.gcd"],
    ),
    _easy(
        "lcm_of",
        """Write a Python function `lcm_of(a: int, b: int) -> int` that returns the least common
        multiple of two positive integers. Example: `lcm_of(4, 6)` returns `12`.""",
        r'''
        import math


        def lcm_of(a, b):
            return math.lcm(a, b)
        ''',
        r'''
        def lcm_of(a, b):
            return a * b
        ''',
        r'''
        from solution import lcm_of


        def test_shared_factor():
            assert lcm_of(4, 6) == 12


        def test_coprime():
            assert lcm_of(3, 5) == 15


        def test_equal():
            assert lcm_of(7, 7) == 7


        def test_one():
            assert lcm_of(1, 9) == 9
        ''',
        api=["math.lcm"],
    ),
    _easy(
        "int_sqrt",
        """Write a Python function `int_sqrt(n: int) -> int` that returns the integer square root of
        a non-negative integer: the largest `r` with `r * r <= n`. It must be exact even for very
        large `n`. Example: `int_sqrt(8)` returns `2`.""",
        r'''
        import math


        def int_sqrt(n):
            return math.isqrt(n)
        ''',
        r'''
        def int_sqrt(n):
            return round(n ** 0.5)
        ''',
        r'''
        from solution import int_sqrt


        def test_perfect_square():
            assert int_sqrt(16) == 4


        def test_rounds_down():
            assert int_sqrt(8) == 2
            assert int_sqrt(99) == 9


        def test_zero():
            assert int_sqrt(0) == 0


        def test_huge():
            assert int_sqrt(10 ** 40 + 5) == 10 ** 20
            assert int_sqrt((10 ** 20 + 3) ** 2) == 10 ** 20 + 3
        ''',
        api=["math.isqrt"],
    ),
    _easy(
        "n_choose_k",
        """Write a Python function `n_choose_k(n: int, k: int) -> int` that returns the number of ways
        to choose `k` items from `n` without order (0 when `k > n`). Example: `n_choose_k(5, 2)`
        returns `10`.""",
        r'''
        import math


        def n_choose_k(n, k):
            return math.comb(n, k)
        ''',
        r'''
        import math


        def n_choose_k(n, k):
            return math.perm(n, k)
        ''',
        r'''
        from solution import n_choose_k


        def test_basic():
            assert n_choose_k(5, 2) == 10


        def test_choose_none():
            assert n_choose_k(6, 0) == 1


        def test_choose_all():
            assert n_choose_k(10, 10) == 1


        def test_too_many():
            assert n_choose_k(3, 5) == 0
        ''',
        api=["math.comb"],
    ),
    _easy(
        "most_common_char",
        """Write a Python function `most_common_char(s: str) -> str` that returns the character that
        occurs most often in the non-empty string `s`; on a tie, return the one that appears first
        in `s`. Example: `most_common_char("abracadabra")` returns `"a"`.""",
        r'''
        from collections import Counter


        def most_common_char(s):
            return Counter(s).most_common(1)[0][0]
        ''',
        r'''
        def most_common_char(s):
            return max(sorted(s), key=s.count)
        ''',
        r'''
        from solution import most_common_char


        def test_clear_winner():
            assert most_common_char("abracadabra") == "a"


        def test_tie_goes_to_first_seen():
            assert most_common_char("bbaa") == "b"


        def test_single():
            assert most_common_char("z") == "z"


        def test_sentence():
            assert most_common_char("hello world") == "l"
        ''',
        api=["collections.Counter.most_common"],
    ),
    _easy(
        "word_frequencies",
        """Write a Python function `word_frequencies(text: str) -> dict[str, int]` that splits `text`
        on whitespace and returns a dict mapping each word to how many times it occurs. Example:
        `word_frequencies("a b a")` returns `{"a": 2, "b": 1}`.""",
        r'''
        from collections import Counter


        def word_frequencies(text):
            return dict(Counter(text.split()))
        ''',
        r'''
        from collections import Counter


        def word_frequencies(text):
            return dict(Counter(text))
        ''',
        r'''
        from solution import word_frequencies


        def test_basic():
            assert word_frequencies("a b a") == {"a": 2, "b": 1}


        def test_empty():
            assert word_frequencies("") == {}


        def test_sentence():
            assert word_frequencies("the cat the hat the") == {"the": 3, "cat": 1, "hat": 1}
        ''',
        api=["collections.Counter"],
    ),
    _easy(
        "is_pangram",
        """Write a Python function `is_pangram(s: str) -> bool` that returns `True` if every letter
        of the English alphabet (a to z, ignoring case) appears in `s` at least once. Example:
        `is_pangram("The quick brown fox jumps over the lazy dog")` returns `True`.""",
        r'''
        import string


        def is_pangram(s):
            return set(string.ascii_lowercase) <= set(s.lower())
        ''',
        r'''
        def is_pangram(s):
            return len(set(s.lower())) >= 26
        ''',
        r'''
        from solution import is_pangram


        def test_pangram():
            assert is_pangram("The quick brown fox jumps over the lazy dog") is True


        def test_not_pangram():
            assert is_pangram("Hello world") is False


        def test_empty():
            assert is_pangram("") is False


        def test_other_characters_do_not_count():
            assert is_pangram("abcdefghijklmnopqrstuvwxy 1!") is False
        ''',
        api=["string.ascii_lowercase"],
    ),
    _easy(
        "flatten_lists",
        """Write a Python function `flatten_lists(lists: list[list]) -> list` that concatenates the
        inner lists, in order, into one flat list (one level only). Example:
        `flatten_lists([[1, 2], [3], []])` returns `[1, 2, 3]`.""",
        r'''
        from itertools import chain


        def flatten_lists(lists):
            return list(chain.from_iterable(lists))
        ''',
        r'''
        def flatten_lists(lists):
            return [sub[0] for sub in lists if sub]
        ''',
        r'''
        from solution import flatten_lists


        def test_basic():
            assert flatten_lists([[1, 2], [3], []]) == [1, 2, 3]


        def test_empty():
            assert flatten_lists([]) == []


        def test_strings():
            assert flatten_lists([["a"], ["b", "c"]]) == ["a", "b", "c"]


        def test_only_one_level():
            assert flatten_lists([[[1]], [2]]) == [[1], 2]
        ''',
        api=["itertools.chain.from_iterable"],
    ),
    _easy(
        "product_list",
        """Write a Python function `product_list(nums: list[int]) -> int` that returns the product
        of all numbers in the list (1 for an empty list). Example: `product_list([2, 3, 4])` returns
        `24`.""",
        r'''
        import math


        def product_list(nums):
            return math.prod(nums)
        ''',
        r'''
        def product_list(nums):
            result = 0
            for n in nums:
                result *= n
            return result
        ''',
        r'''
        from solution import product_list


        def test_basic():
            assert product_list([2, 3, 4]) == 24


        def test_empty():
            assert product_list([]) == 1


        def test_single():
            assert product_list([5]) == 5


        def test_negatives():
            assert product_list([-1, 2, -3]) == 6
        ''',
        api=["math.prod"],
    ),
    _easy(
        "normalize_whitespace",
        """Write a Python function `normalize_whitespace(s: str) -> str` that replaces every run of
        whitespace (spaces, tabs, newlines) with a single space and strips both ends. Example:
        `normalize_whitespace("  a   b\\tc ")` returns `"a b c"`.""",
        r'''
        import re


        def normalize_whitespace(s):
            return re.sub(r"\s+", " ", s).strip()
        ''',
        r'''
        def normalize_whitespace(s):
            return s.replace("  ", " ").strip()
        ''',
        r'''
        from solution import normalize_whitespace


        def test_long_run():
            assert normalize_whitespace("a   b") == "a b"


        def test_tabs_and_newlines():
            assert normalize_whitespace("  hello\tworld\n") == "hello world"


        def test_empty():
            assert normalize_whitespace("") == ""


        def test_untouched():
            assert normalize_whitespace("x") == "x"
        ''',
        api=["re.sub"],
    ),
]
