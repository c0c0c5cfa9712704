"""Which secret patterns can match a text at all, told by the words they must contain.

Most texts hold no secret, and the secret rules cost a write about as much as Chroma
charges for the directory entry (about 0.1 ms a fact: 40 regular expressions, most of
which try every position of the text). Nearly every rule names a word its match must
contain somewhere ("password", "sk-", "token", "密码"). :func:`required_words` reads
that set off the compiled pattern itself, so it can never disagree with
``prompts/secrets.yaml``: every match of the pattern contains one of the words, spelled
as the pattern spells them. A pattern it cannot read a set from (a bare digit run, a
URL) has no gate and always runs.

A :class:`Gate` then asks one question of a text: does it contain any gated pattern's
word? Only if so do the gated patterns run. The words are matched with the patterns'
own flags, so "contains" means what the pattern's ``IGNORECASE`` means (``ſ`` for ``s``,
the Kelvin sign for ``k``), and a text no gated pattern can match is skipped only then:
the findings are exactly those of running every pattern (tested on the secret and
benign sets and hostile strings, ``tests/unit/test_secret_gates.py``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from typing import Any

# The parser the re module compiles with (Python 3.11+, as pyproject requires; typeshed
# does not describe it).
_sre: Any = importlib.import_module("re._constants")
_parser: Any = importlib.import_module("re._parser")

# A set whose shortest word is shorter than this says too little to be worth asking
# (":", "-" are in most texts).
_SHORTEST_USEFUL = 2
_MAX_CLASS = 8  # a character class of at most this many single characters is a set of words


def required_words(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Words one of which every match of ``pattern`` contains; None when not known."""
    try:
        tree = _parser.parse(pattern.pattern, pattern.flags)
    except re.error:  # pragma: no cover - it compiled once already
        return None
    return _of_sequence(list(tree))


def _of_sequence(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    candidates: list[frozenset[str]] = []
    run = ""
    for op, arg in items:
        if op is _sre.LITERAL:
            run += chr(arg)
            continue
        if run:
            # re factors the prefix out of "password|passwd|pw": p(?:assword|asswd|w)
            candidates.append(frozenset(run + lead for lead in _leads(op, arg)))
            run = ""
        found = _of_item(op, arg)
        if found:
            candidates.append(found)
    if run:
        candidates.append(frozenset([run]))
    if not candidates:
        return None
    # The most telling set: the longest shortest word, then the fewest words.
    return max(candidates, key=lambda words: (min(map(len, words)), -len(words)))


def _leading_run(items: Sequence[tuple[Any, Any]]) -> str:
    run = ""
    for op, arg in items:
        if op is not _sre.LITERAL:
            break
        run += chr(arg)
    return run


def _leads(op: Any, arg: Any) -> set[str]:
    """Literal strings one of which every match of the item starts with ("" if unknown)."""
    if op is _sre.SUBPATTERN:
        items = list(arg[-1])
        if items and items[0][0] is _sre.BRANCH:
            return {_leading_run(list(alternative)) for alternative in items[0][1][1]}
        return {_leading_run(items)}
    if op is _sre.BRANCH:
        return {_leading_run(list(alternative)) for alternative in arg[1]}
    return {""}


def _of_item(op: Any, arg: Any) -> frozenset[str] | None:
    if op is _sre.SUBPATTERN:
        return _of_sequence(list(arg[-1]))
    if op is _sre.BRANCH:
        union: set[str] = set()
        for alternative in arg[1]:
            words = _of_sequence(list(alternative))
            if words is None:
                return None  # this alternative can match without any known word
            union |= words
        return frozenset(union)
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None)):
        low, _, body = arg
        return _of_sequence(list(body)) if low >= 1 else None
    if op is _sre.IN:
        members = list(arg)
        if len(members) <= _MAX_CLASS and all(kind is _sre.LITERAL for kind, _ in members):
            return frozenset(chr(code) for _, code in members)
    return None


class Gate:
    """Splits patterns into those that always run and those a text's words let run."""

    def __init__(self, patterns: Sequence[re.Pattern[str]], flags: int) -> None:
        words: set[str] = set()
        self.gated: list[bool] = []
        for pattern in patterns:
            found = required_words(pattern)
            useful = found is not None and min(map(len, found)) >= _SHORTEST_USEFUL
            self.gated.append(useful)
            if useful and found is not None:
                words |= found
        self._any = re.compile("|".join(map(re.escape, sorted(words))), flags) if words else None
        # A case-insensitive search of many words costs about 6 us on a short Chinese
        # text, a case-sensitive one of the lowered text 0.4 us, and answers the same
        # when (1) every word is ASCII or caseless (密码: no character lowers into it)
        # and (2) the text holds none of ASCII_CASE_PAIRS: then a text character
        # matches an ASCII one case-insensitively only as its lower case, and lower()
        # keeps every position (İ is the one character it turns into two).
        caseless = all(w.isascii() or all(c.lower() == c == c.upper() for c in w) for w in words)
        lowered = "|".join(map(re.escape, sorted({w.lower() for w in words})))
        fast = bool(words) and caseless and bool(flags & re.IGNORECASE)
        self._lowered = re.compile(lowered, flags & ~re.IGNORECASE) if fast else None

    def opens(self, text: str) -> bool:
        """Whether the gated patterns must run on ``text``."""
        if self._any is None:
            return False
        if self._lowered is not None and (text.isascii() or not _PAIRED.search(text)):
            return self._lowered.search(text.lower()) is not None
        return self._any.search(text) is not None


# The non-ASCII characters re's IGNORECASE pairs with an ASCII letter (İ and ı with i,
# ſ with s, the Kelvin sign with k); tests/unit/test_secret_gates.py finds them all.
ASCII_CASE_PAIRS = "\u0130\u0131\u017f\u212a"
_PAIRED = re.compile(f"[{ASCII_CASE_PAIRS}]")
