"""Okapi BM25 baseline: words for Latin script, character bigrams for CJK.

>>> tokenize("Caroline's 支持小组 in May")
['caroline', 's', '支持', '持小', '小组', 'in', 'may']
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from recallmem.text.words import CJK_RANGES

from bench.data import Doc
from bench.systems.base import Hit

_CJK = CJK_RANGES
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}_]+", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens; each CJK run becomes its character bigrams."""
    tokens: list[str] = []
    for run in _TOKEN.findall(text.lower()):
        if _IS_CJK.match(run):
            tokens.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        else:
            tokens.append(run)
    return tokens


@dataclass
class _Index:
    ids: list[str] = field(default_factory=list)
    term_freqs: list[Counter[str]] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    doc_freq: Counter[str] = field(default_factory=Counter)


class BM25:
    """Okapi BM25 (k1=1.2, b=0.75) over each user's documents, scored exhaustively."""

    name = "bm25"

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._indexes: dict[str, _Index] = {}

    def add(self, user_id: str, docs: Sequence[Doc]) -> None:
        index = self._indexes.setdefault(user_id, _Index())
        for doc in docs:
            counts = Counter(tokenize(doc.text))
            index.ids.append(doc.id)
            index.term_freqs.append(counts)
            index.lengths.append(sum(counts.values()))
            index.doc_freq.update(counts.keys())

    def scores(self, user_id: str, query: str) -> list[float]:
        """The BM25 score of every document of the user, in insertion order."""
        index = self._indexes.get(user_id)
        if index is None or not index.ids:
            return []
        n = len(index.ids)
        avg_length = sum(index.lengths) / n or 1.0
        terms = Counter(tokenize(query))
        result = []
        for counts, length in zip(index.term_freqs, index.lengths, strict=True):
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * length / avg_length)
            for term, q_count in terms.items():
                tf = counts.get(term, 0)
                if tf:
                    df = index.doc_freq[term]
                    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                    score += q_count * idf * tf * (self.k1 + 1) / (tf + norm)
            result.append(score)
        return result

    def search(self, user_id: str, query: str, k: int) -> list[Hit]:
        scores = self.scores(user_id, query)
        index = self._indexes.get(user_id)
        if index is None:
            return []
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        return [frozenset({index.ids[i]}) for i in order]

    def close(self) -> None:
        self._indexes.clear()
