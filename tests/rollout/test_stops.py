"""Stop detection on a byte-level toy tokenizer: held-back partial characters, the marker window and its overlap,
how many full checks run, and the shortest stopping prefix."""

from __future__ import annotations

from agentic_rl.rollout.stops import StopCondition, StopScanner, TextStream, first_stop_prefix

E_ACUTE = "é".encode()  # two bytes: a character split across two tokens


class ByteTokenizer:
    """One token per byte string; decoding replaces an unfinished UTF-8 sequence by U+FFFD, as real ones do."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def decode(self, ids: list[int]) -> str:
        return b"".join(self.pieces[i] for i in ids).decode("utf-8", errors="replace")


class LeadingSpaceTokenizer(ByteTokenizer):
    """Drops the leading space of the first word it decodes, as SentencePiece tokenizers do."""

    def decode(self, ids: list[int]) -> str:
        text = super().decode(ids)
        return text[1:] if text.startswith(" ") else text


def tokenizer_of(text_pieces: list[str | bytes]) -> tuple[ByteTokenizer, list[int]]:
    pieces = [p.encode() if isinstance(p, str) else p for p in text_pieces]
    return ByteTokenizer(pieces), list(range(len(pieces)))


def test_stream_holds_back_half_a_character_and_emits_it_whole() -> None:
    tok, ids = tokenizer_of(["ca", E_ACUTE[:1], E_ACUTE[1:], "!", b""])
    stream = TextStream(tok)
    assert [stream.push(i) for i in ids] == ["ca", "", "é", "!", ""]
    assert stream.text == "caé!" == tok.decode(ids)


def test_a_token_without_text_does_not_move_where_decoding_starts() -> None:
    """Decoding restarted at " b" would drop its space; the stream keeps decoding from "A"."""
    pieces = [b"A", b"", b" b", b" c"]
    stream = TextStream(LeadingSpaceTokenizer(pieces))
    assert [stream.push(i) for i in range(4)] == ["A", "", " b", " c"]
    assert stream.text == "A b c"


def test_scanner_stops_on_a_marker_split_across_tokens() -> None:
    tok, ids = tokenizer_of(["x", "</c", "all>", "y"])
    scanner = StopScanner(tok, StopCondition(lambda t: "</call>" in t, ["</call>"]))
    assert [scanner.push(i) for i in ids[:3]] == [False, False, True]
    assert scanner.full_checks == 1  # only the chunk that completed the marker
    # the last character alone: the window must reach back the marker's length less one
    tok, ids = tokenizer_of(["x", "</call", ">"])
    scanner = StopScanner(tok, StopCondition(lambda t: "</call>" in t, ["</call>", "<m>"]))
    assert [scanner.push(i) for i in ids] == [False, False, True]


def test_the_window_reaches_back_only_as_far_as_a_marker_can_start() -> None:
    # the stop needs two markers: after the first, chunks without one must not rerun the full check
    tok, ids = tokenizer_of(["<m>", "a", "b", "c", "<m>"])
    scanner = StopScanner(tok, StopCondition(lambda t: t.count("<m>") >= 2, ["<m>"]))
    assert [scanner.push(i) for i in ids] == [False, False, False, False, True]
    assert scanner.full_checks == 2  # at each marker, none at "a", "b", "c"


def test_no_markers_never_checks_and_unknown_markers_check_every_chunk() -> None:
    tok, ids = tokenizer_of(["a", "", "b", "c"])
    never = StopScanner(tok, StopCondition(lambda t: True, ()))
    assert not any(never.push(i) for i in ids) and never.full_checks == 0
    always = StopScanner(tok, lambda t: t.endswith("c"))  # a plain predicate: markers unknown
    assert [always.push(i) for i in ids] == [False, False, False, True]
    assert always.full_checks == 3  # every chunk that brought text


def test_first_stop_prefix_is_the_shortest_stopping_prefix() -> None:
    tok, ids = tokenizer_of(list("abcdefg"))
    assert first_stop_prefix(ids, tok, lambda t: "d" in t) == 4
    assert first_stop_prefix(ids, tok, lambda t: "a" in t) == 1
    assert first_stop_prefix(ids, tok, lambda t: "g" in t) == 7
    assert first_stop_prefix(ids, tok, lambda t: "z" in t) is None
    assert first_stop_prefix([], tok, lambda t: True) is None
    for n in range(1, 8):  # every cut point of a monotone condition
        assert first_stop_prefix(ids, tok, lambda t, n=n: len(t) >= n) == n
