"""Plain dense search: one numpy matrix of unit vectors per user, exact cosine top-k."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from langchain_core.embeddings import Embeddings
from recallmem.embedders import embed_matrix, embed_query_vector

from bench.data import Doc
from bench.systems.base import Hit


def top_k_indices(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first (ties keep insertion order)."""
    if scores.size == 0:
        return []
    k = min(k, scores.size)
    candidates = np.argpartition(-scores, k - 1)[:k]
    return sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), i))


class DenseNumpy:
    """Exact cosine search over each user's embedding matrix."""

    name = "dense-numpy"

    def __init__(self, embeddings: Embeddings) -> None:
        self.embeddings = embeddings
        self._ids: dict[str, list[str]] = {}
        self._vectors: dict[str, np.ndarray] = {}

    def add(self, user_id: str, docs: Sequence[Doc]) -> None:
        matrix = embed_matrix(self.embeddings, [d.text for d in docs])
        old = self._vectors.get(user_id, np.zeros((0, matrix.shape[1]), dtype=np.float32))
        self._vectors[user_id] = np.vstack([old, matrix])
        self._ids.setdefault(user_id, []).extend(d.id for d in docs)

    def search(self, user_id: str, query: str, k: int) -> list[Hit]:
        matrix = self._vectors.get(user_id)
        if matrix is None:
            return []
        scores = matrix @ embed_query_vector(self.embeddings, query)
        ids = self._ids[user_id]
        return [frozenset({ids[i]}) for i in top_k_indices(scores, k)]

    def close(self) -> None:
        self._vectors.clear()
        self._ids.clear()
