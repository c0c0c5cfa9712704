"""Where the embedders lived before ``recallmem.embedders``; kept so old imports work."""

from __future__ import annotations

from recallmem.embedders.use import USE_DIMENSION, USE_MODEL_NAME, UniversalSentenceEncoder
from recallmem.embedders.vectors import (
    default_embeddings,
    embed_matrix,
    embed_query_vector,
    embedder_name,
    normalize_rows,
    recall_floor,
)

__all__ = [
    "USE_DIMENSION",
    "USE_MODEL_NAME",
    "UniversalSentenceEncoder",
    "default_embeddings",
    "embed_matrix",
    "embed_query_vector",
    "embedder_name",
    "normalize_rows",
    "recall_floor",
]
