"""Eval split: held-out problems, easy and medium, about half built on a standard-library API.

The first 28 held-out problems (`eval_extra` continues the split). Fifteen of the original ones were one-word
variants of training problems (max/min of a list, is_odd/is_even, cube/square...) or shared their reference
solution's idea; they were replaced in place, so the others kept their ids. tests/data/test_split_overlap.py
flags any held-out problem whose question or reference solution comes too close to a training one.
"""
from __future__ import annotations

from ._schema import problem

SPLIT = "eval"


def _p(name, difficulty, question, solution, wrong, test, api=()):
    return problem(name, SPLIT, difficulty, question, solution, wrong, test, api)


PROBLEMS = [
    # ---- easy, plain Python ----
    _p(
        "hamming_distance",
        "easy",
        """Write a Python function `hamming_distance(a: str, b: str) -> int` that returns the number
        of positions at which two strings of equal length hold different characters. Example:
        `hamming_distance("karolin", "kathrin")` returns `3`.""",
        r'''
        def hamming_distance(a, b):
            return sum(x != y for x, y in zip(a, b))
        ''',
        r'''
        def hamming_distance(a, b):
            return len(set(a) ^ set(b))
        ''',
        r'''
        from solution import hamming_distance


        def test_example():
            assert hamming_distance("karolin", "kathrin") == 3


        def test_identical():
            assert hamming_distance("abc", "abc") == 0


        def test_empty():
            assert hamming_distance("", "") == 0


        def test_repeated_letters():
            assert hamming_distance("aabb", "bbaa") == 4
        ''',
    ),
    _p(
        "digit_sum",
        "easy",
        """Write a Python function `digit_sum(n: int) -> int` that returns the sum of the decimal
        digits of `n`, ignoring its sign. Example: `digit_sum(-493)` returns `16`.""",
        r'''
        def digit_sum(n):
            total = 0
            n = abs(n)
            while n:
                n, digit = divmod(n, 10)
                total += digit
            return total
        ''',
        r'''
        def digit_sum(n):
            return sum(int(d) for d in str(n) if d.isdigit() and d != "9")
        ''',
        r'''
        from solution import digit_sum


        def test_positive():
            assert digit_sum(1234) == 10


        def test_negative():
            assert digit_sum(-493) == 16


        def test_zero():
            assert digit_sum(0) == 0


        def test_single_digit():
            assert digit_sum(7) == 7
        ''',
    ),
    _p(
        "initials",
        "easy",
        """Write a Python function `initials(name: str) -> str` that returns the upper-cased first
        letter of each whitespace-separated part of `name`, joined with no separator. Example:
        `initials("ada  king lovelace")` returns `"AKL"`.""",
        r'''
        def initials(name):
            return "".join(part[0].upper() for part in name.split())
        ''',
        r'''
        def initials(name):
            return "".join(part[0] for part in name.split(" ") if part)
        ''',
        r'''
        from solution import initials


        def test_example():
            assert initials("ada  king lovelace") == "AKL"


        def test_single_name():
            assert initials("Grace") == "G"


        def test_tabs_and_newlines():
            assert initials("alan\tmathison\nturing") == "AMT"


        def test_blank():
            assert initials("   ") == ""
        ''',
    ),
    _p(
        "clamp",
        "easy",
        """Write a Python function `clamp(x: float, lo: float, hi: float) -> float` that returns `lo`
        if `x` is below `lo`, `hi` if `x` is above `hi`, and `x` otherwise (`lo <= hi`). Example:
        `clamp(15, 0, 10)` returns `10`.""",
        r'''
        def clamp(x, lo, hi):
            if x < lo:
                return lo
            if x > hi:
                return hi
            return x
        ''',
        r'''
        def clamp(x, lo, hi):
            return max(x, lo) if x < hi else x
        ''',
        r'''
        from solution import clamp


        def test_above():
            assert clamp(15, 0, 10) == 10


        def test_below():
            assert clamp(-3, 0, 10) == 0


        def test_inside():
            assert clamp(2.5, 0, 10) == 2.5


        def test_degenerate_range():
            assert clamp(9, 4, 4) == 4
        ''',
    ),
    _p(
        "swap_pairs",
        "easy",
        """Write a Python function `swap_pairs(items: list) -> list` that returns a new list in which
        the elements at positions 0 and 1, 2 and 3, and so on are swapped; an odd last element stays
        where it is. Example: `swap_pairs([1, 2, 3, 4, 5])` returns `[2, 1, 4, 3, 5]`.""",
        r'''
        def swap_pairs(items):
            out = list(items)
            for i in range(0, len(out) - 1, 2):
                out[i], out[i + 1] = out[i + 1], out[i]
            return out
        ''',
        r'''
        def swap_pairs(items):
            out = list(items)
            for i in range(1, len(out), 2):
                out[i - 1] = out[i]
            return out
        ''',
        r'''
        from solution import swap_pairs


        def test_odd_length():
            assert swap_pairs([1, 2, 3, 4, 5]) == [2, 1, 4, 3, 5]


        def test_even_length():
            assert swap_pairs(["a", "b", "c", "d"]) == ["b", "a", "d", "c"]


        def test_short():
            assert swap_pairs([]) == []
            assert swap_pairs([9]) == [9]


        def test_input_unchanged():
            items = [1, 2]
            assert swap_pairs(items) == [2, 1]
            assert items == [1, 2]
        ''',
    ),
    _p(
        "is_sorted",
        "easy",
        """Write a Python function `is_sorted(nums: list[int]) -> bool` that returns `True` if every
        element is greater than or equal to the one before it (an empty list is sorted). Example:
        `is_sorted([1, 2, 2, 5])` returns `True`.""",
        r'''
        def is_sorted(nums):
            return all(a <= b for a, b in zip(nums, nums[1:]))
        ''',
        r'''
        def is_sorted(nums):
            return not nums or nums[0] <= nums[-1]
        ''',
        r'''
        from solution import is_sorted


        def test_sorted_with_repeats():
            assert is_sorted([1, 2, 2, 5]) is True


        def test_unsorted_middle():
            assert is_sorted([1, 5, 3, 6]) is False


        def test_descending():
            assert is_sorted([3, 2, 1]) is False


        def test_short():
            assert is_sorted([]) is True
            assert is_sorted([4]) is True
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
        "is_leap_year",
        "easy",
        """Write a Python function `is_leap_year(year: int) -> bool` that returns `True` if `year` is a
        leap year of the Gregorian calendar. Example: `is_leap_year(2024)` returns `True`,
        `is_leap_year(1900)` returns `False`.""",
        r'''
        import calendar


        def is_leap_year(year):
            return calendar.isleap(year)
        ''',
        r'''
        def is_leap_year(year):
            return year % 4 == 0
        ''',
        r'''
        from solution import is_leap_year


        def test_ordinary_leap_year():
            assert is_leap_year(2024) is True


        def test_century_is_not_leap():
            assert is_leap_year(1900) is False


        def test_every_400_years():
            assert is_leap_year(2000) is True


        def test_common_year():
            assert is_leap_year(2023) is False
        ''',
        api=["calendar.isleap"],
    ),
    _p(
        "escape_html",
        "easy",
        """Write a Python function `escape_html(text: str) -> str` that makes `text` safe to put
        inside an HTML page: `&`, `<`, `>`, `"` and `'` are replaced by character references.
        Example: `escape_html("a < b")` returns `"a &lt; b"`.""",
        r'''
        import html


        def escape_html(text):
            return html.escape(text, quote=True)
        ''',
        r'''
        def escape_html(text):
            return text.replace("<", "&lt;").replace(">", "&gt;").replace("&", "&amp;")
        ''',
        r'''
        from solution import escape_html


        def test_less_than():
            assert escape_html("a < b") == "a &lt; b"


        def test_ampersand_is_not_escaped_twice():
            assert escape_html("<&>") == "&lt;&amp;&gt;"


        def test_quotes():
            assert escape_html("say \"hi\" 'x'") == "say &quot;hi&quot; &#x27;x&#x27;"


        def test_plain():
            assert escape_html("plain text") == "plain text"
        ''',
        api=["html.escape"],
    ),
    _p(
        "sha256_hex",
        "easy",
        """Write a Python function `sha256_hex(text: str) -> str` that returns the SHA-256 digest of
        the UTF-8 encoding of `text` as 64 lower-case hexadecimal characters. Example:
        `sha256_hex("abc")` returns a string starting with `"ba7816bf"`.""",
        r'''
        import hashlib


        def sha256_hex(text):
            return hashlib.sha256(text.encode("utf-8")).hexdigest()
        ''',
        r'''
        import hashlib


        def sha256_hex(text):
            return hashlib.sha1(text.encode("utf-8")).hexdigest()
        ''',
        r'''
        from solution import sha256_hex

        import hashlib


        def test_empty():
            assert sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


        def test_abc():
            assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


        def test_shape():
            digest = sha256_hex("hello")
            assert len(digest) == 64 and digest == digest.lower()


        def test_non_ascii_is_utf8():
            assert sha256_hex("\u00e9") == hashlib.sha256(b"\xc3\xa9").hexdigest()
        ''',
        api=["hashlib.sha256"],
    ),
    _p(
        "lowest_terms",
        "easy",
        """Write a Python function `lowest_terms(num: int, den: int) -> str` that returns the fraction
        `num/den` reduced to lowest terms as `"p/q"` with `q > 0` (the sign goes on `p`; `den != 0`).
        Example: `lowest_terms(6, -8)` returns `"-3/4"`.""",
        r'''
        from fractions import Fraction


        def lowest_terms(num, den):
            f = Fraction(num, den)
            return f"{f.numerator}/{f.denominator}"
        ''',
        r'''
        from fractions import Fraction


        def lowest_terms(num, den):
            return str(Fraction(num, den))
        ''',
        r'''
        from solution import lowest_terms


        def test_negative_denominator():
            assert lowest_terms(6, -8) == "-3/4"


        def test_already_reduced():
            assert lowest_terms(3, 7) == "3/7"


        def test_whole_number_keeps_denominator():
            assert lowest_terms(10, 5) == "2/1"


        def test_zero():
            assert lowest_terms(0, 9) == "0/1"
        ''',
        api=["fractions.Fraction"],
    ),
    _p(
        "is_ipv4",
        "easy",
        """Write a Python function `is_ipv4(s: str) -> bool` that returns `True` if `s` is a valid IPv4
        address in dotted-decimal form: four numbers from 0 to 255 separated by dots, without leading
        zeros. Example: `is_ipv4("192.168.0.1")` returns `True`, `is_ipv4("256.1.1.1")` returns
        `False`.""",
        r'''
        import ipaddress


        def is_ipv4(s):
            try:
                ipaddress.IPv4Address(s)
            except ValueError:
                return False
            return True
        ''',
        r'''
        def is_ipv4(s):
            parts = s.split(".")
            return len(parts) == 4 and all(p.isdigit() for p in parts)
        ''',
        r'''
        from solution import is_ipv4


        def test_valid():
            assert is_ipv4("192.168.0.1") is True
            assert is_ipv4("0.0.0.0") is True


        def test_out_of_range():
            assert is_ipv4("256.1.1.1") is False


        def test_wrong_number_of_parts():
            assert is_ipv4("1.2.3") is False
            assert is_ipv4("1.2.3.4.5") is False


        def test_not_numbers():
            assert is_ipv4("a.b.c.d") is False
            assert is_ipv4("") is False
        ''',
        api=["ipaddress.IPv4Address"],
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
        "schedule_order",
        "medium",
        """Write a Python function `schedule_order(deps: dict[str, list[str]]) -> list[str]`: `deps` maps
        each job to the jobs that must run before it (jobs appearing only in lists are jobs too).
        Return every job once, each after all of its prerequisites, or raise `ValueError` if the
        dependencies contain a cycle. Example: `schedule_order({"b": ["a"]})` returns `["a", "b"]`.""",
        r'''
        import graphlib


        def schedule_order(deps):
            try:
                return list(graphlib.TopologicalSorter(deps).static_order())
            except graphlib.CycleError as exc:
                raise ValueError(f"cyclic dependencies: {exc.args[1]}") from exc
        ''',
        r'''
        def schedule_order(deps):
            jobs = set(deps)
            for before in deps.values():
                jobs.update(before)
            return sorted(jobs)
        ''',
        r'''
        from solution import schedule_order

        import pytest


        def assert_valid(order, deps):
            jobs = set(deps) | {j for before in deps.values() for j in before}
            assert sorted(order) == sorted(jobs)
            for job, before in deps.items():
                for b in before:
                    assert order.index(b) < order.index(job)


        def test_example():
            assert schedule_order({"b": ["a"]}) == ["a", "b"]


        def test_chain_against_alphabet():
            deps = {"a": ["b"], "b": ["c"]}
            assert_valid(schedule_order(deps), deps)


        def test_diamond():
            deps = {"deploy": ["test", "lint"], "test": ["build"], "lint": ["build"]}
            assert_valid(schedule_order(deps), deps)


        def test_cycle_raises():
            with pytest.raises(ValueError):
                schedule_order({"x": ["y"], "y": ["x"]})
        ''',
        api=["graphlib.TopologicalSorter"],
    ),
    _p(
        "fill_template",
        "medium",
        """Write a Python function `fill_template(template: str, values: dict[str, str]) -> str` that
        replaces each `$name` or `${name}` placeholder of `template` by `values[name]`; placeholders
        whose name is not in `values` stay as they are, and `$$` becomes a single `$`. Example:
        `fill_template("Hi $who, you owe $$${amt}", {"who": "Bo", "amt": "5"})` returns
        `"Hi Bo, you owe $5"`.""",
        r'''
        from string import Template


        def fill_template(template, values):
            return Template(template).safe_substitute(values)
        ''',
        r'''
        def fill_template(template, values):
            for name, value in values.items():
                template = template.replace("$" + name, value)
            return template
        ''',
        r'''
        from solution import fill_template


        def test_example():
            assert fill_template("Hi $who, you owe $$${amt}", {"who": "Bo", "amt": "5"}) == "Hi Bo, you owe $5"


        def test_unknown_placeholder_kept():
            assert fill_template("$a and $b", {"a": "1"}) == "1 and $b"


        def test_braces_join_words():
            assert fill_template("${n}th", {"n": "4"}) == "4th"


        def test_longer_name_not_confused():
            assert fill_template("$name $names", {"name": "x", "names": "y"}) == "x y"
        ''',
        api=["string.Template"],
    ),
    _p(
        "closest_word",
        "medium",
        """Write a Python function `closest_word(word: str, vocabulary: list[str])` that returns the
        vocabulary entry most similar to `word` according to `difflib`'s similarity ratio, considering
        only entries whose ratio is at least 0.6, or `None` if there is none. Example:
        `closest_word("appel", ["ape", "apple", "peach"])` returns `"apple"`.""",
        r'''
        import difflib


        def closest_word(word, vocabulary):
            matches = difflib.get_close_matches(word, vocabulary, n=1, cutoff=0.6)
            return matches[0] if matches else None
        ''',
        r'''
        def closest_word(word, vocabulary):
            for entry in vocabulary:
                if entry[:2] == word[:2]:
                    return entry
            return None
        ''',
        r'''
        from solution import closest_word


        def test_example():
            assert closest_word("appel", ["ape", "apple", "peach"]) == "apple"


        def test_nothing_close():
            assert closest_word("xyz", ["apple", "banana"]) is None


        def test_exact_match_wins():
            assert closest_word("cart", ["card", "cart", "care"]) == "cart"


        def test_typo_in_the_middle():
            assert closest_word("pyhton", ["java", "python", "perl"]) == "python"
        ''',
        api=["difflib.get_close_matches"],
    ),
    _p(
        "shortest_path_len",
        "medium",
        """Write a Python function `shortest_path_len(grid: list[str]) -> int` that returns the fewest
        moves (up, down, left, right) from the top-left cell to the bottom-right cell of `grid`,
        where "." is open and "#" is a wall, or -1 if there is no path (also when either end is a
        wall). Example: `shortest_path_len(["..", ".."])` returns `2`.""",
        r'''
        from collections import deque


        def shortest_path_len(grid):
            rows, cols = len(grid), len(grid[0])
            if grid[0][0] == "#" or grid[-1][-1] == "#":
                return -1
            queue = deque([(0, 0, 0)])
            seen = {(0, 0)}
            while queue:
                r, c, dist = queue.popleft()
                if (r, c) == (rows - 1, cols - 1):
                    return dist
                for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == "." and (nr, nc) not in seen:
                        seen.add((nr, nc))
                        queue.append((nr, nc, dist + 1))
            return -1
        ''',
        r'''
        def shortest_path_len(grid):
            return len(grid) + len(grid[0]) - 2
        ''',
        r'''
        from solution import shortest_path_len


        def test_open_square():
            assert shortest_path_len(["..", ".."]) == 2


        def test_detour():
            grid = ["...", "##.", "...", ".##", "..."]
            assert shortest_path_len(grid) == 10


        def test_blocked():
            assert shortest_path_len([".#", "#."]) == -1


        def test_single_cell_and_walled_end():
            assert shortest_path_len(["."]) == 0
            assert shortest_path_len(["..", ".#"]) == -1
        ''',
        api=["collections.deque"],
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
        "dotted_get",
        "medium",
        """Write a Python function `dotted_get(data: dict, path: str, default=None)` that follows the
        dot-separated keys of `path` through nested dicts and returns the value found, or `default`
        if a key is missing or a value on the way is not a dict. Example:
        `dotted_get({"a": {"b": 3}}, "a.b")` returns `3`.""",
        r'''
        from functools import reduce

        _MISSING = object()


        def dotted_get(data, path, default=None):
            def step(node, key):
                if isinstance(node, dict) and key in node:
                    return node[key]
                return _MISSING

            found = reduce(step, path.split("."), data)
            return default if found is _MISSING else found
        ''',
        r'''
        def dotted_get(data, path, default=None):
            node = data
            for key in path.split("."):
                node = node.get(key, default)
            return node
        ''',
        r'''
        from solution import dotted_get


        def test_nested():
            assert dotted_get({"a": {"b": 3}}, "a.b") == 3


        def test_missing_key_gives_default():
            assert dotted_get({"a": {"b": 3}}, "a.c", default=0) == 0
            assert dotted_get({"a": {"b": 3}}, "x.y") is None


        def test_through_a_non_dict():
            assert dotted_get({"a": 5}, "a.b", default="none") == "none"


        def test_stored_none_is_returned():
            assert dotted_get({"a": {"b": None}}, "a.b", default=1) is None


        def test_top_level():
            assert dotted_get({"k": [1, 2]}, "k") == [1, 2]
        ''',
        api=["functools.reduce"],
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
        "url_params",
        "medium",
        """Write a Python function `url_params(url: str) -> dict[str, list[str]]` that returns the query
        parameters of `url`, mapping each name to the list of its (percent-decoded) values in order;
        parameters with empty values are kept as `""`. Example:
        `url_params("https://x.org/p?a=1&b=2&a=3")` returns `{"a": ["1", "3"], "b": ["2"]}`.""",
        r'''
        from urllib.parse import parse_qs, urlsplit


        def url_params(url):
            return parse_qs(urlsplit(url).query, keep_blank_values=True)
        ''',
        r'''
        def url_params(url):
            query = url.split("?", 1)[1] if "?" in url else ""
            return {k: [v] for k, v in (p.split("=") for p in query.split("&") if p)}
        ''',
        r'''
        from solution import url_params


        def test_repeated_names():
            assert url_params("https://x.org/p?a=1&b=2&a=3") == {"a": ["1", "3"], "b": ["2"]}


        def test_percent_decoding():
            assert url_params("http://h/?q=caf%C3%A9+au+lait") == {"q": ["café au lait"]}


        def test_blank_value_kept():
            assert url_params("http://h/?flag=&x=1") == {"flag": [""], "x": ["1"]}


        def test_no_query():
            assert url_params("http://h/path") == {}
        ''',
        api=["urllib.parse.parse_qs", "urllib.parse.urlsplit"],
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
