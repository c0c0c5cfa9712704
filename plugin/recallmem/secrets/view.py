"""The text the secret rules read: what a reader sees, spelled in plain letters and digits.

A secret can be written so that no rule matches it and a reader still reads it: an
invisible character inside a word (``pass\\u200bword``, ``sk-\\u200bproj-...``, between
the digit groups of a card), a look-alike letter (Cyrillic ``а`` in "password"), or a
compatibility form (fullwidth ``４１１１``, ``ｓｋ-``, mathematical bold letters).
:func:`view_of` gives the rules a view of the text with every hidden character removed
(:func:`recallmem.text.quoting.hidden_characters`, the set ``quote_text`` strips before a model
reads the text), the braille blank read as a space, every script's decimal digits read as
ASCII ones, NFKC applied, the common Cyrillic and Greek look-alikes and the small
capitals of Latin letters folded and the diacritics over Latin letters dropped, each
character on its own. Every position of the view maps back to the character
of the original it came from, so a finding's span covers the original characters, the
hidden ones inside the secret too.

The view costs nothing on ASCII text and little on Chinese: only characters outside a
few blocks that no step changes (ASCII, CJK ideographs, Hangul syllables) are looked at,
each once per process.

>>> view = view_of("my pass\\u200bword is ｈｕｎｔｅｒ２")
>>> view.text
'my password is hunter2'
>>> view.span(15, 22), view.removed
((16, 23), True)
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from functools import cached_property, lru_cache

from recallmem.text.quoting import BRAILLE_BLANK, hidden_characters, hidden_pattern

# Characters no step of the view changes (NFKC-stable, not hidden, not a look-alike,
# no mark over a letter): a text made of them only is its own view.
# tests/unit/test_secret_view.py checks it.
_STABLE = re.compile(r"[^\x00-\x7f\u00d7\u00f7\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]")
_SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "

# Cyrillic and Greek letters drawn like a Latin one (Unicode's confusables, the letters
# that are the same glyph in common fonts). NFKC leaves them alone: they are letters.
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕһԁԛԝӏкүАВЕКМНОРСТХІЈЅҮԜοικνρυαϲϳΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijshdqwlkyABEKMHOPCTXIJSYWoikvpuacjABEZHIKMNOPTYX",
)


@lru_cache(maxsize=4096)
def _seen(char: str) -> str:
    """What the rules read for ``char``: "" when hidden, else NFKC folded."""
    hidden = hidden_characters()
    if char in hidden:
        return ""
    if char == BRAILLE_BLANK:
        return " "
    if (digit := unicodedata.decimal(char, None)) is not None:
        return str(digit)  # any script's digit (٤, ४): a card number in it is one
    name = unicodedata.name(char, "")
    if name.startswith(_SMALL_CAPITAL) and len(name) == len(_SMALL_CAPITAL) + 1:
        return name[-1].lower()  # ᴘᴀꜱꜱᴡᴏʀᴅ; NFKC keeps small capitals as they are
    folded = unicodedata.normalize("NFKC", char).translate(_LOOKALIKES)
    return "".join(_unmarked(c) for c in folded if c not in hidden)


def _unmarked(char: str) -> str:
    """A Latin letter without the marks over or under it (``pässwörd`` reads "password"),
    written in one character or with combining diacritics after it; any other character
    as it is."""
    if char in _DIACRITICS:
        return ""
    parts = unicodedata.normalize("NFD", char)
    if len(parts) > 1 and parts[0].isascii() and all(m in _DIACRITICS for m in parts[1:]):
        return parts[0]
    return char


# The combining marks written over and under Latin letters (the block U+0300-U+036F).
_DIACRITICS = frozenset(map(chr, range(0x300, 0x370)))


class _Table(dict[int, str]):
    """``str.translate``'s table, filled on first sight: then the view costs one C call."""

    def __missing__(self, code: int) -> str:
        if len(self) > _TABLE_SIZE:
            self.clear()  # a text of every code point must not hold them all
        seen = self[code] = _seen(chr(code))
        return seen


_TABLE_SIZE = 1 << 16
_TABLE = _Table()


class View:
    """A text as the secret rules read it (``text``), and where it came from."""

    def __init__(self, original: str, text: str) -> None:
        self.original = original
        self.text = text
        # Whether a hidden character was dropped: it may have parted two words.
        self.removed = hidden_pattern().search(original) is not None

    @cached_property
    def _pieces(self) -> tuple[list[int], list[int], list[bool]]:
        # The view is pieces: runs copied from the original and single characters
        # replaced (by "", one or several characters). For piece k: where it begins in
        # the view, where in the original, and whether it is a copy. Built only for a
        # finding: most views are never asked.
        starts: list[int] = []
        origins: list[int] = []
        copied: list[bool] = []
        length = last = 0
        for match in _STABLE.finditer(self.original):
            at, seen = match.start(), _seen(match.group())
            if seen == match.group():
                continue
            for part, origin, is_copy in ((self.original[last:at], last, True),
                                          (seen, at, False)):  # fmt: skip
                if part:
                    starts.append(length)
                    origins.append(origin)
                    copied.append(is_copy)
                    length += len(part)
            last = at + 1
        starts.append(length)
        origins.append(last)
        copied.append(True)
        return starts, origins, copied

    def _original(self, at: int) -> int:
        starts, origins, copied = self._pieces
        piece = bisect_right(starts, at) - 1
        if copied[piece]:
            return origins[piece] + at - starts[piece]
        return origins[piece]  # every character of a replacement is its one source

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that view span ``start:end`` was read from."""
        first = self._original(start)
        return (first, self._original(end - 1) + 1) if end > start else (first, first)


def view_of(text: str) -> View | None:
    """``text`` as the secret rules read it (see the module docstring); None when that
    is ``text`` itself, as it is for ASCII and most Chinese text."""
    if text.isascii() or not _STABLE.search(text):
        return None
    seen = text.translate(_TABLE)
    return None if seen == text else View(text, seen)


__all__ = ["View", "view_of"]
