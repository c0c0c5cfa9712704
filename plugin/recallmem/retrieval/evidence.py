"""Calibrated lexical evidence: the share of a query's information a fact says, in any language.

BM25 divided by the query's best BM25 gives the best lexical match full weight whatever
it matched, often one common word ("like", "咖啡"), and a fact written in the other
language never matches at all; on bilingual memories that ranks the wrong fact first
more often than plain cosine does (docs/benchmarks.md, "Bilingual memories"). Evidence
here is calibrated instead: the query is cut into *concepts* (English words, Chinese
dictionary words), each weighted by its IDF in the user's memory, and a fact's evidence
is the IDF mass of the concepts it matches over the query's whole mass, in [0, 1]. A
fact matching one common word of a four-word question earns little; a fact matching
every rare word earns nearly 1.

A concept matches a fact in its own language or through a CC-CEDICT translation
(``retrieval.lexicon``): "coffee machine" matches "咖啡机漏水", and "咖啡机" matches "The
coffee machine leaks". A Chinese word matches a Chinese fact that holds all its
character bigrams (the lexical index's terms).

>>> from recallmem.retrieval.lexical import LexicalIndex
>>> facts = ["Likes dark mode in every editor", "Likes long articles about history"]
>>> [round(float(x), 2) for x in coverage(LexicalIndex(facts), "long articles", None)]
[0.0, 1.0]
>>> [round(float(x), 2) for x in coverage(LexicalIndex(facts), "what articles do I like", None)]
[0.21, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from recallmem.retrieval.lexical import QUESTION_WORDS, LexicalIndex, stem
from recallmem.retrieval.lexicon import Lexicon
from recallmem.text.words import STOPWORDS, is_cjk, units


@dataclass(frozen=True)
class Concept:
    """One thing a query asks about, and the facts that say it: in its own words
    (``direct``) or only through a translation (``translated``)."""

    text: str
    direct: np.ndarray  # bool per fact
    translated: np.ndarray  # bool per fact, never where direct

    def idf(self, size: int) -> float:
        """BM25's IDF of the concept among ``size`` facts."""
        found = int(self.direct.sum() + self.translated.sum())
        return math.log(1 + (size - found + 0.5) / (found + 0.5))


def coverage(
    index: LexicalIndex, query: str, lexicon: Lexicon | None, *, length_b: float = 0.0
) -> np.ndarray:
    """Per fact of ``index``, the share of the query's IDF mass it matches, in [0, 1].

    Without a ``lexicon`` nothing is translated and Chinese is matched by character
    bigrams; with one, Chinese is cut into dictionary words and both languages also
    match through translations. A concept has up to a few dozen translations, so a long
    fact matches some by chance: translated matches are normalised by the fact's length
    with BM25's ``b`` (``length_b``; 0 is none). Direct matches are not: measured, that
    costs long facts more than it saves (docs/benchmarks.md, LoCoMo turn level).
    """
    direct = np.zeros(index.size, dtype=np.float32)
    translated = np.zeros(index.size, dtype=np.float32)
    total = 0.0
    for concept in concepts(index, query, lexicon):
        idf = concept.idf(index.size)
        total += idf
        direct[concept.direct] += idf
        translated[concept.translated] += idf
    if total <= 0:
        return direct
    found = direct + translated * index.length_norm(length_b)
    evidence: np.ndarray = np.minimum(found / total, 1.0)
    return evidence


def concepts(index: LexicalIndex, query: str, lexicon: Lexicon | None) -> Iterator[Concept]:
    """The query's concepts (question and function words left out) with their matches."""
    tokens = lexicon.segment(query) if lexicon else _bigrams(query)
    for n, token in enumerate(tokens):
        if token in STOPWORDS or token in QUESTION_WORDS:
            continue
        translated = np.zeros(index.size, dtype=bool)
        if is_cjk(token[0]):
            direct = _chinese(index, token)
            for phrase in lexicon.english(token) if lexicon else ():
                translated |= index.rows_with(phrase.split())
        else:
            direct = index.rows_with([stem(token)])
            for word in _translations(lexicon, tokens, n) if lexicon else ():
                translated |= _chinese(index, word)
        yield Concept(token, direct, translated & ~direct)


def _bigrams(text: str) -> list[str]:
    # Without a dictionary, a CJK run is read as its overlapping character pairs.
    out: list[str] = []
    run = ""
    for unit in [*units(text), ""]:
        if unit and is_cjk(unit):
            run += unit
            continue
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        run = ""
        if unit:
            out.append(unit)
    return out


def _chinese(index: LexicalIndex, word: str) -> np.ndarray:
    if len(word) == 1:
        return index.rows_with([word])
    return index.rows_with([word[i : i + 2] for i in range(len(word) - 1)])


def _translations(lexicon: Lexicon, tokens: list[str], n: int) -> set[str]:
    # A word alone, and with its neighbours ("coffee machine" -> 咖啡机, not just 咖啡).
    word = stem(tokens[n])
    found = set(lexicon.chinese(word))
    if n + 1 < len(tokens):
        found |= lexicon.chinese(f"{word} {stem(tokens[n + 1])}")
    if n > 0:
        found |= lexicon.chinese(f"{stem(tokens[n - 1])} {word}")
    return found
