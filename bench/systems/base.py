"""What every benchmarked system is to the runner, and the shared embedder.

A system stores one user's documents and answers a query with a ranked list of hits;
a hit is the set of document ids it stands for (one, unless the system merged
near-duplicates). Every system gets the SAME embeddings, so differences come from
indexing and ranking, not from the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from recallmem.embedders import UniversalSentenceEncoder

from bench.data import Doc

Hit = frozenset[str]


class System(Protocol):
    """A memory system under test."""

    name: str

    def add(self, user_id: str, docs: Sequence[Doc]) -> None:
        """Store one user's documents."""
        ...

    def search(self, user_id: str, query: str, k: int) -> list[Hit]:
        """The user's top-``k`` hits for ``query``, best first."""
        ...

    def close(self) -> None:
        """Release files and handles."""
        ...


class BatchCachedEncoder(UniversalSentenceEncoder):
    """The default USE embedder, remembering the vectors of multi-text (document) batches.

    Quality sweeps store the same documents under many configurations; caching their
    vectors saves minutes. Single-text calls are the query path whose latency is being
    measured, so they are always computed afresh. It keeps the base ``model_name``: to a
    collection it is the same embedder.
    """

    def __init__(self, threads: int | None = None) -> None:
        super().__init__(threads)
        self._cache: dict[str, np.ndarray] = {}

    def embed_array(self, texts: list[str]) -> np.ndarray:
        if len(texts) <= 1:
            return super().embed_array(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, vector in zip(missing, super().embed_array(missing), strict=True):
                self._cache[text] = vector
        return np.stack([self._cache[t] for t in texts])
