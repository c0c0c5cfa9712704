"""Text normalisation and tokenisation shared by dedup and the lexical index.

Latin text splits into lower-cased words; Chinese, Japanese and Korean text has no
spaces, so each CJK character is a unit (and the lexical index pairs them into
bigrams).

>>> normalize("  Prefers  reports in CHINESE. ")
'prefers reports in chinese'
>>> units("我用 TypeScript 写前端")
['我', '用', 'typescript', '写', '前', '端']
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = rf"[^\W_{_CJK}]+"
_UNIT = re.compile(rf"[{_CJK}]|{_WORD}(?:['’]{_WORD})*", re.UNICODE)
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_SPACE_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)

# Function words carry no fact of their own; two facts differing only in these say the same.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "i",
        "me",
        "my",
        "mine",
        "you",
        "your",
        "user",
        "user's",
        "users",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "and",
        "or",
        "as",
        "by",
        "from",
        "that",
        "this",
        "it",
        "its",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "should",
        "can",
        "could",
        "about",
        "also",
        "very",
        "really",
        "just",
    ]
) | frozenset("的了是在和与也都很就还把被我你他她它们个这那吗呢吧啊")


# Words that flip a statement; a difference in one of these is never a paraphrase.
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "wasn't",
        "won't",
        "can't",
        "cannot",
        "shouldn't",
        "without",
    ]
) | frozenset("不没别非未无")


@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """Case-folded, NFKC, punctuation collapsed to single spaces: for exact-match dedup."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE_PUNCT.sub(" ", folded).strip()


def units(text: str) -> list[str]:
    """Words for alphabetic scripts, single characters for CJK, in order."""
    return _UNIT.findall(unicodedata.normalize("NFKC", text).casefold())


def is_cjk(unit: str) -> bool:
    """Whether a unit is a single CJK character."""
    return bool(_CJK_CHAR.fullmatch(unit))


def cjk_share(text: str) -> float:
    """The share of a text's units that are CJK characters (0 for no text)."""
    found = units(text)
    return sum(map(is_cjk, found)) / len(found) if found else 0.0


def has_cjk(text: str) -> bool:
    """Whether a text holds any CJK character."""
    return bool(_CJK_CHAR.search(text))


def mostly_cjk(text: str) -> bool:
    """Whether most units of a text are CJK characters: the text's script, for ranking.

    >>> mostly_cjk("我喜欢长篇文章"), mostly_cjk("用 TypeScript 写前端"), mostly_cjk("Uses Vue")
    (True, True, False)
    """
    found = units(text)
    return bool(found) and sum(1 for unit in found if is_cjk(unit)) * 2 > len(found)


@lru_cache(maxsize=65536)
def content_units(text: str) -> frozenset[str]:
    """The units of a text that carry meaning (stopwords removed)."""
    return frozenset(u for u in units(text) if u not in STOPWORDS)
