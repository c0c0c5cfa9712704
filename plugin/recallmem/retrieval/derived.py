"""The arrays a user's index derives from its facts, brought up to date row by row.

A search needs, per fact, its status, scope, ages, confidence, script, a lexical index
and its change flags. Computing them over a user's 1,000 facts takes tens of
milliseconds, and a write changes a handful of rows: :meth:`Derived.updated` computes
the changed and appended rows only, and extends the lexical index when no stored text
changed. The result equals what :class:`Derived` computes from scratch, array for array
(``tests/unit/retrieval/test_derived.py``).

>>> from recallmem.types import Fact
>>> facts = [Fact(content="Writes Go", category="knowledge", user_id="u")]
>>> derived = Derived(facts)
>>> derived.lexical.size
1
>>> grown = derived.updated([*facts, Fact(content="喜欢喝茶", category="preference",
...                                       user_id="u")], replaced=[])
>>> grown.cjk.tolist(), bool(grown.lexical.rows_with(["茶"])[1])
([False, True], True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from recallmem.facts.decay import last_alive
from recallmem.facts.expiry import valid_until_ts
from recallmem.retrieval.lexical import LexicalIndex
from recallmem.retrieval.newer_first import change_flags
from recallmem.text.words import has_cjk, mostly_cjk
from recallmem.types import Category, Fact, Status


def _first_said(fact: Fact) -> float:
    # When the fact was first said (its earliest source), for queries that name a time.
    return min((s.at for s in fact.sources), default=fact.created_at).timestamp()


def _last_seen(fact: Fact) -> float:
    confirmed = fact.last_confirmed_at or fact.updated_at
    return max(fact.updated_at, confirmed).timestamp()


# One column per name: its dtype and its value for one fact.
_COLUMNS: dict[str, tuple[Any, Callable[[Fact], object]]] = {
    "active": (bool, lambda f: f.status is Status.ACTIVE),
    "shared": (bool, lambda f: f.agent_id is None),
    "agents": (object, lambda f: f.agent_id or ""),
    "categories": (object, lambda f: f.category.value),
    "confidence": (np.float32, lambda f: f.confidence),
    "seen": (np.float64, _last_seen),
    "said": (np.float64, _first_said),
    "pinned": (bool, lambda f: f.pinned),
    "alive": (np.float64, lambda f: last_alive(f).timestamp()),
    "until": (np.float64, valid_until_ts),
    # has_cjk first: one C-level search clears a text without CJK (most, in English).
    "cjk": (bool, lambda f: has_cjk(f.content) and mostly_cjk(f.content)),
}


def _column(facts: Sequence[Fact], dtype: Any, value: Callable[[Fact], object]) -> np.ndarray:
    if dtype is object:
        out = np.empty(len(facts), dtype=object)
        out[:] = [value(f) for f in facts]
        return out
    return np.fromiter((value(f) for f in facts), dtype, len(facts))


class _Text(NamedTuple):
    """What the lexical index and the change flags read of a fact."""

    content: str
    # Keywords are matched as words (lexically) only: the vectors are the content's, so
    # a fact's meaning and its dedup neighbours do not move with a few loose words, and a
    # keyword edit needs no embedding. Search keys are in the vector
    # (facts.fact_vectors) and, like keywords, in the lexical index: measured, their
    # words lift top-1 on the development sets by 1.6 (docs/decisions/0040-search-keys.md).
    words: tuple[str, ...]
    correction: bool

    @classmethod
    def of(cls, fact: Fact) -> _Text:
        return cls(fact.content, (*fact.keywords, *fact.questions),
                   fact.category is Category.CORRECTION)  # fmt: skip


def _lexical(texts: Sequence[_Text]) -> tuple[list[str], list[tuple[str, ...]]]:
    return [t.content for t in texts], [t.words for t in texts]


def _flags(texts: Sequence[_Text]) -> tuple[np.ndarray, np.ndarray]:
    return change_flags([t.content for t in texts], [t.correction for t in texts])


class Derived:
    """Arrays computed from one user's facts, one row per fact, in the index's order."""

    active: np.ndarray
    shared: np.ndarray
    agents: np.ndarray
    categories: np.ndarray
    confidence: np.ndarray
    seen: np.ndarray
    said: np.ndarray
    pinned: np.ndarray
    alive: np.ndarray
    until: np.ndarray
    cjk: np.ndarray

    def __init__(self, facts: Sequence[Fact]) -> None:
        for name, (dtype, value) in _COLUMNS.items():
            setattr(self, name, _column(facts, dtype, value))
        self._texts = [_Text.of(f) for f in facts]

    @cached_property
    def lexical(self) -> LexicalIndex:
        """BM25 over each fact's content, its keywords and search keys (lengths: the
        content's). Built on first search only: dedup's nearest() needs the masks alone."""
        contents, words = _lexical(self._texts)
        return LexicalIndex(contents, keywords=words)

    @cached_property
    def change_flags(self) -> tuple[np.ndarray, np.ndarray]:
        """Per fact: it says that something changed, it is a correction (newer_first)."""
        return _flags(self._texts)

    def updated(self, facts: Sequence[Fact], replaced: Sequence[int]) -> Derived:
        """The arrays of ``facts``: this one's facts with the rows ``replaced``, and any
        facts past this one's end appended."""
        old = len(self._texts)
        rows = sorted({*(r for r in replaced if r < old), *range(old, len(facts))})
        new = Derived.__new__(Derived)
        for name, (dtype, value) in _COLUMNS.items():
            column = np.empty(len(facts), dtype=dtype)
            column[:old] = getattr(self, name)
            for row in rows:
                column[row] = value(facts[row])
            setattr(new, name, column)
        new._texts = [*self._texts, *(_Text.of(f) for f in facts[old:])]
        rewritten = False
        for row in (r for r in rows if r < old):
            new._texts[row] = _Text.of(facts[row])
            rewritten |= new._texts[row] != self._texts[row]
        if "lexical" in self.__dict__ and not rewritten:
            contents, words = _lexical(new._texts[old:])
            new.__dict__["lexical"] = self.lexical.extended(contents, keywords=words)
        if "change_flags" in self.__dict__:
            changed, corrected = np.zeros((2, len(facts)), dtype=bool)
            changed[:old], corrected[:old] = self.change_flags
            if rows:
                changed[rows], corrected[rows] = _flags([new._texts[r] for r in rows])
            new.__dict__["change_flags"] = (changed, corrected)
        return new
