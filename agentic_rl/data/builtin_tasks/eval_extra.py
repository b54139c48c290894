"""Eval split, continued: held-out problems added to bring the split to 60 (one task < 2 points of pass@1).

Appended after `eval_set` so that the earlier problems keep their ids. Every problem here was checked
against the training split by the near-duplicate test (tests/data/test_split_overlap.py).
"""
from __future__ import annotations

from ._schema import problem

SPLIT = "eval"


def _p(name, difficulty, question, solution, wrong, test, api=()):
    return problem(name, SPLIT, difficulty, question, solution, wrong, test, api)


PROBLEMS = [
    # ---- easy, plain Python ----
    _p(
        "triangle_kind",
        "easy",
        """Write a Python function `triangle_kind(a: int, b: int, c: int) -> str` that classifies
        a triangle by its side lengths: "equilateral", "isosceles" (exactly two equal sides),
        "scalene", or "invalid" when a side is not positive or the two shorter sides do not add
        up to more than the longest. Example: `triangle_kind(3, 4, 5)` returns `"scalene"`.""",
        r'''
        def triangle_kind(a, b, c):
            x, y, z = sorted((a, b, c))
            if x <= 0 or x + y <= z:
                return "invalid"
            if x == z:
                return "equilateral"
            if x == y or y == z:
                return "isosceles"
            return "scalene"
        ''',
        r'''
        def triangle_kind(a, b, c):
            if a == b == c:
                return "equilateral"
            if a == b or b == c or a == c:
                return "isosceles"
            return "scalene"
        ''',
        r'''
        from solution import triangle_kind


        def test_kinds():
            assert triangle_kind(3, 4, 5) == "scalene"
            assert triangle_kind(2, 2, 2) == "equilateral"
            assert triangle_kind(5, 3, 5) == "isosceles"


        def test_degenerate_is_invalid():
            assert triangle_kind(1, 2, 3) == "invalid"


        def test_too_long_side():
            assert triangle_kind(1, 1, 10) == "invalid"


        def test_non_positive():
            assert triangle_kind(0, 0, 0) == "invalid"
        ''',
    ),
    _p(
        "interleave",
        "easy",
        """Write a Python function `interleave(a: list, b: list) -> list` that alternates the elements
        of `a` and `b`, starting with `a`; when one list runs out, the rest of the other follows.
        Example: `interleave([1, 2, 3], ["x"])` returns `[1, "x", 2, 3]`.""",
        r'''
        def interleave(a, b):
            out = []
            for i in range(max(len(a), len(b))):
                if i < len(a):
                    out.append(a[i])
                if i < len(b):
                    out.append(b[i])
            return out
        ''',
        r'''
        def interleave(a, b):
            return [x for pair in zip(a, b) for x in pair]
        ''',
        r'''
        from solution import interleave


        def test_first_longer():
            assert interleave([1, 2, 3], ["x"]) == [1, "x", 2, 3]


        def test_second_longer():
            assert interleave([1], ["x", "y", "z"]) == [1, "x", "y", "z"]


        def test_equal_lengths():
            assert interleave([1, 2], [3, 4]) == [1, 3, 2, 4]


        def test_empty():
            assert interleave([], []) == []
        ''',
    ),
    _p(
        "seconds_to_hms",
        "easy",
        """Write a Python function `seconds_to_hms(seconds: int) -> str` that formats a non-negative
        number of seconds as `"HH:MM:SS"`, each part with at least two digits (hours may exceed 99).
        Example: `seconds_to_hms(3725)` returns `"01:02:05"`.""",
        r'''
        def seconds_to_hms(seconds):
            minutes, secs = divmod(seconds, 60)
            hours, minutes = divmod(minutes, 60)
            return f"{hours:02d}:{minutes:02d}:{secs:02d}"
        ''',
        r'''
        def seconds_to_hms(seconds):
            return f"{seconds // 3600}:{seconds // 60 % 60}:{seconds % 60}"
        ''',
        r'''
        from solution import seconds_to_hms


        def test_example():
            assert seconds_to_hms(3725) == "01:02:05"


        def test_zero():
            assert seconds_to_hms(0) == "00:00:00"


        def test_just_under_a_day():
            assert seconds_to_hms(86399) == "23:59:59"


        def test_many_hours():
            assert seconds_to_hms(360000) == "100:00:00"
        ''',
    ),
    _p(
        "times_table",
        "easy",
        """Write a Python function `times_table(n: int) -> list[list[int]]` that returns the `n` by `n`
        multiplication table: row `i` (from 1) holds `i * 1, i * 2, ..., i * n`. Example:
        `times_table(2)` returns `[[1, 2], [2, 4]]`.""",
        r'''
        def times_table(n):
            return [[i * j for j in range(1, n + 1)] for i in range(1, n + 1)]
        ''',
        r'''
        def times_table(n):
            return [[i * j for j in range(n)] for i in range(n)]
        ''',
        r'''
        from solution import times_table


        def test_two():
            assert times_table(2) == [[1, 2], [2, 4]]


        def test_three():
            assert times_table(3) == [[1, 2, 3], [2, 4, 6], [3, 6, 9]]


        def test_zero():
            assert times_table(0) == []


        def test_corner():
            assert times_table(9)[-1][-1] == 81
        ''',
    ),
    _p(
        "grade_letter",
        "easy",
        """Write a Python function `grade_letter(score: int) -> str` that turns an exam score from 0 to
        100 into a letter: "A" for 90 or more, "B" for 80 to 89, "C" for 70 to 79, "D" for 60 to 69
        and "F" below 60. Example: `grade_letter(85)` returns `"B"`.""",
        r'''
        def grade_letter(score):
            for floor, letter in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
                if score >= floor:
                    return letter
            return "F"
        ''',
        r'''
        def grade_letter(score):
            for floor, letter in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
                if score > floor:
                    return letter
            return "F"
        ''',
        r'''
        from solution import grade_letter


        def test_example():
            assert grade_letter(85) == "B"


        def test_boundaries():
            assert grade_letter(90) == "A"
            assert grade_letter(80) == "B"
            assert grade_letter(70) == "C"
            assert grade_letter(60) == "D"


        def test_extremes():
            assert grade_letter(100) == "A"
            assert grade_letter(0) == "F"


        def test_just_below():
            assert grade_letter(59) == "F"
            assert grade_letter(89) == "B"
        ''',
    ),
    _p(
        "snake_to_camel",
        "easy",
        """Write a Python function `snake_to_camel(name: str) -> str` that converts a snake_case name to
        camelCase: the first part stays as it is, each later non-empty part gets an upper-case first
        letter, and the underscores are dropped. Example: `snake_to_camel("max_retry_count")`
        returns `"maxRetryCount"`.""",
        r'''
        def snake_to_camel(name):
            first, *rest = name.split("_")
            return first + "".join(part[:1].upper() + part[1:] for part in rest)
        ''',
        r'''
        def snake_to_camel(name):
            return name.title().replace("_", "")
        ''',
        r'''
        from solution import snake_to_camel


        def test_example():
            assert snake_to_camel("max_retry_count") == "maxRetryCount"


        def test_no_underscore():
            assert snake_to_camel("value") == "value"


        def test_double_underscore():
            assert snake_to_camel("a__b") == "aB"


        def test_rest_of_part_unchanged():
            assert snake_to_camel("parse_HTTP_url") == "parseHTTPUrl"
        ''',
    ),
    _p(
        "count_set_bits",
        "easy",
        """Write a Python function `count_set_bits(n: int) -> int` that returns how many 1 bits the
        binary representation of the non-negative integer `n` has. Example: `count_set_bits(13)`
        returns `3` (13 is 1101 in binary).""",
        r'''
        def count_set_bits(n):
            count = 0
            while n:
                n &= n - 1
                count += 1
            return count
        ''',
        r'''
        def count_set_bits(n):
            return len(bin(n)) - 2
        ''',
        r'''
        from solution import count_set_bits


        def test_example():
            assert count_set_bits(13) == 3


        def test_zero():
            assert count_set_bits(0) == 0


        def test_power_of_two():
            assert count_set_bits(1024) == 1


        def test_all_ones():
            assert count_set_bits(255) == 8
        ''',
    ),
    # ---- easy, standard-library API ----
    _p(
        "days_in_month",
        "easy",
        """Write a Python function `days_in_month(year: int, month: int) -> int` that returns how many
        days month `month` (1 to 12) of `year` has in the Gregorian calendar. Example:
        `days_in_month(2024, 2)` returns `29`.""",
        r'''
        import calendar


        def days_in_month(year, month):
            return calendar.monthrange(year, month)[1]
        ''',
        r'''
        def days_in_month(year, month):
            if month == 2:
                return 29 if year % 4 == 0 else 28
            return 30 if month in (4, 6, 9, 11) else 31
        ''',
        r'''
        from solution import days_in_month


        def test_leap_february():
            assert days_in_month(2024, 2) == 29


        def test_century_february():
            assert days_in_month(1900, 2) == 28


        def test_long_and_short_months():
            assert days_in_month(2023, 1) == 31
            assert days_in_month(2023, 4) == 30


        def test_december():
            assert days_in_month(1999, 12) == 31
        ''',
        api=["calendar.monthrange"],
    ),
    _p(
        "strip_accents",
        "easy",
        """Write a Python function `strip_accents(text: str) -> str` that removes the accents from the
        letters of `text` (decompose each character with Unicode normalization and drop the combining
        marks), leaving other characters unchanged. Example: `strip_accents("Crème brûlée")` returns
        `"Creme brulee"`.""",
        r'''
        import unicodedata


        def strip_accents(text):
            decomposed = unicodedata.normalize("NFD", text)
            return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
        ''',
        r'''
        def strip_accents(text):
            return text.encode("ascii", "ignore").decode("ascii")
        ''',
        r'''
        from solution import strip_accents


        def test_example():
            assert strip_accents("Crème brûlée") == "Creme brulee"


        def test_plain_ascii():
            assert strip_accents("hello, world 42") == "hello, world 42"


        def test_other_scripts_kept():
            assert strip_accents("Ωmega ñ") == "Ωmega n"


        def test_upper_case():
            assert strip_accents("ÉCOLE") == "ECOLE"
        ''',
        api=["unicodedata.normalize", "unicodedata.combining"],
    ),
    _p(
        "wrap_text",
        "easy",
        """Write a Python function `wrap_text(text: str, width: int) -> list[str]` that breaks `text`
        into lines of at most `width` characters, breaking only at whitespace where possible (words
        longer than `width` are split), with runs of whitespace collapsed. Example:
        `wrap_text("the quick brown fox", 10)` returns `["the quick", "brown fox"]`.""",
        r'''
        import textwrap


        def wrap_text(text, width):
            return textwrap.wrap(text, width=width)
        ''',
        r'''
        def wrap_text(text, width):
            return [text[i:i + width] for i in range(0, len(text), width)]
        ''',
        r'''
        from solution import wrap_text


        def test_example():
            assert wrap_text("the quick brown fox", 10) == ["the quick", "brown fox"]


        def test_fits():
            assert wrap_text("short", 10) == ["short"]


        def test_long_word_is_split():
            assert wrap_text("abcdefgh", 3) == ["abc", "def", "gh"]


        def test_every_line_fits():
            lines = wrap_text("lorem ipsum dolor sit amet consectetur adipiscing", 12)
            assert all(len(line) <= 12 for line in lines)
            assert " ".join(lines) == "lorem ipsum dolor sit amet consectetur adipiscing"
        ''',
        api=["textwrap.wrap"],
    ),
    _p(
        "valid_identifier",
        "easy",
        """Write a Python function `valid_identifier(name: str) -> bool` that returns `True` if `name`
        could be used as a Python variable name: a syntactically valid identifier that is not a
        reserved keyword. Example: `valid_identifier("total_2")` returns `True`,
        `valid_identifier("class")` returns `False`.""",
        r'''
        import keyword


        def valid_identifier(name):
            return name.isidentifier() and not keyword.iskeyword(name)
        ''',
        r'''
        def valid_identifier(name):
            return name.isidentifier()
        ''',
        r'''
        from solution import valid_identifier


        def test_valid():
            assert valid_identifier("total_2") is True
            assert valid_identifier("_private") is True


        def test_keywords():
            assert valid_identifier("class") is False
            assert valid_identifier("None") is False


        def test_starts_with_digit():
            assert valid_identifier("2fast") is False


        def test_empty_and_dash():
            assert valid_identifier("") is False
            assert valid_identifier("my-name") is False
        ''',
        api=["keyword.iskeyword"],
    ),
    _p(
        "url_quote",
        "easy",
        """Write a Python function `url_quote(text: str) -> str` that percent-encodes `text` for use as
        one path segment of a URL: letters, digits and `_.-~` stay, everything else (including `/` and
        spaces) becomes `%XX` of its UTF-8 bytes. Example: `url_quote("a b/c")` returns
        `"a%20b%2Fc"`.""",
        r'''
        from urllib.parse import quote


        def url_quote(text):
            return quote(text, safe="")
        ''',
        r'''
        def url_quote(text):
            return text.replace(" ", "%20")
        ''',
        r'''
        from solution import url_quote


        def test_example():
            assert url_quote("a b/c") == "a%20b%2Fc"


        def test_unreserved_kept():
            assert url_quote("Az09_.-~") == "Az09_.-~"


        def test_utf8_bytes():
            assert url_quote("é") == "%C3%A9"


        def test_query_characters():
            assert url_quote("x?y=1&z") == "x%3Fy%3D1%26z"
        ''',
        api=["urllib.parse.quote"],
    ),
    _p(
        "base64_text",
        "easy",
        """Write a Python function `base64_text(text: str) -> str` that encodes the UTF-8 bytes of
        `text` in standard Base64 (with `=` padding) and returns the result as a string. Example:
        `base64_text("hi")` returns `"aGk="`.""",
        r'''
        import base64


        def base64_text(text):
            return base64.b64encode(text.encode("utf-8")).decode("ascii")
        ''',
        r'''
        import base64


        def base64_text(text):
            return base64.b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")
        ''',
        r'''
        from solution import base64_text


        def test_padding():
            assert base64_text("hi") == "aGk="


        def test_no_padding_needed():
            assert base64_text("abc") == "YWJj"


        def test_empty():
            assert base64_text("") == ""


        def test_returns_str():
            assert base64_text("a") == "YQ=="
        ''',
        api=["base64.b64encode"],
    ),
    _p(
        "factorial_digits",
        "easy",
        """Write a Python function `factorial_digits(n: int) -> int` that returns how many decimal
        digits `n!` (the factorial of the non-negative integer `n`) has. Example:
        `factorial_digits(10)` returns `7` (10! = 3628800).""",
        r'''
        import math


        def factorial_digits(n):
            return len(str(math.factorial(n)))
        ''',
        r'''
        def factorial_digits(n):
            return len(str(n * (n - 1)))
        ''',
        r'''
        from solution import factorial_digits


        def test_example():
            assert factorial_digits(10) == 7


        def test_zero_and_one():
            assert factorial_digits(0) == 1
            assert factorial_digits(1) == 1


        def test_twenty_five():
            assert factorial_digits(25) == 26


        def test_hundred():
            assert factorial_digits(100) == 158
        ''',
        api=["math.factorial"],
    ),
    # ---- medium, plain Python ----
    _p(
        "longest_common_prefix",
        "medium",
        """Write a Python function `longest_common_prefix(words: list[str]) -> str` that returns the
        longest string that every word starts with ("" for an empty list). Example:
        `longest_common_prefix(["flower", "flow", "flight"])` returns `"fl"`.""",
        r'''
        def longest_common_prefix(words):
            if not words:
                return ""
            prefix = words[0]
            for word in words[1:]:
                while not word.startswith(prefix):
                    prefix = prefix[:-1]
            return prefix
        ''',
        r'''
        def longest_common_prefix(words):
            if not words:
                return ""
            first, last = words[0], words[-1]
            i = 0
            while i < min(len(first), len(last)) and first[i] == last[i]:
                i += 1
            return first[:i]
        ''',
        r'''
        from solution import longest_common_prefix


        def test_example():
            assert longest_common_prefix(["flower", "flow", "flight"]) == "fl"


        def test_middle_word_is_shortest():
            assert longest_common_prefix(["interview", "in", "internet"]) == "in"


        def test_nothing_shared():
            assert longest_common_prefix(["dog", "racecar", "car"]) == ""


        def test_edge_cases():
            assert longest_common_prefix([]) == ""
            assert longest_common_prefix(["alone"]) == "alone"
        ''',
    ),
    _p(
        "spiral_order",
        "medium",
        """Write a Python function `spiral_order(m: list[list[int]]) -> list[int]` that returns the
        elements of a rectangular matrix in clockwise spiral order, starting at the top-left corner.
        Example: `spiral_order([[1, 2, 3], [4, 5, 6], [7, 8, 9]])` returns
        `[1, 2, 3, 6, 9, 8, 7, 4, 5]`.""",
        r'''
        def spiral_order(m):
            out = []
            rows = [list(row) for row in m]
            while rows:
                out.extend(rows.pop(0))
                # turn the rest a quarter anticlockwise so that its right column becomes the top row
                rows = [list(col) for col in zip(*rows)][::-1]
            return out
        ''',
        r'''
        def spiral_order(m):
            out = []
            for i, row in enumerate(m):
                out.extend(row if i % 2 == 0 else row[::-1])
            return out
        ''',
        r'''
        from solution import spiral_order


        def test_square():
            assert spiral_order([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == [1, 2, 3, 6, 9, 8, 7, 4, 5]


        def test_wide():
            assert spiral_order([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]) == [
                1, 2, 3, 4, 8, 12, 11, 10, 9, 5, 6, 7]


        def test_single_column():
            assert spiral_order([[1], [2], [3]]) == [1, 2, 3]


        def test_empty():
            assert spiral_order([]) == []
        ''',
    ),
    _p(
        "int_to_roman",
        "medium",
        """Write a Python function `int_to_roman(n: int) -> str` that writes an integer from 1 to 3999
        as a Roman numeral, using the subtractive forms IV, IX, XL, XC, CD and CM. Example:
        `int_to_roman(1994)` returns `"MCMXCIV"`.""",
        r'''
        SYMBOLS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
                   (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


        def int_to_roman(n):
            out = []
            for value, symbol in SYMBOLS:
                count, n = divmod(n, value)
                out.append(symbol * count)
            return "".join(out)
        ''',
        r'''
        SYMBOLS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


        def int_to_roman(n):
            out = []
            for value, symbol in SYMBOLS:
                count, n = divmod(n, value)
                out.append(symbol * count)
            return "".join(out)
        ''',
        r'''
        from solution import int_to_roman


        def test_example():
            assert int_to_roman(1994) == "MCMXCIV"


        def test_small():
            assert int_to_roman(3) == "III"
            assert int_to_roman(4) == "IV"


        def test_forty_nine():
            assert int_to_roman(49) == "XLIX"


        def test_largest():
            assert int_to_roman(3999) == "MMMCMXCIX"
        ''',
    ),
    _p(
        "max_subarray_sum",
        "medium",
        """Write a Python function `max_subarray_sum(nums: list[int]) -> int` that returns the largest
        sum of a non-empty contiguous run of elements of the non-empty list `nums`. It must run in
        linear time. Example: `max_subarray_sum([-2, 1, -3, 4, -1, 2, 1, -5, 4])` returns `6`.""",
        r'''
        def max_subarray_sum(nums):
            best = current = nums[0]
            for x in nums[1:]:
                current = max(x, current + x)
                best = max(best, current)
            return best
        ''',
        r'''
        def max_subarray_sum(nums):
            return sum(x for x in nums if x > 0)
        ''',
        r'''
        from solution import max_subarray_sum


        def test_example():
            assert max_subarray_sum([-2, 1, -3, 4, -1, 2, 1, -5, 4]) == 6


        def test_all_negative():
            assert max_subarray_sum([-3, -1, -2]) == -1


        def test_whole_list():
            assert max_subarray_sum([2, 3, 4]) == 9


        def test_long_input():
            assert max_subarray_sum([1, -1] * 50_000 + [5]) == 5
        ''',
    ),
    _p(
        "compress_ranges",
        "medium",
        """Write a Python function `compress_ranges(nums: list[int]) -> list[str]` that takes sorted
        distinct integers and describes them as ranges: a run of consecutive integers becomes
        `"start-end"`, a lone integer becomes just its number. Example:
        `compress_ranges([1, 2, 3, 5, 7, 8])` returns `["1-3", "5", "7-8"]`.""",
        r'''
        def compress_ranges(nums):
            out = []
            i = 0
            while i < len(nums):
                j = i
                while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
                    j += 1
                out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
                i = j + 1
            return out
        ''',
        r'''
        def compress_ranges(nums):
            if not nums:
                return []
            return [f"{nums[0]}-{nums[-1]}"]
        ''',
        r'''
        from solution import compress_ranges


        def test_example():
            assert compress_ranges([1, 2, 3, 5, 7, 8]) == ["1-3", "5", "7-8"]


        def test_all_single():
            assert compress_ranges([1, 3, 5]) == ["1", "3", "5"]


        def test_negative_numbers():
            assert compress_ranges([-2, -1, 0, 4]) == ["-2-0", "4"]


        def test_empty():
            assert compress_ranges([]) == []
        ''',
    ),
    _p(
        "pascal_row",
        "medium",
        """Write a Python function `pascal_row(n: int) -> list[int]` that returns row `n` of Pascal's
        triangle, counting the top row `[1]` as row 0; each inner entry is the sum of the two entries
        above it. Example: `pascal_row(4)` returns `[1, 4, 6, 4, 1]`.""",
        r'''
        def pascal_row(n):
            row = [1]
            for _ in range(n):
                row = [1] + [a + b for a, b in zip(row, row[1:])] + [1]
            return row
        ''',
        r'''
        def pascal_row(n):
            return [1] + [n] * (n - 1) + [1] if n else [1]
        ''',
        r'''
        from solution import pascal_row


        def test_example():
            assert pascal_row(4) == [1, 4, 6, 4, 1]


        def test_top_rows():
            assert pascal_row(0) == [1]
            assert pascal_row(1) == [1, 1]


        def test_row_six():
            assert pascal_row(6) == [1, 6, 15, 20, 15, 6, 1]


        def test_row_sum_is_power_of_two():
            assert sum(pascal_row(20)) == 2 ** 20
        ''',
    ),
    _p(
        "collatz_steps",
        "medium",
        """Write a Python function `collatz_steps(n: int) -> int` that counts the steps needed to reach
        1 from the positive integer `n`, where a step halves an even number and turns an odd number
        `x` into `3 * x + 1`. Example: `collatz_steps(6)` returns `8`.""",
        r'''
        def collatz_steps(n):
            steps = 0
            while n != 1:
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                steps += 1
            return steps
        ''',
        r'''
        def collatz_steps(n):
            steps = 0
            while n > 1:
                n //= 2
                steps += 1
            return steps
        ''',
        r'''
        from solution import collatz_steps


        def test_example():
            assert collatz_steps(6) == 8


        def test_one():
            assert collatz_steps(1) == 0


        def test_power_of_two():
            assert collatz_steps(16) == 4


        def test_twenty_seven():
            assert collatz_steps(27) == 111
        ''',
    ),
    _p(
        "look_and_say",
        "medium",
        """Write a Python function `look_and_say(n: int) -> str` that returns term `n` (from 1) of the
        look-and-say sequence: term 1 is "1", and each later term reads the previous one aloud as
        count-then-digit for every group of equal digits. Example: `look_and_say(4)` returns `"1211"`
        (after "1", "11", "21").""",
        r'''
        def look_and_say(n):
            term = "1"
            for _ in range(n - 1):
                parts = []
                i = 0
                while i < len(term):
                    j = i
                    while j < len(term) and term[j] == term[i]:
                        j += 1
                    parts.append(f"{j - i}{term[i]}")
                    i = j
                term = "".join(parts)
            return term
        ''',
        r'''
        def look_and_say(n):
            term = "1"
            for _ in range(n - 1):
                term = "".join(f"{term.count(d)}{d}" for d in dict.fromkeys(term))
            return term
        ''',
        r'''
        from solution import look_and_say


        def test_example():
            assert look_and_say(4) == "1211"


        def test_first_terms():
            assert [look_and_say(i) for i in (1, 2, 3)] == ["1", "11", "21"]


        def test_sixth():
            assert look_and_say(6) == "312211"


        def test_eighth():
            assert look_and_say(8) == "1113213211"
        ''',
    ),
    _p(
        "pivot_index",
        "medium",
        """Write a Python function `pivot_index(nums: list[int]) -> int` that returns the smallest index
        `i` such that the sum of the elements left of `i` equals the sum of the elements right of
        `i`, or -1 if there is none. Example: `pivot_index([1, 7, 3, 6, 5, 6])` returns `3`.""",
        r'''
        def pivot_index(nums):
            total = sum(nums)
            left = 0
            for i, x in enumerate(nums):
                if left == total - left - x:
                    return i
                left += x
            return -1
        ''',
        r'''
        def pivot_index(nums):
            total = sum(nums)
            left = 0
            for i, x in enumerate(nums):
                left += x
                if left == total - left:
                    return i
            return -1
        ''',
        r'''
        from solution import pivot_index


        def test_example():
            assert pivot_index([1, 7, 3, 6, 5, 6]) == 3


        def test_none():
            assert pivot_index([1, 2, 3]) == -1


        def test_first_index():
            assert pivot_index([2, 1, -1]) == 0


        def test_single_element():
            assert pivot_index([5]) == 0
        ''',
    ),
    _p(
        "majority_element",
        "medium",
        """Write a Python function `majority_element(items: list)` that returns the value occurring in
        more than half of the positions of `items`, or `None` if no value does. Example:
        `majority_element([3, 1, 3, 3, 2])` returns `3`.""",
        r'''
        def majority_element(items):
            candidate, count = None, 0
            for x in items:
                if count == 0:
                    candidate = x
                count += 1 if x == candidate else -1
            if items and items.count(candidate) * 2 > len(items):
                return candidate
            return None
        ''',
        r'''
        def majority_element(items):
            if not items:
                return None
            return max(set(items), key=items.count)
        ''',
        r'''
        from solution import majority_element


        def test_example():
            assert majority_element([3, 1, 3, 3, 2]) == 3


        def test_exactly_half_is_not_enough():
            assert majority_element([1, 1, 2, 2]) is None


        def test_no_majority():
            assert majority_element([1, 2, 3]) is None


        def test_strings_and_empty():
            assert majority_element(["a", "b", "a"]) == "a"
            assert majority_element([]) is None
        ''',
    ),
    # ---- medium, standard-library API ----
    _p(
        "parse_csv_column",
        "medium",
        """Write a Python function `parse_csv_column(text: str, column: str) -> list[str]` that reads
        `text` as CSV with a header row and returns the values of the column named `column`, one per
        data row; quoted fields may contain commas. Example:
        `parse_csv_column("name,age\\nAda,36\\n", "age")` returns `["36"]`.""",
        r'''
        import csv
        import io


        def parse_csv_column(text, column):
            return [row[column] for row in csv.DictReader(io.StringIO(text))]
        ''',
        r'''
        def parse_csv_column(text, column):
            lines = text.strip().split("\n")
            index = lines[0].split(",").index(column)
            return [line.split(",")[index] for line in lines[1:]]
        ''',
        r'''
        from solution import parse_csv_column


        def test_example():
            assert parse_csv_column("name,age\nAda,36\n", "age") == ["36"]


        def test_quoted_comma():
            text = 'city,country\n"Paris, TX",USA\nLyon,France\n'
            assert parse_csv_column(text, "city") == ["Paris, TX", "Lyon"]
            assert parse_csv_column(text, "country") == ["USA", "France"]


        def test_header_only():
            assert parse_csv_column("a,b\n", "a") == []


        def test_first_column():
            assert parse_csv_column("k,v\nx,1\ny,2", "k") == ["x", "y"]
        ''',
        api=["csv.DictReader"],
    ),
    _p(
        "sorted_by_keys",
        "medium",
        """Write a Python function `sorted_by_keys(records: list[dict], keys: list[str]) -> list[dict]`
        that returns the records sorted by the value of `keys[0]`, ties broken by `keys[1]`, and so
        on, all ascending; records equal on every key keep their order. Example:
        `sorted_by_keys([{"a": 2}, {"a": 1}], ["a"])` returns `[{"a": 1}, {"a": 2}]`.""",
        r'''
        from operator import itemgetter


        def sorted_by_keys(records, keys):
            return sorted(records, key=itemgetter(*keys)) if keys else list(records)
        ''',
        r'''
        def sorted_by_keys(records, keys):
            out = list(records)
            for key in keys:
                out.sort(key=lambda r: r[key])
            return out
        ''',
        r'''
        from solution import sorted_by_keys


        def test_example():
            assert sorted_by_keys([{"a": 2}, {"a": 1}], ["a"]) == [{"a": 1}, {"a": 2}]


        def test_tie_break():
            people = [{"last": "Lee", "first": "Bo"}, {"last": "Kim", "first": "Bo"},
                      {"last": "Lee", "first": "Al"}]
            assert sorted_by_keys(people, ["last", "first"]) == [
                {"last": "Kim", "first": "Bo"}, {"last": "Lee", "first": "Al"}, {"last": "Lee", "first": "Bo"}]


        def test_stable():
            rows = [{"k": 1, "id": "x"}, {"k": 0, "id": "y"}, {"k": 1, "id": "z"}]
            assert [r["id"] for r in sorted_by_keys(rows, ["k"])] == ["y", "x", "z"]


        def test_input_unchanged():
            rows = [{"k": 2}, {"k": 1}]
            sorted_by_keys(rows, ["k"])
            assert rows == [{"k": 2}, {"k": 1}]
        ''',
        api=["operator.itemgetter"],
    ),
    _p(
        "index_positions",
        "medium",
        """Write a Python function `index_positions(items: list) -> dict` that maps each distinct value
        of `items` to the ascending list of the indices where it occurs; the dict's keys are in order
        of first occurrence. Example: `index_positions(["a", "b", "a"])` returns
        `{"a": [0, 2], "b": [1]}`.""",
        r'''
        from collections import defaultdict


        def index_positions(items):
            positions = defaultdict(list)
            for i, item in enumerate(items):
                positions[item].append(i)
            return dict(positions)
        ''',
        r'''
        def index_positions(items):
            return {item: [items.index(item)] for item in items}
        ''',
        r'''
        from solution import index_positions


        def test_example():
            assert index_positions(["a", "b", "a"]) == {"a": [0, 2], "b": [1]}


        def test_key_order():
            assert list(index_positions([3, 1, 3, 2])) == [3, 1, 2]


        def test_numbers():
            assert index_positions([5, 5, 5]) == {5: [0, 1, 2]}


        def test_empty():
            assert index_positions([]) == {}
        ''',
        api=["collections.defaultdict"],
    ),
    _p(
        "command_args",
        "medium",
        """Write a Python function `command_args(command: str) -> list[str]` that splits a shell command
        line into its arguments the way a POSIX shell does: whitespace separates arguments, and single
        quotes, double quotes and backslashes group or escape characters. Example:
        `command_args('grep -n "two words" file.txt')` returns
        `["grep", "-n", "two words", "file.txt"]`.""",
        r'''
        import shlex


        def command_args(command):
            return shlex.split(command)
        ''',
        r'''
        def command_args(command):
            return [part.strip("\"'") for part in command.split()]
        ''',
        r'''
        from solution import command_args


        def test_double_quotes():
            assert command_args('grep -n "two words" file.txt') == ["grep", "-n", "two words", "file.txt"]


        def test_single_quotes_keep_double():
            assert command_args("""echo 'say "hi"'""") == ["echo", 'say "hi"']


        def test_backslash_escape():
            assert command_args(r"ls my\ file") == ["ls", "my file"]


        def test_extra_spaces():
            assert command_args("  a   b ") == ["a", "b"]
        ''',
        api=["shlex.split"],
    ),
    _p(
        "minutes_between",
        "medium",
        """Write a Python function `minutes_between(start: str, end: str) -> int` that takes two clock
        times "HH:MM" (24-hour) and returns the minutes from `start` forward to `end`; if `end` is
        earlier than `start`, it is on the next day. Example: `minutes_between("22:30", "01:15")`
        returns `165`.""",
        r'''
        from datetime import datetime, timedelta


        def minutes_between(start, end):
            t0 = datetime.strptime(start, "%H:%M")
            t1 = datetime.strptime(end, "%H:%M")
            if t1 < t0:
                t1 += timedelta(days=1)
            return int((t1 - t0).total_seconds() // 60)
        ''',
        r'''
        def minutes_between(start, end):
            h0, m0 = map(int, start.split(":"))
            h1, m1 = map(int, end.split(":"))
            return abs((h1 * 60 + m1) - (h0 * 60 + m0))
        ''',
        r'''
        from solution import minutes_between


        def test_over_midnight():
            assert minutes_between("22:30", "01:15") == 165


        def test_same_day():
            assert minutes_between("09:05", "17:40") == 515


        def test_same_time():
            assert minutes_between("12:00", "12:00") == 0


        def test_one_minute_back_is_almost_a_day():
            assert minutes_between("10:00", "09:59") == 1439
        ''',
        api=["datetime.datetime.strptime", "datetime.timedelta"],
    ),
    _p(
        "zip_add",
        "medium",
        """Write a Python function `zip_add(a: list[int], b: list[int]) -> list[int]` that adds two
        lists element by element; where one list is shorter, its missing elements count as 0.
        Example: `zip_add([1, 2, 3], [10, 20])` returns `[11, 22, 3]`.""",
        r'''
        from itertools import zip_longest


        def zip_add(a, b):
            return [x + y for x, y in zip_longest(a, b, fillvalue=0)]
        ''',
        r'''
        def zip_add(a, b):
            return [x + y for x, y in zip(a, b)]
        ''',
        r'''
        from solution import zip_add


        def test_first_longer():
            assert zip_add([1, 2, 3], [10, 20]) == [11, 22, 3]


        def test_second_longer():
            assert zip_add([], [4, 5]) == [4, 5]


        def test_equal():
            assert zip_add([1, -1], [-1, 1]) == [0, 0]


        def test_both_empty():
            assert zip_add([], []) == []
        ''',
        api=["itertools.zip_longest"],
    ),
    _p(
        "round_half_up",
        "medium",
        """Write a Python function `round_half_up(value: str, places: int) -> str` that rounds the
        decimal number written in `value` to `places` digits after the point, rounding halves away
        from zero (not to even), and returns it as a string with exactly `places` decimals. Example:
        `round_half_up("2.675", 2)` returns `"2.68"`.""",
        r'''
        from decimal import ROUND_HALF_UP, Decimal


        def round_half_up(value, places):
            step = Decimal(1).scaleb(-places)
            return str(Decimal(value).quantize(step, rounding=ROUND_HALF_UP))
        ''',
        r'''
        def round_half_up(value, places):
            return f"{round(float(value), places):.{places}f}"
        ''',
        r'''
        from solution import round_half_up


        def test_example():
            assert round_half_up("2.675", 2) == "2.68"


        def test_half_goes_up_not_to_even():
            assert round_half_up("0.125", 2) == "0.13"
            assert round_half_up("2.5", 0) == "3"


        def test_negative_away_from_zero():
            assert round_half_up("-1.45", 1) == "-1.5"


        def test_pads_decimals():
            assert round_half_up("3", 2) == "3.00"
        ''',
        api=["decimal.Decimal", "decimal.ROUND_HALF_UP"],
    ),
    _p(
        "fraction_sum",
        "medium",
        """Write a Python function `fraction_sum(fractions: list[str]) -> str` that adds fractions
        written as `"p/q"` strings exactly and returns the total in lowest terms as `"p/q"`, or as a
        plain integer string when the denominator is 1. Example: `fraction_sum(["1/2", "1/3"])` returns
        `"5/6"`.""",
        r'''
        from fractions import Fraction


        def fraction_sum(fractions):
            return str(sum((Fraction(f) for f in fractions), Fraction(0)))
        ''',
        r'''
        def fraction_sum(fractions):
            total = sum(int(p) / int(q) for p, q in (f.split("/") for f in fractions))
            return str(round(total, 6))
        ''',
        r'''
        from solution import fraction_sum


        def test_example():
            assert fraction_sum(["1/2", "1/3"]) == "5/6"


        def test_whole_number():
            assert fraction_sum(["1/4", "3/4"]) == "1"


        def test_negative_and_reduce():
            assert fraction_sum(["-2/4", "1/8"]) == "-3/8"


        def test_empty_is_zero():
            assert fraction_sum([]) == "0"
        ''',
        api=["fractions.Fraction"],
    ),
]
