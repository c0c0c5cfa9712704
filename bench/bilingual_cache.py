"""Vectors computed once per run (and kept between runs), and each user's candidates.

``RunEncoder`` is the default USE embedder remembering every text it has embedded, so
the default ranking, plain cosine and the peers share one embedding of each text; the
vectors are also kept in ``bench/.cache/`` (git-ignored) so a second run, or a ranking
experiment through ``bench.bilingual.evaluate``, embeds nothing. ``Candidates`` is one
user's memory as arrays: texts, unit vectors, when each was said, what each cites, and
a BM25 index; ``Asked`` is one question against it, with its cosine and BM25 scores.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from recallmem.embedders import UniversalSentenceEncoder, normalize_rows

from bench.bilingual_data import Question, User
from bench.data import REPO_ROOT, Doc
from bench.systems.bm25 import BM25

CACHE_DIR = REPO_ROOT / "bench" / ".cache"
_CHUNK = 256


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class RunEncoder(UniversalSentenceEncoder):
    """USE multilingual, embedding each distinct text once (documents and queries alike).

    It keeps the base ``model_name``: to a collection it is the same embedder. Recall
    latency measured through it excludes the query embedding (already cached).
    """

    def __init__(self, cache_file: Path | None = None) -> None:
        super().__init__()
        self.cache_file = cache_file
        self._vectors: dict[str, np.ndarray] = {}
        self._dirty = False
        if cache_file is not None and cache_file.exists():
            stored = np.load(cache_file)
            self._vectors = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))

    def embed_array(self, texts: list[str]) -> np.ndarray:
        keys = [_key(t) for t in texts]
        missing = list(
            dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self._vectors)
        )
        for start in range(0, len(missing), _CHUNK):
            chunk = missing[start : start + _CHUNK]
            for text, vector in zip(chunk, super().embed_array(chunk), strict=True):
                self._vectors[_key(text)] = vector
            self._dirty = True
        if not keys:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys])

    def save(self) -> None:
        """Write the vectors to the cache file, if any were computed since loading."""
        if self.cache_file is None or not self._dirty:
            return
        self.cache_file.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vectors), dtype="U40")
        vectors = np.stack(list(self._vectors.values())).astype(np.float32)
        with self.cache_file.open("wb") as handle:
            np.savez(handle, keys=keys, vectors=vectors)
        self._dirty = False


def default_cache_file() -> Path:
    """Where the run's vectors are kept between runs."""
    return CACHE_DIR / f"bilingual-vectors-{_key(UniversalSentenceEncoder.model_name)[:8]}.npz"


def _seconds(when: object) -> float:
    timestamp = getattr(when, "timestamp", None)
    return float(timestamp()) if callable(timestamp) else math.nan


@dataclass
class Candidates:
    """One user's memory as arrays, in the order of ``user.facts``."""

    user: User
    texts: list[str]
    cites: list[frozenset[str]]
    categories: list[str]
    vectors: np.ndarray  # (n, 512) unit rows
    said_at: np.ndarray  # POSIX seconds, NaN when unknown
    bm25: BM25

    @classmethod
    def build(cls, user: User, encoder: UniversalSentenceEncoder) -> Candidates:
        texts = [f.text for f in user.facts]
        bm25 = BM25()
        bm25.add(user.user_id, [Doc(f.id, f.text, f.cites) for f in user.facts])
        return cls(
            user=user,
            texts=texts,
            cites=[f.cites for f in user.facts],
            categories=[f.category for f in user.facts],
            vectors=normalize_rows(encoder.embed_array(texts)),
            said_at=np.array([_seconds(f.said_at) for f in user.facts], dtype=np.float64),
            bm25=bm25,
        )

    def ask(self, question: Question, encoder: UniversalSentenceEncoder) -> Asked:
        """The question against this memory: its vector, cosine and BM25 per fact."""
        vector = normalize_rows(encoder.embed_array([question.text]))[0]
        return Asked(
            question=question,
            vector=vector,
            cosine=self.vectors @ vector,
            bm25=np.asarray(self.bm25.scores(self.user.user_id, question.text), np.float64),
            asked_at=_seconds(question.asked_at),
        )


@dataclass
class Asked:
    """One question against one user's candidates."""

    question: Question
    vector: np.ndarray
    cosine: np.ndarray  # per fact
    bm25: np.ndarray  # per fact (bench/systems/bm25.py: words, CJK bigrams)
    asked_at: float  # POSIX seconds, NaN when unknown
