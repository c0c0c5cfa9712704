"""BM25 over one user's facts, for the exact tokens dense vectors blur (names, ids).

Latin words are terms as they are; CJK text becomes character bigrams (and single
characters, so a one-character query word still matches), the usual way to index
Chinese without a segmenter.

>>> index = LexicalIndex(["Uses TypeScript at work", "喜欢长篇文章"])
>>> [round(float(s), 2) for s in index.scores("typescript")]
[0.9, 0.0]
>>> bool(index.scores("长篇")[1] > 0)
True
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from recallmem.text import STOPWORDS, is_cjk, units


def terms(text: str) -> list[str]:
    """Index terms: words, CJK characters and CJK bigrams; stopwords dropped."""
    out: list[str] = []
    previous_cjk: str | None = None
    for unit in units(text):
        if is_cjk(unit):
            if previous_cjk is not None:
                out.append(previous_cjk + unit)
            if unit not in STOPWORDS:
                out.append(unit)
            previous_cjk = unit
        else:
            previous_cjk = None
            if unit not in STOPWORDS:
                out.append(unit)
    return out


class LexicalIndex:
    """An immutable BM25 index over a list of documents (one user's facts)."""

    def __init__(self, documents: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._postings: dict[str, list[tuple[int, int]]] = {}
        lengths = np.zeros(len(documents), dtype=np.float32)
        for row, document in enumerate(documents):
            counts = Counter(terms(document))
            lengths[row] = sum(counts.values())
            for term, tf in counts.items():
                self._postings.setdefault(term, []).append((row, tf))
        self._lengths = lengths
        self._avg_length = float(lengths.mean()) if len(documents) else 0.0
        self.size = len(documents)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for the query (0 where nothing matches)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.size:
            return scores
        norm = self.k1 * (1 - self.b + self.b * self._lengths / max(self._avg_length, 1e-9))
        for term in set(terms(query)):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (self.size - len(postings) + 0.5) / (len(postings) + 0.5))
            rows = np.fromiter((r for r, _ in postings), dtype=np.int64, count=len(postings))
            tfs = np.fromiter((t for _, t in postings), dtype=np.float32, count=len(postings))
            scores[rows] += idf * tfs * (self.k1 + 1) / (tfs + norm[rows])
        return scores
