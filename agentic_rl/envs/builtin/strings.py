"""Built-in CodeGym environments: string workflows (character scans, palindromes, parsing, encoding).

Each class is a `ToolEnv` (gym_base.py); `ORACLES` maps it to a scripted tool-only solution and `CONFIGS` to a
seeded generator of its task configurations. Written for this project, modelled on problem types of the
KodCode-V1 sample and the built-in tasks (no text copied).
"""

import json

# sent to the sandbox as gym_base's source followed by this file without this line (builtin_records)
from agentic_rl.envs.builtin.gym_base import ToolEnv


def _q(call, name, **params):
    return json.loads(call(name, **params))


class StringScanEnv(ToolEnv):
    """Shared tools of the string environments: the text's length and its characters."""

    def load(self, o):
        self.text = o["text"]

    def Observe(self):
        """Return the length of the hidden text."""
        return len(self.text)

    def CharAt(self, index):
        """Return the character at position index (0-based)."""
        return self.text[int(index)]


class ReverseWordsEnv(StringScanEnv):
    """Reverse the order of the words of the text (words are separated by single spaces); answer the string."""

    def load(self, o):
        super().load(o)
        self.words = []

    def SplitWords(self):
        """Split the text at spaces into the word list; return the number of words."""
        self.words = self.text.split(" ")
        return len(self.words)

    def WordAt(self, index):
        """Return word number index of the split text."""
        return self.words[int(index)]

    def Join(self, words):
        """Return the words joined with single spaces."""
        return " ".join(words)

    def get_ref_answer(self):
        return " ".join(reversed(self.text.split(" ")))


def oracle_reverse_words(call):
    n = _q(call, "SplitWords")
    words = [call("WordAt", index=i) for i in reversed(range(n))]
    return call("Join", words=words)


class PalindromeCheckEnv(StringScanEnv):
    """Decide whether the text reads the same backwards, ignoring case and non-letters (true/false)."""

    def IsLetter(self, char):
        """Return true if char is a letter."""
        return char.isalpha()

    def Lower(self, char):
        """Return char in lower case."""
        return char.lower()

    def Equal(self, a, b):
        """Return true if a == b."""
        return a == b

    def get_ref_answer(self):
        s = [c.lower() for c in self.text if c.isalpha()]
        return s == s[::-1]


def oracle_palindrome(call):
    n = _q(call, "Observe")
    letters = []
    for i in range(n):
        c = call("CharAt", index=i)
        if _q(call, "IsLetter", char=c):
            letters.append(call("Lower", char=c))
    for i in range(len(letters) // 2):
        if not _q(call, "Equal", a=letters[i], b=letters[-1 - i]):
            return False
    return True


class RunLengthEncodeEnv(StringScanEnv):
    """Run-length encode the text: each run of a repeated character becomes the character then the run's length
    (aaab -> a3b1); answer the encoded string."""

    def load(self, o):
        super().load(o)
        self.out = ""

    def Equal(self, a, b):
        """Return true if a == b."""
        return a == b

    def Emit(self, char, count):
        """Append char followed by count to the output; return the output."""
        self.out += f"{char}{int(count)}"
        return self.out

    def Output(self):
        """Return the output so far."""
        return self.out

    def get_ref_answer(self):
        out, i = "", 0
        while i < len(self.text):
            j = i
            while j < len(self.text) and self.text[j] == self.text[i]:
                j += 1
            out += f"{self.text[i]}{j - i}"
            i = j
        return out


def oracle_rle(call):
    n = _q(call, "Observe")
    cur, count = call("CharAt", index=0), 1
    for i in range(1, n):
        c = call("CharAt", index=i)
        if _q(call, "Equal", a=c, b=cur):
            count += 1
        else:
            call("Emit", char=cur, count=count)
            cur, count = c, 1
    call("Emit", char=cur, count=count)
    return call("Output")


class FirstUniqueCharEnv(StringScanEnv):
    """Find the index of the first character that occurs exactly once in the text (-1 if none)."""

    def load(self, o):
        super().load(o)
        self.counts = {}

    def Count(self, char):
        """Add one to the tally of char; return its tally."""
        self.counts[char] = self.counts.get(char, 0) + 1
        return self.counts[char]

    def Tally(self, char):
        """Return the tally of char (0 if never counted)."""
        return self.counts.get(char, 0)

    def get_ref_answer(self):
        for i, c in enumerate(self.text):
            if self.text.count(c) == 1:
                return i
        return -1


def oracle_first_unique(call):
    n = _q(call, "Observe")
    chars = [call("CharAt", index=i) for i in range(n)]
    for c in chars:
        call("Count", char=c)
    for i, c in enumerate(chars):
        if _q(call, "Tally", char=c) == 1:
            return i
    return -1


class VowelCountEnv(StringScanEnv):
    """Count the vowels (a, e, i, o, u, either case) of the text."""

    def IsVowel(self, char):
        """Return true if char is a vowel."""
        return char.lower() in "aeiou"

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def Slice(self, start, stop):
        """Return the text from start to stop-1."""
        return self.text[int(start) : int(stop)]

    def get_ref_answer(self):
        return sum(c.lower() in "aeiou" for c in self.text)


def oracle_vowels(call):
    n = _q(call, "Observe")
    total = 0
    for i in range(n):
        if _q(call, "IsVowel", char=call("CharAt", index=i)):
            total = _q(call, "Add", a=total, b=1)
    return total


class CaesarShiftEnv(StringScanEnv):
    """Shift every lower-case letter of the text forward by k places in the alphabet (wrapping z to a); other
    characters stay. Answer the shifted string."""

    def load(self, o):
        super().load(o)
        self.k, self.out = o["k"], ""

    def Observe(self):
        """Return {"length": n, "k": k}."""
        return {"length": len(self.text), "k": self.k}

    def ShiftLetter(self, char, k):
        """Return the lower-case letter char moved k places forward (wrapping); any other character unchanged."""
        if "a" <= char <= "z":
            return chr((ord(char) - 97 + int(k)) % 26 + 97)
        return char

    def Append(self, char):
        """Append char to the output; return the output."""
        self.out += char
        return self.out

    def get_ref_answer(self):
        return "".join(chr((ord(c) - 97 + self.k) % 26 + 97) if "a" <= c <= "z" else c for c in self.text)


def oracle_caesar(call):
    info = _q(call, "Observe")
    out = ""
    for i in range(info["length"]):
        out = call("Append", char=call("ShiftLetter", char=call("CharAt", index=i), k=info["k"]))
    return out


class BalancedBracketsEnv(StringScanEnv):
    """Decide whether the brackets ()[]{} of the text are balanced and properly nested (true/false)."""

    def load(self, o):
        super().load(o)
        self.stack = []

    def Push(self, char):
        """Push char on the stack; return the stack's size."""
        self.stack.append(char)
        return len(self.stack)

    def Pop(self):
        """Pop and return the top of the stack (the empty string when the stack is empty)."""
        return self.stack.pop() if self.stack else ""

    def Matches(self, opening, closing):
        """Return true if opening and closing form a bracket pair."""
        return {"(": ")", "[": "]", "{": "}"}.get(opening) == closing

    def StackSize(self):
        """Return the number of characters on the stack."""
        return len(self.stack)

    def get_ref_answer(self):
        stack = []
        for c in self.text:
            if c in "([{":
                stack.append(c)
            elif c in ")]}" and (not stack or {"(": ")", "[": "]", "{": "}"}[stack.pop()] != c):
                return False
        return not stack


def oracle_brackets(call):
    n = _q(call, "Observe")
    for i in range(n):
        c = call("CharAt", index=i)
        if c in "([{":
            call("Push", char=c)
        elif c in ")]}":
            top = call("Pop")
            if top == "" or not _q(call, "Matches", opening=top, closing=c):
                return False
    return _q(call, "StackSize") == 0


class LongestCommonPrefixEnv(ToolEnv):
    """Find the longest common prefix of the words (the empty string if none)."""

    def load(self, o):
        self.words = list(o["words"])

    def Observe(self):
        """Return the number of words."""
        return len(self.words)

    def WordLength(self, index):
        """Return the length of word number index."""
        return len(self.words[int(index)])

    def CharOf(self, index, position):
        """Return the character at position of word number index."""
        return self.words[int(index)][int(position)]

    def Prefix(self, index, length):
        """Return the first length characters of word number index."""
        return self.words[int(index)][: int(length)]

    def get_ref_answer(self):
        p = self.words[0]
        for w in self.words[1:]:
            while not w.startswith(p):
                p = p[:-1]
        return p


def oracle_common_prefix(call):
    n = _q(call, "Observe")
    shortest = min(_q(call, "WordLength", index=i) for i in range(n))
    length = 0
    while length < shortest:
        c = call("CharOf", index=0, position=length)
        if any(call("CharOf", index=i, position=length) != c for i in range(1, n)):
            break
        length += 1
    return call("Prefix", index=0, length=length)


class AnagramCheckEnv(ToolEnv):
    """Decide whether the two words are anagrams of each other (same letters, same counts)."""

    def load(self, o):
        self.a, self.b, self.balance = o["a"], o["b"], {}

    def Observe(self):
        """Return the lengths {"a": len(a), "b": len(b)}."""
        return {"a": len(self.a), "b": len(self.b)}

    def CharOf(self, word, index):
        """Return the character at index of word ("a" or "b")."""
        return (self.a if word == "a" else self.b)[int(index)]

    def Adjust(self, char, delta):
        """Add delta to the balance of char; return the new balance."""
        self.balance[char] = self.balance.get(char, 0) + int(delta)
        return self.balance[char]

    def AllZero(self):
        """Return true if every balance is zero."""
        return all(v == 0 for v in self.balance.values())

    def get_ref_answer(self):
        return sorted(self.a) == sorted(self.b)


def oracle_anagram(call):
    n = _q(call, "Observe")
    for i in range(n["a"]):
        call("Adjust", char=call("CharOf", word="a", index=i), delta=1)
    for i in range(n["b"]):
        call("Adjust", char=call("CharOf", word="b", index=i), delta=-1)
    return _q(call, "AllZero")


class CompressSpacesEnv(StringScanEnv):
    """Collapse every run of spaces of the text into one space and drop leading and trailing spaces."""

    def load(self, o):
        super().load(o)
        self.out = ""

    def IsSpace(self, char):
        """Return true if char is a space."""
        return char == " "

    def Append(self, char):
        """Append char to the output; return the output."""
        self.out += char
        return self.out

    def Strip(self):
        """Return the output without leading or trailing spaces."""
        return self.out.strip(" ")

    def get_ref_answer(self):
        return " ".join(self.text.split())


def oracle_compress_spaces(call):
    n = _q(call, "Observe")
    prev_space = True
    for i in range(n):
        c = call("CharAt", index=i)
        space = _q(call, "IsSpace", char=c)
        if not (space and prev_space):
            call("Append", char=c)
        prev_space = space
    return call("Strip")


WORDS = [
    "apple",
    "stone",
    "river",
    "cloud",
    "tiger",
    "lemon",
    "piano",
    "green",
    "north",
    "quiet",
    "amber",
    "delta",
    "ember",
    "frost",
    "grape",
    "honey",
]


def _text(rng, lo, hi, alphabet="abcdefghijklmnopqrstuvwxyz"):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def _palindrome(rng):
    half = _text(rng, 2, 5, "abcdeAB")
    text = half + rng.choice(["", "x"]) + half[::-1]
    if rng.random() < 0.5:
        text = text[:-1] + "z"
    return {"text": text[:3] + rng.choice([" ", ",", ""]) + text[3:]}


def _brackets(rng):
    pairs = rng.choice(["()", "[]", "{}"])
    text = ""
    for _ in range(rng.randint(3, 6)):
        p = rng.choice(["()", "[]", "{}", pairs])
        text = rng.choice([p[0] + text + p[1], text + p, p + text])
    if rng.random() < 0.4:
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice("([{)]}") + text[i + 1 :]
    return {"text": text}


def _prefix_words(rng):
    stem = _text(rng, 1, 4, "abc")
    return {"words": [stem + _text(rng, 0, 4, "abcd") for _ in range(rng.randint(4, 5))]}


def _anagram(rng):
    a = _text(rng, 5, 8, "abcde")
    b = list(a)
    rng.shuffle(b)
    if rng.random() < 0.5:
        b[rng.randrange(len(b))] = rng.choice("abcdef")
    return {"a": a, "b": "".join(b)}


def _spaces(rng):
    words = rng.sample(WORDS, rng.randint(2, 4))
    return {"text": "".join(" " * rng.randint(0, 2) + w[: rng.randint(2, 5)] for w in words) + " " * rng.randint(0, 2)}


ORACLES = {
    ReverseWordsEnv: oracle_reverse_words,
    PalindromeCheckEnv: oracle_palindrome,
    RunLengthEncodeEnv: oracle_rle,
    FirstUniqueCharEnv: oracle_first_unique,
    VowelCountEnv: oracle_vowels,
    CaesarShiftEnv: oracle_caesar,
    BalancedBracketsEnv: oracle_brackets,
    LongestCommonPrefixEnv: oracle_common_prefix,
    AnagramCheckEnv: oracle_anagram,
    CompressSpacesEnv: oracle_compress_spaces,
}
CONFIGS = {
    ReverseWordsEnv: lambda rng: {"text": " ".join(rng.sample(WORDS, rng.randint(8, 12)))},
    PalindromeCheckEnv: _palindrome,
    RunLengthEncodeEnv: lambda rng: {
        "text": "".join(rng.choice("abc") * rng.randint(1, 3) for _ in range(rng.randint(3, 6)))
    },
    FirstUniqueCharEnv: lambda rng: {"text": _text(rng, 5, 10, "abcdef")},
    VowelCountEnv: lambda rng: {"text": _text(rng, 5, 12, "abeiOuxyzAE")},
    CaesarShiftEnv: lambda rng: {"text": _text(rng, 4, 9, "abcxyz -"), "k": rng.randint(1, 25)},
    BalancedBracketsEnv: _brackets,
    LongestCommonPrefixEnv: _prefix_words,
    AnagramCheckEnv: _anagram,
    CompressSpacesEnv: _spaces,
}
