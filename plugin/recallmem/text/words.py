"""Text normalisation and tokenisation shared by dedup and the lexical index.

Latin text splits into lower-cased words; Chinese, Japanese and Korean text has no
spaces, so each CJK character is a unit (and the lexical index pairs them into
bigrams). ``CJK_RANGES`` is the one rule for what counts as CJK; the stopwords and
negations are data, in ``prompts/function_words.yaml``.

>>> normalize("  Prefers  reports in CHINESE. ")
'prefers reports in chinese'
>>> units("我用 TypeScript 写前端")
['我', '用', 'typescript', '写', '前', '端']
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.prompts import load_data

# Kana, CJK extension A, CJK unified ideographs, Hangul syllables, compatibility ideographs:
# the scripts written without spaces, as a regular-expression character range.
CJK_RANGES = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = rf"[^\W_{CJK_RANGES}]+"
_UNIT = re.compile(rf"[{CJK_RANGES}]|{_WORD}(?:['’]{_WORD})*", re.UNICODE)
_CJK_CHAR = re.compile(rf"[{CJK_RANGES}]")
_SPACE_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


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


def listed_once(words: list[str]) -> list[str]:
    """``words`` if none is listed twice (a word list in ``prompts/`` is checked at load)."""
    if repeated := sorted({w for w in words if words.count(w) > 1}):
        raise ValueError(f"listed twice: {repeated}")
    return words


def _single_units(words: list[str]) -> list[str]:
    # A word that is not one unit as units() cuts text could never match anything.
    for word in words:
        if units(word) != [word]:
            raise ValueError(f"{word!r} is not one unit as text.units() cuts it: {units(word)}")
    return listed_once(words)


class WordsByLanguage(BaseModel):
    """English words and Chinese characters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: list[str] = Field(min_length=1)
    zh: list[str] = Field(min_length=1)

    _units = field_validator("en", "zh")(_single_units)

    def all(self) -> frozenset[str]:
        """Every entry, both languages."""
        return frozenset(self.en) | frozenset(self.zh)


class FunctionWordsSpec(BaseModel):
    """``prompts/function_words.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["function_words"]
    version: str = Field(min_length=1)
    stopwords: WordsByLanguage
    negations: WordsByLanguage


_FUNCTION_WORDS = load_data("function_words", FunctionWordsSpec)
# Function words carry no fact of their own; two facts differing only in these say the same.
STOPWORDS = _FUNCTION_WORDS.stopwords.all()
# Words that flip a statement; a difference in one of these is never a paraphrase.
NEGATIONS = _FUNCTION_WORDS.negations.all()
