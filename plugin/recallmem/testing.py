"""Fakes for tests and notebooks: nothing here reaches a network or a real model.

``HashingEmbeddings`` is a deterministic embedder whose similarity means something
(shared words and CJK characters make vectors close), for tests that must not load
the real encoder.

>>> emb = HashingEmbeddings()
>>> a, b, c = (emb.embed_query(t) for t in ("likes green tea", "likes tea", "owns a car"))
>>> sum(x * y for x, y in zip(a, b)) > sum(x * y for x, y in zip(a, c))
True
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
from langchain_core.embeddings import Embeddings

_TOKEN = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]", re.IGNORECASE)


class HashingEmbeddings(Embeddings):
    """Bag-of-tokens vectors by feature hashing: fast, deterministic, meaningful overlap."""

    def __init__(self, dimension: int = 256, model_name: str = "hashing-v1") -> None:
        self.dimension = dimension
        self.model_name = model_name

    def _vector(self, text: str) -> list[float]:
        vector = np.zeros(self.dimension, dtype=np.float64)
        for token in _TOKEN.findall(text.lower()):
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dimension
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = np.linalg.norm(vector)
        values: list[float] = (vector / norm if norm else vector).tolist()
        return values

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text."""
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one text."""
        return self._vector(text)
