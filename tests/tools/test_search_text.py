"""The search's text processing (`tools/search/text.py`) on its own: the stemmer's rules and their length bounds,
how names, parameters and queries become tokens, and which words name a package. The index and the queries go
through these functions, so a change here moves every ranking; the ranking tests see it only through results."""

from __future__ import annotations

import pytest

from agentic_rl.tools.search import text as T


@pytest.mark.parametrize(
    "forms",
    [
        ("encode", "encodes", "encoded", "encoding", "encoder"),  # every rule on one verb: one stem
        ("sort", "sorts", "sorted", "sorting", "sorter"),
        ("insert", "insertion"),
        ("edit", "edition"),  # -tion from 7 letters on
        ("delete", "deletion"),
        ("write", "writer"),
        ("read", "reader", "reading"),  # -er and -ing from 6 and 7 letters on
        ("entry", "entries"),
        ("fly", "flies"),  # -ies from 5 letters on
        ("class", "classes"),
        ("box", "boxes"),
        ("match", "matches"),
        ("map", "maps"),  # a plural from 4 letters on
        ("run", "running"),  # a doubled consonant before -ing is undone ...
        ("swim", "swimming"),
        ("stop", "stopped"),  # ... and before -ed
        ("tag", "tagged"),
        ("fill", "filling"),  # but not an l, s or z
        ("pass", "passing", "passed"),
        ("call", "called"),
    ],
)
def test_the_forms_of_a_word_share_one_stem(forms):
    assert len({T.stem(w) for w in forms}) == 1, {w: T.stem(w) for w in forms}


@pytest.mark.parametrize(
    "word",
    [
        "has",  # three letters or fewer: never cut
        "is_sorted",  # an identifier with an underscore or a digit is kept whole
        "utf8s",
        "motion",  # -tion, -er, -ing, -ed, -e below their length bounds are part of the word
        "paper",
        "string",
        "speed",
        "take",
        "class",  # -ss, -us, -is are not plurals
        "status",
        "analysis",
        "sort",  # no suffix: nothing to cut
        "default",
        "insert",
    ],
)
def test_what_the_stemmer_leaves_alone(word):
    assert T.stem(word) == word


def test_stems_are_cut_at_the_suffix():
    assert [T.stem(w) for w in ("insertion", "entries", "ties", "reading", "sorted", "maps", "delete", "running")] == [
        "insert",
        "entry",
        "tie",  # -ies needs five letters: ties is a plural of tie, not ty
        "read",
        "sort",
        "map",
        "delet",
        "run",
    ]


def test_an_identifier_is_split_at_underscores_and_case_changes_and_kept_whole():
    assert T.split_identifier("most_common") == ["most_common", "most", "common"]
    # a CamelCase part of a snake_case name is kept whole as well as split
    assert T.split_identifier("get_DataFrame") == ["get_dataframe", "get", "dataframe", "data", "frame"]
    assert T.split_identifier("HTTPServer") == ["httpserver", "http", "server"]


def test_prose_keeps_two_letter_words_and_the_letters_xyzn_but_not_stopwords():
    assert T.prose_tokens("the sort of x, y and t in re or io") == ["sort", "x", "y", "re", "io"]
    assert [T.keep_token(t) for t in ("x", "n", "t", "re", "the", "get", "all")] == [
        True,
        True,
        False,
        True,
        False,
        True,  # "get" and "all" name real APIs: not stopwords
        True,
    ]


def test_a_run_together_name_splits_into_the_fewest_known_words():
    vocabulary = {"heap", "push", "he", "ap", "pu", "sh", "is", "sub", "dtype", "lim", "label", "sort", "ab"}
    assert T.compound_split("heappush", vocabulary) == ["heap", "push"]  # not he, ap, push
    assert T.compound_split("issubdtype", vocabulary) == ["is", "sub", "dtype"]  # three pieces at most
    assert T.compound_split("ylim", vocabulary) == ["y", "lim"]  # four letters is long enough
    assert T.compound_split("xlabel", vocabulary) == ["x", "label"]  # x, y, z, n may lead alone


@pytest.mark.parametrize(
    "word, vocabulary",
    [
        ("xab", {"ab"}),  # shorter than four letters
        ("log10", {"log"}),  # not all letters
        ("getitemsizeof", {"get", "item", "size", "of"}),  # four pieces: more than three
        ("sorts", {"sort"}),  # a trailing s is not a word: no piece of one letter but a leading x/y/z/n
        ("qlabel", {"label"}),  # q is not one of the letters that lead alone
        ("push", {"push"}),  # the whole word is not a split of itself
        ("qwertyuiop", {"heap", "push"}),  # unknown words
    ],
)
def test_what_is_not_split(word, vocabulary):
    assert T.compound_split(word, vocabulary) == []


def test_a_split_with_fewer_pieces_found_later_replaces_one_found_first():
    # ab+cd reaches position 4 before abcde reaches 5, so ab+cd+efgh is the first whole split found
    assert T.compound_split("abcdefgh", {"ab", "cd", "efgh", "abcde", "fgh"}) == ["abcde", "fgh"]


def test_of_splits_with_as_few_pieces_the_one_with_the_longest_piece_wins():
    # the least even split, wherever its longest piece is (the index's tokens were built with this rule)
    assert T.compound_split("heappush", {"heap", "push", "heapp", "ush"}) == ["heapp", "ush"]
    assert T.compound_split("heappush", {"heap", "push", "he", "appush"}) == ["he", "appush"]


def test_of_splits_as_uneven_the_one_with_the_longest_last_piece_wins():
    # ab+cdef and abcd+ef both have a longest piece of four letters
    assert T.compound_split("abcdef", {"ab", "cdef", "abcd", "ef"}) == ["ab", "cdef"]


def test_more_pieces_only_when_allowed():
    four = {"get", "item", "size", "of"}
    assert T.compound_split("getitemsizeof", four, max_parts=4) == ["get", "item", "size", "of"]
    assert T.compound_split("issubdtype", {"is", "sub", "dtype"}, max_parts=2) == []


def test_parameter_names_skip_self_and_star_arguments():
    assert T.param_names("(fill_value, axis=0)") == ["fill_value", "axis"]
    assert T.param_names("(self, x, *args, **kwargs)") == ["x"]
    assert T.param_names("") == T.param_names(None) == []
    assert T.param_tokens("(self, fillvalue=None)", {"fill", "value"}) == ["fillvalu", "fill", "valu"]


def test_a_names_last_component_counts_three_times():
    assert T.name_tokens("collections.Counter") == ["collection"] + ["count"] * 3
    assert T.name_tokens("os.path.join") == ["os", "path"] + ["join"] * 3
    last = ["most_common", "most", "common"]
    assert T.name_tokens("collections.Counter.most_common") == ["collection", "count"] + last * 3
    assert T.name_tokens("math.e") == ["math"] + ["e"] * 3  # a one-letter name is still its own token
    assert T.name_tokens("pkg.mod.io_read") == ["pkg", "mod"] + ["io_read", "io", "read"] * 3
    assert T.name_tokens("heapq.nlargest", {"largest"}) == ["heapq"] + ["nlargest", "n", "largest"] * 3
    assert T.name_tokens("os.path.join", last_weight=1) == ["os", "path", "join"]


def test_adjacent_query_words_are_joined_in_twos_and_threes():
    assert T.joined_words("train test split data") == [
        "traintest",
        "testsplit",
        "splitdata",
        "traintestsplit",
        "testsplitdata",
    ]
    assert T.joined_words("find_all matches", max_n=2) == ["findallmatches"]
    assert T.joined_words("sort") == []


def test_aliases_expand_only_a_known_first_component():
    assert T.expand_alias("df.groupby") == "pandas.DataFrame.groupby"
    assert T.expand_alias("np") == "numpy"
    assert T.expand_alias("numpy.np") == "numpy.np"
    assert T.spaced_names("np argsort now") == ["numpy.argsort", "argsort.now"]


def test_which_packages_a_query_names():
    packages = {"matplotlib", "seaborn", "numpy", "random", "time", "pandas", "json"}
    assert T.mentioned_packages("plot with plt and sns", packages) == {"matplotlib", "seaborn"}
    # a package name that is an ordinary word says nothing ...
    assert T.mentioned_packages("random forest on a time series", packages) == set()
    # ... unless it heads a dotted name; and an alias of a dotted name counts (df -> pandas.DataFrame)
    assert T.mentioned_packages("random.choice of df.groupby", packages) == {"random", "pandas"}
    assert T.mentioned_packages("json loads", packages) == {"json"}
    assert T.mentioned_packages("parse xml", packages) == set()


@pytest.mark.parametrize(
    "word, expected",
    [
        ("most_common", True),
        ("log10", True),
        ("DataFrame", True),
        ("xLabel", True),
        ("sort", False),
        ("Hello", False),  # a capital first letter only: a sentence's first word
        ("HTTP", False),  # all capitals: an acronym in prose
    ],
)
def test_what_looks_like_an_identifier(word, expected):
    assert T.looks_like_identifier(word) is expected
