"""Vectors from any embedder: unit rows, query vectors, the recorded name, the floor.

Every caller that embeds goes through these, so each embedder's vectors are treated
alike: scaled to unit length, float32, and named the same way in the collection.
"""

from __future__ import annotations

import numpy as np
from langchain_core.embeddings import Embeddings

from recallmem.config import MemoryConfig
from recallmem.embedders.registry import load_embedder
from recallmem.embedders.use import UniversalSentenceEncoder


def default_embeddings(config: MemoryConfig) -> Embeddings:
    """The embedder ``config.embedder`` names, set up from ``config`` (see ``registry``).

    >>> type(default_embeddings(MemoryConfig(embedder="use"))).__name__
    'UniversalSentenceEncoder'
    """
    return load_embedder(config.embedder, config)


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
