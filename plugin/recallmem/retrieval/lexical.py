"""BM25 over one user's facts, for the exact tokens dense vectors blur (names, ids).

Latin words are lower-cased and lightly stemmed ("researching" and "research" meet);
CJK text becomes character bigrams (and single characters, so a one-character query
word still matches), the usual way to index Chinese without a segmenter. Question words
("what", "when", "how") are dropped from queries: every question has one and no fact
does. Each choice is measured in docs/benchmarks.md (ablation).

>>> index = LexicalIndex(["Uses TypeScript at work", "喜欢长篇文章"])
>>> [round(float(s), 2) for s in index.scores("typescript")]
[0.9, 0.0]
>>> bool(index.scores("长篇")[1] > 0)
True
>>> terms("She was researching adoption agencies")
['she', 'research', 'adoption', 'agency']
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from recallmem.text.words import STOPWORDS, is_cjk, units

# Words that ask rather than say: dropped from queries only (a fact may mean them).
QUESTION_WORDS = frozenset(
    [
        "what",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "which",
        "why",
        "how",
        "kind",
        "type",
        "sort",
        "ever",
    ]
) | frozenset(
    # Chinese as the dictionary segments it (retrieval.evidence), and single characters.
    [
        "什么",
        "怎么",
        "怎么了",
        "怎么样",
        "哪里",
        "哪儿",
        "哪个",
        "哪些",
        "为什么",
        "多少",
        "如何",
        "是否",
        "还记得",
        "记得",
        "上次",
        "之前",
        "告诉",
        "说过",
        "提过",
        "那个",
        "这个",
        "吗",
        "呢",
        "几",
        "谁",
    ]
)

# (suffix, replacement, shortest stem kept): a light stemmer in the spirit of Porter's
# step 1, enough to meet plurals and -ing/-ed forms without a dictionary.
_SUFFIXES = (
    ("ies", "y", 3),
    ("ied", "y", 3),
    ("ing", "", 4),
    ("ed", "", 3),
    ("es", "", 3),
    ("s", "", 3),
)
_KEEP_DOUBLE = frozenset("lsz")  # "falling" -> "fall", but "running" -> "run"


@lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """A light English stem: plural and -ing/-ed endings removed; other words unchanged.

    >>> [stem(w) for w in ["agencies", "camped", "running", "boxes", "cats", "class", "went"]]
    ['agency', 'camp', 'run', 'box', 'cat', 'class', 'went']
    """
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    for suffix, replacement, shortest in _SUFFIXES:
        if not word.endswith(suffix) or len(word) - len(suffix) < shortest:
            continue
        base = word[: -len(suffix)] + replacement
        if suffix in ("ing", "ed") and base[-1] == base[-2] and base[-1] not in _KEEP_DOUBLE:
            return base[:-1]
        if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
            return word[:-1]  # "stories" is handled above; "types" -> "type"
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            return word
        return base
    return word


def terms(text: str, *, drop: frozenset[str] = STOPWORDS, stemming: bool = True) -> list[str]:
    """Index terms: (stemmed) words, CJK characters and CJK bigrams; ``drop`` words removed."""
    normal = stem if stemming else str
    out: list[str] = []
    previous_cjk: str | None = None
    for unit in units(text):
        if is_cjk(unit):
            if previous_cjk is not None:
                out.append(previous_cjk + unit)
            if unit not in drop:
                out.append(unit)
            previous_cjk = unit
        else:
            previous_cjk = None
            if unit not in drop:
                out.append(normal(unit))
    return out


def query_terms(text: str, *, stemming: bool = True, question_words: bool = False) -> list[str]:
    """Terms of a query: as ``terms``, less the question words unless ``question_words``.

    >>> query_terms("What did Caroline research?")
    ['caroline', 'research']
    """
    found = terms(text, stemming=stemming)
    return found if question_words else [t for t in found if t not in QUESTION_WORDS]


class LexicalIndex:
    """An immutable BM25 index over a list of documents (one user's facts).

    ``keywords`` (one tuple per document, ``Fact.keywords``) are indexed with their
    document: each keyword's terms (none spanning two keywords) are found in it, once
    each and only where the text lacks them, so a keyword repeating the text changes
    nothing. Lengths stay the text's: keywords are not prose, and a fact does not count
    as longer for having them. ``stemming`` and ``question_words`` (keep them in
    queries) exist for the ablation benchmark, which measures what each choice is
    worth; the defaults are the measured best.

    >>> index = LexicalIndex(["Bought a coffee machine; it leaks"], keywords=[("咖啡机", "漏水")])
    >>> bool(index.rows_with(["漏水"])[0]), bool(index.rows_with(["水咖"])[0])
    (True, False)
    """

    def __init__(
        self,
        documents: Sequence[str],
        *,
        keywords: Sequence[Sequence[str]] | None = None,
        k1: float = 1.2,
        b: float = 0.75,
        stemming: bool = True,
        question_words: bool = False,
    ) -> None:
        self.k1, self.b = k1, b
        self.stemming, self.question_words = stemming, question_words
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths = self._units = np.zeros(0, dtype=np.float32)
        self.size = 0
        self._add(documents, keywords)

    def _add(self, documents: Sequence[str], keywords: Sequence[Sequence[str]] | None) -> None:
        stemming = self.stemming
        lengths = np.zeros(len(documents), dtype=np.float32)
        for n, document in enumerate(documents):
            counts = Counter(terms(document, stemming=stemming))
            lengths[n] = sum(counts.values())
            for keyword in keywords[n] if keywords else ():
                counts.update({t for t in terms(keyword, stemming=stemming) if t not in counts})
            for term, tf in counts.items():
                self._postings.setdefault(term, []).append((self.size + n, tf))
        self._lengths = np.concatenate([self._lengths, lengths])
        self._avg_length = float(self._lengths.mean()) if len(self._lengths) else 0.0
        # Lengths in words and characters, comparable across scripts (a Chinese text has
        # about twice as many index terms as units: its characters and their bigrams).
        added = np.fromiter((len(units(d)) for d in documents), np.float32, len(documents))
        self._units = np.concatenate([self._units, added])
        self.size += len(documents)

    def extended(
        self, documents: Sequence[str], *, keywords: Sequence[Sequence[str]] | None = None
    ) -> LexicalIndex:
        """A new index of this one's documents followed by ``documents``; this one is
        unchanged. Scores equal those of an index built over all of them at once.

        >>> grown = LexicalIndex(["Writes Go"]).extended(["Writes Rust"])
        >>> grown.size, grown.rows_with(["rust"]).tolist()
        (2, [False, True])
        """
        grown = copy.copy(self)
        grown._postings = {term: list(postings) for term, postings in self._postings.items()}
        grown._add(documents, keywords)
        return grown

    def length_norm(self, b: float) -> np.ndarray:
        """Per document, BM25's length normalisation ``1 / (1 - b + b * length / mean)``
        over lengths in units: above 1 for short documents, below 1 for long ones."""
        mean = float(self._units.mean()) if self.size else 0.0
        if mean <= 0 or b == 0:
            return np.ones(self.size, dtype=np.float32)
        return 1.0 / (1.0 - b + b * np.maximum(self._units, 1.0) / mean)

    def rows_with(self, wanted: list[str]) -> np.ndarray:
        """Which documents hold every term in ``wanted`` (index terms, as ``terms`` makes)."""
        found = np.zeros(self.size, dtype=bool)
        postings = [self._postings.get(term) for term in wanted]
        if not postings or any(p is None for p in postings):
            return found
        rows = set.intersection(*({row for row, _ in p} for p in postings if p is not None))
        found[list(rows)] = True
        return found

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for the query (0 where nothing matches)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.size:
            return scores
        norm = self.k1 * (1 - self.b + self.b * self._lengths / max(self._avg_length, 1e-9))
        wanted = query_terms(query, stemming=self.stemming, question_words=self.question_words)
        for term in set(wanted):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (self.size - len(postings) + 0.5) / (len(postings) + 0.5))
            rows = np.fromiter((r for r, _ in postings), dtype=np.int64, count=len(postings))
            tfs = np.fromiter((t for _, t in postings), dtype=np.float32, count=len(postings))
            scores[rows] += idf * tfs * (self.k1 + 1) / (tfs + norm[rows])
        return scores
